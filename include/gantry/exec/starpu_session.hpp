// What the two StarPU backends share (exec/starpu_backend.hpp in one process, and
// exec/starpu_mpi_backend.hpp across MPI ranks): the process's one StarPU session, the codelet that
// runs a vertex, StarPU's timing of a finished task, and the data handles, tags and gate of an
// ahead run.
#pragma once

#include <gantry/exec/cpu_backend.hpp>

#include <starpu.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gantry::detail {

// StarPU runs once per process, and a session owns it. Constructing one claims the process's StarPU
// (std::runtime_error, naming `who`, while another session holds it); start() starts StarPU, and
// the session's end waits for every task, shuts StarPU down and gives the claim back.
class starpu_session {
 public:
  explicit starpu_session(std::string who) : who_(std::move(who)) {
    if (claimed().exchange(true)) throw std::runtime_error(who_ + ": StarPU already runs in this process");
  }
  starpu_session(const starpu_session&) = delete;
  starpu_session& operator=(const starpu_session&) = delete;
  ~starpu_session() {
    if (shutdown_ != nullptr) {
      starpu_task_wait_for_all();
      shutdown_();
    }
    claimed() = false;
  }

  // Starts StarPU with `workers` CPU workers (no CUDA or OpenCL) under the scheduling policy
  // `scheduler`, these settings taking precedence over StarPU's environment variables: `init`
  // receives the configuration, may add to it, and starts StarPU with it (starpu_init, say; it is
  // called `init_name` in errors and returns StarPU's code); `shutdown` is what stops what `init`
  // started. Then enables StarPU's profiling (every task's start and end) and finds the workers.
  // std::runtime_error when StarPU does not start, or starts fewer CPU workers.
  template <class Init>
  void start(unsigned workers, const std::string& scheduler, const char* init_name, Init&& init, void (*shutdown)()) {
    if (shutdown_ != nullptr) throw std::logic_error(who_ + ": StarPU is started once per session");
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.precedence_over_environment_variables = 1;
    conf.ncpus = static_cast<int>(workers);
    conf.ncuda = 0;
    conf.nopencl = 0;
    conf.sched_policy_name = scheduler.c_str();
    if (const int rc = std::forward<Init>(init)(conf); rc != 0)
      throw std::runtime_error(who_ + ": " + init_name + " failed (" + std::strerror(-rc) + ")");
    shutdown_ = shutdown;
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    std::vector<int> ids(workers);
    const unsigned found = starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids.data(), workers);
    if (found < workers)
      throw std::runtime_error(who_ + ": StarPU started " + std::to_string(found) + " CPU workers of " +
                               std::to_string(workers));
    workers_.assign(ids.begin(), ids.end());
  }

  // StarPU's ids of the CPU workers it started, in its order.
  [[nodiscard]] const std::vector<int>& workers() const noexcept { return workers_; }

 private:
  static std::atomic<bool>& claimed() {
    static std::atomic<bool> flag{false};
    return flag;
  }

  std::string who_;
  void (*shutdown_)() = nullptr;
  std::vector<int> workers_;
};

// A codelet whose CPU function is `function`, over any number of data handles.
inline void init_starpu_codelet(starpu_codelet& cl, void (*function)(void**, void*), const char* name) {
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = function;
  cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
  cl.name = name;
}

// When a finished task's worker started and ended its codelet, in microseconds on StarPU's clock
// (starpu_timing_now()); nothing where StarPU kept no profiling info for it.
[[nodiscard]] inline std::optional<std::pair<double, double>> starpu_task_times_us(const starpu_task& task) {
  const starpu_profiling_task_info* info = task.profiling_info;
  if (info == nullptr) return std::nullopt;
  auto start = info->start_time, end = info->end_time;  // StarPU's signature takes no const
  return std::pair{starpu_timing_timespec_to_us(&start), starpu_timing_timespec_to_us(&end)};
}

// The data handles of one ahead run, unregistered (once every task is done) on every path out:
// each vertex's output, each transfer's replica, and any other registered through add().
struct starpu_handle_set {
  std::vector<starpu_data_handle_t> output, replica;
  std::vector<starpu_data_handle_t> registered;
  // Registers `bytes` at `at` as h: in main memory, or, where `at` is null, with no copy in this
  // process (StarPU-MPI's data that another rank owns). Returns where the next handle's bytes begin.
  unsigned char* add(starpu_data_handle_t& h, unsigned char* at, std::size_t bytes) {
    starpu_vector_data_register(&h, at != nullptr ? STARPU_MAIN_RAM : -1, reinterpret_cast<std::uintptr_t>(at),
                                static_cast<std::uint32_t>(bytes), 1);
    registered.push_back(h);
    return at != nullptr ? at + bytes : nullptr;
  }
  starpu_handle_set() = default;
  starpu_handle_set(const starpu_handle_set&) = delete;
  starpu_handle_set& operator=(const starpu_handle_set&) = delete;
  ~starpu_handle_set() {
    starpu_task_wait_for_all();
    for (auto h : registered) starpu_data_unregister_no_coherency(h);
  }
};

// The tag that holds an ahead run's first tasks until everything is submitted; opened once, by
// open() or, when the run leaves early, on the way out, so no submitted task waits for good.
struct starpu_gate_tag {
  starpu_tag_t tag;
  bool opened = false;
  explicit starpu_gate_tag(starpu_tag_t t) : tag(t) {}
  void open() {
    opened = true;
    starpu_tag_notify_from_apps(tag);
  }
  starpu_gate_tag(const starpu_gate_tag&) = delete;
  starpu_gate_tag& operator=(const starpu_gate_tag&) = delete;
  ~starpu_gate_tag() {
    if (!opened) starpu_tag_notify_from_apps(tag);
  }
};

// The tags of one ahead run (the copies', and the tasks' that wait for copies), removed once every
// task is done.
struct starpu_tag_set {
  std::vector<starpu_tag_t> tags;
  starpu_tag_t add(starpu_tag_t tag) {
    tags.push_back(tag);
    return tag;
  }
  starpu_tag_set() = default;
  starpu_tag_set(const starpu_tag_set&) = delete;
  starpu_tag_set& operator=(const starpu_tag_set&) = delete;
  ~starpu_tag_set() {
    starpu_task_wait_for_all();
    for (const auto tag : tags) starpu_tag_remove(tag);
  }
};

}  // namespace gantry::detail
