// The work-conserving, event-driven simulator that judges every placement the same way (Baechi
// §4.2's execution simulator; DOPPLER §2-3, Algorithm 1): the event loop of sim/event_loop.hpp over
// a virtual clock, whose wait() pops the earliest modelled finish. Devices run one vertex at a
// time; a tensor moves over a link once its producer is done and a channel is free, and is cached
// on the receiving device; memory is allocated and freed as the run goes (rules in
// schedule/schedule.hpp); a start that does not fit waits for memory while others go ahead, and
// running out (nothing can go on) is an outcome naming device, time, vertex and bytes. Durations
// may be drawn around the model's values (seeded lognormal) to turn a makespan into a distribution.
// O((n + e) log n + t log t) for t transfers in parallel mode.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/sim/event_loop.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace gantry {

struct simulation_result {
  // ok, or out_of_memory with the device, the time, the vertex whose bytes did not fit, the bytes
  // it needed and those free there.
  gantry::outcome outcome;
  gantry::schedule schedule;  // complete when ok; what ran until the failure otherwise

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

namespace detail {
// The simulator owns its clock; the loop (its base) holds a reference to it, so it comes first.
struct owns_virtual_clock {
  virtual_clock clock;
};
}  // namespace detail

// The simulator as a class, to step through a run event time by event time:
//   simulator sim(g, model, devices, placement, options); while (sim.step()) inspect(sim.now());
// init() starts again at time 0; step(), run(), now(), done(), finished_count(), memory_in_use(d)
// and result() are the loop's. Holds references to its arguments: they must outlive it.
template <placement_model M, device_set D>
class simulator : private detail::owns_virtual_clock, public event_loop<M, D, virtual_clock, simulation_result> {
 public:
  simulator(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement,
            simulate_options options = {}, std::function<std::string(vertex_id)> names = {})
      : event_loop<M, D, virtual_clock, simulation_result>(g, model, devices, placement, clock, options, "simulate",
                                                           std::move(names)) {}
};

// Simulates `placement` (a device per vertex) of g. Bad arguments throw invalid_input; running out
// of memory is a status in the result.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] simulation_result simulate(const G& graph, const M& model, const D& devices,
                                         std::span<const device_id> placement, simulate_options options = {}) {
  const detail::csr_view<G> g(graph);
  if (const auto cycle = g->find_cycle(); !cycle.empty())
    throw not_a_dag("simulate: the graph has a cycle: " + describe_cycle(graph, cycle));
  simulator<M, D> sim(*g, model, devices, placement, options,
                      [&graph](vertex_id v) { return quoted_vertex_name(graph, v); });
  return std::move(sim.run());
}

// Makespans of repeated runs with drawn durations (run i uses seed + i).
struct makespan_distribution {
  std::size_t runs = 0;
  std::size_t failed = 0;  // runs that ran out of memory
  seconds mean = 0, stddev = 0, min = 0, p50 = 0, p95 = 0, max = 0;
  std::vector<seconds> makespans;  // of the successful runs, in run order
};

template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] makespan_distribution simulate_runs(const G& graph, const M& model, const D& devices,
                                                  std::span<const device_id> placement, std::size_t runs,
                                                  simulate_options options = {}) {
  const detail::csr_view<G> g(graph);
  if (const auto cycle = g->find_cycle(); !cycle.empty())
    throw not_a_dag("simulate: the graph has a cycle: " + describe_cycle(graph, cycle));
  makespan_distribution out;
  out.runs = runs;
  const std::uint64_t seed = options.seed;
  for (std::size_t i = 0; i < runs; ++i) {
    options.seed = seed + i;
    simulator<M, D> sim(*g, model, devices, placement, options);
    const auto& r = sim.run();
    if (r.ok()) out.makespans.push_back(r.schedule.makespan);
    else ++out.failed;
  }
  if (out.makespans.empty()) return out;
  std::vector<seconds> sorted = out.makespans;
  std::sort(sorted.begin(), sorted.end());
  const auto quantile = [&](double q) {  // nearest rank
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  double sum = 0;
  for (const seconds x : sorted) sum += x;
  out.mean = sum / static_cast<double>(sorted.size());
  double squares = 0;
  for (const seconds x : sorted) squares += (x - out.mean) * (x - out.mean);
  out.stddev = sorted.size() > 1 ? std::sqrt(squares / static_cast<double>(sorted.size() - 1)) : 0.0;
  out.min = sorted.front();
  out.max = sorted.back();
  out.p50 = quantile(0.5);
  out.p95 = quantile(0.95);
  return out;
}

#if defined(GANTRY_SEPARATE_COMPILATION)
// Compiled once for gantry's own types, in the unit that includes place/instances.hpp.
extern template simulation_result simulate(const graph&, const graph_model&, const cluster&, std::span<const device_id>,
                                           simulate_options);
#endif

}  // namespace gantry
