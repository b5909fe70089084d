// Cuts beyond one layer order: a branching model (ResNet's skip connections) can be cut along any
// of its topological orders, and the order decides which cuts exist and what crosses them. This
// tries several orders of a training graph's forward vertices, plans each as a chain, keeps the best.
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/pipeline/chain.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace gantry {

struct order_search_options {
  // Orders tried besides Kahn's (smallest id first) and two depth-first ones; 0 tries those three.
  std::size_t random_orders = 5;
  std::uint64_t seed = 1;
};

namespace detail {

// A topological order of the forward vertices (edges between forward vertices only); `pick`
// chooses the index, in the ready list, of the vertex to take next.
template <class Pick>
std::vector<vertex_id> forward_order(const graph& g, Pick pick) {
  const std::size_t n = g.vertex_count();
  const auto is_backward = [&](vertex_id v) { return g.forward_of(v) != no_vertex; };
  std::vector<std::uint32_t> waiting(n, 0);
  for (edge_id e = 0; e < g.edge_count(); ++e)
    if (!is_backward(g.source(e)) && !is_backward(g.target(e))) ++waiting[g.target(e)];
  std::vector<vertex_id> ready, order;
  for (vertex_id v = 0; v < n; ++v)
    if (!is_backward(v) && waiting[v] == 0) ready.push_back(v);
  while (!ready.empty()) {
    const std::size_t i = pick(ready);
    const vertex_id v = ready[i];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(i));
    order.push_back(v);
    g.for_each_out_edge(v, [&](edge_id e) {
      const auto w = g.target(e);
      if (!is_backward(w) && --waiting[w] == 0) ready.push_back(w);
    });
  }
  return order;
}

}  // namespace detail

// The orders tried: Kahn's (smallest id first), depth-first (finish the branch just entered before
// another: a cut then crosses few tensors), depth-first taking the other branch first, and seeded
// random ones. Duplicates are dropped. Throws not_a_dag when the forward vertices form a cycle.
[[nodiscard]] inline std::vector<std::vector<vertex_id>> candidate_orders(const graph& g, order_search_options options = {}) {
  std::vector<std::vector<vertex_id>> orders;
  const auto add = [&](std::vector<vertex_id> order) {
    if (std::find(orders.begin(), orders.end(), order) == orders.end()) orders.push_back(std::move(order));
  };
  add(detail::forward_order(g, [](const std::vector<vertex_id>& ready) {
    return static_cast<std::size_t>(std::min_element(ready.begin(), ready.end()) - ready.begin());
  }));
  std::size_t forwards = 0;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) forwards += g.forward_of(v) == no_vertex ? 1 : 0;
  if (orders.front().size() != forwards) throw not_a_dag("candidate_orders: the forward vertices form a cycle");
  add(detail::forward_order(g, [](const std::vector<vertex_id>& ready) { return ready.size() - 1; }));
  add(detail::forward_order(g, [](const std::vector<vertex_id>& ready) {
    // Depth-first, but of the vertices made ready last, the first one.
    std::size_t i = ready.size() - 1;
    while (i > 0 && ready[i - 1] > ready[i]) --i;
    return i;
  }));
  std::mt19937_64 rng(options.seed);
  for (std::size_t k = 0; k < options.random_orders; ++k)
    add(detail::forward_order(g, [&](const std::vector<vertex_id>& ready) { return static_cast<std::size_t>(rng() % ready.size()); }));
  return orders;
}

namespace detail {
template <class Result>
seconds period_of(const Result& r) {
  if constexpr (requires { r.period(); }) return r.period();
  else return r.period;
}
}  // namespace detail

struct order_search_result {
  std::vector<vertex_id> order;  // the forward vertices in the order of the best chain
  chain layers;                  // one layer per forward vertex, in that order
  std::size_t orders_tried = 0;
};

// Plans the chain of every candidate order with `plan_chain(chain)`, which returns a result with
// `ok()` and a `period` (member or function), and returns the best result (smallest period, the first on ties) with
// its chain. `prepare(chain&)` may adjust each chain first (scale weights, drop input time).
template <class Plan, class Prepare>
[[nodiscard]] auto best_over_orders(const graph& g, Plan plan_chain, Prepare prepare, order_search_options options = {}) {
  using result_type = decltype(plan_chain(std::declval<const chain&>()));
  std::pair<order_search_result, result_type> best{};
  bool found = false;
  const auto orders = candidate_orders(g, options);
  for (const auto& order : orders) {
    chain c = chain_from_graph(g, {.order = order});
    prepare(c);
    auto result = plan_chain(static_cast<const chain&>(c));
    const bool better = !found || (result.ok() && (!best.second.ok() || detail::period_of(result) < detail::period_of(best.second)));
    if (better) {
      best.first.order = order;
      best.first.layers = std::move(c);
      best.second = std::move(result);
      found = true;
    }
  }
  best.first.orders_tried = orders.size();
  return best;
}

}  // namespace gantry
