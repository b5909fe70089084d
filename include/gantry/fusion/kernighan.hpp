// Kernighan's breakpoint DP (Kernighan 1971; Celeritas §5.1.3): cut a topological order into
// contiguous segments, each at most `window` vertices long and within a memory cap, so that the
// communication cost of the edges leaving the segments is smallest. The segments become the
// clusters of a coarse graph (fusion/coarsen.hpp), which is a DAG by construction: every edge goes
// forward in the order, so every coarse edge goes from an earlier segment to a later one.
//
// With positions 0..n-1 in the order, cost(i, j) = sum of c(e) over edges e = (v_k, v_l) with
// i <= k < j <= l; S(0) = 0 and S(j) = min over j-R <= i < j with mem[i, j) <= M of S(i) + cost(i, j).
// cost(i, j) = cost(i, j-1) + out(v_{j-1}) - sum of c over edges from [i, j-1) into v_{j-1}, so
// every cost of a window follows from the previous window's in O(R + in-degree): O(n·R + e) in all.
// Ties keep the smallest i (as Kernighan's public code does). A vertex heavier than M alone is a
// segment of its own: the cap limits how much is fused, it never makes the DP infeasible.
#pragma once

#include <gantry/fusion/coarsen.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/topological.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace gantry {

struct kernighan_options {
  std::size_t window = 200;                      // R: the most vertices in one segment (Celeritas: 200)
  byte_count cluster_memory = unlimited_memory;  // M: the most bytes in one segment (Celeritas: a quarter of a device)
  // Colocation group per vertex (place/colocation.hpp's ids; an id shared by no other vertex, or one
  // of n or more, is no group); empty for none. Beyond Celeritas, which has no groups: a segment
  // holds members of at most one group of several vertices, so fusing never merges two groups (a
  // coarse vertex takes its members' group, and two groups in one would bind both to one device).
  std::vector<std::uint32_t> group{};
};

// The segments [breakpoints[k], breakpoints[k+1]) of the order, 0 = breakpoints.front() and
// n = breakpoints.back(); cluster_of numbers each vertex by its segment.
struct kernighan_breakpoints {
  std::vector<std::size_t> breakpoints;
  std::vector<vertex_id> cluster_of;  // per vertex
  double cost = 0;                    // sum of c over the edges that leave their segment
  [[nodiscard]] std::size_t cluster_count() const noexcept { return breakpoints.empty() ? 0 : breakpoints.size() - 1; }
};

// The DP on any graph and topological order, with the cost of an edge and the bytes of a vertex as
// callables: edge_cost(edge_id) -> double (>= 0), vertex_bytes(vertex_id) -> byte_count (the
// bytes a segment sums). Throws invalid_input when the order is not a permutation of the vertices
// in which every edge goes forward, when a cost is negative or not finite, or when the window is 0.
template <adapted_graph G, class EdgeCost, class VertexBytes>
requires std::is_invocable_r_v<double, const EdgeCost&, edge_id> &&
    std::is_invocable_r_v<byte_count, const VertexBytes&, vertex_id>
[[nodiscard]] kernighan_breakpoints kernighan(const G& graph, std::span<const vertex_id> order,
                                              const EdgeCost& edge_cost, const VertexBytes& vertex_bytes,
                                              kernighan_options options = {}) {
  const detail::csr_view<G> view(graph);
  const csr_graph& g = *view;
  const std::size_t n = g.vertex_count();
  if (options.window == 0) throw invalid_input("kernighan: the window must be at least 1 vertex");
  if (order.size() != n)
    throw invalid_input("kernighan: the order has " + std::to_string(order.size()) + " entries for " +
                        std::to_string(n) + " vertices");
  std::vector<std::size_t> position(n, n);
  for (std::size_t k = 0; k < n; ++k) {
    const vertex_id v = order[k];
    if (v >= n)
      throw invalid_input("kernighan: order[" + std::to_string(k) + "] = " + std::to_string(v) + " is not a vertex");
    if (position[v] != n)
      throw invalid_input("kernighan: vertex " + std::to_string(v) + " is in the order twice (at " +
                          std::to_string(position[v]) + " and " + std::to_string(k) + ")");
    position[v] = k;
  }
  // out[k]: the cost of every edge out of the vertex at position k (all of them go forward).
  std::vector<double> out(n, 0.0);
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const vertex_id u = g.source(e), v = g.target(e);
    if (position[u] >= position[v])
      throw invalid_input("kernighan: edge " + std::to_string(u) + " -> " + std::to_string(v) +
                          " goes backwards in the order (positions " + std::to_string(position[u]) + " and " +
                          std::to_string(position[v]) + "): the order must be topological");
    const double c = static_cast<double>(edge_cost(e));
    if (!(c >= 0) || !std::isfinite(c))
      throw invalid_input("kernighan: edge " + std::to_string(u) + " -> " + std::to_string(v) + " costs " +
                          std::to_string(c) + "; costs must be finite and >= 0");
    out[position[u]] += c;
  }
  if (!options.group.empty() && options.group.size() != n)
    throw invalid_input("kernighan: the group vector has " + std::to_string(options.group.size()) + " entries for " +
                        std::to_string(n) + " vertices");
  // shared[k]: the group of the vertex at position k when it has other members, else `alone`.
  constexpr std::uint32_t alone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> shared;
  if (!options.group.empty()) {
    std::vector<std::uint32_t> members(n, 0);
    for (const std::uint32_t id : options.group)
      if (id < n) ++members[id];
    shared.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint32_t id = options.group[order[k]];
      shared[k] = id < n && members[id] > 1 ? id : alone;
    }
  }
  // prefix[k]: bytes of the first k vertices of the order (saturating).
  std::vector<byte_count> prefix(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) prefix[k + 1] = detail::saturating_add(prefix[k], vertex_bytes(order[k]));

  const std::size_t r = std::min(options.window, std::max<std::size_t>(n, 1));
  // cost[i % r] = cost(i, j) for the window's starts i in [j-r, j); inbound[i % r]: the cost of the
  // edges from position i into v_{j-1}, gathered per step and cleared after it.
  std::vector<double> cost(r, 0.0), inbound(r, 0.0);
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> from(n + 1, 0);
  best[0] = 0;
  for (std::size_t j = 1; j <= n; ++j) {
    const std::size_t last = j - 1;  // v_{j-1} joins every segment that ends at j
    const std::size_t first = j > r ? j - r : 0;
    const vertex_id v = order[last];
    {
      const auto pred = g.predecessors(v);
      const auto in = g.in_edges(v);
      for (std::size_t k = 0; k < pred.size(); ++k) {
        const std::size_t s = position[pred[k]];
        if (s >= first) inbound[s % r] += static_cast<double>(edge_cost(in[k]));
      }
    }
    // cost(last, j) = out(v_{j-1}); for i < last, cost(i, j) = cost(i, j-1) + out - inbound from [i, last).
    cost[last % r] = out[last];
    double inside = 0;
    for (std::size_t i = last; i-- > first;) {
      inside += inbound[i % r];
      cost[i % r] += out[last] - inside;
    }
    for (std::size_t i = first; i <= last; ++i) inbound[i % r] = 0;
    // Segments [i, j) with members of two groups are out: i starts after the nearer one.
    std::size_t lowest = first;
    if (!shared.empty()) {
      std::uint32_t seen = alone;
      for (std::size_t i = j; i-- > first;) {
        if (shared[i] == alone) continue;
        if (seen == alone) seen = shared[i];
        else if (shared[i] != seen) {
          lowest = i + 1;
          break;
        }
      }
    }
    // S(j), smallest i first so that ties keep it.
    for (std::size_t i = lowest; i < j; ++i) {
      if (j - i > 1 && prefix[j] - prefix[i] > options.cluster_memory) continue;
      const double candidate = best[i] + cost[i % r];
      if (candidate < best[j]) {
        best[j] = candidate;
        from[j] = i;
      }
    }
  }
  kernighan_breakpoints result;
  result.cost = best[n];
  for (std::size_t j = n; j > 0; j = from[j]) result.breakpoints.push_back(j);
  result.breakpoints.push_back(0);
  std::reverse(result.breakpoints.begin(), result.breakpoints.end());
  result.cluster_of.assign(n, 0);
  for (std::size_t k = 0; k + 1 < result.breakpoints.size(); ++k)
    for (std::size_t p = result.breakpoints[k]; p < result.breakpoints[k + 1]; ++p)
      result.cluster_of[order[p]] = static_cast<vertex_id>(k);
  return result;
}

// Kernighan fusion of a gantry graph: the breakpoints and the coarse graph with its map back.
struct kernighan_fusion {
  kernighan_breakpoints segments;
  std::vector<vertex_id> order;  // the topological order that was cut
  gantry::coarsening coarsening;
};

// The breakpoints of `order` with c(e) = the model's representative transfer time of e (its mean
// over pairs of distinct devices, so 0 on one device) and a vertex's bytes = persistent + output +
// temporary (which bound the coarse vertex's own bytes), then the coarse graph. Throws as
// kernighan() and coarsen() do.
template <cost_model M, device_set D>
requires memory_model<M>
[[nodiscard]] kernighan_fusion fuse_kernighan(const graph& g, std::span<const vertex_id> order, const M& model,
                                              const D& devices, kernighan_options options = {}) {
  const std::size_t m = devices.device_count();
  kernighan_fusion out;
  out.order.assign(order.begin(), order.end());
  out.segments = kernighan(
      g, order, [&](edge_id e) { return static_cast<double>(mean_transfer_time(model, e, m)); },
      [&](vertex_id v) { return total_bytes(model, v); }, options);
  out.coarsening = coarsen(g, out.segments.cluster_of);
  return out;
}

// Celeritas's fusion: the CPD-TOPO order (order/topological.hpp), cut by the DP.
template <cost_model M, device_set D>
requires memory_model<M>
[[nodiscard]] kernighan_fusion fuse_kernighan(const graph& g, const M& model, const D& devices,
                                              kernighan_options options = {}) {
  const auto order = cpd_topo_order(g, model, devices);
  return fuse_kernighan(g, std::span<const vertex_id>(order), model, devices, options);
}

// M = a quarter of the smallest device's memory (Celeritas §5.1.3), unlimited when every device is.
template <device_set D>
[[nodiscard]] byte_count quarter_device_memory(const D& devices) {
  byte_count smallest = unlimited_memory;
  for (device_id d = 0; d < devices.device_count(); ++d) smallest = std::min(smallest, devices.capacity(d));
  return smallest == unlimited_memory ? unlimited_memory : smallest / 4;
}

}  // namespace gantry
