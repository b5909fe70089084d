// The one event loop that runs a placement: the simulator (sim/simulator.hpp) is this loop over a
// virtual clock whose wait() pops the earliest modelled finish, and the executor (exec/executor.hpp)
// is this loop over a backend that runs the work for real (exec/cpu_backend.hpp, a GPU one).
// Devices run one vertex at a time; a tensor (a producer's edges of equal bytes) moves over the
// resources of its route in the cluster's topology (model/topology.hpp) once its producer is done,
// and is cached on the receiving device; memory is held and freed by the rules of
// schedule/schedule.hpp (detail::memory_ledger counts who still reads what); a start that does not
// fit waits for memory while others go ahead; no device or channel is left idle while work it could
// start is ready. The backend is a template argument: no virtual call per event.
// O((n + e) log n + t log t) for t transfers in parallel mode.
//
// Admission (sim/admission.hpp, work-conserving policies with wait_for_memory): running ahead of the
// priority order can paint a run into a corner (a later vertex's output fills the memory an earlier
// one needs, and neither can start), so a start or transfer that fits is still held back when it
// would leave the priority order, run one vertex at a time from here, no room to finish. Where that
// order fits at time 0 the run never gets stuck on memory. On a virtual clock the rule is used only
// when the run without it waits for memory at some point (tried first, to its first wait, when some
// device could fill up), so a run whose memory never binds is unchanged; strict_order and
// wait_for_memory = false keep no such rule.
#pragma once

#include <gantry/core/enum_names.hpp>
#include <gantry/core/random.hpp>
#include <gantry/core/units.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/schedule/memory_ledger.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/sim/admission.hpp>
#include <gantry/sim/backend.hpp>
#include <gantry/sim/shared_bandwidth.hpp>
#include <gantry/sim/virtual_clock.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <concepts>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace gantry {

// Which ready vertex an idle device runs next.
enum class ready_policy {
  placement_order,  // the ready vertex earliest in the priority order (work-conserving)
  strict_order,     // exactly the priority order per device, waiting for the next one's inputs
  fifo,             // the vertex that became ready first (ties: priority order)
  bottom_level,     // the vertex with the largest bottom level (ties: priority order)
};

inline constexpr enum_name<ready_policy> ready_policy_names[] = {{ready_policy::placement_order, "placement-order"},
                                                                 {ready_policy::strict_order, "strict-order"},
                                                                 {ready_policy::fifo, "fifo"},
                                                                 {ready_policy::bottom_level, "bottom-level"}};
[[nodiscard]] constexpr std::span<const enum_name<ready_policy>> enum_names(ready_policy) noexcept {
  return ready_policy_names;
}
[[nodiscard]] constexpr const char* to_string(ready_policy p) noexcept { return name_of(p); }

// The rules of a run (the executor takes the subset a real run uses: execute_options).
struct simulate_options {
  ready_policy policy = ready_policy::placement_order;
  // The placement order: every vertex once. Empty means Kahn order.
  std::span<const vertex_id> priority = {};
  // Send a tensor to a device at most once and let every consumer there use the copy.
  bool cache_transfers = true;
  // Coefficient of variation of the lognormal factor (mean 1) applied to each duration; 0 keeps the
  // model's durations. Draws come from `seed` and are the same on every platform.
  double cv = 0;
  std::uint64_t seed = 0;
  bool vary_transfers = true;  // with cv > 0, draw transfer durations too
  // With strict_order: the transfers of the schedule being replayed, in the order their channels
  // were reserved (a list scheduler's schedule.transfers is in that order). Each resource of the
  // topology then serves its transfers in this order, so a strict replay of a list scheduler's
  // schedule reproduces it in every communication mode, memory included. A transfer of the replay
  // that is not listed (another cache setting) is served when its resources are free. Empty: every
  // transfer is served by readiness, as in a work-conserving run.
  std::span<const transfer> transfer_order = {};
  // A vertex or transfer whose bytes do not fit on its device now waits until memory is freed
  // (meanwhile the device runs the next ready vertex that fits, and other transfers go ahead); the
  // run fails with out_of_memory only when nothing can go on. A start that fits is held back when it
  // would leave the priority order no room to finish (admission, above). false: the first
  // allocation that does not fit ends the run (a runtime without memory-aware dispatch, as Baechi's
  // simulator).
  bool wait_for_memory = true;
};

// The loop as a class, to step through a run event by event:
//   event_loop<M, D, B, R> loop(g, model, devices, placement, backend, options, "simulate");
//   while (loop.step()) inspect(loop.now());
// R is the result: a type with `gantry::outcome outcome;` and `gantry::schedule schedule;` (and,
// for a measured backend, `host_seconds` and `host_cpu_seconds`). Holds references to its
// arguments: they must outlive it. `who` starts every error message ("simulate", "execute").
template <placement_model M, device_set D, execution_backend B, class R>
class event_loop {
 public:
  static constexpr bool modelled = virtual_time_backend<B>;

  event_loop(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement, B& backend,
             simulate_options options, const char* who, std::function<std::string(vertex_id)> names = {})
      : g_(g), model_(model), devices_(devices), placement_(placement), backend_(backend), options_(options), who_(who),
        names_(std::move(names)) {
    init();
  }
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  // Starts a run at time 0: checks the arguments (invalid_input for a placement or priority of the
  // wrong size or with out-of-range entries, a negative or non-finite cv, and on a measured
  // backend a compute time that is negative or not finite), allocates persistent memory and starts
  // what can start.
  void init() {
    const std::size_t n = g_.vertex_count();
    m_ = devices_.device_count();
    check_arguments(n);
    result_ = {};
    auto& s = result_.schedule;
    s.device.assign(placement_.begin(), placement_.end());
    s.start.assign(n, 0);
    s.finish.assign(n, 0);
    finished_ = 0;
    in_flight_ = 0;
    done_ = false;
    has_zero_duration_ = false;
    rank_.assign(n, 0);
    if (options_.priority.empty()) {
      const auto order = detail::kahn_on(g_);
      if (order.size() != n) throw not_a_dag(std::string(who_) + ": the graph has a cycle");
      for (std::size_t i = 0; i < n; ++i) rank_[order[i]] = static_cast<std::uint32_t>(i);
    } else {
      for (std::size_t i = 0; i < n; ++i) rank_[options_.priority[i]] = static_cast<std::uint32_t>(i);
    }
    if (options_.policy == ready_policy::bottom_level) {
      const auto order = detail::kahn_on(g_);
      if (order.size() != n) throw not_a_dag(std::string(who_) + ": the graph has a cycle");
      bottom_ = detail::compute_levels(g_, order, model_, m_).bottom;
    }
    rng_ = detail::portable_random(options_.seed);
    sigma_ = std::sqrt(std::log1p(options_.cv * options_.cv));
    duration_.resize(n);
    for (vertex_id v = 0; v < n; ++v) duration_[v] = model_.compute_time(v, placement_[v]) * draw();
    pending_.resize(n);
    for (vertex_id v = 0; v < n; ++v) pending_[v] = static_cast<std::uint32_t>(g_.in_degree(v));
    ledger_.reset(n);
    edge_transfer_.assign(g_.edge_count(), detail::no_transfer);
    transfer_duration_.clear();
    busy_.assign(m_, 0);
    topology_ = detail::topology_of(devices_);
    channel_busy_.assign(topology_.resource_count(), 0);
    transfer_queue_.clear();
    booking_of_.clear();
    booked_.assign(topology_.resource_count(), {});
    booked_next_.assign(topology_.resource_count(), 0);
    transfer_booking_.clear();
    booking_claimed_.assign(options_.transfer_order.size(), 0);
    if (options_.policy == ready_policy::strict_order && topology_.shared()) {
      const auto& order = options_.transfer_order;
      for (std::uint32_t i = 0; i < order.size(); ++i) {
        const transfer& t = order[i];
        if (t.tensor >= n || t.from >= m_ || t.to >= m_ || t.from == t.to)
          throw invalid_input(std::string(who_) + ": transfer_order entry " + std::to_string(i) +
                              " names a vertex or device out of range");
        if (!booking_of_.emplace(booking_key(t.tensor, t.to, t.bytes, t.edge), i).second)
          throw invalid_input(std::string(who_) + ": transfer_order lists the tensor of " + name(t.tensor) +
                              " to device " + std::to_string(t.to) +
                              (options_.cache_transfers ? " twice" : " twice for one edge"));
        for (const resource_id r : topology_.route_of(t.from, t.to)) booked_[r].push_back(i);
      }
    }
    ready_.assign(m_, {});
    strict_next_.assign(m_, 0);
    strict_list_.assign(m_, {});
    if (options_.policy == ready_policy::strict_order) {
      std::vector<vertex_id> by_rank(n);
      for (vertex_id v = 0; v < n; ++v) by_rank[rank_[v]] = v;
      for (const vertex_id v : by_rank) strict_list_[placement_[v]].push_back(v);
    }
    memory_now_.assign(m_, 0);
    over_.assign(m_, {});
    over_devices_.clear();
    waiting_ = {};
    admission_ = {};
    copy_turn_.clear();
    waited_ = false;
    if (options_.wait_for_memory && options_.policy != ready_policy::strict_order && !trial_) {
      admission_.init(g_, model_, devices_, placement_, rank_, options_.cache_transfers);
      if constexpr (modelled)
        if (admission_.engaged() && !trial_waits()) admission_ = {};
    }
    stretched_ = false;
    if constexpr (requires { backend_.share(bandwidth_sharing{}); }) {
      backend_.share(detail::sharing_of(devices_));
      stretched_ = backend_.stretches();
    }
    traffic_.clear();
    if (stretched_) {
      traffic_.resize(n);
      for (vertex_id v = 0; v < n; ++v) traffic_[v] = detail::traffic_bytes(model_, g_, v);
    }
    s.order.assign(m_, {});
    s.busy.assign(m_, 0);
    s.peak_memory.assign(m_, 0);
    s.peak_memory_time.assign(m_, 0);
    backend_.begin(m_);
    std::chrono::steady_clock::time_point t0;
    if constexpr (!modelled) {
      cpu_at_start_ = thread_cpu_now();
      t0 = std::chrono::steady_clock::now();
    }
    for (vertex_id v = 0; v < n && result_.ok(); ++v)
      allocate(placement_[v], model_.persistent_bytes(v), v, "persistent");
    if (result_.ok()) {
      for (vertex_id v = 0; v < n; ++v)
        if (pending_[v] == 0) make_ready(v);
      dispatch();
    }
    if constexpr (!modelled) add_host_time(t0);
    // Memory can run out at time 0, and a graph of zero-length vertices is done by now.
    if (finished_ == n) settle();
    if (finished_ == n || over()) finish_run();
  }

  // Handles the next completions (on a virtual clock: every finish at the next event time), then
  // starts what can start. Returns false when the run is over: every vertex finished, or memory
  // ran out (on a measured backend, once what was running has finished).
  bool step() {
    if (done_) return false;
    if (finished_ == g_.vertex_count() || in_flight_ == 0) settle();
    if (finished_ == g_.vertex_count() || over()) {
      finish_run();
      return false;
    }
    if (in_flight_ == 0) {
      stall();
      return false;
    }
    if constexpr (modelled) {
      const seconds before = backend_.now();
      backend_.advance();
      if (backend_.now() > before) {  // the instant `before` is over
        settle();
        if (over()) {
          finish_run();
          return false;
        }
      }
      for (completion c; result_.ok() && backend_.pop_due(c);) {
        --in_flight_;
        finish(c);
      }
      if (result_.ok()) dispatch();
    } else {
      completions_.clear();
      backend_.wait(completions_);
      const auto t0 = std::chrono::steady_clock::now();
      std::size_t processed = 0;
      try {
        for (const completion& c : completions_) {
          --in_flight_;
          ++processed;
          finish(c);
        }
        if (result_.ok()) dispatch();
      } catch (...) {
        // Bad input found mid-run: let what was launched finish, so the backend can start again.
        in_flight_ -= completions_.size() - processed;
        drain();
        throw;
      }
      add_host_time(t0);
    }
    if (finished_ == g_.vertex_count()) settle();
    if (finished_ == g_.vertex_count() || over()) {
      finish_run();
      return false;
    }
    return true;
  }

  // Runs to the end and returns the result.
  R& run() {
    while (step()) {
    }
    return result_;
  }

  [[nodiscard]] seconds now() const { return backend_.now(); }
  [[nodiscard]] bool done() const noexcept { return done_; }
  [[nodiscard]] std::size_t finished_count() const noexcept { return finished_; }
  [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_; }
  [[nodiscard]] byte_count memory_in_use(device_id d) const { return memory_now_[d]; }
  [[nodiscard]] const R& result() const noexcept { return result_; }

 private:
  template <placement_model, device_set, execution_backend, class>
  friend class event_loop;
  struct trial_tag {};
  event_loop(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement, B& backend,
             simulate_options options, const char* who, trial_tag)
      : g_(g), model_(model), devices_(devices), placement_(placement), backend_(backend), options_(options), who_(who),
        trial_(true) {
    init();
  }

  using ready_key = std::tuple<double, std::uint32_t, vertex_id>;  // policy key, rank, vertex

  // Failed, and nothing launched is left to finish (a virtual clock's launches are abandoned).
  [[nodiscard]] bool over() const noexcept { return !result_.ok() && (modelled || in_flight_ == 0); }

  // This thread's CPU clock where POSIX offers it (read twice a run: it is a system call).
  static seconds thread_cpu_now() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
#else
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
  }
  void add_host_time(std::chrono::steady_clock::time_point t0) {
    result_.host_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void check_arguments(std::size_t n) const {
    const std::string who(who_);
    if (placement_.size() != n)
      throw invalid_input(who + ": the placement has " + std::to_string(placement_.size()) + " entries for " +
                          std::to_string(n) + " vertices");
    for (vertex_id v = 0; v < n; ++v) {
      if (placement_[v] >= m_)
        throw invalid_input(who + ": vertex " + name(v) + " is placed on device " + std::to_string(placement_[v]) +
                            " but there are " + std::to_string(m_) + " devices");
      if constexpr (!modelled)
        check_time(
            model_.compute_time(v, placement_[v]), [&] { return "vertex " + name(v) + " has compute time"; },
            " on device " + std::to_string(placement_[v]));
    }
    if (!options_.priority.empty()) {
      if (options_.priority.size() != n)
        throw invalid_input(who + ": the priority order has " + std::to_string(options_.priority.size()) +
                            " entries for " + std::to_string(n) + " vertices");
      std::vector<std::uint8_t> seen(n, 0);
      for (const vertex_id v : options_.priority) {
        if (v >= n || seen[v])
          throw invalid_input(who + ": the priority order lists vertex " + std::to_string(v) +
                              (v >= n ? " which does not exist" : " twice"));
        seen[v] = 1;
      }
    }
    if (!std::isfinite(options_.cv) || options_.cv < 0)
      throw invalid_input(who + ": cv must be finite and >= 0, got " + std::to_string(options_.cv));
  }
  // A measured run needs every duration finite and >= 0; a model may say anything.
  template <class What>
  void check_time(seconds t, What what, const std::string& where) const {
    if (!std::isfinite(t) || t < 0)
      throw invalid_input(std::string(who_) + ": " + what() + " " + std::to_string(t) + where +
                          "; a run needs a finite time >= 0");
  }

  [[nodiscard]] std::string name(vertex_id v) const { return names_ ? names_(v) : "#" + std::to_string(v); }

  double draw() {
    if (options_.cv == 0) return 1.0;
    return std::exp(sigma_ * rng_.normal() - 0.5 * sigma_ * sigma_);
  }

  void fail_out_of_memory(device_id d, vertex_id v, byte_count needed, byte_count available, std::string text) {
    result_.outcome = {.code = status::out_of_memory,
                       .vertex = v,
                       .device = d,
                       .time = now(),
                       .needed = needed,
                       .available = available,
                       .message = std::move(text)};
  }
  void fail_allocation(device_id d, vertex_id v, byte_count bytes, byte_count in_use, const char* what, seconds time) {
    const byte_count capacity = devices_.capacity(d);
    std::ostringstream text;
    text << "device " << d << " runs out of memory at time " << time << " s: " << name(v) << " needs "
         << format_bytes(bytes) << " (" << what << ") with " << format_bytes(in_use) << " of " << format_bytes(capacity)
         << " in use";
    fail_out_of_memory(d, v, bytes, capacity > in_use ? capacity - in_use : 0, text.str());
    result_.outcome.time = time;
  }

  // Without waiting for memory on a virtual clock, memory is judged once each instant is over, as
  // schedule.hpp's rules count it (frees at one time come before allocations, and an empty interval
  // holds nothing): a zero-length vertex's output read at once by another zero-length vertex, or a
  // start at the time a zero-length vertex frees its inputs, can leave a device over capacity for the
  // moment, and the run fails only if it still is when time moves on (settle()). So a strict replay
  // of a schedule that validate() accepts never runs out of memory. Otherwise, and for an allocation
  // that alone exceeds the capacity, the first allocation that does not fit ends the run.
  [[nodiscard]] bool judged_per_instant() const noexcept { return modelled && !options_.wait_for_memory; }

  void allocate(device_id d, byte_count bytes, vertex_id v, const char* what) {
    if (bytes == 0) return;
    const byte_count capacity = devices_.capacity(d);
    if (bytes > capacity || memory_now_[d] > capacity - bytes) {
      if (!judged_per_instant() || bytes > capacity || memory_now_[d] > unlimited_memory - bytes)
        return fail_allocation(d, v, bytes, memory_now_[d], what, now());
      if (over_[d].vertex == no_vertex) {
        over_[d] = {v, bytes, memory_now_[d], what, now()};
        over_devices_.push_back(d);
      }
    }
    memory_now_[d] += bytes;
    auto& s = result_.schedule;
    if (memory_now_[d] > s.peak_memory[d]) {
      s.peak_memory[d] = memory_now_[d];
      s.peak_memory_time[d] = now();
    }
  }
  void release(device_id d, byte_count bytes) {
    memory_now_[d] -= bytes;
    if (!over_devices_.empty() && memory_now_[d] <= devices_.capacity(d)) over_[d].vertex = no_vertex;
  }
  // The end of an instant (judged_per_instant()): a device still over its capacity fails the run,
  // naming the first allocation that took it over (the first such device, in the order they went over).
  void settle() {
    for (const device_id d : over_devices_) {
      const over_capacity o = over_[d];
      over_[d].vertex = no_vertex;
      if (o.vertex != no_vertex && result_.ok() && memory_now_[d] > devices_.capacity(d))
        fail_allocation(d, o.vertex, o.bytes, o.in_use, o.what, o.time);
    }
    over_devices_.clear();
  }

  void make_ready(vertex_id v) {
    const device_id d = placement_[v];
    double key = 0;
    switch (options_.policy) {
      case ready_policy::placement_order:
      case ready_policy::strict_order:
        key = 0;
        break;
      case ready_policy::fifo:
        key = now();
        break;
      case ready_policy::bottom_level:
        key = -bottom_[v];
        break;
    }
    ready_[d].push({key, rank_[v], v});
  }

  void start_vertex(vertex_id v) {
    const device_id d = placement_[v];
    auto& s = result_.schedule;
    if constexpr (modelled) {
      // Known when decided (a finish only at the least, where devices share bandwidth: the
      // completion says); kept even if the start then runs out of memory.
      s.start[v] = now();
      s.finish[v] = now() + duration_[v];
      s.order[d].push_back(v);
      s.makespan = std::max(s.makespan, s.finish[v]);
      if (duration_[v] == 0) {
        // An empty interval holds nothing (schedule.hpp): v's inputs are freed before its output is
        // taken, as frees at one time come before allocations. Its consumers may start now.
        ++finished_;
        has_zero_duration_ = true;
        release_inputs(v);
        if (g_.out_degree(v) == 0) return;
        allocate(d, model_.output_bytes(v), v, "output");
        if (result_.ok()) hand_output(v);
        return;
      }
    }
    allocate(d, model_.temporary_bytes(v), v, "temporary");
    if (result_.ok()) allocate(d, model_.output_bytes(v), v, "output");
    if (!result_.ok()) return;
    busy_[d] = 1;
    if constexpr (modelled) {
      if (!stretched_) s.busy[d] += duration_[v];
    } else {
      s.order[d].push_back(v);
    }
    ++in_flight_;
    backend_.launch_vertex({v, d, duration_[v], stretched_ ? traffic_[v] : 0});
  }

  void finish(const completion& c) {
    if (c.is_copy) finish_transfer(c);
    else finish_vertex(c);
  }

  void finish_vertex(const completion& c) {
    const vertex_id v = c.id;
    const device_id d = placement_[v];
    if (!modelled || stretched_) {
      auto& s = result_.schedule;
      s.start[v] = c.start;
      s.finish[v] = c.finish;
      s.busy[d] += c.finish - c.start;
      s.makespan = std::max(s.makespan, c.finish);
    }
    busy_[d] = 0;
    ++finished_;
    release(d, model_.temporary_bytes(v));
    if (result_.ok()) hand_output(v);
    release_inputs(v);
  }

  // Consumers on v's device get the output now; others get a transfer: one per tensor (edges of
  // equal bytes) and device when cached, else one per edge. Where transfers share no resource
  // (parallel mode) one starts at once if it fits; otherwise it queues for dispatch().
  void hand_output(vertex_id v) {
    const device_id d = placement_[v];
    auto& s = result_.schedule;
    std::uint32_t readers = 0;
    const auto succ = g_.successors(v);
    const auto out = g_.out_edges(v);
    const std::size_t first_new = s.transfers.size();
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const vertex_id w = succ[i];
      const device_id to = placement_[w];
      if (to == d) {
        ++readers;
        if (--pending_[w] == 0) make_ready(w);
        continue;
      }
      const edge_id e = out[i];
      const byte_count bytes = model_.edge_bytes(e);
      std::uint32_t t = detail::no_transfer;
      if (options_.cache_transfers)
        for (std::size_t k = first_new; k < s.transfers.size() && t == detail::no_transfer; ++k)
          if (s.transfers[k].to == to && s.transfers[k].bytes == bytes) t = static_cast<std::uint32_t>(k);
      if (t == detail::no_transfer) {
        t = static_cast<std::uint32_t>(s.transfers.size());
        s.transfers.push_back({v, e, d, to, 0, 0, bytes});
        ledger_.add_copy();
        const seconds time = model_.transfer_time(e, d, to);
        if constexpr (!modelled)
          check_time(
              time, [&] { return "the transfer of " + name(v) + " to device " + std::to_string(to) + " takes"; }, " s");
        transfer_duration_.push_back(time * (options_.vary_transfers ? draw() : 1.0));
        // A listed transfer is served in its place once; another copy of it (no cache) is not listed.
        const auto booking = booking_of_.find(booking_key(v, to, bytes, e));
        const bool listed = booking != booking_of_.end() && options_.transfer_order[booking->second].from == d &&
                            !booking_claimed_[booking->second];
        if (listed) booking_claimed_[booking->second] = 1;
        transfer_booking_.push_back(listed ? booking->second : detail::no_transfer);
        ++readers;
      }
      edge_transfer_[e] = t;
      ledger_.expect(ledger_.copy(t));
    }
    ledger_.take(ledger_.output(v), now(), readers);
    if (readers == 0) release(d, model_.output_bytes(v));
    for (std::size_t k = first_new; k < s.transfers.size(); ++k) {
      const auto t = static_cast<std::uint32_t>(k);
      if (!topology_.shared() && room_for(s.transfers[k].to, s.transfers[k].bytes, 0, v, "received") && admits_copy(t))
        start_transfer(t);
      else transfer_queue_.insert({now(), rank_[v], s.transfers[k].edge, t});
    }
  }

  // v no longer needs its inputs.
  void release_inputs(vertex_id v) {
    const device_id d = placement_[v];
    auto& s = result_.schedule;
    const auto pred = g_.predecessors(v);
    const auto in = g_.in_edges(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (placement_[u] == d) {
        if (ledger_.read(ledger_.output(u), now())) release(d, model_.output_bytes(u));
      } else {
        const std::uint32_t t = edge_transfer_[in[i]];
        if (!modelled && t == detail::no_transfer) continue;  // a measured run draining after a failure
        if (ledger_.read(ledger_.copy(t), now())) release(d, s.transfers[t].bytes);
      }
    }
  }

  void start_transfer(std::uint32_t t) {
    auto& s = result_.schedule;
    auto& tr = s.transfers[t];
    allocate(tr.to, tr.bytes, tr.tensor, "received");
    if (!result_.ok()) return;
    for (const resource_id r : topology_.route_of(tr.from, tr.to)) {
      channel_busy_[r] = 1;
      if (transfer_booking_[t] != detail::no_transfer) ++booked_next_[r];
    }
    if constexpr (modelled) {
      tr.start = now();
      tr.finish = now() + transfer_duration_[t];
      s.makespan = std::max(s.makespan, tr.finish);
      if (transfer_duration_[t] == 0) has_zero_duration_ = true;
    }
    s.bytes_moved += tr.bytes;
    ++in_flight_;
    backend_.launch_copy({t, tr.tensor, tr.from, tr.to, tr.bytes, transfer_duration_[t]});
  }

  void finish_transfer(const completion& c) {
    auto& tr = result_.schedule.transfers[c.id];
    if (!modelled || stretched_) {
      tr.start = c.start;
      tr.finish = c.finish;
      result_.schedule.makespan = std::max(result_.schedule.makespan, c.finish);
    }
    for (const resource_id r : topology_.route_of(tr.from, tr.to)) channel_busy_[r] = 0;
    const vertex_id u = tr.tensor;
    if (ledger_.read(ledger_.output(u), now())) release(tr.from, model_.output_bytes(u));
    if (!result_.ok()) return;  // a measured run draining after a failure
    const auto succ = g_.successors(u);
    const auto out = g_.out_edges(u);
    for (std::size_t i = 0; i < succ.size(); ++i)
      if (edge_transfer_[out[i]] == c.id && --pending_[succ[i]] == 0) make_ready(succ[i]);
  }

  // Starts every transfer and vertex that can start now: transfers first (they never wait for
  // devices, and a device that starts now may be a receiver), then on each idle device the first
  // ready vertex in policy order that fits and is admitted. A zero-length vertex on a virtual clock
  // finishes at once and may let more start, so this repeats until nothing starts.
  void dispatch() {
    waiting_ = {};
    for (bool started = true; started && result_.ok();) {
      started = false;
      for (auto it = transfer_queue_.begin(); it != transfer_queue_.end() && result_.ok();) {
        const auto& tr = result_.schedule.transfers[std::get<3>(*it)];
        const route path = topology_.route_of(tr.from, tr.to);
        const std::uint32_t booking = transfer_booking_[std::get<3>(*it)];
        const auto blocked = [&](resource_id r) {
          if (channel_busy_[r] != 0) return true;
          // A booked transfer waits for the ones booked before it on each of its resources.
          return booking != detail::no_transfer && booked_[r][booked_next_[r]] != booking;
        };
        if (std::any_of(path.begin(), path.end(), blocked) || !room_for(tr.to, tr.bytes, 0, tr.tensor, "received") ||
            !admits_copy(std::get<3>(*it))) {
          ++it;
          continue;
        }
        const std::uint32_t t = std::get<3>(*it);
        it = transfer_queue_.erase(it);
        start_transfer(t);
      }
      for (device_id d = 0; d < m_ && result_.ok(); ++d) {
        if (busy_[d]) continue;
        if (options_.policy == ready_policy::strict_order) {
          auto& next = strict_next_[d];
          const auto& list = strict_list_[d];
          if (next < list.size() && pending_[list[next]] == 0 && vertex_fits(list[next])) {
            start_vertex(list[next++]);
            started = true;
          }
        } else {
          // The first ready vertex in policy order that fits and is admitted; the others wait.
          skipped_.clear();
          while (!ready_[d].empty()) {
            const auto top = ready_[d].top();
            ready_[d].pop();
            if (vertex_fits(std::get<2>(top)) && admits(std::get<2>(top))) {
              start_vertex(std::get<2>(top));
              started = true;
              break;
            }
            skipped_.push_back(top);
          }
          for (const auto& key : skipped_) ready_[d].push(key);
        }
      }
    }
  }

  // Whether `bytes` more fit on d now, counting `freed` bytes released first. With wait_for_memory
  // a no is remembered (the run reports it if nothing else can go on); without, allocation fails
  // later as it always did, so this says yes.
  bool room_for(device_id d, byte_count bytes, byte_count freed, vertex_id v, const char* what) {
    if (!options_.wait_for_memory || bytes == 0) return true;
    const byte_count capacity = devices_.capacity(d);
    const byte_count held = memory_now_[d] - std::min(freed, memory_now_[d]);
    if (bytes <= capacity && held <= capacity - bytes) return true;
    waiting_ = {d, v, bytes, capacity > held ? capacity - held : 0, what};
    waited_ = true;
    return false;
  }
  // Whether v can start now: its temporary and output bytes (on a virtual clock, a zero-length
  // vertex's output after the inputs it frees at once).
  bool vertex_fits(vertex_id v) {
    const device_id d = placement_[v];
    if (!modelled || duration_[v] != 0)
      return room_for(d, detail::saturating_add(model_.temporary_bytes(v), model_.output_bytes(v)), 0, v,
                      "temporary and output");
    if (g_.out_degree(v) == 0) return true;
    return room_for(d, model_.output_bytes(v), freed_by_inputs(v), v, "output");
  }
  // On a virtual clock the run without the admission rule is known in advance: where no start in it
  // waits for memory the rule stays off, so such a run is exactly what it was without the rule.
  bool trial_waits() const {
    virtual_clock clock;
    using trial_loop = event_loop<M, D, virtual_clock, R>;
    trial_loop trial(g_, model_, devices_, placement_, clock, options_, who_, typename trial_loop::trial_tag{});
    while (!trial.waited_ && trial.step()) {
    }
    return trial.waited_;
  }
  // The admission rule (sim/admission.hpp): whether starting v now leaves the priority order, run
  // one vertex at a time, room to finish. Records the start when it does.
  bool admits(vertex_id v) {
    if (!admission_.engaged()) return true;
    const device_id d = placement_[v];
    const byte_count held = g_.out_degree(v) == 0 ? 0 : model_.output_bytes(v);  // until v's turn
    if (!admission_.hold_until(d, rank_[v], held, v))
      return held_back(d, v, held, "output (held back for the priority order)");
    admission_.started(rank_[v]);
    return true;
  }
  // The same for transfer t: its copy is held from now until its first reader's turn.
  bool admits_copy(std::uint32_t t) {
    if (!admission_.engaged()) return true;
    const auto& tr = result_.schedule.transfers[t];
    if (t >= copy_turn_.size()) copy_turn_.resize(result_.schedule.transfers.size(), no_turn);
    std::uint32_t& first = copy_turn_[t];
    if (first == no_turn) {
      const auto succ = g_.successors(tr.tensor);
      const auto out = g_.out_edges(tr.tensor);
      for (std::size_t i = 0; i < succ.size(); ++i)
        if (edge_transfer_[out[i]] == t) first = std::min(first, rank_[succ[i]]);
    }
    return admission_.hold_until(tr.to, first, tr.bytes, g_.vertex_count() + t) ||
           held_back(tr.to, tr.tensor, tr.bytes, "received (held back for the priority order)");
  }
  // Remembered like a start that does not fit (the run cannot stall on it while the order fits).
  bool held_back(device_id d, vertex_id v, byte_count bytes, const char* what) {
    waiting_ = {d, v, bytes, devices_.capacity(d) - memory_in_use(d), what};
    return false;
  }
  // Bytes release_inputs(v) would free on v's device.
  byte_count freed_by_inputs(vertex_id v) {
    const device_id d = placement_[v];
    const auto pred = g_.predecessors(v);
    const auto in = g_.in_edges(v);
    drops_.clear();
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (placement_[u] == d) drops_.emplace_back(0, u);
      else drops_.emplace_back(1, edge_transfer_[in[i]]);
    }
    std::sort(drops_.begin(), drops_.end());
    byte_count freed = 0;
    for (std::size_t i = 0; i < drops_.size();) {
      std::size_t j = i;
      while (j < drops_.size() && drops_[j] == drops_[i]) ++j;
      const auto [kind, id] = drops_[i];
      const auto count = static_cast<std::uint32_t>(j - i);
      if (kind == 0 && ledger_.readers(ledger_.output(id)) == count) freed += model_.output_bytes(id);
      if (kind == 1 && ledger_.readers(ledger_.copy(id)) == count) freed += result_.schedule.transfers[id].bytes;
      i = j;
    }
    return freed;
  }

  // A measured run's launches finish even after bad input was found, so the backend can start again.
  void drain() {
    done_ = true;
    std::vector<completion> out;
    while (in_flight_ > 0) {
      out.clear();
      backend_.wait(out);
      in_flight_ -= std::min(in_flight_, out.size());
    }
  }

  // Nothing in flight and vertices left: memory is exhausted, or a strict order contradicts the graph.
  void stall() {
    if (!result_.ok()) return finish_run();
    const std::string who(who_);
    if (waiting_.vertex != no_vertex) {
      std::ostringstream text;
      text << "device " << waiting_.device << " runs out of memory at time " << now() << " s: " << name(waiting_.vertex)
           << " needs " << waiting_.needed << " " << waiting_.what << " bytes with " << waiting_.available << " of "
           << devices_.capacity(waiting_.device) << " bytes free, and nothing running can free more";
      fail_out_of_memory(waiting_.device, waiting_.vertex, waiting_.needed, waiting_.available, text.str());
      return finish_run();
    }
    done_ = true;
    for (device_id d = 0; d < m_; ++d)
      if (strict_next_[d] < strict_list_[d].size())
        throw invalid_input(who + ": the priority order runs " + name(strict_list_[d][strict_next_[d]]) +
                            " on device " + std::to_string(d) + " before one of its inputs can be produced");
    if (!options_.transfer_order.empty())
      throw invalid_input(who +
                          ": the run stalled: transfer_order lists a transfer this replay never makes "
                          "(another placement or cache setting than the schedule it came from?)");
    throw invalid_input(who + ": the run stalled with " + std::to_string(g_.vertex_count() - finished_) +
                        " vertices left");
  }

  // The memory profile at the end. On a virtual clock with positive durations the memory tracked
  // during the run is exact; a zero-length activity can free at a time after allocations at that
  // same time were made, and measured times are known only now: then recompute from the schedule.
  void finish_run() {
    done_ = true;
    if constexpr (!modelled) result_.host_cpu_seconds = thread_cpu_now() - cpu_at_start_;
    if (result_.ok() && (!modelled || has_zero_duration_)) {
      auto& s = result_.schedule;
      auto profile = compute_memory_profile(g_, s, model_, m_);
      s.peak_memory = std::move(profile.peak);
      s.peak_memory_time = std::move(profile.peak_time);
    }
  }

  const csr_graph& g_;
  const M& model_;
  const D& devices_;
  std::span<const device_id> placement_;
  B& backend_;
  simulate_options options_;
  const char* who_;
  std::function<std::string(vertex_id)> names_;
  std::size_t m_ = 0;

  R result_;
  std::size_t finished_ = 0;
  std::size_t in_flight_ = 0;  // launched and not yet handed back as a completion
  bool done_ = false;
  bool has_zero_duration_ = false;
  seconds cpu_at_start_ = 0;
  std::vector<completion> completions_;
  std::vector<std::uint32_t> rank_;
  std::vector<seconds> bottom_;
  detail::portable_random rng_{0};
  double sigma_ = 0;
  std::vector<seconds> duration_;
  std::vector<std::uint32_t> pending_;  // inputs not yet on the vertex's device, per vertex
  // Who still reads each output on its own device and each received copy (schedule.hpp's rules);
  // a holding is freed as its last reader finishes, so no ends are kept.
  detail::memory_ledger<false> ledger_;
  std::vector<std::uint32_t> edge_transfer_;  // the transfer serving each cross-device edge
  std::vector<seconds> transfer_duration_;
  // A virtual clock whose devices share bandwidth stretches durations: finishes come from completions.
  bool stretched_ = false;
  std::vector<byte_count> traffic_;  // per vertex, when stretched_ (sim/shared_bandwidth.hpp)
  std::vector<std::uint8_t> busy_;
  gantry::topology topology_;
  std::vector<std::uint8_t> channel_busy_;  // per resource of the topology
  // The last start that waited for memory (wait_for_memory): reported if the run cannot go on.
  struct memory_wait {
    device_id device = no_device;
    vertex_id vertex = no_vertex;
    byte_count needed = 0, available = 0;
    const char* what = "";
  } waiting_;
  std::vector<ready_key> skipped_;
  detail::memory_admission admission_;
  static constexpr std::uint32_t no_turn = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> copy_turn_;  // per transfer: its first reader's rank (admits_copy)
  bool trial_ = false;                    // a run without the admission rule, to see whether memory binds (trial_waits)
  bool waited_ = false;                   // a start or transfer has waited for memory
  std::vector<std::pair<int, std::uint32_t>> drops_;
  // Strict replay with a transfer order: per (tensor, receiver, bytes) its place in the order; per
  // resource the places of the transfers it serves, in order, and how many have started; per
  // transfer of the run its place (no_transfer: not listed).
  // A booking's key: the tensor, its device and size, and (without caching, one copy per edge) the
  // edge; with caching the edge is no_edge.
  [[nodiscard]] std::tuple<vertex_id, device_id, byte_count, edge_id> booking_key(vertex_id tensor, device_id to,
                                                                                  byte_count bytes, edge_id e) const {
    return {tensor, to, bytes, options_.cache_transfers ? no_edge : e};
  }
  std::map<std::tuple<vertex_id, device_id, byte_count, edge_id>, std::uint32_t> booking_of_;
  std::vector<std::vector<std::uint32_t>> booked_;
  std::vector<std::size_t> booked_next_;
  std::vector<std::uint32_t> transfer_booking_;
  std::vector<std::uint8_t> booking_claimed_;  // per place in the order: a transfer of the run took it
  std::set<std::tuple<seconds, std::uint32_t, edge_id, std::uint32_t>> transfer_queue_;
  std::vector<std::priority_queue<ready_key, std::vector<ready_key>, std::greater<>>> ready_;
  std::vector<std::size_t> strict_next_;
  std::vector<std::vector<vertex_id>> strict_list_;
  std::vector<byte_count> memory_now_;
  // Per device: the first allocation of this instant that took it over capacity (judged_per_instant()).
  struct over_capacity {
    vertex_id vertex = no_vertex;
    byte_count bytes = 0, in_use = 0;
    const char* what = "";
    seconds time = 0;
  };
  std::vector<over_capacity> over_;
  std::vector<device_id> over_devices_;  // devices that went over, in that order (may repeat)
};

}  // namespace gantry
