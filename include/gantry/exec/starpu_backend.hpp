// The StarPU backend of the executor: StarPU (Inria's task runtime, starpu.gitlabpages.inria.fr)
// runs a placement. Each gantry device is a StarPU CPU worker and each vertex a task pinned to its
// device's worker (STARPU_EXECUTE_ON_WORKER). A copy is run by a copy engine, a host thread of the
// backend outside StarPU's workers (as a DMA engine is outside a GPU's cores), which moves
// min(bytes, max_copy_bytes) for real and lasts at least its modelled time, as the CPU backend's
// copy threads do (exec/cpu_backend.hpp). A vertex spends its modelled time with the CPU backend's
// kernels (sleep, spin, busy loop) or runs its real work (cpu_kernel::work: a DOPPLER workload's
// Eigen operations, exec/eigen_operations.hpp).
//
// It runs placements two ways:
//   - decided (launch_vertex, launch_copy, wait: the executor, exec/executor.hpp): the executor's
//     loop decides every launch as the simulator would, StarPU runs each vertex as a pinned task
//     and a callback reports it done;
//   - ahead (run_ahead: exec/replay_ahead.hpp): the whole simulated schedule is submitted at once
//     and StarPU orders it by itself. Each worker runs its tasks in the plan's order (workerorder),
//     every tensor is a StarPU data handle (a vertex writes its output's handle; a copy engine
//     acquires it to read, in plan order, through starpu_data_acquire_cb, and writes the
//     receiving device's replica, which the consumer reads), a consumer waits for its copies'
//     tags, and a vertex's other cross-stream waits are declared task dependencies. The host
//     submits everything behind a gate (a tag each worker's first task waits for), opens it and
//     waits once: the measured run is StarPU's, from the gate's opening.
// Vertex times are StarPU's own (its profiling info: when the worker started and ended the task's
// codelet); copy times the engine's, on the same clock (starpu_timing_now()), from begin().
//
// run_with_starpu_scheduler() runs a graph the other way round, placed by StarPU's own scheduler
// (dmda: HEFT with StarPU's performance models, here given the same compute times as gantry's
// placers) instead of a gantry placement: a real-runtime judge of gantry's placers.
//
// StarPU runs once per process: one starpu_backend at a time. Debian's StarPU 1.3 is built with
// polling drivers (an idle worker spins on its core) and at most 4 CPU workers, so at most 4
// devices; copy engines sleep while they wait and take no worker.
#pragma once

#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/replay_ahead.hpp>
#include <gantry/exec/starpu_session.hpp>

#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace gantry {

struct starpu_backend_options {
  std::size_t devices = 2;       // StarPU CPU workers, one per gantry device (device d is the d-th)
  std::size_t copy_engines = 1;  // host threads that run the copies, device pairs shared among them
  // How a vertex is spent and how much a copy moves for real (the CPU backend's options; a copy
  // moves min(bytes, max_copy_bytes) between StarPU data handles, so keep it small: every
  // transferred tensor of an ahead run has a handle of that size).
  cpu_backend_options kernels{.kernel = cpu_kernel::sleep, .max_copy_bytes = std::size_t{64} << 10};
  // StarPU's scheduling policy (STARPU_SCHED): pinned tasks run where they are pinned under any;
  // it decides where run_with_starpu_scheduler() places.
  std::string scheduler = "dmda";
};

// A graph run as StarPU's own scheduler placed it (starpu_backend::run_own_scheduler).
struct starpu_scheduled_run {
  std::vector<device_id> device;       // per vertex: the device whose worker ran it
  std::vector<seconds> start, finish;  // per vertex, measured (StarPU's profiling), from the run's start
  seconds makespan = 0;
  seconds host_seconds = 0;  // registering and submitting every task
};

class starpu_backend {
 public:
  // Starts StarPU with one CPU worker per device, and the copy engines. Throws invalid_input for
  // options it cannot honour (no device, a busy_loop kernel without a rate, more workers than
  // StarPU allows, an unknown scheduler), std::runtime_error when StarPU does not start or another
  // starpu_backend is alive.
  explicit starpu_backend(starpu_backend_options options = {}) : options_(std::move(options)) {
    if (options_.devices == 0) throw invalid_input("starpu_backend: devices must be at least 1");
    detail::check_kernel_options("starpu_backend", options_.kernels);
    const std::size_t workers = options_.devices;
    if (workers > STARPU_MAXCPUS)
      throw invalid_input("starpu_backend: " + std::to_string(workers) + " devices need " + std::to_string(workers) +
                          " CPU workers; this StarPU is built for at most " + std::to_string(STARPU_MAXCPUS) +
                          " (STARPU_MAXCPUS)");
    if (options_.copy_engines == 0) throw invalid_input("starpu_backend: copy_engines must be at least 1");
    if (!known_scheduler(options_.scheduler))
      throw invalid_input("starpu_backend: StarPU has no scheduling policy '" + options_.scheduler + "' (" +
                          scheduler_names() + ")");
    session_.emplace("starpu_backend");
    session_->start(
        static_cast<unsigned>(workers), options_.scheduler, "starpu_init",
        [](starpu_conf& conf) { return starpu_init(&conf); }, &starpu_shutdown);
    next_order_.assign(workers, 1);
    detail::init_starpu_codelet(vertex_codelet_, &starpu_backend::run_vertex, "gantry_vertex");
    detail::init_starpu_codelet(own_codelet_, &starpu_backend::run_placed_by_starpu, "gantry_vertex_scheduled");
    own_codelet_.can_execute = &starpu_backend::on_device_worker;
    own_model_.type = STARPU_PER_ARCH;
    own_model_.symbol = "gantry_vertex_scheduled";
    own_model_.arch_cost_function = &starpu_backend::planned_cost;
    own_codelet_.model = &own_model_;
    engines_.resize(options_.copy_engines);
    for (std::size_t e = 0; e < engines_.size(); ++e) engines_[e].thread = std::thread([this, e] { run_engine(e); });
  }
  starpu_backend(const starpu_backend&) = delete;
  starpu_backend& operator=(const starpu_backend&) = delete;
  // Waits for every task and copy, stops the copy engines, then StarPU (the session, last).
  ~starpu_backend() {
    starpu_task_wait_for_all();
    {
      std::lock_guard lock(engine_mutex_);
      stopping_ = true;
    }
    engine_wake_.notify_all();
    for (auto& e : engines_) e.thread.join();
  }

  [[nodiscard]] const starpu_backend_options& options() const noexcept { return options_; }
  // StarPU's worker id of device d.
  [[nodiscard]] int device_worker(std::size_t d) const { return workers().at(d); }

  // A run on `devices` devices (at most options().devices) starts now: the clock's zero.
  void begin(std::size_t devices) {
    if (devices > options_.devices)
      throw invalid_input("starpu_backend: a run on " + std::to_string(devices) + " devices; StarPU was started with " +
                          std::to_string(options_.devices) + " device workers");
    starpu_task_wait_for_all();
    wait_for_copies();
    std::lock_guard lock(done_mutex_);
    done_.clear();
    failure_ = nullptr;
    in_flight_ = 0;
    jobs_.clear();
    pairs_.clear();
    {
      std::lock_guard engines(engine_mutex_);
      copies_.clear();
    }
    epoch_us_ = starpu_timing_now();
  }

  // Decided: one pinned task per launch, reported from its callback.
  void launch_vertex(const vertex_launch& v) {
    if (v.device >= options_.devices)
      throw invalid_input("starpu_backend: vertex " + std::to_string(v.vertex) + " on device " +
                          std::to_string(v.device) + " of " + std::to_string(options_.devices));
    auto& job = new_job(v.vertex);
    job.vertex = v;
    submit_decided(job, workers()[v.device]);
  }
  void launch_copy(const copy_launch& c) {
    if (c.from >= options_.devices || c.to >= options_.devices)
      throw invalid_input("starpu_backend: a copy from device " + std::to_string(c.from) + " to " +
                          std::to_string(c.to) + " on " + std::to_string(options_.devices) + " devices");
    {
      std::lock_guard lock(done_mutex_);
      ++in_flight_;
    }
    engine_copy copy;
    copy.launch = c;
    copy.decided = true;
    copy.bytes = real_copy_bytes(c.bytes);
    enqueue(std::move(copy));
  }
  void wait(std::vector<completion>& out) {
    std::unique_lock lock(done_mutex_);
    done_ready_.wait(lock, [&] { return !done_.empty() || (failure_ && in_flight_ == 0); });
    out.insert(out.end(), done_.begin(), done_.end());
    done_.clear();
    if (failure_ && in_flight_ == 0) std::rethrow_exception(std::exchange(failure_, nullptr));
  }
  [[nodiscard]] seconds now() const { return (starpu_timing_now() - epoch_us_) * 1e-6; }

  // Ahead: submits every activity of `plan` (exec/replay_ahead.hpp) behind a gate, opens it, waits
  // for all and fills one completion per activity, timed from the gate's opening; returns the host
  // time spent registering and submitting.
  seconds run_ahead(const ahead_plan& plan, std::vector<completion>& out) {
    const std::size_t n = plan.vertices.size(), t = plan.copies.size();
    if (plan.devices > options_.devices)
      throw invalid_input("starpu_backend: a plan on " + std::to_string(plan.devices) +
                          " devices; StarPU was started with " + std::to_string(options_.devices) + " device workers");
    const auto host_start = std::chrono::steady_clock::now();
    // Handles: each vertex's output, and per transfer the receiving device's replica, of the bytes
    // a copy moves for real (one byte where nothing is moved: a handle is never empty).
    std::vector<std::size_t> output_bytes(n, 1);
    for (const auto& c : plan.copies)
      output_bytes[c.tensor] = std::max(output_bytes[c.tensor], real_copy_bytes(c.bytes));
    std::vector<std::size_t> sizes(output_bytes);
    for (const auto& c : plan.copies) sizes.push_back(output_bytes[c.tensor]);
    unsigned char* at = arena(sizes);
    handle_set handles;
    handles.output.resize(n);
    handles.replica.resize(t);
    std::vector<unsigned char*> buffer(n + t);
    for (std::size_t v = 0; v < n; ++v) at = handles.add(handles.output[v], buffer[v] = at, sizes[v]);
    for (std::size_t i = 0; i < t; ++i) at = handles.add(handles.replica[i], buffer[n + i] = at, sizes[n + i]);

    jobs_.clear();
    std::vector<starpu_task*> tasks(plan.activities.size(), nullptr);
    std::vector<std::size_t> copy_of(plan.activities.size(), 0);  // activity -> its engine copy
    tag_set tags;                                                 // removed on every path out, after the tasks
    task_set owned;                                               // destroys the tasks on every path out
    gate_tag gate{tags.add(next_tag_++)};                         // opened on every path out, before the wait
    std::vector<bool> gated(plan.devices, false);
    for (std::size_t a = 0; a < plan.activities.size(); ++a) {
      const auto& act = plan.activities[a];
      if (act.is_copy) {
        // The copy engine asks for the tensor's handle to read, in plan order: StarPU grants it once
        // the producer has written it. The copy's tag is done when the engine has moved the bytes
        // into the replica, and the tasks that read the replica wait for it.
        engine_copy copy;
        copy.launch = plan.copies.at(act.id);
        copy.bytes = sizes[n + act.id];
        copy.from_buffer = buffer.at(copy.launch.tensor);
        copy.to_buffer = buffer[n + act.id];
        copy.from_handle = handles.output[copy.launch.tensor];
        copy.grants_needed = 1;
        copy.tag = tags.add(next_tag_++);
        for (const auto b : act.after)
          if (plan.activities.at(b).is_copy) copy.after.push_back(copy_of[b]);
        copy_of[a] = enqueue(std::move(copy));
        continue;
      }
      auto& job = new_job(act.id);
      job.vertex = plan.vertices.at(act.id);
      const int worker = workers().at(job.vertex.device);
      std::vector<starpu_data_descr> data{{handles.output[act.id], STARPU_W}};
      std::vector<starpu_task*> deps;
      std::vector<starpu_tag_t> copies;
      for (const auto b : act.after) {
        if (!plan.activities.at(b).is_copy) {
          deps.push_back(tasks.at(b));
          continue;
        }
        data.push_back({handles.replica[plan.activities[b].id], STARPU_R});
        std::lock_guard lock(engine_mutex_);
        copies.push_back(copies_[copy_of[b]].tag);
      }
      starpu_task* task = make_task(vertex_codelet_, job, worker, data);
      owned.tasks.push_back(task);
      tasks[a] = task;
      if (!deps.empty()) starpu_task_declare_deps_array(task, static_cast<unsigned>(deps.size()), deps.data());
      // Each worker's first task waits for the gate, which opens once everything is submitted.
      if (!gated[job.vertex.device]) {
        gated[job.vertex.device] = true;
        copies.push_back(gate.tag);
      }
      if (!copies.empty()) {
        // A tag, not the replica's handle held by the engine: StarPU 1.3 loses 48 bytes for every
        // task that waits on a handle an application thread holds.
        task->use_tag = 1;
        task->tag_id = tags.add(next_tag_++);
        starpu_tag_declare_deps_array(task->tag_id, static_cast<unsigned>(copies.size()), copies.data());
      }
      submit(task, worker);
    }
    const seconds host = std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();
    // The run starts when the gate opens: what is measured is StarPU running the plan, not the
    // host submitting it (on a machine whose cores the polling workers take, a submitting thread
    // is preempted for whole scheduler ticks).
    epoch_us_ = starpu_timing_now();
    gate.open();
    starpu_task_wait_for_all();
    wait_for_copies();
    for (std::size_t a = 0; a < tasks.size(); ++a) {
      const auto& act = plan.activities[a];
      if (act.is_copy) {
        std::lock_guard lock(engine_mutex_);
        const auto& c = copies_[copy_of[a]];
        out.push_back({true, act.id, (c.start_us - epoch_us_) * 1e-6, (c.end_us - epoch_us_) * 1e-6});
      } else {
        const auto [start, finish] = times_of(*tasks[a]);
        out.push_back({false, act.id, start, finish});
      }
    }
    rethrow_failure();
    return host;
  }

  // Runs every vertex of g as a task that StarPU's scheduler places on a device worker (the
  // scheduler given at construction; dmda by default), with data dependencies from the edges.
  // StarPU's models are per architecture, so the cost it plans a vertex with is its mean time
  // over the devices; where it runs, it lasts its time on that device. `devices` is the model's
  // device count (at most options().devices).
  template <placement_model M>
  [[nodiscard]] starpu_scheduled_run run_own_scheduler(const csr_graph& g, const M& model, std::size_t devices) {
    begin(devices);
    const std::size_t n = g.vertex_count();
    std::vector<seconds> durations(n * devices);
    const std::vector<std::size_t> sizes(n, 1);
    unsigned char* at = arena(sizes);
    handle_set handles;
    handles.output.resize(n);
    for (std::size_t v = 0; v < n; ++v) at = handles.add(handles.output[v], at, 1);
    starpu_scheduled_run out;
    const auto host_start = std::chrono::steady_clock::now();
    std::vector<starpu_task*> tasks(n, nullptr);
    task_set owned;
    for (const vertex_id v : kahn_order(g)) {
      auto& job = new_job(v);
      double mean = 0;
      for (device_id d = 0; d < devices; ++d) mean += durations[v * devices + d] = model.compute_time(v, d);
      job.per_device = &durations[v * devices];
      job.devices = devices;
      job.cost_us = mean / static_cast<double>(devices) * 1e6;
      job.vertex = {v, 0, 0, detail::traffic_bytes(model, g, v)};
      std::vector<starpu_data_descr> data{{handles.output[v], STARPU_W}};
      for (const auto e : g.in_edges(v)) {
        const auto h = handles.output[g.source(e)];
        if (std::none_of(data.begin(), data.end(), [&](const starpu_data_descr& x) { return x.handle == h; }))
          data.push_back({h, STARPU_R});
      }
      starpu_task* task =
          starpu_task_build(&own_codelet_, STARPU_DATA_MODE_ARRAY, data.data(), static_cast<int>(data.size()), 0);
      if (task == nullptr) throw std::runtime_error("starpu_backend: starpu_task_build failed");
      task->cl_arg = &job;
      task->destroy = 0;
      owned.tasks.push_back(task);
      tasks[v] = task;
      if (const int rc = starpu_task_submit(task); rc != 0)
        throw std::runtime_error("starpu_backend: starpu_task_submit failed (" + std::string(std::strerror(-rc)) + ")");
    }
    out.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();
    starpu_task_wait_for_all();
    out.device.resize(n);
    out.start.resize(n);
    out.finish.resize(n);
    for (vertex_id v = 0; v < n; ++v) {
      std::tie(out.start[v], out.finish[v]) = times_of(*tasks[v]);
      out.device[v] = static_cast<device_id>(index_of(tasks[v]->profiling_info->workerid));
      out.makespan = std::max(out.makespan, out.finish[v]);
    }
    rethrow_failure();
    return out;
  }

 private:
  // What a task runs: the vertex it stands for.
  struct task_job {
    starpu_backend* self = nullptr;
    std::uint32_t id = 0;
    vertex_launch vertex{};
    // A vertex that StarPU's scheduler places: its time on each device, and the cost it plans with.
    const seconds* per_device = nullptr;
    std::size_t devices = 0;
    double cost_us = 0;
  };
  using handle_set = detail::starpu_handle_set;
  using gate_tag = detail::starpu_gate_tag;
  using tag_set = detail::starpu_tag_set;
  struct task_set {
    std::vector<starpu_task*> tasks;
    task_set() = default;
    task_set(const task_set&) = delete;
    task_set& operator=(const task_set&) = delete;
    ~task_set() {
      starpu_task_wait_for_all();
      for (auto* t : tasks) starpu_task_destroy(t);
    }
  };

  static bool known_scheduler(const std::string& name) {
    for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); p != nullptr && *p != nullptr; ++p)
      if ((*p)->policy_name != nullptr && name == (*p)->policy_name) return true;
    return false;
  }
  static std::string scheduler_names() {
    std::string out;
    for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); p != nullptr && *p != nullptr; ++p)
      if ((*p)->policy_name != nullptr) out += (out.empty() ? "" : ", ") + std::string((*p)->policy_name);
    return out;
  }

  // The buffers of one run's handles, one after another: kept from run to run and written once
  // when they grow, so that no run pays for allocating and first touching its tensors (StarPU
  // allocating a fresh megabyte for each made a copy cost milliseconds).
  unsigned char* arena(const std::vector<std::size_t>& sizes) {
    std::size_t total = 0;
    for (const auto b : sizes) total += b;
    if (arena_.size() < total) arena_.assign(total, 1);
    return arena_.data();
  }

  [[nodiscard]] std::size_t real_copy_bytes(byte_count bytes) const {
    return static_cast<std::size_t>(
        std::max<byte_count>(1, std::min<byte_count>(bytes, options_.kernels.max_copy_bytes)));
  }

  // Copies of one device pair go to one engine, pairs to engines in turn as they appear.
  std::size_t engine_of(device_id from, device_id to) {
    const auto [it, fresh] = pairs_.try_emplace({from, to}, pairs_.size() % engines_.size());
    return it->second;
  }

  task_job& new_job(std::uint32_t id) {
    jobs_.push_back({this, id, {}, nullptr, 0, 0});
    return jobs_.back();
  }

  // A task of `cl` running `job`, pinned to `worker`, accessing `data` (any number of handles).
  static starpu_task* make_task(starpu_codelet& cl, task_job& job, int worker, std::vector<starpu_data_descr>& data) {
    starpu_task* task = starpu_task_build(&cl, STARPU_DATA_MODE_ARRAY, data.data(), static_cast<int>(data.size()), 0);
    if (task == nullptr) throw std::runtime_error("starpu_backend: starpu_task_build failed");
    task->cl_arg = &job;
    task->destroy = 0;
    task->execute_on_a_specific_worker = 1;
    task->workerid = static_cast<unsigned>(worker);
    return task;
  }

  // Pinned, in submission order on its worker.
  void submit(starpu_task* task, int worker) {
    // StarPU runs a worker's ordered tasks 1, 2, 3, ... and never resets the count: a number taken
    // by a task that was not submitted would stall the worker for good.
    unsigned& next = next_order_[index_of(worker)];
    task->workerorder = next;
    if (const int rc = starpu_task_submit(task); rc != 0)
      throw std::runtime_error("starpu_backend: starpu_task_submit failed (" + std::string(std::strerror(-rc)) + ")");
    ++next;
  }

  void submit_decided(task_job& job, int worker) {
    std::vector<starpu_data_descr> none;
    starpu_task* task = make_task(vertex_codelet_, job, worker, none);
    task->destroy = 1;
    task->callback_func = &starpu_backend::on_done;
    task->callback_arg = &job;
    {
      std::lock_guard lock(done_mutex_);
      ++in_flight_;
    }
    // Not ordered: the executor launches a device's next vertex only once the previous is done.
    if (const int rc = starpu_task_submit(task); rc != 0) {
      std::lock_guard lock(done_mutex_);
      --in_flight_;
      throw std::runtime_error("starpu_backend: starpu_task_submit failed (" + std::string(std::strerror(-rc)) + ")");
    }
  }

  // StarPU's worker ids, per device (the session's).
  [[nodiscard]] const std::vector<int>& workers() const { return session_->workers(); }
  // The device whose worker is `worker` (options().devices where none is).
  [[nodiscard]] std::size_t index_of(int worker) const {
    const auto& ids = workers();
    return static_cast<std::size_t>(std::find(ids.begin(), ids.end(), worker) - ids.begin());
  }

  // StarPU's measure of a finished task: when its worker started and ended the codelet.
  [[nodiscard]] std::pair<seconds, seconds> times_of(const starpu_task& task) const {
    const auto us = detail::starpu_task_times_us(task);
    if (!us) throw std::logic_error("starpu_backend: StarPU kept no profiling info for a task");
    return {(us->first - epoch_us_) * 1e-6, (us->second - epoch_us_) * 1e-6};
  }

  static void on_done(void* arg) {
    auto& job = *static_cast<task_job*>(arg);
    auto& self = *job.self;
    const starpu_task* task = starpu_task_get_current();
    completion c{false, job.id, 0, 0};
    if (task != nullptr && task->profiling_info != nullptr) std::tie(c.start, c.finish) = self.times_of(*task);
    {
      std::lock_guard lock(self.done_mutex_);
      self.done_.push_back(c);
      --self.in_flight_;
    }
    self.done_ready_.notify_one();
  }

  void fail(std::exception_ptr e) {
    std::lock_guard lock(done_mutex_);
    if (!failure_) failure_ = std::move(e);
  }
  void rethrow_failure() {
    std::lock_guard lock(done_mutex_);
    if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  }

  static void run_vertex(void** /*buffers*/, void* arg) {
    auto& job = *static_cast<task_job*>(arg);
    detail::tighten_timer_slack_once();
    try {
      detail::run_cpu_kernel(job.self->options_.kernels, job.vertex);
    } catch (...) {
      job.self->fail(std::current_exception());
    }
  }

  // A vertex placed by StarPU: it runs on the worker's device for its time there.
  static void run_placed_by_starpu(void** /*buffers*/, void* arg) {
    auto& job = *static_cast<task_job*>(arg);
    detail::tighten_timer_slack_once();
    try {
      const auto d = job.self->index_of(starpu_worker_get_id());
      vertex_launch launch = job.vertex;
      launch.device = static_cast<device_id>(d);
      launch.duration = d < job.devices ? job.per_device[d] : 0;
      detail::run_cpu_kernel(job.self->options_.kernels, launch);
    } catch (...) {
      job.self->fail(std::current_exception());
    }
  }
  static int on_device_worker(unsigned worker, starpu_task* task, unsigned /*nimpl*/) {
    const auto& job = *static_cast<const task_job*>(task->cl_arg);
    return job.self->index_of(static_cast<int>(worker)) < job.devices ? 1 : 0;
  }
  static double planned_cost(starpu_task* task, starpu_perfmodel_arch* /*arch*/, unsigned /*nimpl*/) {
    return static_cast<const task_job*>(task->cl_arg)->cost_us;
  }

  // A copy for an engine: decided (launched by the executor, between the engine's own buffers,
  // reported as a completion) or ahead (between two handles' buffers, run once StarPU has granted
  // both, then released).
  struct engine_copy {
    copy_launch launch{};
    bool decided = false;
    std::size_t bytes = 0;
    const unsigned char* from_buffer = nullptr;
    unsigned char* to_buffer = nullptr;
    starpu_data_handle_t from_handle = nullptr;
    starpu_tag_t tag = 0;  // ahead: done once the copy is
    int grants_needed = 0, granted = 0;
    std::vector<std::size_t> after;  // copies (of this run) that must be done first
    bool done = false;
    double start_us = 0, end_us = 0;  // on starpu_timing_now()'s clock
    starpu_backend* self = nullptr;
  };
  struct engine {
    std::thread thread;
    std::deque<std::size_t> queue;        // copies, in the order this engine runs them
    std::vector<unsigned char> from, to;  // decided copies' buffers, touched by this engine only
  };

  // Queues a copy on its pair's engine (asking StarPU for its handles, ahead); returns its index.
  std::size_t enqueue(engine_copy copy) {
    std::size_t index = 0;
    engine_copy* queued = nullptr;
    {
      std::lock_guard lock(engine_mutex_);
      copy.self = this;
      index = copies_.size();
      queued = &copies_.emplace_back(std::move(copy));
      ++pending_copies_;
      engines_[engine_of(queued->launch.from, queued->launch.to)].queue.push_back(index);
    }
    // Outside the lock: StarPU may grant at once, calling granted() on this thread.
    if (queued->grants_needed > 0)
      starpu_data_acquire_cb(queued->from_handle, STARPU_R, &starpu_backend::granted, queued);
    engine_wake_.notify_all();
    return index;
  }
  static void granted(void* arg) {
    auto& copy = *static_cast<engine_copy*>(arg);
    {
      std::lock_guard lock(copy.self->engine_mutex_);
      ++copy.granted;
    }
    copy.self->engine_wake_.notify_all();
  }
  [[nodiscard]] bool ready(const engine_copy& c) const {
    return c.granted == c.grants_needed &&
           std::all_of(c.after.begin(), c.after.end(), [&](std::size_t k) { return copies_[k].done; });
  }
  void wait_for_copies() {
    std::unique_lock lock(engine_mutex_);
    copies_done_.wait(lock, [&] { return pending_copies_ == 0; });
  }

  // An engine: a host thread that sleeps until its next copy may run, moves its bytes, lasts until
  // its modelled time has passed (from when it started), and hands it back.
  void run_engine(std::size_t e) {
    detail::tighten_timer_slack();
    auto& self = engines_[e];
    for (;;) {
      std::unique_lock lock(engine_mutex_);
      engine_wake_.wait(lock, [&] { return stopping_ || (!self.queue.empty() && ready(copies_[self.queue.front()])); });
      if (self.queue.empty() || !ready(copies_[self.queue.front()])) return;  // stopping
      engine_copy& c = copies_[self.queue.front()];
      self.queue.pop_front();
      lock.unlock();
      const auto started = std::chrono::steady_clock::now();
      const double start_us = starpu_timing_now();
      try {
        if (c.decided) {
          if (self.from.size() < c.bytes) self.from.assign(c.bytes, 1);
          if (self.to.size() < c.bytes) self.to.resize(c.bytes);
          std::memcpy(self.to.data(), self.from.data(), c.bytes);
        } else {
          std::memcpy(c.to_buffer, c.from_buffer, c.bytes);
        }
        if (options_.kernels.pace_copies && c.launch.duration > 0)
          detail::wait_until(started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                           std::chrono::duration<double>(c.launch.duration)),
                             options_.kernels.sleep_margin);
      } catch (...) {
        fail(std::current_exception());
      }
      const double end_us = starpu_timing_now();
      if (!c.decided) {
        starpu_data_release(c.from_handle);
        starpu_tag_notify_from_apps(c.tag);
      }
      lock.lock();
      c.start_us = start_us;
      c.end_us = end_us;
      c.done = true;
      const bool last = --pending_copies_ == 0;
      lock.unlock();
      engine_wake_.notify_all();  // a copy that waited for this one may run
      if (last) copies_done_.notify_all();
      if (c.decided) {
        {
          std::lock_guard done(done_mutex_);
          done_.push_back({true, c.launch.id, (start_us - epoch_us_) * 1e-6, (end_us - epoch_us_) * 1e-6});
          --in_flight_;
        }
        done_ready_.notify_one();
      }
    }
  }

  // First, so that it ends last: StarPU stops once everything that uses it is gone.
  std::optional<detail::starpu_session> session_;
  starpu_backend_options options_;
  std::vector<unsigned> next_order_;  // per worker, the next workerorder (StarPU never resets it)
  std::map<std::pair<device_id, device_id>, std::size_t> pairs_;  // device pair -> engine
  starpu_codelet vertex_codelet_{}, own_codelet_{};
  starpu_perfmodel own_model_{};
  std::deque<task_job> jobs_;  // stable addresses: tasks point at them
  std::vector<unsigned char> arena_;
  starpu_tag_t next_tag_ = starpu_tag_t{1} << 40;  // tags of ahead runs, never reused
  double epoch_us_ = 0;

  std::mutex done_mutex_;
  std::condition_variable done_ready_;
  std::vector<completion> done_;
  std::size_t in_flight_ = 0;
  std::exception_ptr failure_;

  std::mutex engine_mutex_;
  std::condition_variable engine_wake_, copies_done_;
  std::deque<engine_copy> copies_;  // this run's copies (stable addresses: StarPU's callbacks hold them)
  std::size_t pending_copies_ = 0;
  bool stopping_ = false;
  std::vector<engine> engines_;  // last: its threads start once everything else exists
};
static_assert(execution_backend<starpu_backend> && ahead_backend<starpu_backend>);

// StarPU's own cost per task on one worker: a chain of `length` empty vertices on device 0, each
// after the one before in the worker's order, replayed ahead; the median over `runs` runs of the
// measured makespan (from the gate's opening) over `length`. What a simulation adds to every
// vertex to account for the runtime, as the executor's launch round trip is for the CPU backend.
[[nodiscard]] inline seconds measure_task_cost(starpu_backend& backend, std::size_t length = 400,
                                               std::size_t runs = 5) {
  return detail::measure_ahead_task_cost(backend, length, runs);
}

// g run as StarPU's own scheduler places it on backend's device workers (one per device of the
// model): the placement no gantry placer chose, measured on the same runtime as theirs.
template <adapted_graph G, placement_model M>
[[nodiscard]] starpu_scheduled_run run_with_starpu_scheduler(const G& graph, const M& model, starpu_backend& backend,
                                                             std::size_t devices = 0) {
  const detail::csr_view<G> g(graph);
  if (const auto cycle = g->find_cycle(); !cycle.empty())
    throw not_a_dag("run_with_starpu_scheduler: the graph has a cycle: " + describe_cycle(graph, cycle));
  return backend.run_own_scheduler(*g, model, devices == 0 ? backend.options().devices : devices);
}

}  // namespace gantry
