// Random task graphs in the manner of the Standard Task Graph set (Tobita & Kasahara, J. Scheduling
// 2002): n tasks with integer times, edges drawn by one of the set's four methods, a zero-time
// entry before every source and a zero-time exit after every sink, no communication. Seeded: the
// same seed gives the same graph on every platform. stg_optimum() proves the optimum of such a
// graph on identical processors by branch and bound.
#pragma once

#include <gantry/core/random.hpp>
#include <gantry/graph/graph.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gantry::test {

enum class stg_method {
  sameprob,  // edge i -> j (i < j) with one probability for every pair
  samepred,  // task j draws its number of predecessors, each among the earlier tasks
  layrprob,  // tasks in layers; an edge from any earlier layer with one probability
  layrpred,  // tasks in layers; task j draws its predecessors among earlier layers
};

struct stg_options {
  std::size_t tasks = 20;  // without the entry and the exit
  stg_method method = stg_method::samepred;
  double mean_predecessors = 2.0;  // on average over the tasks (the probability follows from it)
  std::size_t layers = 5;          // layrprob, layrpred
  std::uint64_t min_time = 1, max_time = 10;
  std::uint64_t seed = 1;
};

// Vertex 0 is the entry, vertex tasks + 1 the exit; edges carry no bytes.
[[nodiscard]] inline graph stg_like_graph(const stg_options& o) {
  detail::portable_random rng(o.seed);
  const std::size_t n = o.tasks;
  graph g;
  g.add_vertex("entry", 0);
  for (std::size_t i = 0; i < n; ++i)
    g.add_vertex("t" + std::to_string(i + 1), static_cast<seconds>(rng.integer(o.min_time, o.max_time)));
  const auto task = [](std::size_t i) { return static_cast<vertex_id>(i + 1); };
  const std::size_t layers = std::clamp<std::size_t>(o.layers, 1, std::max<std::size_t>(n, 1));
  const auto layer_of = [&](std::size_t i) { return i * layers / n; };
  const auto layer_begin = [&](std::size_t l) { return (l * n + layers - 1) / layers; };
  const bool layered = o.method == stg_method::layrprob || o.method == stg_method::layrpred;
  std::vector<std::uint8_t> linked(n * n, 0);  // linked[i * n + j]: edge task i -> task j
  std::vector<std::uint8_t> has_pred(n, 0), has_succ(n, 0);
  // One probability for every pair that may be linked: mean_predecessors per task on average.
  double pairs = 0;
  for (std::size_t j = 0; j < n; ++j) pairs += static_cast<double>(layered ? layer_begin(layer_of(j)) : j);
  const double p = pairs > 0 ? std::min(1.0, o.mean_predecessors * static_cast<double>(n) / pairs) : 0.0;
  const auto link = [&](std::size_t i, std::size_t j) {
    if (linked[i * n + j]) return;
    linked[i * n + j] = 1;
    has_pred[j] = has_succ[i] = 1;
    g.add_edge(task(i), task(j), 0);
  };
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t earlier = layered ? layer_begin(layer_of(j)) : j;  // candidates 0 .. earlier-1
    if (earlier == 0) continue;
    if (o.method == stg_method::sameprob || o.method == stg_method::layrprob) {
      for (std::size_t i = 0; i < earlier; ++i)
        if (rng.unit() < p) link(i, j);
    } else {
      const auto count = rng.integer(0, static_cast<std::uint64_t>(2 * o.mean_predecessors));
      for (std::uint64_t k = 0; k < count; ++k) link(rng.integer(0, earlier - 1), j);
    }
  }
  const auto exit = static_cast<vertex_id>(n + 1);
  g.add_vertex("exit", 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!has_pred[i]) g.add_edge(0, task(i), 0);
    if (!has_succ[i]) g.add_edge(task(i), exit, 0);
  }
  return g;
}

// The shortest makespan of g (integer compute times, no communication) on `processors` identical
// processors, or `upper` when none is shorter than `upper` (pass a known schedule's makespan).
// Branch and bound over active schedules (Sprecher, Kolisch & Drexl 1995): tasks are placed in
// order of start time, each at the earliest time its inputs and a free processor allow; a task
// that would start before the last start waits, and a node where one fits wholly before it is
// dropped (the order that places it first has it). Bounds: the
// longest path through the unplaced tasks and the remaining work spread over the processors.
// Exponential in the worst case: for graphs of a few dozen tasks.
struct stg_search {
  std::size_t nodes = 0;      // search nodes visited
  std::size_t max_nodes = 0;  // 0: no limit; else give up (exact = false) past it
  bool exact = true;          // the answer is proven
};
[[nodiscard]] inline std::int64_t stg_optimum(const graph& g, std::size_t processors, std::int64_t upper,
                                              stg_search* stats = nullptr) {
  const std::size_t n = g.vertex_count();
  const auto P = static_cast<int>(processors);
  std::vector<std::int64_t> time(n), tail(n), start(n, -1), finish(n, 0), head(n);
  std::vector<std::vector<vertex_id>> pred(n), succ(n);
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    pred[g.target(e)].push_back(g.source(e));
    succ[g.source(e)].push_back(g.target(e));
  }
  for (vertex_id v = 0; v < n; ++v) {
    time[v] = std::llround(g[v].compute);
    if (std::abs(static_cast<double>(time[v]) - g[v].compute) > 1e-9 || time[v] < 0)
      throw std::invalid_argument("stg_optimum: vertex " + g[v].name +
                                  " has a compute time that is not a whole number");
  }
  std::vector<vertex_id> topo;  // Kahn order
  {
    std::vector<std::size_t> waiting(n);
    for (vertex_id v = 0; v < n; ++v)
      if ((waiting[v] = pred[v].size()) == 0) topo.push_back(v);
    for (std::size_t i = 0; i < topo.size(); ++i)
      for (const vertex_id w : succ[topo[i]])
        if (--waiting[w] == 0) topo.push_back(w);
    if (topo.size() != n) throw std::invalid_argument("stg_optimum: the graph has a cycle");
  }
  std::int64_t work = 0;
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    std::int64_t below = 0;
    for (const vertex_id w : succ[*it]) below = std::max(below, tail[w]);
    tail[*it] = time[*it] + below;
    work += time[*it];
  }
  std::int64_t best = upper;
  std::vector<int> used(static_cast<std::size_t>(std::max<std::int64_t>(upper, 0)) + 1,
                        0);  // busy processors per unit slot
  stg_search local;
  stg_search& s = stats ? *stats : local;
  // The earliest start of ready v at or after `ready` with a processor free for its whole run.
  const auto earliest = [&](vertex_id v, std::int64_t ready) {
    if (time[v] == 0) return ready;
    for (std::int64_t t = ready;; ++t) {
      if (t + time[v] > best) return best;  // no room below the bound
      std::int64_t k = 0;
      while (k < time[v] && used[static_cast<std::size_t>(t + k)] < P) ++k;
      if (k == time[v]) return t;
      t += k;
    }
  };
  const auto ready_at = [&](vertex_id v) {
    std::int64_t r = 0;
    for (const vertex_id u : pred[v]) r = std::max(r, finish[u]);
    return r;
  };
  std::size_t placed = 0;
  std::int64_t makespan = 0, left = work;
  const auto dfs = [&](auto&& self, std::int64_t last_start, vertex_id last) -> void {
    if (s.max_nodes != 0 && s.nodes >= s.max_nodes) {
      s.exact = false;
      return;
    }
    ++s.nodes;
    if (placed == n) {
      best = std::min(best, makespan);
      return;
    }
    // Bounds: heads through the unplaced tasks, and the work left from last_start on.
    std::int64_t bound = makespan;
    for (const vertex_id v : topo) {
      if (start[v] >= 0) continue;
      std::int64_t h = last_start;
      for (const vertex_id u : pred[v]) h = std::max(h, start[u] >= 0 ? finish[u] : head[u] + time[u]);
      head[v] = h;
      bound = std::max(bound, h + tail[v]);
    }
    std::int64_t busy = left;
    for (std::int64_t t = last_start; t < makespan; ++t) busy += used[static_cast<std::size_t>(t)];
    bound = std::max(bound, last_start + (busy + P - 1) / P);
    if (bound >= best) return;
    // Candidates: ready tasks by start; one that would start before the last start kills the node.
    std::vector<std::pair<std::int64_t, vertex_id>> next;
    for (vertex_id v = 0; v < n; ++v) {
      if (start[v] >= 0) continue;
      bool ready = true;
      for (const vertex_id u : pred[v]) ready = ready && start[u] >= 0;
      if (!ready) continue;
      const std::int64_t t = earliest(v, ready_at(v));
      if (t < last_start || (t == last_start && last != no_vertex && v < last)) {
        if (t + time[v] <= last_start) return;  // its slot stays free: every completion is out of order
        continue;                               // later placements may push it past last_start
      }
      if (t + tail[v] < best) next.emplace_back(t, v);
    }
    std::sort(next.begin(), next.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : tail[a.second] > tail[b.second];
    });
    for (const auto& [t, v] : next) {
      if (t + tail[v] >= best) continue;  // best may have dropped
      start[v] = t;
      finish[v] = t + time[v];
      for (std::int64_t k = t; k < finish[v]; ++k) ++used[static_cast<std::size_t>(k)];
      const std::int64_t before = makespan;
      makespan = std::max(makespan, finish[v]);
      ++placed;
      left -= time[v];
      self(self, t, v);
      left += time[v];
      --placed;
      makespan = before;
      for (std::int64_t k = t; k < finish[v]; ++k) --used[static_cast<std::size_t>(k)];
      start[v] = -1;
      finish[v] = 0;
    }
  };
  dfs(dfs, 0, no_vertex);
  return best;
}

}  // namespace gantry::test
