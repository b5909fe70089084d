// Cuts beyond one layer order: a branching model (ResNet's skip connections) can be cut along any
// of its topological orders, and the order decides which cuts exist and what crosses them. This
// searches every cut (every ideal of the forward vertices, as PipeDream does) for the order whose
// chain plans best, tries several fixed and random orders beside it, plans each as a chain and
// keeps the best.
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/comm_partition.hpp>
#include <gantry/pipeline/ideals.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <utility>
#include <vector>

namespace gantry {

// The plan the cut search aims at: what plan_pipeline (or comm_aware_partition) is given.
struct cut_target {
  std::size_t workers = 1;
  byte_count capacity = unlimited_memory;
  pipeline_comm comm{};
  std::size_t max_replicas = 1;  // 1: a straight pipeline
};

struct cut_search_options {
  std::size_t max_ideals = 100000;
  // Pairs of nested ideals × workers × replicas the program may visit, about a nanosecond each;
  // its tables take at most 1/64 of it in cells of 24 bytes. Past it the search stops and says so.
  std::uint64_t max_steps = std::uint64_t{1} << 27;
};

struct order_search_options {
  // Orders tried besides Kahn's (smallest id first) and two depth-first ones; 0 tries those three.
  std::size_t random_orders = 5;
  std::uint64_t seed = 1;
  // With a target, the order whose chain is best for it over every cut is tried too (best_cut_order).
  std::optional<cut_target> cuts{};
  cut_search_options cut_limits{};
};

namespace detail {

// A topological order of the forward vertices but the work-free sources forward_anchors() ties to
// another (edges between those vertices only); `pick` chooses the index, in the ready list, of
// the vertex to take next.
template <class Pick>
std::vector<vertex_id> forward_order(const graph& g, const std::vector<vertex_id>& backward_of,
                                     const std::vector<vertex_id>& anchor, Pick pick) {
  const std::size_t n = g.vertex_count();
  const auto is_backward = [&](vertex_id v) { return backward_of[v] != no_vertex || anchor[v] != no_vertex; };
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
[[nodiscard]] inline std::vector<std::vector<vertex_id>> candidate_orders(const graph& g,
                                                                          order_search_options options = {}) {
  std::vector<std::vector<vertex_id>> orders;
  const auto add = [&](std::vector<vertex_id> order) {
    if (std::find(orders.begin(), orders.end(), order) == orders.end()) orders.push_back(std::move(order));
  };
  const std::vector<vertex_id> backward_of = backward_owners(g), anchor = forward_anchors(g, backward_of);
  add(detail::forward_order(g, backward_of, anchor, [](const std::vector<vertex_id>& ready) {
    return static_cast<std::size_t>(std::min_element(ready.begin(), ready.end()) - ready.begin());
  }));
  std::size_t forwards = 0;
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    forwards += backward_of[v] == no_vertex && anchor[v] == no_vertex ? 1 : 0;
  if (orders.front().size() != forwards) throw not_a_dag("candidate_orders: the forward vertices form a cycle");
  add(detail::forward_order(g, backward_of, anchor,
                            [](const std::vector<vertex_id>& ready) { return ready.size() - 1; }));
  add(detail::forward_order(g, backward_of, anchor, [](const std::vector<vertex_id>& ready) {
    // Depth-first, but of the vertices made ready last, the first one.
    std::size_t i = ready.size() - 1;
    while (i > 0 && ready[i - 1] > ready[i]) --i;
    return i;
  }));
  std::mt19937_64 rng(options.seed);
  for (std::size_t k = 0; k < options.random_orders; ++k)
    add(detail::forward_order(g, backward_of, anchor, [&](const std::vector<vertex_id>& ready) {
      return static_cast<std::size_t>(rng() % ready.size());
    }));
  return orders;
}

namespace detail {
template <class Result>
seconds period_of(const Result& r) {
  if constexpr (requires { r.period(); }) return r.period();
  else return r.period;
}
}  // namespace detail

struct cut_search_result {
  std::vector<vertex_id> order;  // forward vertices whose chain holds the best cuts; empty when none fit
  seconds period = std::numeric_limits<seconds>::infinity();  // of the best cuts, by the rule below
  std::size_t ideals = 0;                                     // ideals enumerated
  bool complete = false;  // every ideal and pair of nested ideals searched (no cap reached)
};

// The best cuts of a training graph over all its topological orders: comm_aware_partition's
// suffix program run over the ideals of the forward vertices instead of a chain's prefixes
//   best[I][m][r] = min over ideals J ⊋ I of max(load(J \ I, r), link(J, r, r'), best[J][m-r][r'])
// (stage J \ I on r of m workers, the same loads, links, all-reduces and memory rule through
// the same pipeline_comm), and the order listing its stages one after the other. Any chain of
// nested ideals is the prefixes of one order, so this is the smallest comm_aware_partition period
// over all orders, and comm_aware_partition on the order's chain finds it. Layers come from
// chain_from_graph after `prepare`. O(N·d·w) for the N ideals (forward_ideals), then O(K·P·R)
// for K pairs of nested ideals, P workers, R = max_replicas, and O(N·P·R) memory; stops with
// complete = false past `limits`. Deterministic.
template <class Prepare>
[[nodiscard]] cut_search_result best_cut_order(const graph& g, const cut_target& target, Prepare prepare,
                                               cut_search_options limits = {}) {
  cut_search_result result;
  const auto lattice = forward_ideals(g, {.max_ideals = limits.max_ideals});
  result.ideals = lattice.size();
  const std::size_t n = lattice.vertices().size(), N = lattice.size();
  if (!lattice.complete() || n == 0) return result;
  // At most one stage per vertex, each on at most max_replicas workers: more workers cannot help.
  const std::size_t workers = std::max<std::size_t>(1, target.workers);
  const std::size_t P = std::min(workers, n * std::clamp<std::size_t>(target.max_replicas, 1, workers));
  const std::size_t R = std::clamp<std::size_t>(target.max_replicas, 1, P);
  const std::uint64_t cells = static_cast<std::uint64_t>(N) * P * R;
  std::uint64_t steps = cells;
  if (cells > limits.max_steps / 64) return result;
  // Per-ideal sums of the layers' numbers (one layer per vertex, in the lattice's order) and the
  // bytes its boundary sends on, built along the covering relation.
  chain layers = chain_from_graph(g, {.order = lattice.vertices()});
  prepare(layers);
  std::vector<seconds> forward(N, 0), backward(N, 0);
  std::vector<byte_count> weights(N, 0), activation(N, 0), parameters(N, 0), crossing(N, 0);
  std::vector<std::uint32_t> dense(g.vertex_count(), std::numeric_limits<std::uint32_t>::max());
  for (std::uint32_t i = 0; i < n; ++i) dense[lattice.vertices()[i]] = i;
  // A vertex's output crosses a boundary when it is inside and some forward reader is not.
  const auto sends = [&](std::size_t ideal, std::uint32_t i) {
    if (!lattice.contains(ideal, i)) return false;
    bool out = false;
    g.for_each_out_edge(lattice.vertices()[i], [&](edge_id e) {
      const auto w = dense[g.target(e)];
      if (w != std::numeric_limits<std::uint32_t>::max() && !lattice.contains(ideal, w)) out = true;
    });
    return out;
  };
  std::vector<bool> done(N, false);
  done[0] = true;
  std::vector<std::uint32_t> seen(n, 0);  // inputs already counted for ideal j (stamp j)
  for (std::size_t k = 0; k < N; ++k)
    for (const auto& c : lattice.covers(k)) {
      if (done[c.ideal]) continue;
      done[c.ideal] = true;
      const auto j = c.ideal, v = c.vertex;
      const auto& x = layers.layers[v];
      forward[j] = forward[k] + x.forward;
      backward[j] = backward[k] + x.backward;
      weights[j] = weights[k] + x.weights;
      activation[j] = activation[k] + x.activation;
      parameters[j] = parameters[k] + x.gradient_bytes();
      // Only v and its inputs can change whether they send.
      std::int64_t bytes = static_cast<std::int64_t>(crossing[k]);
      const auto output = [&](std::uint32_t i) { return static_cast<std::int64_t>(g[lattice.vertices()[i]].output); };
      if (sends(j, v)) bytes += output(v);
      g.for_each_in_edge(lattice.vertices()[v], [&](edge_id e) {
        const auto u = dense[g.source(e)];
        if (u == std::numeric_limits<std::uint32_t>::max() || seen[u] == j) return;
        seen[u] = j;
        if (sends(k, u) && !sends(j, u)) bytes -= output(u);
      });
      crossing[j] = static_cast<byte_count>(bytes);
    }
  const auto& comm = target.comm;
  const bool links = comm.link && comm.overlap == transfer_overlap::link_stages;
  const std::size_t full = N - 1;
  constexpr double none = std::numeric_limits<double>::infinity();
  const auto at = [&](std::size_t ideal, std::size_t m, std::size_t r) { return (ideal * P + (m - 1)) * R + (r - 1); };
  // best as above; onward[J][m][r] = min over r' of max(best[J][m][r'], 2·link(J, r, r')): what
  // follows a stage on r workers that ends at J, with the r' that gives it.
  std::vector<double> best(cells, none), onward(cells, none);
  std::vector<std::uint32_t> cut(cells, 0), onward_replicas(cells, 0);
  const auto link_time = [&](std::size_t ideal, std::size_t r, std::size_t r2) {
    if (!links) return 0.0;
    return comm.transfer(crossing[ideal]) / static_cast<double>(std::max<std::size_t>(1, std::min(r, r2)));
  };
  std::vector<double> suffix(R + 2, none);
  std::vector<std::uint32_t> suffix_at(R + 2, 0);
  superset_walker walk(lattice);
  bool stopped = false;
  for (std::size_t i = full; i-- > 0 && !stopped;) {
    walk(i, [&](std::size_t j) {
      const byte_count w = weights[j] - weights[i], a = activation[j] - activation[i];
      // detail::stage_fits(w, a, ceil((after + 1) / r), M) is after < copies·r, copies = (M - w) / a.
      if (w > target.capacity) return;
      const std::uint64_t copies = a == 0 ? std::numeric_limits<std::uint64_t>::max() : (target.capacity - w) / a;
      const seconds moved =
          comm.overlap == transfer_overlap::on_processors
              ? (i > 0 ? comm.transfer(crossing[i]) : 0.0) + (j < full ? comm.transfer(crossing[j]) : 0.0)
              : 0.0;
      for (std::size_t r = 1; r <= R; ++r) {
        steps += P - r + 1;
        // The stage's per-batch times as detail::stage_times computes them on a chain.
        seconds f = forward[j] - forward[i];
        seconds b = backward[j] - backward[i] + comm.allreduce(parameters[j] - parameters[i], r);
        if (comm.overlap == transfer_overlap::on_processors) {
          f += moved;
          b += moved;
        }
        const double load = f / static_cast<double>(r) + b / static_cast<double>(r);
        for (std::size_t m = r; m <= P; ++m) {
          const std::size_t after = (m - r) * (links ? 2 : 1);
          if (copies < std::numeric_limits<std::uint64_t>::max() / r && after >= copies * r)
            break;  // more after, more held
          const auto cell = at(i, m, r);
          if (j == full) {
            if (m == r && load < best[cell]) {
              best[cell] = load;
              cut[cell] = static_cast<std::uint32_t>(full);
            }
            continue;
          }
          if (m == r) continue;
          const auto rest = at(j, m - r, r);
          if (const double candidate = std::max(load, onward[rest]); candidate < best[cell]) {
            best[cell] = candidate;
            cut[cell] = static_cast<std::uint32_t>(j);
          }
        }
      }
    });
    if (steps > limits.max_steps) stopped = true;
    // onward[i] for the stages that end at i (their first ideal is a strict subset of i). The link
    // depends on min(r, r') only: r' >= r all pay 2t/r (a suffix minimum of best), each r' < r pays
    // 2t/r' (a prefix minimum), so each entry costs O(1) after O(R) per m.
    for (std::size_t m = 1; m <= P && i > 0; ++m) {
      const std::size_t top = std::min(m, R);
      const auto link = [&](std::size_t r) { return 2.0 * link_time(i, r, r); };
      suffix[top + 1] = none;
      for (std::size_t r2 = top; r2 >= 1; --r2) {
        const double value = best[at(i, m, r2)];
        suffix[r2] = value <= suffix[r2 + 1] ? value : suffix[r2 + 1];
        suffix_at[r2] = value <= suffix[r2 + 1] ? static_cast<std::uint32_t>(r2) : suffix_at[r2 + 1];
      }
      double below = none;  // min over r' < r of max(best[r'], 2t/r')
      std::uint32_t below_at = 0;
      for (std::size_t r = 1; r <= R; ++r) {
        const auto cell = at(i, m, r);
        onward[cell] = below;
        onward_replicas[cell] = below_at;
        if (r > top) continue;
        if (const double value = std::max(suffix[r], link(r)); value < onward[cell]) {
          onward[cell] = value;
          onward_replicas[cell] = suffix_at[r];
        }
        if (const double value = std::max(best[at(i, m, r)], link(r)); value < below) {
          below = value;
          below_at = static_cast<std::uint32_t>(r);
        }
      }
    }
  }
  if (stopped) return result;
  result.complete = true;
  // Fewer workers may do better; ties go to fewer workers, as in comm_aware_partition.
  std::size_t best_m = 0, best_r = 0;
  for (std::size_t m = 1; m <= P; ++m)
    for (std::size_t r = 1; r <= std::min(m, R); ++r)
      if (best[at(0, m, r)] < result.period) {
        result.period = best[at(0, m, r)];
        best_m = m;
        best_r = r;
      }
  if (result.period == none) return result;
  std::vector<std::uint32_t> nested;
  for (std::size_t i = 0, m = best_m, r = best_r; i != full;) {
    const auto cell = at(i, m, r);
    const std::size_t j = cut[cell];
    nested.push_back(static_cast<std::uint32_t>(j));
    if (j == full) break;
    const std::size_t r2 = onward_replicas[at(j, m - r, r)];
    m -= r;
    i = j;
    r = r2;
  }
  result.order = linear_extension(lattice, nested);
  return result;
}

struct order_search_result {
  std::vector<vertex_id> order;  // the forward vertices in the order of the best chain
  chain layers;                  // one layer per forward vertex, in that order
  std::size_t orders_tried = 0;
  // The cut search (with options.cuts): its result, and whether no topological order plans
  // better than the one returned. That holds when every ideal was searched and the target's rule
  // is the planner's: with links or replicas (comm_aware_partition), or without a memory limit.
  std::optional<cut_search_result> cuts{};
  bool exact = false;
};

// Plans the chain of every candidate order with `plan_chain(chain)`, which returns a result with
// `ok()` and a `period` (member or function), and returns the best result (smallest period, the first on ties) with
// its chain. `prepare(chain&)` may adjust each chain first (scale weights, drop input time).
// With options.cuts, the target plan_chain plans for, best_cut_order's order is a candidate too,
// after the others; when the search is exact (see order_search_result) it is the only one planned.
template <class Plan, class Prepare>
[[nodiscard]] auto best_over_orders(const graph& g, Plan plan_chain, Prepare prepare,
                                    order_search_options options = {}) {
  using result_type = decltype(plan_chain(std::declval<const chain&>()));
  std::pair<order_search_result, result_type> best{};
  bool found = false;
  auto orders = candidate_orders(g, options);
  if (options.cuts) {
    best.first.cuts = best_cut_order(g, *options.cuts, prepare, options.cut_limits);
    const auto& found_cuts = *best.first.cuts;
    const auto& t = *options.cuts;
    best.first.exact = found_cuts.complete && (t.comm.link || t.max_replicas > 1 || t.capacity == unlimited_memory);
    if (best.first.exact) {
      // No order plans better than the best cuts' one; when nothing fits, Kahn's says why.
      if (!found_cuts.order.empty()) orders.assign(1, found_cuts.order);
      else orders.resize(1);
    } else if (!found_cuts.order.empty() && std::find(orders.begin(), orders.end(), found_cuts.order) == orders.end()) {
      orders.push_back(found_cuts.order);  // last: the fixed orders keep ties
    }
  }
  for (const auto& order : orders) {
    chain c = chain_from_graph(g, {.order = order});
    prepare(c);
    auto result = plan_chain(static_cast<const chain&>(c));
    const bool better =
        !found || (result.ok() && (!best.second.ok() || detail::period_of(result) < detail::period_of(best.second)));
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
