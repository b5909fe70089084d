// The one event loop that runs a placement: the simulator (sim/simulator.hpp) is this loop over a
// virtual clock whose wait() pops the earliest modelled finish, and the executor (exec/executor.hpp)
// is this loop over a backend that runs the work for real (exec/cpu_backend.hpp, a GPU one).
// Devices run one vertex at a time; a tensor (a producer's edges of equal bytes) moves over the
// resources of its route in the cluster's topology (model/topology.hpp) once its producer is done,
// and is cached on the receiving device; memory is held and freed by the rules of
// schedule/schedule.hpp (sim/holdings.hpp counts who still reads what); a start that does not
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

#include <gantry/core/random.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/sim/admission.hpp>
#include <gantry/sim/backend.hpp>
#include <gantry/sim/device_memory.hpp>
#include <gantry/sim/holdings.hpp>
#include <gantry/sim/ready_queues.hpp>
#include <gantry/sim/run_options.hpp>
#include <gantry/sim/shared_bandwidth.hpp>
#include <gantry/sim/transfer_dispatch.hpp>
#include <gantry/sim/virtual_clock.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

// The loop as a class, to step through a run event by event:
//   event_loop<M, D, B, R> loop(g, model, devices, placement, backend, options, "simulate");
//   while (loop.step()) inspect(loop.now());
// R is the result: a type with `gantry::outcome outcome;` and `gantry::schedule schedule;` (and,
// for a measured backend, `host_seconds` and `host_cpu_seconds`). Holds references to its
// arguments: they must outlive it. `who` starts every error message ("simulate", "execute").
// Its parts: the checks of its arguments (sim/run_options.hpp), the devices' memory
// (sim/device_memory.hpp), who still reads what (sim/holdings.hpp), the ready vertices per device
// (sim/ready_queues.hpp), when transfers go (sim/transfer_dispatch.hpp) and the admission rule
// (sim/admission.hpp).
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

  // Starts a run at time 0: checks the arguments (detail::check_run_arguments; invalid_input),
  // allocates persistent memory and starts what can start.
  void init() {
    const std::size_t n = g_.vertex_count();
    m_ = devices_.device_count();
    const auto name = [this](vertex_id v) { return this->name(v); };
    detail::check_run_arguments(who_, g_, model_, m_, placement_, options_, !modelled, name);
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
    holdings_.reset(g_, model_, placement_);
    transfer_duration_.clear();
    busy_.assign(m_, 0);
    transfers_.reset(devices_, options_.transfer_order, options_.cache_transfers,
                     options_.policy == ready_policy::strict_order, n, who_, name);
    ready_.reset(options_.policy, m_, placement_, rank_, bottom_);
    memory_.reset(devices_, modelled && !options_.wait_for_memory, options_.wait_for_memory);
    admission_ = {};
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
      cpu_at_start_ = detail::thread_cpu_seconds();
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
  [[nodiscard]] byte_count memory_in_use(device_id d) const { return memory_.in_use(d); }
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

  // Failed, and nothing launched is left to finish (a virtual clock's launches are abandoned).
  [[nodiscard]] bool over() const noexcept { return !result_.ok() && (modelled || in_flight_ == 0); }

  void add_host_time(std::chrono::steady_clock::time_point t0) {
    result_.host_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  [[nodiscard]] std::string name(vertex_id v) const { return names_ ? names_(v) : "#" + std::to_string(v); }

  double draw() {
    if (options_.cv == 0) return 1.0;
    return std::exp(sigma_ * rng_.normal() - 0.5 * sigma_ * sigma_);
  }

  void fail_out_of_memory(device_id d, vertex_id v, byte_count needed, byte_count available, std::string text,
                          seconds time) {
    result_.outcome = {.code = status::out_of_memory,
                       .vertex = v,
                       .device = d,
                       .time = time,
                       .needed = needed,
                       .available = available,
                       .message = std::move(text)};
  }
  void fail(const detail::memory_shortfall& f) {
    const byte_count capacity = devices_.capacity(f.device);
    fail_out_of_memory(f.device, f.vertex, f.bytes, capacity > f.in_use ? capacity - f.in_use : 0,
                       memory_.describe(f, name(f.vertex)), f.time);
  }
  void allocate(device_id d, byte_count bytes, vertex_id v, const char* what) {
    if (const auto f = memory_.allocate(d, bytes, v, what, now(), result_.schedule)) fail(*f);
  }
  void release(device_id d, byte_count bytes) { memory_.release(d, bytes); }
  // The end of an instant (sim/device_memory.hpp): a device still over its capacity fails the run.
  void settle() {
    if (const auto f = memory_.settle(); f && result_.ok()) fail(*f);
  }

  void make_ready(vertex_id v) { ready_.push(v, placement_[v], now()); }

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
  // equal bytes) and device when cached, else one per edge. In parallel mode a transfer starts at
  // once if it fits; otherwise it queues for dispatch() (sim/transfer_dispatch.hpp).
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
        holdings_.add_copy();
        const seconds time = model_.transfer_time(e, d, to);
        if constexpr (!modelled)
          detail::check_run_time(
              who_, time, [&] { return "the transfer of " + name(v) + " to device " + std::to_string(to) + " takes"; },
              " s");
        transfer_duration_.push_back(time * (options_.vary_transfers ? draw() : 1.0));
        transfers_.made(s.transfers.back());
        ++readers;
      }
      holdings_.serve(e, t);
    }
    holdings_.take_output(v, now(), readers);
    if (readers == 0) release(d, model_.output_bytes(v));
    for (std::size_t k = first_new; k < s.transfers.size(); ++k) {
      const auto t = static_cast<std::uint32_t>(k);
      if (transfers_.parallel() && room_for_copy(t) && admits_copy(t)) start_transfer(t);
      else transfers_.enqueue(now(), rank_[v], s.transfers[k].edge, t);
    }
  }

  // v no longer needs its inputs.
  void release_inputs(vertex_id v) {
    holdings_.release_inputs(v, result_.schedule.transfers, now(), !modelled,
                             [this](device_id d, byte_count bytes) { release(d, bytes); });
  }

  void start_transfer(std::uint32_t t) {
    auto& s = result_.schedule;
    auto& tr = s.transfers[t];
    allocate(tr.to, tr.bytes, tr.tensor, "received");
    if (!result_.ok()) return;
    transfers_.occupy(t, tr);
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
    transfers_.vacate(tr);
    const vertex_id u = tr.tensor;
    if (holdings_.read_output(u, now())) release(tr.from, model_.output_bytes(u));
    if (!result_.ok()) return;  // a measured run draining after a failure
    const auto succ = g_.successors(u);
    const auto out = g_.out_edges(u);
    for (std::size_t i = 0; i < succ.size(); ++i)
      if (holdings_.transfer_of(out[i]) == c.id && --pending_[succ[i]] == 0) make_ready(succ[i]);
  }

  // Starts every transfer and vertex that can start now: transfers first (they never wait for
  // devices, and a device that starts now may be a receiver), then on each idle device the first
  // ready vertex in policy order that fits and is admitted. A zero-length vertex on a virtual clock
  // finishes at once and may let more start, so this repeats until nothing starts.
  void dispatch() {
    memory_.forget_wait();
    const auto ok = [this] { return result_.ok(); };
    const auto admit = [this](std::uint32_t t) { return room_for_copy(t) && admits_copy(t); };
    const auto start = [this](std::uint32_t t) { start_transfer(t); };
    const auto fits = [this](vertex_id v) { return vertex_fits(v); };
    const auto admitted = [this](vertex_id v) { return admits(v); };
    for (bool started = true; started && result_.ok();) {
      started = false;
      transfers_.serve(result_.schedule.transfers, ok, admit, start);
      for (device_id d = 0; d < m_ && result_.ok(); ++d) {
        if (busy_[d]) continue;
        const vertex_id v = ready_.take(d, pending_, fits, admitted);
        if (v == no_vertex) continue;
        start_vertex(v);
        started = true;
      }
    }
  }

  bool room_for_copy(std::uint32_t t) {
    const auto& tr = result_.schedule.transfers[t];
    return memory_.room_for(tr.to, tr.bytes, 0, tr.tensor, "received");
  }
  // Whether v can start now: its temporary and output bytes (on a virtual clock, a zero-length
  // vertex's output after the inputs it frees at once).
  bool vertex_fits(vertex_id v) {
    const device_id d = placement_[v];
    if (!modelled || duration_[v] != 0)
      return memory_.room_for(d, detail::saturating_add(model_.temporary_bytes(v), model_.output_bytes(v)), 0, v,
                              "temporary and output");
    if (g_.out_degree(v) == 0) return true;
    return memory_.room_for(d, model_.output_bytes(v), holdings_.freed_by_inputs(v, result_.schedule.transfers), v,
                            "output");
  }
  // On a virtual clock the run without the admission rule is known in advance: where no start in it
  // waits for memory the rule stays off, so such a run is exactly what it was without the rule.
  bool trial_waits() const {
    virtual_clock clock;
    using trial_loop = event_loop<M, D, virtual_clock, R>;
    trial_loop trial(g_, model_, devices_, placement_, clock, options_, who_, typename trial_loop::trial_tag{});
    while (!trial.memory_.waited() && trial.step()) {
    }
    return trial.memory_.waited();
  }
  // The admission rule (sim/admission.hpp): whether starting v now leaves the priority order, run
  // one vertex at a time, room to finish (its output is held until v's turn).
  bool admits(vertex_id v) {
    const device_id d = placement_[v];
    const byte_count held = g_.out_degree(v) == 0 ? 0 : model_.output_bytes(v);
    return admission_.admit_start(d, rank_[v], held, v) ||
           memory_.held_back(d, v, held, "output (held back for the priority order)");
  }
  // The same for transfer t: its copy is held from now until its first reader's turn.
  bool admits_copy(std::uint32_t t) {
    const auto& tr = result_.schedule.transfers[t];
    const auto first_reader = [&] {
      std::uint32_t first = std::numeric_limits<std::uint32_t>::max();
      const auto succ = g_.successors(tr.tensor);
      const auto out = g_.out_edges(tr.tensor);
      for (std::size_t i = 0; i < succ.size(); ++i)
        if (holdings_.transfer_of(out[i]) == t) first = std::min(first, rank_[succ[i]]);
      return first;
    };
    return admission_.admit_copy(t, result_.schedule.transfers.size(), g_.vertex_count(), tr.to, tr.bytes,
                                 first_reader) ||
           memory_.held_back(tr.to, tr.tensor, tr.bytes, "received (held back for the priority order)");
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
    if (const auto& w = memory_.waiting(); w.vertex != no_vertex) {
      fail_out_of_memory(w.device, w.vertex, w.needed, w.available, memory_.describe_wait(now(), name(w.vertex)),
                         now());
      return finish_run();
    }
    done_ = true;
    for (device_id d = 0; d < m_; ++d)
      if (const vertex_id v = ready_.strict_next(d); v != no_vertex)
        throw invalid_input(who + ": the priority order runs " + name(v) + " on device " + std::to_string(d) +
                            " before one of its inputs can be produced");
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
    if constexpr (!modelled) result_.host_cpu_seconds = detail::thread_cpu_seconds() - cpu_at_start_;
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
  detail::run_holdings<M> holdings_;
  std::vector<seconds> transfer_duration_;
  // A virtual clock whose devices share bandwidth stretches durations: finishes come from completions.
  bool stretched_ = false;
  std::vector<byte_count> traffic_;  // per vertex, when stretched_ (sim/shared_bandwidth.hpp)
  std::vector<std::uint8_t> busy_;   // per device
  detail::device_memory<D> memory_;
  detail::ready_queues ready_;
  detail::transfer_dispatch transfers_;
  detail::memory_admission admission_;
  bool trial_ = false;  // a run without the admission rule, to see whether memory binds (trial_waits)
};

}  // namespace gantry
