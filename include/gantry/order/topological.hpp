// Topological orders (Baechi §2.2, Celeritas §4.2 and §5.1): Kahn's BFS order, DFS-TOPO, and
// CPD-TOPO, which follows the critical path. Each throws not_a_dag naming a cycle when there is one.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/order/levels.hpp>

#include <algorithm>
#include <deque>
#include <tuple>
#include <vector>

namespace gantry {

// FIFO queue of vertices whose predecessors are all done; sources and vertices that become ready
// together are queued by vertex id. O(n + e log d).
template <adapted_graph G>
[[nodiscard]] std::vector<vertex_id> kahn_order(const G& graph) {
  const detail::csr_view<G> g(graph);
  auto order = detail::kahn_on(*g);
  detail::require_dag(graph, *g, order);
  return order;
}

namespace detail {
// Pops from the head; `push_children(v, push_front)` decides which ready children go to the head.
template <class G, class Initial, class Children>
std::vector<vertex_id> head_first_order(const G& graph, const csr_graph& g, Initial initial, Children children) {
  const std::size_t n = g.vertex_count();
  std::vector<std::uint32_t> indegree(n);
  for (vertex_id v = 0; v < n; ++v) indegree[v] = static_cast<std::uint32_t>(g.in_degree(v));
  std::deque<vertex_id> queue = initial(indegree);
  std::vector<vertex_id> order;
  order.reserve(n);
  std::vector<vertex_id> scratch;
  while (!queue.empty()) {
    const vertex_id v = queue.front();
    queue.pop_front();
    order.push_back(v);
    scratch.assign(g.successors(v).begin(), g.successors(v).end());
    children(scratch);  // sorted so that the one to run first comes last
    for (const vertex_id w : scratch)
      if (--indegree[w] == 0) queue.push_front(w);
  }
  require_dag(graph, g, order);
  return order;
}
}  // namespace detail

// DFS-TOPO: like Kahn, but children that become ready are pushed at the head of the queue, the
// child with the smallest id first.
template <adapted_graph G>
[[nodiscard]] std::vector<vertex_id> dfs_topo_order(const G& graph) {
  const detail::csr_view<G> g(graph);
  return detail::head_first_order(
      graph, *g,
      [&](const std::vector<std::uint32_t>& indegree) {
        std::deque<vertex_id> q;
        for (vertex_id v = 0; v < indegree.size(); ++v)
          if (indegree[v] == 0) q.push_back(v);
        return q;
      },
      [](std::vector<vertex_id>& children) { std::sort(children.rbegin(), children.rend()); });
}

// CPD-TOPO (Celeritas §5.1): sources sorted by cpath = t-level + b-level, largest first; after
// popping v its children are visited by cpath ascending and each that becomes ready is pushed at
// the head, so the ready child with the largest cpath runs next. Ties go to the smaller id.
// O((n + e) log n).
template <adapted_graph G, cost_model M, device_set D>
[[nodiscard]] std::vector<vertex_id> cpd_topo_order(const G& graph, const M& model, const D& devices) {
  const detail::csr_view<G> g(graph);
  const auto topo = detail::kahn_on(*g);
  detail::require_dag(graph, *g, topo);
  const auto lv = detail::compute_levels(*g, topo, model, devices.device_count());
  const auto later = [&](vertex_id a, vertex_id b) {  // a runs after b
    return std::tuple(lv.path_through(a), b) < std::tuple(lv.path_through(b), a);
  };
  return detail::head_first_order(
      graph, *g,
      [&](const std::vector<std::uint32_t>& indegree) {
        std::vector<vertex_id> sources;
        for (vertex_id v = 0; v < indegree.size(); ++v)
          if (indegree[v] == 0) sources.push_back(v);
        std::sort(sources.begin(), sources.end(), [&](vertex_id a, vertex_id b) { return later(b, a); });
        return std::deque<vertex_id>(sources.begin(), sources.end());
      },
      [&](std::vector<vertex_id>& children) { std::sort(children.begin(), children.end(), later); });
}

}  // namespace gantry
