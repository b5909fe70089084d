// The CPU backend of the executor (exec/executor.hpp): a worker thread per device runs each vertex
// as a calibrated busy loop of the vertex's modelled duration; a copy is a real memcpy from the
// sender's buffer into the receiver's, paced to the link model (it ends no earlier than latency +
// bytes / bandwidth after it began). Devices are threads, so they truly run in parallel only as far
// as the machine has free cores: on a 2-core machine, 2 devices.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/exec/executor.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace gantry {

namespace detail {
// The busy loop's kernel: a dependent multiply-add chain the compiler cannot shorten.
inline double busy_loop(std::uint64_t iterations, double x = 1.0) {
  for (std::uint64_t i = 0; i < iterations; ++i) x = x * 0.999999999 + 1e-9;
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

struct cpu_backend_options {
  // Busy-loop iterations per second (calibrate_busy_loop()): a vertex of t seconds runs t × rate
  // iterations, so it slows down when it shares a core, as real work does. 0: spin on the clock
  // until t has passed instead (the duration then holds however busy the machine is).
  double loop_rate = 0;
  // A copy moves min(bytes, this) bytes for real; the rest of its modelled time is paced.
  std::size_t max_copy_bytes = std::size_t{16} << 20;
  // A copy lasts at least its modelled time (false: only as long as its memcpy takes).
  bool pace_copies = true;
};

class cpu_backend {
 public:
  explicit cpu_backend(cpu_backend_options options = {}) : options_(options) {}
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
    std::lock_guard lock(done_mutex_);
    done_.clear();
    epoch_ = clock::now();
  }

  void launch_vertex(const vertex_launch& v) {
    auto& w = *workers_.at(v.device);
    {
      std::lock_guard lock(w.mutex);
      w.jobs.push_back(v);
    }
    w.wake.notify_one();
  }

  void launch_copy(const copy_launch& c) {
    if (c.from >= workers_.size() || c.to >= workers_.size())
      throw invalid_input("cpu_backend: a copy from device " + std::to_string(c.from) + " to " + std::to_string(c.to) +
                          " on " + std::to_string(workers_.size()) + " devices");
    std::unique_lock lock(copy_mutex_);
    copy_jobs_.push_back(c);
    // One copy thread per copy in flight: the executor has already checked that the route is free.
    if (idle_copiers_ < copy_jobs_.size()) copiers_.emplace_back([this] { run_copier(); });
    lock.unlock();
    copy_wake_.notify_one();
  }

  void wait(std::vector<completion>& out) {
    std::unique_lock lock(done_mutex_);
    done_ready_.wait(lock, [&] { return !done_.empty(); });
    out.insert(out.end(), done_.begin(), done_.end());
    done_.clear();
  }

  [[nodiscard]] seconds now() const { return std::chrono::duration<double>(clock::now() - epoch_).count(); }

 private:
  using clock = std::chrono::steady_clock;

  struct device_worker {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<vertex_launch> jobs;
    std::shared_mutex buffer_mutex;
    std::vector<unsigned char> buffer;  // what this device sends from
  };
  // The receiver's buffer for one sender: copies of one pair write it one at a time.
  struct copy_slot {
    std::mutex mutex;
    std::vector<unsigned char> buffer;
  };

  void complete(const completion& c) {
    {
      std::lock_guard lock(done_mutex_);
      done_.push_back(c);
    }
    done_ready_.notify_one();
  }

  void run_device(std::size_t d) {
    auto& w = *workers_[d];
    for (;;) {
      std::unique_lock lock(w.mutex);
      w.wake.wait(lock, [&] { return stopping_ || !w.jobs.empty(); });
      if (w.jobs.empty()) return;
      const vertex_launch job = w.jobs.front();
      w.jobs.pop_front();
      lock.unlock();
      const seconds start = now();
      if (options_.loop_rate > 0) {
        const double iterations = job.duration * options_.loop_rate;
        detail::busy_loop_sink().store(detail::busy_loop(static_cast<std::uint64_t>(std::min(iterations, 1e18))));
      } else {
        const auto until = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(job.duration));
        while (clock::now() < until) {
        }
      }
      complete({false, job.vertex, start, now()});
    }
  }

  void run_copier() {
    for (;;) {
      std::unique_lock lock(copy_mutex_);
      ++idle_copiers_;
      copy_wake_.wait(lock, [&] { return stopping_ || !copy_jobs_.empty(); });
      --idle_copiers_;
      if (copy_jobs_.empty()) return;
      const copy_launch job = copy_jobs_.front();
      copy_jobs_.pop_front();
      lock.unlock();
      const std::size_t bytes = static_cast<std::size_t>(std::min<byte_count>(job.bytes, options_.max_copy_bytes));
      // Buffers grow to the largest copy seen, before the copy's clock starts.
      auto& slot = *slots_[job.to * workers_.size() + job.from];
      std::unique_lock slot_lock(slot.mutex);
      if (slot.buffer.size() < bytes) slot.buffer.resize(bytes);
      auto& sender = *workers_[job.from];
      grow_sender_buffer(sender, bytes, job.from);
      const auto t0 = clock::now();
      const seconds start = now();
      if (bytes > 0) {
        std::shared_lock read(sender.buffer_mutex);
        std::memcpy(slot.buffer.data(), sender.buffer.data(), bytes);
      }
      slot_lock.unlock();
      if (options_.pace_copies && job.duration > 0) {
        const auto until = t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(job.duration));
        std::this_thread::sleep_until(until);
      }
      complete({true, job.id, start, now()});
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
      {
        std::lock_guard lock(w->mutex);
      }
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
  std::deque<copy_launch> copy_jobs_;
  std::vector<std::thread> copiers_;
  std::size_t idle_copiers_ = 0;
  std::mutex done_mutex_;
  std::condition_variable done_ready_;
  std::vector<completion> done_;
  clock::time_point epoch_ = clock::now();
};

static_assert(execution_backend<cpu_backend>);

}  // namespace gantry
