// The CPU backend of the executor (exec/executor.hpp): a worker thread per device runs each vertex
// for its modelled duration (a calibrated busy loop, a spin on the clock, or a sleep: cpu_kernel),
// or runs its real work (cpu_kernel::work: a DOPPLER workload's matrix products and element-wise
// ops with Eigen, exec/eigen_operations.hpp); a copy is a real memcpy from the
// sender's buffer into the receiver's, paced to the link model: it ends no earlier than latency +
// bytes / bandwidth after it was launched, and it is recorded from its launch, when its channels
// were taken (a copy thread's wake-up is part of a link's latency, as a DMA engine's start is).
// Devices are threads, so with busy-loop or spin kernels they truly run in parallel only as far as
// the machine has free cores: on a 2-core machine, 2 devices, and the executor's own thread and
// the copies share those cores. The sleep kernel frees the cores while a vertex runs.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/exec/executor.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace gantry {

namespace detail {
// The busy loop's kernel: a dependent multiply-add chain. The empty asm makes x opaque to the
// optimiser each iteration, so the loop cannot be folded or vectorised away.
inline double busy_loop(std::uint64_t iterations, double x = 1.0) {
  for (std::uint64_t i = 0; i < iterations; ++i) {
    x = x * 0.999999999 + 1e-9;
#if defined(__GNUC__) || defined(__clang__)
    asm volatile("" : "+m"(x));
#endif
  }
  return x;
}
inline std::atomic<double>& busy_loop_sink() {
  static std::atomic<double> sink{0};
  return sink;
}
}  // namespace detail

// Iterations of the busy loop per second on this thread, timed over about `duration` seconds (the
// median of five slices, so that a slice interrupted by another thread does not count).
[[nodiscard]] inline double calibrate_busy_loop(seconds duration = 0.05) {
  using clock = std::chrono::steady_clock;
  std::uint64_t iterations = 1000;
  double rate = 0;
  // Grow the slice until it lasts a fifth of the duration, then time five of that size.
  for (;;) {
    const auto t0 = clock::now();
    detail::busy_loop_sink().store(detail::busy_loop(iterations));
    const double took = std::chrono::duration<double>(clock::now() - t0).count();
    if (took >= duration / 5 || iterations > (std::uint64_t{1} << 40)) {
      rate = static_cast<double>(iterations) / std::max(took, 1e-9);
      break;
    }
    iterations *= 2;
  }
  std::vector<double> rates;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = clock::now();
    detail::busy_loop_sink().store(detail::busy_loop(iterations));
    rates.push_back(static_cast<double>(iterations) /
                    std::max(std::chrono::duration<double>(clock::now() - t0).count(), 1e-9));
  }
  std::sort(rates.begin(), rates.end());
  return std::max(rate, rates[2]) > 0 ? rates[2] : rate;
}

// How a device thread spends a vertex's modelled duration.
enum class cpu_kernel {
  busy_loop,  // duration × loop_rate iterations of a multiply-add chain: real work, which slows
              // down when the thread shares its core (with other devices, copies, other programs)
  spin,       // spin on the clock until the duration has passed: holds the core, keeps the time
  sleep,      // sleep, then spin the last sleep_margin: frees the core, as a device that computes
              // while its host waits (an accelerator); any number of devices run in parallel
  work,       // cpu_backend_options::work(launch): the vertex's real work, however long it takes
};

[[nodiscard]] constexpr const char* to_string(cpu_kernel k) noexcept {
  switch (k) {
    case cpu_kernel::busy_loop:
      return "busy-loop";
    case cpu_kernel::spin:
      return "spin";
    case cpu_kernel::sleep:
      return "sleep";
    case cpu_kernel::work:
      return "work";
  }
  return "unknown";
}

struct cpu_backend_options {
  cpu_kernel kernel = cpu_kernel::spin;
  // busy_loop: iterations per second, from calibrate_busy_loop() (required > 0 for busy_loop).
  double loop_rate = 0;
  // The end of a sleeping vertex and of a paced copy is spun, not slept, for accuracy.
  seconds sleep_margin = 100e-6;
  // A copy moves min(bytes, this) bytes for real; the rest of its modelled time is paced.
  std::size_t max_copy_bytes = std::size_t{16} << 20;
  // A copy lasts at least its modelled time (false: only as long as its memcpy takes).
  bool pace_copies = true;
  // work: runs a vertex on its device's thread (required for cpu_kernel::work), one call per device
  // at a time, e.g. an eigen_operations. What it throws ends the run: wait() rethrows it once
  // everything launched has finished.
  std::function<void(const vertex_launch&)> work{};
  // How long an idle device thread, and the executor waiting for a completion, poll before they
  // sleep: a launch or completion that comes within it costs no wake-up system call (an empty
  // vertex's round trip falls from tens of microseconds to under one). Unset: 50 us where every
  // device thread and the executor's have a hardware thread of their own, else 0: polling threads
  // would take the cores the others need (on 2 cores with 2 sleep-kernel devices it doubled the
  // executor's time per vertex).
  std::optional<seconds> spin_wait{};
};

namespace detail {
// Sleeps until `margin` before `until`, then spins: a sleep alone ends late by the wake-up.
inline void wait_until(std::chrono::steady_clock::time_point until, seconds margin) {
  using clock = std::chrono::steady_clock;
  const auto spun = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(margin));
  if (until - clock::now() > spun) std::this_thread::sleep_until(until - spun);
  while (clock::now() < until) {
  }
}

// Linux lets a sleeping thread wake up to 50 us late by default (timer slack); a thread that runs
// paced kernels asks for 1 ns so that sleeps end when asked.
inline void tighten_timer_slack() {
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
}
// The same, once per thread: for the threads of a runtime (StarPU's workers) that run kernels.
inline void tighten_timer_slack_once() {
  thread_local bool tightened = false;
  if (!std::exchange(tightened, true)) tighten_timer_slack();
}

// Throws invalid_input, naming `who`, for kernel options no backend can honour: a busy_loop kernel
// without a positive rate, a work kernel without a function, a negative sleep margin.
inline void check_kernel_options(std::string_view who, const cpu_backend_options& options) {
  if (options.kernel == cpu_kernel::busy_loop && !(options.loop_rate > 0 && std::isfinite(options.loop_rate)))
    throw invalid_input(std::string(who) + ": the busy_loop kernel needs loop_rate > 0 (calibrate_busy_loop()), got " +
                        std::to_string(options.loop_rate));
  if (options.kernel == cpu_kernel::work && !options.work)
    throw invalid_input(std::string(who) + ": the work kernel needs a work function (an eigen_operations, say)");
  if (!(options.sleep_margin >= 0)) throw invalid_input(std::string(who) + ": sleep_margin must be >= 0");
}

// Spends one vertex the way `options` says, on the calling thread: the CPU backend's device
// threads, and any backend whose workers are CPU threads (exec/starpu_backend.hpp).
inline void run_cpu_kernel(const cpu_backend_options& options, const vertex_launch& job) {
  using clock = std::chrono::steady_clock;
  const seconds duration = job.duration;
  const auto until =
      clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(duration));
  switch (options.kernel) {
    case cpu_kernel::busy_loop:
      busy_loop_sink().store(busy_loop(static_cast<std::uint64_t>(std::min(duration * options.loop_rate, 1e18))));
      return;
    case cpu_kernel::sleep:
      wait_until(until, options.sleep_margin);
      return;
    case cpu_kernel::work:
      options.work(job);
      return;
    case cpu_kernel::spin:
      while (clock::now() < until) {
      }
      return;
  }
}
}  // namespace detail

class cpu_backend {
 public:
  // Throws invalid_input for kernel options it cannot honour (detail::check_kernel_options).
  explicit cpu_backend(cpu_backend_options options = {}) : options_(std::move(options)) {
    detail::check_kernel_options("cpu_backend", options_);
  }
  cpu_backend(const cpu_backend&) = delete;
  cpu_backend& operator=(const cpu_backend&) = delete;
  ~cpu_backend() { stop(); }

  [[nodiscard]] const cpu_backend_options& options() const noexcept { return options_; }

  // Starts a run on `devices` devices: worker threads are (re)used, the clock restarts at 0. Call
  // only when nothing launched is still running.
  void begin(std::size_t devices) {
    if (devices != workers_.size()) {
      stop();
      stopping_ = false;
      workers_.clear();
      for (std::size_t d = 0; d < devices; ++d) workers_.push_back(std::make_unique<device_worker>());
      for (std::size_t d = 0; d < devices; ++d) workers_[d]->thread = std::thread([this, d] { run_device(d); });
      slots_.clear();
      for (std::size_t k = 0; k < devices * devices; ++k) slots_.push_back(std::make_unique<copy_slot>());
    }
    const bool cores_to_spare = devices + 1 <= std::thread::hardware_concurrency();
    spin_wait_ = std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double>(options_.spin_wait.value_or(cores_to_spare ? 50e-6 : 0.0)));
    std::lock_guard lock(done_mutex_);
    done_.clear();
    done_count_ = 0;
    failure_ = nullptr;
    in_flight_ = 0;
    epoch_ = clock::now();
  }

  void launch_vertex(const vertex_launch& v) {
    auto& w = *workers_.at(v.device);
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    bool sleeping = false;
    {
      std::lock_guard lock(w.mutex);
      w.jobs.push_back(v);
      w.queued.store(w.jobs.size(), std::memory_order_release);
      sleeping = w.sleeping;
    }
    if (sleeping) w.wake.notify_one();  // a polling thread sees the job without a wake-up
  }

  void launch_copy(const copy_launch& c) {
    if (c.from >= workers_.size() || c.to >= workers_.size())
      throw invalid_input("cpu_backend: a copy from device " + std::to_string(c.from) + " to " + std::to_string(c.to) +
                          " on " + std::to_string(workers_.size()) + " devices");
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    std::unique_lock lock(copy_mutex_);
    copy_jobs_.push_back({c, clock::now()});
    // One copy thread per copy in flight: the executor has already checked that the route is free.
    if (idle_copiers_ < copy_jobs_.size()) copiers_.emplace_back([this] { run_copier(); });
    lock.unlock();
    copy_wake_.notify_one();
  }

  void wait(std::vector<completion>& out) {
    poll([&] { return done_count_.load(std::memory_order_acquire) > 0; });
    std::unique_lock lock(done_mutex_);
    block(lock, [&] { return !done_.empty() || (failure_ && in_flight_ == 0); });
    if (failure_) {  // the work function threw: once nothing runs, the run ends with its exception
      block(lock, [&] { return in_flight_ == 0; });
      done_.clear();
      done_count_ = 0;
      std::rethrow_exception(std::exchange(failure_, nullptr));
    }
    out.insert(out.end(), done_.begin(), done_.end());
    done_.clear();
    done_count_ = 0;
  }

  [[nodiscard]] seconds now() const { return std::chrono::duration<double>(clock::now() - epoch_).count(); }

 private:
  using clock = std::chrono::steady_clock;

  struct device_worker {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<vertex_launch> jobs;
    std::atomic<std::size_t> queued = 0;  // jobs.size(), for polling without the lock
    bool sleeping = false;                // waiting on `wake` (under mutex)
    std::shared_mutex buffer_mutex;
    std::vector<unsigned char> buffer;  // what this device sends from
  };
  // The receiver's buffer for one sender: copies of one pair write it one at a time.
  struct copy_slot {
    std::mutex mutex;
    std::vector<unsigned char> buffer;
  };

  void complete(const completion& c, std::exception_ptr failure = nullptr) {
    bool waiting = false;
    {
      std::lock_guard lock(done_mutex_);
      done_.push_back(c);
      done_count_.store(done_.size(), std::memory_order_release);
      --in_flight_;
      if (failure && !failure_) failure_ = std::move(failure);
      waiting = executor_sleeping_;
    }
    if (waiting) done_ready_.notify_one();
  }

  // Polls `ready` for up to spin_wait_, pausing the core between tries.
  template <class Ready>
  void poll(Ready ready) const {
    if (spin_wait_ <= clock::duration::zero()) return;
    const auto until = clock::now() + spin_wait_;
    for (unsigned i = 0; !ready(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if ((i & 63) == 63 && clock::now() >= until) return;
    }
  }

  // The executor sleeps on done_ready_ until `ready`, saying so, so that completions wake it only then.
  template <class Ready>
  void block(std::unique_lock<std::mutex>& lock, Ready ready) {
    while (!ready()) {
      executor_sleeping_ = true;
      done_ready_.wait(lock);
      executor_sleeping_ = false;
    }
  }

  void run_device(std::size_t d) {
    detail::tighten_timer_slack();
    auto& w = *workers_[d];
    for (;;) {
      poll([&] { return stopping_.load(std::memory_order_relaxed) || w.queued.load(std::memory_order_acquire) > 0; });
      std::unique_lock lock(w.mutex);
      while (!stopping_ && w.jobs.empty()) {
        w.sleeping = true;
        w.wake.wait(lock);
        w.sleeping = false;
      }
      if (w.jobs.empty()) return;
      const vertex_launch job = w.jobs.front();
      w.jobs.pop_front();
      w.queued.store(w.jobs.size(), std::memory_order_release);
      lock.unlock();
      const seconds start = now();
      std::exception_ptr failure;
      try {
        detail::run_cpu_kernel(options_, job);
      } catch (...) {
        failure = std::current_exception();
      }
      complete({false, job.vertex, start, now()}, std::move(failure));
    }
  }

  void run_copier() {
    detail::tighten_timer_slack();
    for (;;) {
      std::unique_lock lock(copy_mutex_);
      ++idle_copiers_;
      copy_wake_.wait(lock, [&] { return stopping_ || !copy_jobs_.empty(); });
      --idle_copiers_;
      if (copy_jobs_.empty()) return;
      const copy_launch job = copy_jobs_.front().job;
      const auto launched = copy_jobs_.front().launched;
      copy_jobs_.pop_front();
      lock.unlock();
      const std::size_t bytes = static_cast<std::size_t>(std::min<byte_count>(job.bytes, options_.max_copy_bytes));
      // Buffers grow to the largest copy seen (a first run warms them up).
      auto& slot = *slots_[job.to * workers_.size() + job.from];
      std::unique_lock slot_lock(slot.mutex);
      if (slot.buffer.size() < bytes) slot.buffer.resize(bytes);
      auto& sender = *workers_[job.from];
      grow_sender_buffer(sender, bytes, job.from);
      if (bytes > 0) {
        std::shared_lock read(sender.buffer_mutex);
        std::memcpy(slot.buffer.data(), sender.buffer.data(), bytes);
      }
      slot_lock.unlock();
      if (options_.pace_copies && job.duration > 0)
        detail::wait_until(
            launched + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(job.duration)),
            options_.sleep_margin);
      complete({true, job.id, std::chrono::duration<double>(launched - epoch_).count(), now()});
    }
  }

  // The sender's buffer grows under an exclusive lock; copies read it under a shared one.
  static void grow_sender_buffer(device_worker& w, std::size_t bytes, std::size_t d) {
    std::unique_lock lock(w.buffer_mutex);
    if (w.buffer.size() < bytes) w.buffer.assign(bytes, static_cast<unsigned char>(d + 1));
  }

  void stop() {
    {
      std::lock_guard lock(copy_mutex_);
      stopping_ = true;
    }
    copy_wake_.notify_all();
    for (auto& w : workers_) {
      { std::lock_guard lock(w->mutex); }
      w->wake.notify_all();
    }
    for (auto& w : workers_)
      if (w->thread.joinable()) w->thread.join();
    for (auto& t : copiers_)
      if (t.joinable()) t.join();
    copiers_.clear();
    idle_copiers_ = 0;
  }

  cpu_backend_options options_;
  std::vector<std::unique_ptr<device_worker>> workers_;
  std::vector<std::unique_ptr<copy_slot>> slots_;  // [to * devices + from]
  std::atomic<bool> stopping_ = false;
  std::mutex copy_mutex_;
  std::condition_variable copy_wake_;
  struct queued_copy {
    copy_launch job;
    clock::time_point launched;
  };
  std::deque<queued_copy> copy_jobs_;
  std::vector<std::thread> copiers_;
  std::size_t idle_copiers_ = 0;
  std::mutex done_mutex_;
  std::condition_variable done_ready_;
  std::vector<completion> done_;
  std::atomic<std::size_t> done_count_ = 0;  // done_.size(), for polling without the lock
  bool executor_sleeping_ = false;           // waiting on done_ready_ (under done_mutex_)
  clock::duration spin_wait_{};
  // Launched, not yet completed. Only the executor's thread launches, and it is the one that waits
  // for 0, so a launch needs no lock; a completion lowers it under done_mutex_, then wakes it.
  std::atomic<std::size_t> in_flight_ = 0;
  std::exception_ptr failure_;  // the first exception of a work function (under done_mutex_)
  clock::time_point epoch_ = clock::now();
};

static_assert(execution_backend<cpu_backend>);

}  // namespace gantry
