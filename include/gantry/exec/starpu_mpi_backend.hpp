// The StarPU-MPI backend of the executor: a placement run across MPI processes (ranks) by
// StarPU-MPI, one process per gantry device, on one machine or on a cluster's nodes. Every rank
// runs the same program on the same graph, placement and cluster (checked), and each call below is
// collective: every rank makes it, in the same order.
//
// A run replays a simulated schedule ahead (exec/replay_ahead.hpp), as the StarPU backend does in
// one process (exec/starpu_backend.hpp):
//   - every tensor is a StarPU data handle registered with its owner rank (a vertex's output with
//     the rank that computes it; each transfer's replica with the receiving rank), and every rank
//     inserts every vertex with starpu_mpi_task_insert(STARPU_EXECUTE_ON_NODE = its device's rank):
//     the owning rank runs it on its worker, in the plan's order (workerorder), the others only
//     take note;
//   - a transfer is a StarPU-MPI message. The sending rank's copy engine (a host thread) waits for
//     the producer's handle (starpu_data_acquire_cb), copies min(bytes, max_copy_bytes) into an
//     outbox handle with the time it started, and sends it (starpu_mpi_isend_detached); the
//     receiving rank posted the matching starpu_mpi_irecv_detached into the replica when the plan
//     was submitted. With kernels.pace_copies the copy lasts at least its modelled time: the
//     receiver ends it, and releases its consumers (a tag they wait for), no earlier than its start
//     on the sender plus its modelled time. Without, a copy lasts what MPI takes (what `gantry
//     calibrate --backend starpu-mpi` fits).
//   - the ranks' clocks are tied to rank 0's when the backend starts (on rank 0's machine from the
//     processes' StarPU starts; elsewhere by ping-pongs before StarPU's threads run, the round
//     trip of least delay), and every run starts at one instant: each rank submits its part behind
//     a gate, rank 0 names the start a little ahead, and every rank opens its gate then.
// Each rank measures what it runs (StarPU's profiling info for its vertices; the engine for a
// copy's start, on the sender, and end, on the receiver), on its clock from the common start; the
// ranks then share what they measured, so every rank returns the whole measured schedule.
//
// One device per rank: a placement on m devices needs m ranks (more ranks idle). On independent
// links (parallel) each copy starts once its tensor is written, however many are in flight, as in
// the simulation. Where links share a channel or a port (sequential, duplex, node ports), a copy
// starts once the transfers it waits for (its pair's previous one included) have ended where they ended:
// one received by the sending rank is seen there, and the receiving rank of any other sends a
// token, with when it ended, once it is done. Each such wait costs an MPI message's latency that
// the simulation does not charge. What a message proves stays so in the measured schedule however
// far the clocks' tie is off: a copy never starts before a transfer its token announced ended (nor
// ends before it started); clock_correction() says how far the last run had to move a start.
// StarPU and MPI run once per process; MPI is started (MPI_THREAD_MULTIPLE) and finished at exit
// unless the program started it, with MPI_THREAD_MULTIPLE.
#pragma once

#include <gantry/exec/mpi_clock_tie.hpp>
#include <gantry/exec/replay_ahead.hpp>
#include <gantry/exec/starpu_session.hpp>
#include <gantry/model/link_fit.hpp>

#include <starpu_mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace gantry {

struct starpu_mpi_backend_options {
  // How a vertex is spent, how much a copy moves for real and whether it lasts its modelled time
  // (the CPU backend's options; every transfer of a run has two handles of min(bytes,
  // max_copy_bytes), at least 8 bytes: the copy carries its start time).
  cpu_backend_options kernels{.kernel = cpu_kernel::sleep, .max_copy_bytes = std::size_t{64} << 10};
  MPI_Comm comm = MPI_COMM_WORLD;
  std::size_t clock_rounds = 32;    // ping-pongs with rank 0 that tie a rank's clock to rank 0's
  bool clocks_by_messages = false;  // ping-pongs even on rank 0's machine (as between machines)
  seconds start_lead = 2e-3;        // a run starts this long after rank 0 names its start
  std::string scheduler = "eager";  // StarPU's policy on each rank (every task is pinned)
};

class starpu_mpi_backend {
 public:
  // Starts MPI if needed, then StarPU-MPI on comm with one CPU worker, ties the clocks and starts
  // the copy engine. Collective. Throws invalid_input for options it cannot honour and
  // std::runtime_error when MPI or StarPU does not start or another StarPU backend is alive.
  explicit starpu_mpi_backend(starpu_mpi_backend_options options = {}) : options_(std::move(options)) {
    detail::check_kernel_options("starpu_mpi_backend", options_.kernels);
    if (!(options_.start_lead >= 0 && options_.start_lead < 10))
      throw invalid_input("starpu_mpi_backend: start_lead must be in [0, 10) s");
    start_mpi();
    MPI_Comm_rank(options_.comm, &rank_);
    MPI_Comm_size(options_.comm, &ranks_);
    session_.emplace("starpu_mpi_backend");
    const auto machine = tie_machine_clocks(options_.comm, options_.clock_rounds, options_.clocks_by_messages);
    session_->start(
        1, options_.scheduler, "starpu_mpi_init_conf", [&](starpu_conf& conf) { return start_starpu_mpi(conf); },
        [] { starpu_mpi_shutdown(); });
    worker_ = session_->workers().front();
    detail::init_starpu_codelet(codelet_, &starpu_mpi_backend::run_vertex, "gantry_vertex");
    clock_ = tie_process_clocks(machine, starpu_timing_now, options_.comm);
    engine_ = std::thread([this] { run_engine(); });
  }
  starpu_mpi_backend(const starpu_mpi_backend&) = delete;
  starpu_mpi_backend& operator=(const starpu_mpi_backend&) = delete;
  ~starpu_mpi_backend() {
    starpu_task_wait_for_all();
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    engine_.join();
  }

  [[nodiscard]] const starpu_mpi_backend_options& options() const noexcept { return options_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int ranks() const noexcept { return ranks_; }
  // This rank's clock minus rank 0's, and the most that any rank's estimate can be off
  // (exec/mpi_clock_tie.hpp): the error on times compared across ranks.
  [[nodiscard]] seconds clock_offset() const noexcept { return clock_.offset_us * 1e-6; }
  [[nodiscard]] seconds clock_uncertainty() const noexcept { return clock_.uncertainty_us * 1e-6; }
  // The last run's largest correction to the clocks' tie: how much later than its own clock said
  // a copy was put to start after a transfer that another rank's token proved had ended (0 when
  // the tie never contradicted a message); at most twice clock_uncertainty() (two ranks' ties).
  [[nodiscard]] seconds clock_correction() const noexcept { return correction_us_ * 1e-6; }

  // Whether copies last their modelled time (kernels.pace_copies), for the runs that follow; off,
  // a copy lasts what MPI takes, as calibration wants. Collective.
  void pace_copies(bool on) {
    std::lock_guard lock(mutex_);
    options_.kernels.pace_copies = on;
  }
  // The kernels and copy rules for the runs that follow (measure_mpi_link() moves whole tensors,
  // unpaced). Collective.
  void copy_kernels(const cpu_backend_options& kernels) {
    std::lock_guard lock(mutex_);
    options_.kernels = kernels;
  }

  // A run on `devices` devices (at most ranks()).
  void begin(std::size_t devices) {
    if (devices > static_cast<std::size_t>(ranks_))
      throw invalid_input("starpu_mpi_backend: a run on " + std::to_string(devices) +
                          " devices needs as many MPI ranks; " + std::to_string(ranks_) + " run (mpirun -np " +
                          std::to_string(devices) + ")");
  }

  // Runs `plan` across the ranks (collective: every rank passes the same plan) and fills one
  // completion per activity, timed from the common start; returns the longest host time a rank
  // spent registering and submitting.
  seconds run_ahead(const ahead_plan& plan, std::vector<completion>& out) {
    const std::size_t n = plan.vertices.size(), t = plan.copies.size();
    begin(plan.devices);
    same_plan_everywhere(plan);
    const auto host_start = std::chrono::steady_clock::now();
    const auto rank_of = [](device_id d) { return static_cast<int>(d); };

    // This rank's buffers: its vertices' outputs, its sends' outboxes and its receives' replicas.
    std::vector<std::size_t> bytes(n, 8);
    for (const auto& c : plan.copies) bytes[c.tensor] = std::max(bytes[c.tensor], copy_bytes(c.bytes));
    std::size_t total = 0;
    for (vertex_id v = 0; v < n; ++v)
      if (rank_of(plan.vertices[v].device) == rank_) total += bytes[v];
    for (const auto& c : plan.copies)
      if (rank_of(c.from) == rank_ || rank_of(c.to) == rank_) total += bytes[c.tensor];
    if (arena_.size() < total) arena_.assign(total, 1);
    unsigned char* at = arena_.data();

    mpi_handles handles;
    handles.output.resize(n);
    handles.replica.resize(t);
    std::vector<unsigned char*> output_buffer(n, nullptr);
    const starpu_mpi_tag_t first_tag = next_data_tag_;
    next_data_tag_ += static_cast<starpu_mpi_tag_t>(n + 2 * t);
    next_message_tag_ = first_tag + static_cast<starpu_mpi_tag_t>(n + 2 * t);
    for (vertex_id v = 0; v < n; ++v) {
      const int owner = rank_of(plan.vertices[v].device);
      output_buffer[v] = owner == rank_ ? std::exchange(at, at + bytes[v]) : nullptr;
      handles.add(handles.output[v], output_buffer[v], bytes[v], first_tag + v, owner);
    }

    jobs_.clear();
    {
      std::lock_guard lock(mutex_);
      copies_.clear();
      sends_.clear();
      early_.clear();
      next_send_ = 0;
      pending_ = 0;
      moved_us_ = 0;
      gate_open_ = false;
      failure_ = nullptr;
    }
    tokens_.clear();
    std::vector<std::size_t> copy_of(plan.activities.size(), 0);  // activity -> its copy, on this rank
    detail::starpu_tag_set tags;
    detail::starpu_gate_tag gate{tags.add(next_tag_++)};
    bool gated = false;
    std::map<std::pair<device_id, device_id>, std::uint32_t> last_on_pair;  // the pair's latest transfer
    for (std::size_t a = 0; a < plan.activities.size(); ++a) {
      const auto& act = plan.activities[a];
      if (act.is_copy) {
        const auto& launch = plan.copies.at(act.id);
        const int from = rank_of(launch.from), to = rank_of(launch.to);
        const auto replica_tag = first_tag + static_cast<starpu_mpi_tag_t>(n + act.id);
        const auto message_tag = first_tag + static_cast<starpu_mpi_tag_t>(n + t + act.id);
        const std::size_t size = bytes[launch.tensor];
        unsigned char* replica = to == rank_ ? std::exchange(at, at + size) : nullptr;
        handles.add(handles.replica[act.id], replica, size, replica_tag, to);
        // On shared links a transfer starts once the transfers before it are done where they
        // ended: the previous one on its pair and those whose links it shares. One received by the
        // sending rank is seen there; the receiving rank of any other sends a token when it is
        // done. On independent links nothing orders transfers: MPI messages are in flight
        // together, as the simulation's parallel links are.
        std::vector<std::uint32_t> waits_for;
        const auto [previous, first] = last_on_pair.try_emplace({launch.from, launch.to}, a);
        if (!first) {
          const auto b = std::exchange(previous->second, static_cast<std::uint32_t>(a));
          if (plan.shared_links) waits_for.push_back(b);
        }
        for (const auto b : act.after)
          if (plan.activities.at(b).is_copy) waits_for.push_back(b);
        std::vector<std::size_t> local;
        std::vector<std::pair<std::uint32_t, starpu_mpi_tag_t>> tokens;  // (activity waited for, tag)
        for (const auto b : waits_for) {
          const auto& y = plan.copies.at(plan.activities[b].id);
          if (y.to == launch.from) {
            if (from == rank_) local.push_back(copy_of[b]);
            continue;
          }
          const starpu_mpi_tag_t tag = next_message_tag_++;
          if (rank_of(y.to) == rank_) {
            std::lock_guard lock(mutex_);
            auto& done = copies_[copy_of[b]];
            if (done.notify.empty()) handles.add_local(done.told_handle, done.told, sizeof done.told);
            done.notify.emplace_back(from, tag);
          }
          if (from == rank_) tokens.emplace_back(b, tag);
        }
        if (from != rank_ && to != rank_) continue;
        mpi_copy copy;
        copy.launch = launch;
        copy.bytes = size;
        copy.peer = from == rank_ ? to : from;
        copy.message_tag = message_tag;
        copy.sends = from == rank_;
        if (copy.sends) {
          copy.from_buffer = output_buffer.at(launch.tensor);
          copy.from_handle = handles.output[launch.tensor];
          copy.buffer = std::exchange(at, at + size);
          handles.add_local(copy.handle, copy.buffer, size);
          copy.after = std::move(local);
          copy.tokens_needed = static_cast<int>(tokens.size());
        } else {
          copy.buffer = replica;
          copy.handle = handles.replica[act.id];
          copy.tag = tags.add(next_tag_++);
        }
        copy_of[a] = enqueue(std::move(copy));
        for (const auto& [b, tag] : tokens) {
          auto& word = tokens_.emplace_back();
          word.self = this;
          word.copy = copy_of[a];
          handles.add_local(word.handle, word.word, sizeof word.word);
          const int sender = rank_of(plan.copies[plan.activities[b].id].to);
          if (starpu_mpi_irecv_detached(word.handle, sender, tag, options_.comm, &starpu_mpi_backend::told, &word) != 0)
            throw std::runtime_error("starpu_mpi_backend: starpu_mpi_irecv_detached failed");
        }
        continue;
      }
      const auto& launch = plan.vertices.at(act.id);
      const int owner = rank_of(launch.device);
      std::vector<starpu_data_descr> data{{handles.output[act.id], STARPU_W}};
      std::vector<starpu_tag_t> waits;
      for (const auto b : act.after)
        if (plan.activities.at(b).is_copy) {
          data.push_back({handles.replica[plan.activities[b].id], STARPU_R});
          if (owner == rank_) {
            std::lock_guard lock(mutex_);
            waits.push_back(copies_[copy_of[b]].tag);
          }
        }
      if (owner != rank_) {
        // Every rank inserts every task; StarPU-MPI sees the task's data all owned by its rank,
        // so nothing moves and nothing runs here.
        insert(data, owner, nullptr, 0, 0);
        continue;
      }
      jobs_.push_back({this, act.id, launch, 0, 0});
      if (!std::exchange(gated, true)) waits.push_back(gate.tag);
      starpu_tag_t tag = 0;
      if (!waits.empty()) {
        tag = tags.add(next_tag_++);
        starpu_tag_declare_deps_array(tag, static_cast<unsigned>(waits.size()), waits.data());
      }
      insert(data, owner, &jobs_.back(), next_order_, tag);
      ++next_order_;
    }
    next_data_tag_ = next_message_tag_;
    const seconds host = std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();

    // Rank 0 names the start (on its clock); each rank opens its gate at that instant on its own.
    MPI_Barrier(options_.comm);
    double start_on_0 = rank_ == 0 ? starpu_timing_now() + options_.start_lead * 1e6 : 0;
    MPI_Bcast(&start_on_0, 1, MPI_DOUBLE, 0, options_.comm);
    const double epoch = start_on_0 + clock_.offset_us;
    if (const double wait = epoch - starpu_timing_now(); wait > 0)
      std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(wait));
    {
      std::lock_guard lock(mutex_);
      epoch_us_ = epoch;
      gate_open_ = true;
      for (const auto k : std::exchange(early_, {})) {
        time_arrival(copies_[k]);
        timers_.push({copies_[k].due_us, k});
      }
    }
    wake_.notify_all();
    gate.open();
    starpu_task_wait_for_all();
    {
      std::unique_lock lock(mutex_);
      all_done_.wait(lock, [&] { return pending_ == 0; });
    }
    starpu_mpi_wait_for_all(options_.comm);

    // What each rank measured, shared: a time is known to one rank; the others hold -infinity.
    constexpr double unknown = -std::numeric_limits<double>::infinity();
    std::vector<double> times(2 * (n + t), unknown);
    for (const auto& job : jobs_) {
      times[2 * job.id] = (job.start_us - epoch) * 1e-6;
      times[2 * job.id + 1] = (job.end_us - epoch) * 1e-6;
    }
    {
      std::lock_guard lock(mutex_);
      for (const auto& c : copies_)
        times[2 * (n + c.launch.id) + (c.sends ? 0 : 1)] = ((c.sends ? c.start_us : c.end_us) - epoch) * 1e-6;
    }
    MPI_Allreduce(MPI_IN_PLACE, times.data(), static_cast<int>(times.size()), MPI_DOUBLE, MPI_MAX, options_.comm);
    double longest_host = host;
    MPI_Allreduce(MPI_IN_PLACE, &longest_host, 1, MPI_DOUBLE, MPI_MAX, options_.comm);
    {
      std::lock_guard lock(mutex_);
      correction_us_ = moved_us_;
    }
    MPI_Allreduce(MPI_IN_PLACE, &correction_us_, 1, MPI_DOUBLE, MPI_MAX, options_.comm);
    agree_on_failure();
    for (const auto& act : plan.activities) {
      const std::size_t k = act.is_copy ? n + act.id : act.id;
      if (!(times[2 * k] > unknown && times[2 * k + 1] > unknown))
        throw std::logic_error("starpu_mpi_backend: no rank measured " +
                               std::string(act.is_copy ? "transfer " : "vertex ") + std::to_string(act.id));
      out.push_back({act.is_copy, act.id, times[2 * k], times[2 * k + 1]});
    }
    return longest_host;
  }

 private:
  struct task_job {
    starpu_mpi_backend* self = nullptr;
    std::uint32_t id = 0;
    vertex_launch vertex{};
    double start_us = 0, end_us = 0;  // StarPU's profiling, on this rank's clock
  };
  // A transfer seen from one of its two ranks.
  struct mpi_copy {
    starpu_mpi_backend* self = nullptr;
    std::size_t index = 0;  // in copies_
    copy_launch launch{};
    bool sends = false;  // this rank sends it (else receives it)
    int peer = 0;
    starpu_mpi_tag_t message_tag = 0;
    std::size_t bytes = 0;
    unsigned char* buffer = nullptr;  // the outbox (sending) or the replica (receiving)
    starpu_data_handle_t handle = nullptr;
    const unsigned char* from_buffer = nullptr;  // sending: the producer's output
    starpu_data_handle_t from_handle = nullptr;
    std::vector<std::size_t> after;     // sending: receives of this rank that must be done first
    int tokens_needed = 0, tokens = 0;  // sending: other ranks' receives that must be done first
    double not_before = 0;              // sending: when the last of them ended (tokens say), from the start
    bool started = false;
    std::vector<std::pair<int, starpu_mpi_tag_t>> notify;  // receiving: ranks to tell once done
    unsigned char told[8] = {};                            // receiving: the token, when it ended
    starpu_data_handle_t told_handle = nullptr;
    starpu_tag_t tag = 0;  // receiving: done once the copy is
    bool ready = false;    // sending: the output is granted; receiving: the message arrived
    bool done = false;
    double start_us = 0, end_us = 0, due_us = 0;  // on this rank's clock
  };
  // A copy's word to another rank's engine that a transfer it waits for is done.
  struct token {
    starpu_mpi_backend* self = nullptr;
    std::size_t copy = 0;  // the send of this rank that waits for it
    unsigned char word[8] = {};
    starpu_data_handle_t handle = nullptr;
  };
  // The handles of one run, unregistered on every path out; what StarPU-MPI must know of also
  // registered with it.
  struct mpi_handles : detail::starpu_handle_set {
    // Registers `bytes` at `at` (nullptr: the data lives on another rank) as h, owned by `owner`.
    void add(starpu_data_handle_t& h, unsigned char* at, std::size_t bytes, starpu_mpi_tag_t tag, int owner) {
      add_local(h, at, bytes);
      starpu_mpi_data_register(h, tag, owner);
    }
    void add_local(starpu_data_handle_t& h, unsigned char* at, std::size_t bytes) {
      detail::starpu_handle_set::add(h, at, bytes);
    }
  };

  // Starts StarPU-MPI on comm with `conf` (one CPU worker). Ranks that share a machine spread
  // their workers over its cores (StarPU binds each process's first worker to core 0 otherwise),
  // and their MPI threads over the cores left; where none is left, the MPI threads are not bound
  // (StarPU would bind each to its worker's core, where the two poll in turns of a scheduler tick).
  // STARPU_MPI_THREAD_CPUID or STARPU_MPI_NOBIND, when set, decide instead.
  int start_starpu_mpi(starpu_conf& conf) {
    MPI_Comm node;
    MPI_Comm_split_type(options_.comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    int local_rank = 0, local_ranks = 1;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_ranks);
    MPI_Comm_free(&node);
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    conf.use_explicit_workers_bindid = 1;
    conf.workers_bindid[0] = static_cast<unsigned>(local_rank) % cores;
    if (std::getenv("STARPU_MPI_THREAD_CPUID") == nullptr && std::getenv("STARPU_MPI_NOBIND") == nullptr) {
      if (cores >= 2 * static_cast<unsigned>(local_ranks))
        setenv("STARPU_MPI_THREAD_CPUID", std::to_string(local_ranks + local_rank).c_str(), 1);
      else setenv("STARPU_MPI_NOBIND", "1", 1);
    }
    return starpu_mpi_init_conf(nullptr, nullptr, 0, options_.comm, &conf);
  }

  static void start_mpi() {
    int started = 0;
    MPI_Initialized(&started);
    int provided = 0;
    if (started == 0) {
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        throw std::runtime_error("starpu_mpi_backend: MPI_Init_thread failed");
      std::atexit([] {
        int finished = 0;
        MPI_Finalized(&finished);
        if (finished == 0) MPI_Finalize();
      });
    } else {
      MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE)
      throw invalid_input(
          "starpu_mpi_backend: MPI runs without MPI_THREAD_MULTIPLE (the backend's threads and StarPU-MPI's both "
          "call MPI); start it with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...)");
  }

  // Every rank must run the same plan: a digest of it, compared across ranks.
  void same_plan_everywhere(const ahead_plan& plan) const {
    std::uint64_t h = 1469598103934665603ULL;
    const auto mix = [&](std::uint64_t x) { h = (h ^ x) * 1099511628211ULL; };
    const auto nanoseconds = [](seconds x) { return static_cast<std::uint64_t>(std::llround(x * 1e9)); };
    mix(plan.devices);
    mix(plan.shared_links);
    mix(plan.activities.size());
    for (const auto& a : plan.activities) {
      mix(a.is_copy);
      mix(a.id);
      for (const auto b : a.after) mix(b);
    }
    for (const auto& v : plan.vertices) {
      mix(v.device);
      mix(nanoseconds(v.duration));
    }
    for (const auto& c : plan.copies) {
      mix(c.tensor);
      mix(c.from);
      mix(c.to);
      mix(c.bytes);
      mix(nanoseconds(c.duration));
    }
    std::uint64_t extremes[2] = {h, ~h};
    MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_UINT64_T, MPI_MAX, options_.comm);
    if (extremes[0] != h || ~extremes[1] != h)
      throw invalid_input(
          "starpu_mpi_backend: the ranks were given different plans (every rank must run the same graph, cluster and "
          "placement)");
  }

  [[nodiscard]] std::size_t copy_bytes(byte_count bytes) const {
    return static_cast<std::size_t>(
        std::max<byte_count>(8, std::min<byte_count>(bytes, options_.kernels.max_copy_bytes)));
  }

  // starpu_mpi_task_insert of one vertex: job == nullptr on the ranks that do not run it.
  void insert(std::vector<starpu_data_descr>& data, int owner, task_job* job, unsigned order, starpu_tag_t tag) {
    int rc = 0;
    if (job == nullptr) {
      rc = starpu_mpi_task_insert(options_.comm, &codelet_, STARPU_EXECUTE_ON_NODE, owner, STARPU_DATA_MODE_ARRAY,
                                  data.data(), static_cast<int>(data.size()), 0);
    } else if (tag != 0) {
      rc = starpu_mpi_task_insert(options_.comm, &codelet_, STARPU_EXECUTE_ON_NODE, owner, STARPU_EXECUTE_ON_WORKER,
                                  worker_, STARPU_WORKER_ORDER, order, STARPU_TAG, tag, STARPU_CL_ARGS_NFREE, job,
                                  sizeof(task_job), STARPU_CALLBACK_WITH_ARG_NFREE, &starpu_mpi_backend::on_done, job,
                                  STARPU_DATA_MODE_ARRAY, data.data(), static_cast<int>(data.size()), 0);
    } else {
      rc = starpu_mpi_task_insert(options_.comm, &codelet_, STARPU_EXECUTE_ON_NODE, owner, STARPU_EXECUTE_ON_WORKER,
                                  worker_, STARPU_WORKER_ORDER, order, STARPU_CL_ARGS_NFREE, job, sizeof(task_job),
                                  STARPU_CALLBACK_WITH_ARG_NFREE, &starpu_mpi_backend::on_done, job,
                                  STARPU_DATA_MODE_ARRAY, data.data(), static_cast<int>(data.size()), 0);
    }
    if (rc < 0)
      throw std::runtime_error("starpu_mpi_backend: starpu_mpi_task_insert failed (" + std::string(std::strerror(-rc)) +
                               ")");
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
  static void on_done(void* arg) {
    auto& job = *static_cast<task_job*>(arg);
    const starpu_task* task = starpu_task_get_current();
    if (task == nullptr) return;
    if (const auto us = detail::starpu_task_times_us(*task)) std::tie(job.start_us, job.end_us) = *us;
  }

  void fail(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::move(e);
  }
  // A failure on any rank fails the run on every rank (each rethrows its own, or names the rank).
  void agree_on_failure() {
    std::exception_ptr mine;
    {
      std::lock_guard lock(mutex_);
      mine = std::exchange(failure_, nullptr);
    }
    int failed = mine ? rank_ : -1;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, options_.comm);
    if (mine) std::rethrow_exception(mine);
    if (failed >= 0) throw std::runtime_error("starpu_mpi_backend: the run failed on rank " + std::to_string(failed));
  }

  // Queues a copy for the engine: a send waits for its tensor to be granted, a receive is posted.
  std::size_t enqueue(mpi_copy copy) {
    std::size_t index = 0;
    mpi_copy* queued = nullptr;
    {
      std::lock_guard lock(mutex_);
      copy.self = this;
      index = copy.index = copies_.size();
      queued = &copies_.emplace_back(std::move(copy));
      ++pending_;
      if (queued->sends) sends_.push_back(index);
    }
    // Outside the lock: StarPU may call back at once, on this thread.
    if (queued->sends) starpu_data_acquire_cb(queued->from_handle, STARPU_R, &starpu_mpi_backend::granted, queued);
    else if (starpu_mpi_irecv_detached(queued->handle, queued->peer, queued->message_tag, options_.comm,
                                       &starpu_mpi_backend::arrived, queued) != 0)
      throw std::runtime_error("starpu_mpi_backend: starpu_mpi_irecv_detached failed");
    return index;
  }
  static void granted(void* arg) {
    auto& copy = *static_cast<mpi_copy*>(arg);
    {
      std::lock_guard lock(copy.self->mutex_);
      copy.ready = true;
    }
    copy.self->wake_.notify_all();
  }
  // A message arrived: it ends once its modelled time from its start (on the sender) has passed.
  // The sender may be ahead of this rank: a message can arrive before this rank has opened its
  // gate and knows the run's start, in which case it is timed when the gate opens.
  // A message that arrives after its modelled end ends at once, here, without waking the engine
  // (on a machine whose cores the polling threads hold, a wake-up waits for a core).
  static void arrived(void* arg) {
    auto& copy = *static_cast<mpi_copy*>(arg);
    auto& self = *copy.self;
    endings done;
    {
      std::lock_guard lock(self.mutex_);
      copy.ready = true;
      if (!self.gate_open_) {
        self.early_.push_back(copy.index);
      } else {
        self.time_arrival(copy);
        if (const double now = starpu_timing_now(); copy.due_us <= now) self.end_received(copy, now, done);
        else self.timers_.push({copy.due_us, copy.index});
      }
    }
    self.announce(done);
    self.wake_.notify_all();
  }
  // Under the lock, once the run's start is known: when a received copy ends.
  void time_arrival(mpi_copy& copy) {
    double started = 0;
    std::memcpy(&started, copy.buffer, sizeof started);
    copy.start_us = epoch_us_ + started;
    // Unpaced, a copy ends when it arrives, but never before its start as tied to this clock.
    copy.due_us = copy.start_us + (options_.kernels.pace_copies ? copy.launch.duration * 1e6 : 0);
  }
  // What received copies that ended release: their consumers' tags, the ranks waiting for them.
  struct endings {
    std::vector<starpu_tag_t> released;
    // The ranks waiting for them: the token's handle, the rank, the message tag.
    std::vector<std::tuple<starpu_data_handle_t, int, starpu_mpi_tag_t>> tell;
    bool finished = false;  // the run's last copy on this rank
  };
  // Under the lock: a received copy ends at `now`.
  void end_received(mpi_copy& c, double now, endings& out) {
    c.end_us = now;
    c.done = true;
    out.released.push_back(c.tag);
    const double ended = now - epoch_us_;
    std::memcpy(c.told, &ended, sizeof ended);
    for (const auto& [peer, tag] : c.notify) out.tell.emplace_back(c.told_handle, peer, tag);
    out.finished = --pending_ == 0 || out.finished;
  }
  // Outside the lock: tokens sent, consumers released.
  void announce(const endings& e) {
    for (const auto& [said, peer, tag] : e.tell)
      if (starpu_mpi_isend_detached(said, peer, tag, options_.comm, nullptr, nullptr) != 0)
        fail(std::make_exception_ptr(std::runtime_error("starpu_mpi_backend: starpu_mpi_isend_detached failed")));
    for (const auto tag : e.released) starpu_tag_notify_from_apps(tag);
    if (e.finished) all_done_.notify_all();
  }

  static void told(void* arg) {
    auto& word = *static_cast<token*>(arg);
    double ended = 0;
    std::memcpy(&ended, word.word, sizeof ended);
    {
      std::lock_guard lock(word.self->mutex_);
      auto& c = word.self->copies_[word.copy];
      ++c.tokens;
      c.not_before = std::max(c.not_before, ended);
    }
    word.self->wake_.notify_all();
  }

  [[nodiscard]] bool may_send(const mpi_copy& c) const {
    return gate_open_ && !c.started && c.ready && c.tokens == c.tokens_needed &&
           std::all_of(c.after.begin(), c.after.end(), [&](std::size_t k) { return copies_[k].done; });
  }

  // The first send that may start, or nullptr.
  mpi_copy* next_send() {
    while (next_send_ < sends_.size() && copies_[sends_[next_send_]].started) ++next_send_;
    for (std::size_t k = next_send_; k < sends_.size(); ++k)
      if (may_send(copies_[sends_[k]])) return &copies_[sends_[k]];
    return nullptr;
  }

  // The engine: starts each send of this rank once what it waits for is done, and ends each
  // received copy when its time has passed (then releases its consumers and tells the ranks
  // waiting for it).
  void run_engine() {
    detail::tighten_timer_slack();
    std::unique_lock lock(mutex_);
    for (;;) {
      if (stopping_) return;
      if (mpi_copy* send = next_send()) {
        mpi_copy& c = *send;
        c.started = true;
        const double epoch = epoch_us_, not_before = epoch + c.not_before;
        lock.unlock();
        // A token proves that what it announces ended before this copy starts: where the clocks'
        // tie puts that end later than this clock's now, the start is put there (the tie's error
        // is what moves, never the order). The largest such move of a run is reported.
        const double now = starpu_timing_now();
        c.start_us = std::max(now, not_before);
        try {
          std::memcpy(c.buffer, c.from_buffer, c.bytes);
        } catch (...) {
          fail(std::current_exception());
        }
        const double started = c.start_us - epoch;
        std::memcpy(c.buffer, &started, sizeof started);
        starpu_data_release(c.from_handle);
        if (starpu_mpi_isend_detached(c.handle, c.peer, c.message_tag, options_.comm, nullptr, nullptr) != 0)
          fail(std::make_exception_ptr(std::runtime_error("starpu_mpi_backend: starpu_mpi_isend_detached failed")));
        lock.lock();
        c.done = true;
        moved_us_ = std::max(moved_us_, c.start_us - now);
        if (--pending_ == 0) all_done_.notify_all();
        continue;
      }
      const double now = starpu_timing_now();
      endings done;
      while (!timers_.empty() && timers_.top().first <= now) {
        mpi_copy& c = copies_[timers_.top().second];
        timers_.pop();
        end_received(c, now, done);
      }
      if (!done.released.empty() || done.finished) {
        lock.unlock();
        announce(done);
        lock.lock();
        continue;
      }
      // Asleep until the next copy ends or a callback wakes it.
      if (!timers_.empty()) wake_.wait_for(lock, std::chrono::duration<double, std::micro>(timers_.top().first - now));
      else wake_.wait(lock);
    }
  }

  // First, so that it ends last: StarPU stops once everything that uses it is gone.
  std::optional<detail::starpu_session> session_;
  starpu_mpi_backend_options options_;
  int rank_ = 0, ranks_ = 1;
  int worker_ = 0;
  unsigned next_order_ = 1;   // the worker's next workerorder (StarPU never resets it)
  mpi_clock_tie clock_;       // StarPU's clock on this rank against rank 0's
  double correction_us_ = 0;  // the last run's clock_correction(), every rank's largest
  starpu_codelet codelet_{};
  std::deque<task_job> jobs_;
  std::vector<unsigned char> arena_;
  starpu_tag_t next_tag_ = starpu_tag_t{1} << 40;
  starpu_mpi_tag_t next_data_tag_ = 1, next_message_tag_ = 0;
  std::deque<token> tokens_;  // this run's tokens awaited (stable addresses: callbacks hold them)

  std::mutex mutex_;
  std::condition_variable wake_, all_done_;
  std::deque<mpi_copy> copies_;  // this rank's copies of the run (stable addresses: callbacks hold them)
  std::vector<std::size_t> sends_;
  std::size_t next_send_ = 0, pending_ = 0;
  double moved_us_ = 0;  // this run's largest start moved after a token
  double epoch_us_ = 0;
  bool gate_open_ = false, stopping_ = false;
  std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>, std::greater<>>
      timers_;                      // received copies, by when they end
  std::vector<std::size_t> early_;  // copies received before this rank opened its gate
  std::exception_ptr failure_;
  std::thread engine_;  // last: it starts once everything else exists
};
static_assert(ahead_backend<starpu_mpi_backend>);

// StarPU-MPI's own cost per task on one rank: a chain of `length` empty vertices on device 0,
// replayed ahead; the median over `runs` runs of the makespan over `length`. What a simulation adds
// to every vertex for the runtime. Collective.
[[nodiscard]] inline seconds measure_task_cost(starpu_mpi_backend& backend, std::size_t length = 400,
                                               std::size_t runs = 5) {
  return detail::measure_ahead_task_cost(backend, length, runs);
}

// The MPI link between ranks 0 and 1 (StarPU-MPI's messages, as the backend's copies use them).
struct mpi_link_calibration {
  std::vector<transfer_sample> samples;  // per size, the median time of an unpaced copy
  link_fit link;
};

// Unpaced copies of `sizes` bytes (each moved in full) from rank 0 to rank 1, the median of `runs`
// each, fitted as the CPU backend's calibration fits its memcpy (exec/calibrate.hpp): the slope by
// least squares, the latency what the smallest copy takes beyond its bytes. What a cluster's link
// is between the machines the ranks run on. Collective (at least 2 ranks).
[[nodiscard]] inline mpi_link_calibration measure_mpi_link(starpu_mpi_backend& backend,
                                                           std::vector<std::size_t> sizes = {8, 4 << 10, 64 << 10,
                                                                                             512 << 10, 4 << 20},
                                                           std::size_t runs = 5) {
  if (backend.ranks() < 2)
    throw invalid_input("measure_mpi_link: needs 2 MPI ranks, " + std::to_string(backend.ranks()) + " run");
  if (sizes.size() < 2) throw invalid_input("measure_mpi_link: needs at least 2 sizes");
  const auto restore = backend.options().kernels;
  mpi_link_calibration out;
  try {
    for (const auto bytes : sizes) {
      graph g;
      g.add_vertex("send", 0);
      g.add_vertex("receive", 0);
      g.add_edge(0, 1, static_cast<byte_count>(bytes));
      const cluster c = cluster::uniform(2);
      const graph_model model(g, c);
      const auto simulated = simulate(g, model, c, std::vector<device_id>{0, 1});
      const auto plan = make_ahead_plan(g, model, c, simulated.schedule);
      auto unpaced = restore;
      unpaced.pace_copies = false;
      unpaced.max_copy_bytes = std::max(unpaced.max_copy_bytes, bytes);
      backend.copy_kernels(unpaced);
      std::vector<double> took;
      for (std::size_t r = 0; r < std::max<std::size_t>(runs, 1); ++r) {
        std::vector<completion> done;
        backend.run_ahead(plan, done);
        for (const auto& d : done)
          if (d.is_copy) took.push_back(std::max(0.0, d.finish - d.start));
      }
      std::sort(took.begin(), took.end());
      out.samples.push_back({static_cast<double>(bytes), took[(took.size() - 1) / 2]});
    }
  } catch (...) {
    backend.copy_kernels(restore);
    throw;
  }
  backend.copy_kernels(restore);
  out.link = fit_link(out.samples);
  const auto smallest =
      *std::min_element(out.samples.begin(), out.samples.end(),
                        [](const transfer_sample& x, const transfer_sample& y) { return x.bytes < y.bytes; });
  out.link.link.latency = std::max(0.0, smallest.time - smallest.bytes / out.link.link.bandwidth);
  return out;
}

}  // namespace gantry
