// The state of one run of the event loop (sim/event_loop.hpp) and what each start and finish does
// to it; the loop decides when. A vertex starts (takes its temporary and output bytes on its
// device, launches on the backend) and finishes (frees its temporary bytes, hands its output to its
// readers, frees the inputs it was the last to read); a copy starts (takes its bytes on the
// receiving device, occupies its route) and finishes (frees the route, and the sender's output if
// that was its last read; its readers' inputs are there). Consumers on the producer's device get
// the output at once; others get a copy: one per tensor (edges of equal bytes) and device when
// cached, else one per edge. In parallel mode a copy starts as it is made if it fits and is
// admitted; otherwise it queues for the loop's dispatch (sim/transfer_dispatch.hpp).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/sim/admission.hpp>
#include <gantry/sim/backend.hpp>
#include <gantry/sim/device_memory.hpp>
#include <gantry/sim/holdings.hpp>
#include <gantry/sim/ready_queues.hpp>
#include <gantry/sim/run_options.hpp>
#include <gantry/sim/run_plan.hpp>
#include <gantry/sim/shared_bandwidth.hpp>
#include <gantry/sim/transfer_dispatch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gantry::detail {

template <placement_model M, device_set D, execution_backend B, class R>
struct run_state {
  static constexpr bool modelled = virtual_time_backend<B>;

  run_state(const csr_graph& graph, const M& costs, const D& on, std::span<const device_id> where, B& runner,
            simulate_options rules, const char* caller, std::function<std::string(vertex_id)> namer)
      : g(graph), model(costs), devices(on), placement(where), backend(runner), options(rules), who(caller),
        names(std::move(namer)) {}
  run_state(const run_state&) = delete;
  run_state& operator=(const run_state&) = delete;

  // The arguments checked (detail::check_run_arguments; invalid_input), nothing started, nothing
  // held; the admission rule off (the loop engages it).
  void reset() {
    const std::size_t n = g.vertex_count();
    m = devices.device_count();
    const auto label = [this](vertex_id v) { return name(v); };
    check_run_arguments(who, g, model, m, placement, options, !modelled, label);
    result = {};
    auto& s = result.schedule;
    s.device.assign(placement.begin(), placement.end());
    s.start.assign(n, 0);
    s.finish.assign(n, 0);
    finished = 0;
    in_flight = 0;
    has_zero_duration = false;
    plan.reset(g, model, m, placement, options, who);
    pending.resize(n);
    for (vertex_id v = 0; v < n; ++v) pending[v] = static_cast<std::uint32_t>(g.in_degree(v));
    holdings.reset(g, placement, plan.output_bytes());
    busy.assign(m, 0);
    dispatcher.reset(devices, options.transfer_order, options.cache_transfers,
                     options.policy == ready_policy::strict_order, n, who, label);
    ready.reset(options.policy, m, placement, plan.ranks(), plan.bottom_levels());
    memory.reset(devices, modelled && !options.wait_for_memory, options.wait_for_memory);
    admission = {};
    stretched = false;
    if constexpr (requires { backend.share(bandwidth_sharing{}); }) {
      backend.share(sharing_of(devices));
      stretched = backend.stretches();
    }
    if (stretched) plan.count_traffic(g, model);
    s.order.assign(m, {});
    s.busy.assign(m, 0);
    s.peak_memory.assign(m, 0);
    s.peak_memory_time.assign(m, 0);
  }

  [[nodiscard]] seconds now() const { return backend.now(); }
  [[nodiscard]] std::string name(vertex_id v) const { return names ? names(v) : "#" + std::to_string(v); }

  void fail(const memory_shortfall& f) { result.outcome = memory.failure(f, name(f.vertex)); }
  void allocate(device_id d, byte_count bytes, vertex_id v, const char* what) {
    if (const auto f = memory.allocate(d, bytes, v, what, now(), result.schedule)) fail(*f);
  }
  void release(device_id d, byte_count bytes) { memory.release(d, bytes); }
  // The end of an instant (sim/device_memory.hpp): a device still over its capacity fails the run.
  void settle() {
    if (const auto f = memory.settle(); f && result.ok()) fail(*f);
  }

  void make_ready(vertex_id v) { ready.push(v, placement[v], now()); }

  void start_vertex(vertex_id v) {
    const device_id d = placement[v];
    auto& s = result.schedule;
    const seconds duration = plan.duration(v);
    if constexpr (modelled) {
      // Known when decided (a finish only at the least, where devices share bandwidth: the
      // completion says); kept even if the start then runs out of memory.
      s.start[v] = now();
      s.finish[v] = now() + duration;
      s.order[d].push_back(v);
      s.makespan = std::max(s.makespan, s.finish[v]);
      if (duration == 0) {
        // An empty interval holds nothing (schedule.hpp): v's inputs are freed before its output is
        // taken, as frees at one time come before allocations. Its consumers may start now.
        ++finished;
        has_zero_duration = true;
        release_inputs(v);
        if (g.out_degree(v) == 0) return;
        allocate(d, plan.output_bytes(v), v, "output");
        if (result.ok()) hand_output(v);
        return;
      }
    }
    allocate(d, plan.temporary_bytes(v), v, "temporary");
    if (result.ok()) allocate(d, plan.output_bytes(v), v, "output");
    if (!result.ok()) return;
    busy[d] = 1;
    if constexpr (modelled) {
      if (!stretched) s.busy[d] += duration;
    } else {
      s.order[d].push_back(v);
    }
    ++in_flight;
    backend.launch_vertex({v, d, duration, plan.traffic(v)});
  }

  // A completion the backend handed back (the loop has counted it off in_flight).
  void finish(const completion& c) {
    if (c.is_copy) finish_transfer(c);
    else finish_vertex(c);
  }

  void finish_vertex(const completion& c) {
    const vertex_id v = c.id;
    const device_id d = placement[v];
    if (!modelled || stretched) {
      auto& s = result.schedule;
      s.start[v] = c.start;
      s.finish[v] = c.finish;
      s.busy[d] += c.finish - c.start;
      s.makespan = std::max(s.makespan, c.finish);
    }
    busy[d] = 0;
    ++finished;
    release(d, plan.temporary_bytes(v));
    if (result.ok()) hand_output(v);
    release_inputs(v);
  }

  // v's output to its readers (above).
  void hand_output(vertex_id v) {
    const device_id d = placement[v];
    auto& s = result.schedule;
    std::uint32_t readers = 0;
    const auto succ = g.successors(v);
    const auto out = g.out_edges(v);
    const std::size_t first_new = s.transfers.size();
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const vertex_id w = succ[i];
      const device_id to = placement[w];
      if (to == d) {
        ++readers;
        if (--pending[w] == 0) make_ready(w);
        continue;
      }
      const edge_id e = out[i];
      const byte_count bytes = model.edge_bytes(e);
      std::uint32_t t = no_transfer;
      if (options.cache_transfers)
        for (std::size_t k = first_new; k < s.transfers.size() && t == no_transfer; ++k)
          if (s.transfers[k].to == to && s.transfers[k].bytes == bytes) t = static_cast<std::uint32_t>(k);
      if (t == no_transfer) {
        t = static_cast<std::uint32_t>(s.transfers.size());
        s.transfers.push_back({v, e, d, to, 0, 0, bytes});
        holdings.add_copy();
        const seconds time = model.transfer_time(e, d, to);
        if constexpr (!modelled)
          check_run_time(
              who, time, [&] { return "the transfer of " + name(v) + " to device " + std::to_string(to) + " takes"; },
              " s");
        plan.add_transfer(time);
        dispatcher.made(s.transfers.back());
        ++readers;
      }
      holdings.serve(e, t);
    }
    holdings.take_output(v, now(), readers);
    if (readers == 0) release(d, plan.output_bytes(v));
    for (std::size_t k = first_new; k < s.transfers.size(); ++k) {
      const auto t = static_cast<std::uint32_t>(k);
      if (dispatcher.parallel() && room_for_copy(t) && admits_copy(t)) start_transfer(t);
      else dispatcher.enqueue(now(), plan.rank(v), s.transfers[k].edge, t);
    }
  }

  // v no longer needs its inputs.
  void release_inputs(vertex_id v) {
    holdings.release_inputs(v, result.schedule.transfers, now(), !modelled,
                            [this](device_id d, byte_count bytes) { release(d, bytes); });
  }

  void start_transfer(std::uint32_t t) {
    auto& s = result.schedule;
    auto& tr = s.transfers[t];
    allocate(tr.to, tr.bytes, tr.tensor, "received");
    if (!result.ok()) return;
    dispatcher.occupy(t, tr);
    const seconds duration = plan.transfer_duration(t);
    if constexpr (modelled) {
      tr.start = now();
      tr.finish = now() + duration;
      s.makespan = std::max(s.makespan, tr.finish);
      if (duration == 0) has_zero_duration = true;
    }
    s.bytes_moved += tr.bytes;
    ++in_flight;
    backend.launch_copy({t, tr.tensor, tr.from, tr.to, tr.bytes, duration});
  }

  void finish_transfer(const completion& c) {
    auto& tr = result.schedule.transfers[c.id];
    if (!modelled || stretched) {
      tr.start = c.start;
      tr.finish = c.finish;
      result.schedule.makespan = std::max(result.schedule.makespan, c.finish);
    }
    dispatcher.vacate(tr);
    const vertex_id u = tr.tensor;
    if (holdings.read_output(u, now())) release(tr.from, plan.output_bytes(u));
    if (!result.ok()) return;  // a measured run draining after a failure
    const auto succ = g.successors(u);
    const auto out = g.out_edges(u);
    for (std::size_t i = 0; i < succ.size(); ++i)
      if (holdings.transfer_of(out[i]) == c.id && --pending[succ[i]] == 0) make_ready(succ[i]);
  }

  // Whether copy t fits on its receiver now.
  bool room_for_copy(std::uint32_t t) {
    const auto& tr = result.schedule.transfers[t];
    return memory.room_for(tr.to, tr.bytes, 0, tr.tensor, "received");
  }
  // Whether v can start now: its temporary and output bytes (on a virtual clock, a zero-length
  // vertex's output after the inputs it frees at once).
  bool vertex_fits(vertex_id v) {
    const device_id d = placement[v];
    if (!modelled || plan.duration(v) != 0)
      return memory.room_for(d, saturating_add(plan.temporary_bytes(v), plan.output_bytes(v)), 0, v,
                             "temporary and output");
    if (g.out_degree(v) == 0) return true;
    return memory.room_for(d, plan.output_bytes(v), holdings.freed_by_inputs(v, result.schedule.transfers), v,
                           "output");
  }
  // The admission rule (sim/admission.hpp): whether starting v now leaves the priority order, run
  // one vertex at a time, room to finish (its output is held until v's turn).
  bool admits(vertex_id v) {
    const device_id d = placement[v];
    const byte_count held = g.out_degree(v) == 0 ? 0 : plan.output_bytes(v);
    return admission.admit_start(d, plan.rank(v), held, v) ||
           memory.held_back(d, v, held, "output (held back for the priority order)");
  }
  // The same for copy t: its copy is held from now until its first reader's turn.
  bool admits_copy(std::uint32_t t) {
    const auto& tr = result.schedule.transfers[t];
    const auto first_reader = [&] { return holdings.first_reader(t, tr.tensor, plan.ranks()); };
    return admission.admit_copy(t, result.schedule.transfers.size(), g.vertex_count(), tr.to, tr.bytes, first_reader) ||
           memory.held_back(tr.to, tr.tensor, tr.bytes, "received (held back for the priority order)");
  }

  const csr_graph& g;
  const M& model;
  const D& devices;
  std::span<const device_id> placement;
  B& backend;
  simulate_options options;
  const char* who;
  std::function<std::string(vertex_id)> names;
  std::size_t m = 0;  // devices

  R result;
  std::size_t finished = 0;
  std::size_t in_flight = 0;  // launched and not yet handed back as a completion
  bool has_zero_duration = false;
  run_plan<M> plan;                    // ranks, bottom levels, durations, bytes
  std::vector<std::uint32_t> pending;  // inputs not yet on the vertex's device, per vertex
  run_holdings holdings;
  // A virtual clock whose devices share bandwidth stretches durations: finishes come from completions.
  bool stretched = false;
  std::vector<std::uint8_t> busy;  // per device
  device_memory<D> memory;
  ready_queues ready;
  transfer_dispatch dispatcher;
  memory_admission admission;
};

}  // namespace gantry::detail
