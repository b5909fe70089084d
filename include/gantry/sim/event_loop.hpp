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

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/sim/backend.hpp>
#include <gantry/sim/run_options.hpp>
#include <gantry/sim/run_state.hpp>
#include <gantry/sim/virtual_clock.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
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
// The loop decides when things happen: it starts what can start (dispatch), hands the backend's
// completions back and ends the run. What a start or a finish does is detail::run_state's
// (sim/run_state.hpp), over the run's parts: the checks of its arguments (sim/run_options.hpp),
// ranks and durations (sim/run_plan.hpp), the devices' memory (sim/device_memory.hpp), who still
// reads what (sim/holdings.hpp), the ready vertices per device (sim/ready_queues.hpp), when
// transfers go (sim/transfer_dispatch.hpp) and the admission rule (sim/admission.hpp).
template <placement_model M, device_set D, execution_backend B, class R>
class event_loop {
 public:
  static constexpr bool modelled = virtual_time_backend<B>;

  event_loop(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement, B& backend,
             simulate_options options, const char* who, std::function<std::string(vertex_id)> names = {})
      : run_(g, model, devices, placement, backend, options, who, std::move(names)) {
    init();
  }
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  // Starts a run at time 0: checks the arguments (detail::check_run_arguments; invalid_input),
  // allocates persistent memory and starts what can start.
  void init() {
    auto& r = run_;
    r.reset();
    done_ = false;
    const std::size_t n = r.g.vertex_count();
    if (r.options.wait_for_memory && r.options.policy != ready_policy::strict_order && !trial_) {
      r.admission.init(r.g, r.model, r.devices, r.placement, r.plan.ranks(), r.options.cache_transfers);
      if constexpr (modelled)
        if (r.admission.engaged() && !trial_waits()) r.admission = {};
    }
    r.backend.begin(r.m);
    std::chrono::steady_clock::time_point t0;
    if constexpr (!modelled) {
      cpu_at_start_ = detail::thread_cpu_seconds();
      t0 = std::chrono::steady_clock::now();
    }
    for (vertex_id v = 0; v < n && r.result.ok(); ++v)
      r.allocate(r.placement[v], r.model.persistent_bytes(v), v, "persistent");
    if (r.result.ok()) {
      for (vertex_id v = 0; v < n; ++v)
        if (r.pending[v] == 0) r.make_ready(v);
      dispatch();
    }
    if constexpr (!modelled) add_host_time(t0);
    // Memory can run out at time 0, and a graph of zero-length vertices is done by now.
    if (r.finished == n) r.settle();
    if (r.finished == n || over()) finish_run();
  }

  // Handles the next completions (on a virtual clock: every finish at the next event time), then
  // starts what can start. Returns false when the run is over: every vertex finished, or memory
  // ran out (on a measured backend, once what was running has finished).
  bool step() {
    auto& r = run_;
    const std::size_t n = r.g.vertex_count();
    if (done_) return false;
    if (r.finished == n || r.in_flight == 0) r.settle();
    if (r.finished == n || over()) {
      finish_run();
      return false;
    }
    if (r.in_flight == 0) {
      stall();
      return false;
    }
    if constexpr (modelled) {
      const seconds before = r.backend.now();
      r.backend.advance();
      if (r.backend.now() > before) {  // the instant `before` is over
        r.settle();
        if (over()) {
          finish_run();
          return false;
        }
      }
      for (completion c; r.result.ok() && r.backend.pop_due(c);) {
        --r.in_flight;
        r.finish(c);
      }
      if (r.result.ok()) dispatch();
    } else {
      completions_.clear();
      r.backend.wait(completions_);
      const auto t0 = std::chrono::steady_clock::now();
      std::size_t processed = 0;
      try {
        for (const completion& c : completions_) {
          --r.in_flight;
          ++processed;
          r.finish(c);
        }
        if (r.result.ok()) dispatch();
      } catch (...) {
        // Bad input found mid-run: let what was launched finish, so the backend can start again.
        r.in_flight -= completions_.size() - processed;
        drain();
        throw;
      }
      add_host_time(t0);
    }
    if (r.finished == n) r.settle();
    if (r.finished == n || over()) {
      finish_run();
      return false;
    }
    return true;
  }

  // Runs to the end and returns the result.
  R& run() {
    while (step()) {
    }
    return run_.result;
  }

  [[nodiscard]] seconds now() const { return run_.now(); }
  [[nodiscard]] bool done() const noexcept { return done_; }
  [[nodiscard]] std::size_t finished_count() const noexcept { return run_.finished; }
  [[nodiscard]] std::size_t in_flight() const noexcept { return run_.in_flight; }
  [[nodiscard]] byte_count memory_in_use(device_id d) const { return run_.memory.in_use(d); }
  [[nodiscard]] const R& result() const noexcept { return run_.result; }

 private:
  template <placement_model, device_set, execution_backend, class>
  friend class event_loop;
  struct trial_tag {};
  event_loop(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement, B& backend,
             simulate_options options, const char* who, trial_tag)
      : run_(g, model, devices, placement, backend, options, who, {}), trial_(true) {
    init();
  }

  // Failed, and nothing launched is left to finish (a virtual clock's launches are abandoned).
  [[nodiscard]] bool over() const noexcept { return !run_.result.ok() && (modelled || run_.in_flight == 0); }

  void add_host_time(std::chrono::steady_clock::time_point t0) {
    run_.result.host_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // Starts every transfer and vertex that can start now: transfers first (they never wait for
  // devices, and a device that starts now may be a receiver), then on each idle device the first
  // ready vertex in policy order that fits and is admitted. A zero-length vertex on a virtual clock
  // finishes at once and may let more start, so this repeats until nothing starts.
  void dispatch() {
    auto& r = run_;
    r.memory.forget_wait();
    const auto ok = [&r] { return r.result.ok(); };
    const auto admit = [&r](std::uint32_t t) { return r.room_for_copy(t) && r.admits_copy(t); };
    const auto start = [&r](std::uint32_t t) { r.start_transfer(t); };
    const auto fits = [&r](vertex_id v) { return r.vertex_fits(v); };
    const auto admitted = [&r](vertex_id v) { return r.admits(v); };
    for (bool started = true; started && r.result.ok();) {
      started = false;
      r.dispatcher.serve(r.result.schedule.transfers, ok, admit, start);
      for (device_id d = 0; d < r.m && r.result.ok(); ++d) {
        if (r.busy[d]) continue;
        const vertex_id v = r.ready.take(d, r.pending, fits, admitted);
        if (v == no_vertex) continue;
        r.start_vertex(v);
        started = true;
      }
    }
  }

  // On a virtual clock the run without the admission rule is known in advance: where no start in it
  // waits for memory the rule stays off, so such a run is exactly what it was without the rule.
  bool trial_waits() const {
    virtual_clock clock;
    using trial_loop = event_loop<M, D, virtual_clock, R>;
    const auto& r = run_;
    trial_loop trial(r.g, r.model, r.devices, r.placement, clock, r.options, r.who, typename trial_loop::trial_tag{});
    while (!trial.run_.memory.waited() && trial.step()) {
    }
    return trial.run_.memory.waited();
  }

  // A measured run's launches finish even after bad input was found, so the backend can start again.
  void drain() {
    done_ = true;
    std::vector<completion> out;
    while (run_.in_flight > 0) {
      out.clear();
      run_.backend.wait(out);
      run_.in_flight -= std::min(run_.in_flight, out.size());
    }
  }

  // Nothing in flight and vertices left: memory is exhausted, or a strict order contradicts the graph.
  void stall() {
    auto& r = run_;
    if (!r.result.ok()) return finish_run();
    const std::string who(r.who);
    if (const auto& w = r.memory.waiting(); w.vertex != no_vertex) {
      r.result.outcome = r.memory.wait_failure(r.now(), r.name(w.vertex));
      return finish_run();
    }
    done_ = true;
    for (device_id d = 0; d < r.m; ++d)
      if (const vertex_id v = r.ready.strict_next(d); v != no_vertex)
        throw invalid_input(who + ": the priority order runs " + r.name(v) + " on device " + std::to_string(d) +
                            " before one of its inputs can be produced");
    if (!r.options.transfer_order.empty())
      throw invalid_input(who +
                          ": the run stalled: transfer_order lists a transfer this replay never makes "
                          "(another placement or cache setting than the schedule it came from?)");
    throw invalid_input(who + ": the run stalled with " + std::to_string(r.g.vertex_count() - r.finished) +
                        " vertices left");
  }

  // The memory profile at the end. On a virtual clock with positive durations the memory tracked
  // during the run is exact; a zero-length activity can free at a time after allocations at that
  // same time were made, and measured times are known only now: then recompute from the schedule.
  void finish_run() {
    done_ = true;
    auto& r = run_;
    if constexpr (!modelled) r.result.host_cpu_seconds = detail::thread_cpu_seconds() - cpu_at_start_;
    if (r.result.ok() && (!modelled || r.has_zero_duration)) {
      auto& s = r.result.schedule;
      auto profile = compute_memory_profile(r.g, s, r.model, r.m);
      s.peak_memory = std::move(profile.peak);
      s.peak_memory_time = std::move(profile.peak_time);
    }
  }

  detail::run_state<M, D, B, R> run_;  // what the run holds, and what each start and finish does
  bool done_ = false;
  bool trial_ = false;  // a run without the admission rule, to see whether memory binds (trial_waits)
  seconds cpu_at_start_ = 0;
  std::vector<completion> completions_;
};

}  // namespace gantry
