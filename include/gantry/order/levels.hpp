// Top level, bottom level and critical path (Celeritas §4.2; Kwok & Ahmad 1999), computed with one
// representative compute and transfer time per vertex and edge: the model's own mean if it has one,
// else the mean over devices. O(n + e) after a topological order. detail::placed_bottom_level
// gives the bottom levels of one placement instead (place/local_search.hpp orders by them).
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>

#include <algorithm>
#include <span>
#include <vector>

namespace gantry {

struct levels {
  std::vector<seconds> top;     // t-level: longest path from a source to v, v's own time excluded
  std::vector<seconds> bottom;  // b-level: longest path from v to a sink, v's own time included
  seconds critical_path = 0;    // max over v of top + bottom

  [[nodiscard]] seconds path_through(vertex_id v) const { return top[v] + bottom[v]; }
};

namespace detail {
// Kahn order on a snapshot, or fewer than n vertices when there is a cycle.
inline std::vector<vertex_id> kahn_on(const csr_graph& g) {
  const std::size_t n = g.vertex_count();
  std::vector<std::uint32_t> indegree(n);
  std::vector<vertex_id> order;
  order.reserve(n);
  for (vertex_id v = 0; v < n; ++v)
    if ((indegree[v] = static_cast<std::uint32_t>(g.in_degree(v))) == 0) order.push_back(v);
  for (std::size_t head = 0; head < order.size(); ++head) {
    const std::size_t first_new = order.size();
    for (const vertex_id w : g.successors(order[head]))
      if (--indegree[w] == 0) order.push_back(w);
    std::sort(order.begin() + static_cast<std::ptrdiff_t>(first_new), order.end());  // ties by vertex id
  }
  return order;
}

template <class G>
void require_dag(const G& graph, const csr_graph& g, const std::vector<vertex_id>& order) {
  if (order.size() != g.vertex_count())
    throw not_a_dag("the graph has a cycle: " + describe_cycle(graph, g.find_cycle()));
}

// Bottom levels of a placed graph: compute on each vertex's own device, and the transfer of edge
// u -> w only where u and w are on different devices (levels with mean times ignore the
// placement). O(n + e) after a topological order.
template <cost_model M>
void placed_bottom_level(const csr_graph& g, std::span<const vertex_id> topo, const M& model,
                         std::span<const device_id> device, std::vector<seconds>& level) {
  level.assign(g.vertex_count(), 0);
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const vertex_id v = *it;
    const device_id d = device[v];
    const auto successors = g.successors(v);
    const auto out = g.out_edges(v);
    seconds after = 0;
    for (std::size_t i = 0; i < successors.size(); ++i) {
      const device_id to = device[successors[i]];
      after = std::max(after, level[successors[i]] + (to == d ? 0 : model.transfer_time(out[i], d, to)));
    }
    level[v] = model.compute_time(v, d) + after;
  }
}

template <cost_model M>
levels compute_levels(const csr_graph& g, const std::vector<vertex_id>& topo, const M& model, std::size_t m) {
  const std::size_t n = g.vertex_count();
  levels out;
  out.top.assign(n, 0);
  out.bottom.assign(n, 0);
  std::vector<seconds> compute(n);
  for (vertex_id v = 0; v < n; ++v) compute[v] = mean_compute_time(model, v, m);
  for (const vertex_id v : topo) {
    const auto succ = g.successors(v);
    const auto edges = g.out_edges(v);
    for (std::size_t i = 0; i < succ.size(); ++i)
      out.top[succ[i]] = std::max(out.top[succ[i]], out.top[v] + compute[v] + mean_transfer_time(model, edges[i], m));
  }
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const vertex_id v = *it;
    const auto succ = g.successors(v);
    const auto edges = g.out_edges(v);
    seconds below = 0;
    for (std::size_t i = 0; i < succ.size(); ++i)
      below = std::max(below, mean_transfer_time(model, edges[i], m) + out.bottom[succ[i]]);
    out.bottom[v] = compute[v] + below;
    out.critical_path = std::max(out.critical_path, out.top[v] + out.bottom[v]);
  }
  return out;
}
}  // namespace detail

// Throws not_a_dag (naming a cycle) when g has one.
template <adapted_graph G, cost_model M, device_set D>
[[nodiscard]] levels compute_levels(const G& graph, const M& model, const D& devices) {
  const detail::csr_view<G> g(graph);
  const auto topo = detail::kahn_on(*g);
  detail::require_dag(graph, *g, topo);
  return detail::compute_levels(*g, topo, model, devices.device_count());
}

template <adapted_graph G, cost_model M, device_set D>
[[nodiscard]] std::vector<seconds> bottom_level(const G& graph, const M& model, const D& devices) {
  return compute_levels(graph, model, devices).bottom;
}
template <adapted_graph G, cost_model M, device_set D>
[[nodiscard]] std::vector<seconds> top_level(const G& graph, const M& model, const D& devices) {
  return compute_levels(graph, model, devices).top;
}
template <adapted_graph G, cost_model M, device_set D>
[[nodiscard]] seconds critical_path(const G& graph, const M& model, const D& devices) {
  return compute_levels(graph, model, devices).critical_path;
}

}  // namespace gantry
