// local_search: improves any placement with the simulator as the judge. Units (colocation groups,
// the clusters of a fusion, or single vertices) move one at a time to the device where the
// simulated makespan is shortest; a unit that moved puts its neighbours back on the work list. The
// placement's order is recomputed for each trial as the placed bottom level (compute on the
// vertex's device plus the transfers its placed successors wait for), so the judge runs the
// critical path first wherever the placement puts it. Memory is the simulator's: a trial that runs
// out of memory is refused, so the answer fits wherever the start fits.
// Cost: one simulation per trial, (devices - 1) trials per unit visited, at most max_simulations
// and within time_limit.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace gantry {

// Where a running search stands (local_search_options::progress).
struct local_search_progress {
  std::size_t simulations = 0;  // trials run so far
  std::size_t moves = 0;        // units moved so far
  seconds best = 0;             // the best makespan so far
  double elapsed = 0;           // wall-clock seconds since the search began
};

struct local_search_options {
  ready_policy policy = ready_policy::placement_order;  // the judge's policy (simulate_options::policy)
  bool cache_transfers = true;                          // the judge's tensor cache
  // Colocation group per vertex (no_group: alone; empty: none): a group moves as one unit.
  std::vector<std::uint32_t> group{};
  // Cluster per vertex (empty: each vertex alone), e.g. coarsening::coarse_of: a cluster moves as
  // one unit. Groups and clusters that share a vertex form one unit.
  std::vector<vertex_id> cluster{};
  // Trials (simulations) at most, the start's included; the best placement found so far is kept.
  std::size_t max_simulations = 5000;
  // A move is taken when it shortens the makespan by more than this fraction of it.
  double min_gain = 1e-9;
  // Wall-clock seconds at most (infinity: no limit); the best placement found so far is kept and
  // local_search_result::timed_out says so. A limit makes the answer depend on the machine's speed.
  double time_limit = std::numeric_limits<double>::infinity();
  // Called every progress_interval seconds of wall clock while the search runs (never in a search
  // that ends sooner), e.g. to tell a user that a long search is alive.
  std::function<void(const local_search_progress&)> progress{};
  double progress_interval = 2;
};

struct local_search_result {
  gantry::placement placement;  // device per vertex; order: the placed bottom level, highest first
  seconds start_makespan = 0;   // the start judged with its own order; infinity if it failed
  seconds makespan = 0;         // the answer judged with its order (= start_makespan if no better)
  std::size_t simulations = 0;  // trials run
  std::size_t moves = 0;        // units moved
  bool timed_out = false;       // stopped by local_search_options::time_limit
};

// Improves `start` (a device for every vertex of `graph`). Throws invalid_input for a start of the
// wrong size or naming a device out of range, and for group or cluster vectors of the wrong size;
// not_a_dag for a cycle; invalid_input too for a time limit or progress interval that is not > 0.
// A start that failed (its outcome says so) is returned as it is. When no trial runs to its end,
// the start included (each ran out of memory), the result's outcome is the last trial's failure,
// naming vertex and device.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] local_search_result local_search(const G& graph, const M& model, const D& devices, const placement& start,
                                               const local_search_options& options = {}) {
  const auto began = std::chrono::steady_clock::now();
  const detail::csr_view<G> view(graph);
  const csr_graph& g = *view;
  const std::size_t n = g.vertex_count(), m = devices.device_count();
  local_search_result out;
  if (!start.ok()) {
    out.placement = start;
    return out;
  }
  if (start.device.size() != n)
    throw invalid_input("local_search: the start places " + std::to_string(start.device.size()) +
                        " vertices, the graph has " + std::to_string(n));
  for (vertex_id v = 0; v < n; ++v)
    if (start.device[v] >= m)
      throw invalid_input("local_search: the start puts vertex " + quoted_vertex_name(graph, v) + " on device " +
                          std::to_string(start.device[v]) + " of " + std::to_string(m));
  if (!options.group.empty() && options.group.size() != n)
    throw invalid_input("local_search: group has " + std::to_string(options.group.size()) + " entries, the graph has " +
                        std::to_string(n) + " vertices");
  if (!options.cluster.empty() && options.cluster.size() != n)
    throw invalid_input("local_search: cluster has " + std::to_string(options.cluster.size()) +
                        " entries, the graph has " + std::to_string(n) + " vertices");
  if (!(options.time_limit > 0))
    throw invalid_input("local_search: the time limit must be > 0 seconds, got " + std::to_string(options.time_limit));
  if (!(options.progress_interval > 0))
    throw invalid_input("local_search: the progress interval must be > 0 seconds, got " +
                        std::to_string(options.progress_interval));
  const auto topo = detail::kahn_on(g);
  detail::require_dag(graph, g, topo);

  // Units: vertices joined through a shared group or cluster.
  detail::vertex_union joined(n);
  const auto join_by = [&](const auto& key, auto none) {
    using key_type = std::remove_cvref_t<decltype(key[0])>;
    std::vector<vertex_id> first(n, no_vertex);
    for (vertex_id v = 0; v < n; ++v) {
      const key_type k = key[v];
      if (k == none) continue;
      if (k >= n)  // ids are dense (colocation_groups(), coarsening::coarse_of): fewer than vertices
        throw invalid_input("local_search: vertex " + quoted_vertex_name(graph, v) + " has group or cluster " +
                            std::to_string(k) + ", not below the vertex count " + std::to_string(n));
      if (first[k] == no_vertex) first[k] = v;
      else joined.join(first[k], v);
    }
  };
  if (!options.group.empty()) join_by(options.group, no_group);
  if (!options.cluster.empty()) join_by(options.cluster, no_vertex);
  std::vector<std::uint32_t> unit_of(n, 0);
  std::vector<std::vector<vertex_id>> members;
  {
    std::vector<std::uint32_t> id(n, std::numeric_limits<std::uint32_t>::max());
    for (const vertex_id v : topo) {  // units numbered in topological order of their first member
      auto& k = id[joined.find(v)];
      if (k == std::numeric_limits<std::uint32_t>::max()) {
        k = static_cast<std::uint32_t>(members.size());
        members.emplace_back();
      }
      unit_of[v] = k;
      members[k].push_back(v);
    }
  }
  // A unit that does not sit on one device in the start is split by it: refuse, naming it.
  for (const auto& unit : members)
    for (const vertex_id v : unit)
      if (start.device[v] != start.device[unit.front()])
        throw invalid_input(
            "local_search: the start splits a unit (group or cluster): " + quoted_vertex_name(graph, unit.front()) +
            " on device " + std::to_string(start.device[unit.front()]) + ", " + quoted_vertex_name(graph, v) +
            " on device " + std::to_string(start.device[v]));
  std::vector<std::vector<std::uint32_t>> neighbours(members.size());
  for (vertex_id v = 0; v < n; ++v)
    for (const vertex_id w : g.successors(v))
      if (unit_of[v] != unit_of[w]) {
        neighbours[unit_of[v]].push_back(unit_of[w]);
        neighbours[unit_of[w]].push_back(unit_of[v]);
      }
  for (auto& list : neighbours) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }

  std::vector<device_id> device = start.device;
  std::vector<seconds> level;
  std::vector<vertex_id> order;
  outcome last_failure;
  seconds best = std::numeric_limits<seconds>::infinity();
  double next_progress = options.progress_interval;
  // Whether the search may run another trial: within max_simulations and the time limit; reports
  // progress on the way.
  const auto may_go_on = [&] {
    if (out.simulations >= options.max_simulations) return false;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (elapsed >= options.time_limit) {
      out.timed_out = true;
      return false;
    }
    if (options.progress && elapsed >= next_progress) {
      options.progress({.simulations = out.simulations, .moves = out.moves, .best = best, .elapsed = elapsed});
      next_progress = elapsed + options.progress_interval;
    }
    return true;
  };
  const auto judge = [&](std::span<const vertex_id> priority) -> seconds {
    ++out.simulations;
    simulator<M, D> sim(g, model, devices, device,
                        {.policy = options.policy, .priority = priority, .cache_transfers = options.cache_transfers},
                        [&graph](vertex_id v) { return quoted_vertex_name(graph, v); });
    const auto& run = sim.run();
    if (!run.ok()) {
      last_failure = run.outcome;
      return std::numeric_limits<seconds>::infinity();
    }
    return run.schedule.makespan;
  };
  // Each trial's order: decreasing placed bottom level, ties in topological order.
  const auto judge_placed = [&] {
    detail::placed_bottom_level(g, topo, model, device, level);
    order.assign(topo.begin(), topo.end());
    std::stable_sort(order.begin(), order.end(), [&](vertex_id a, vertex_id b) { return level[a] > level[b]; });
    return judge(order);
  };

  out.start_makespan =
      judge(start.order.size() == n ? std::span<const vertex_id>(start.order) : std::span<const vertex_id>());
  best = judge_placed();
  std::vector<device_id> best_device = device;
  std::vector<vertex_id> best_order = order;
  if (out.start_makespan <= best) {  // the start's own order was better: keep it until a move wins
    best = out.start_makespan;
    best_order = start.order.size() == n ? start.order : topo;
  }

  std::deque<std::uint32_t> work(members.size());
  std::iota(work.begin(), work.end(), std::uint32_t{0});
  std::vector<std::uint8_t> queued(members.size(), 1);
  const auto move_unit = [&](std::uint32_t k, device_id d) {
    for (const vertex_id v : members[k]) device[v] = d;
  };
  while (!work.empty() && may_go_on()) {
    const std::uint32_t k = work.front();
    work.pop_front();
    queued[k] = 0;
    const device_id was = device[members[k].front()];
    device_id chosen = was;
    for (device_id d = 0; d < m && may_go_on(); ++d) {
      if (d == was) continue;
      move_unit(k, d);
      const seconds t = judge_placed();
      if (t < best * (1 - options.min_gain)) {
        best = t;
        chosen = d;
        best_order = order;
      }
    }
    move_unit(k, chosen);
    if (chosen == was) continue;
    ++out.moves;
    best_device = device;
    for (const std::uint32_t j : neighbours[k])
      if (!queued[j]) {
        queued[j] = 1;
        work.push_back(j);
      }
  }

  out.makespan = best;
  out.placement.device = std::move(best_device);
  out.placement.order = std::move(best_order);
  if (best == std::numeric_limits<seconds>::infinity()) out.placement.outcome = last_failure;
  out.placement.placement_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return out;
}

}  // namespace gantry
