// The favorite-child LP of SCT (Hanen & Munier 1995; Baechi §2.4), built sparse and solved by any
// LP backend (lp/linear_program.hpp), then rounded to at most one favorite child per vertex and at
// most one favorite parent per vertex. See docs/algorithms.md, "SCT and m-SCT".
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/lp/linear_program.hpp>
#include <gantry/model/model.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace gantry {

// The LP, per arc u→v (parallel edges are one arc, timed by the slowest of them), per vertex and
// for the makespan w:
//   minimise w
//   s_u + p(u) + c(u,v)·x_uv <= s_v      every arc
//   s_v + p(v) <= w                      every sink (other vertices are bounded through their successors)
//   Σ_v x_uv >= outdeg(u) − 1            every u with two or more successors
//   Σ_u x_uv >= indeg(v) − 1             every v with two or more predecessors
//   0 <= x <= 1, s >= 0                  as column bounds, not rows
// An arc whose source has one successor and whose target one predecessor is in no sum row, so
// x = 0 is optimal for it: it gets no column (its row reads s_u + p(u) <= s_v). x_uv = 0 means v
// is u's favorite child.
struct favorite_child_lp {
  linear_program lp;
  std::vector<vertex_id> arc_source, arc_target;
  std::vector<int> arc_column;             // per arc: its x column, -1 when fixed at 0
  std::vector<std::uint32_t> arc_of_edge;  // per edge of the graph
  std::vector<seconds> arc_transfer;
  int makespan_column = -1;
};

namespace detail {
// A feasible starting basis near the optimum, so that the primal simplex has little left to do.
// Favorites first: each vertex, most critical first (largest bottom level with every transfer
// paid), keeps the arc to the child that ends its longest path if that child has no favorite parent
// yet; their x = 0, every other x = 1, so every sum row holds. Starts are the longest paths with
// those arc lengths and w the longest of all. Basic: each start but the sources' (at 0), w, and
// the slack of every row except, per vertex with inputs, the arc row that sets its start and the
// sink row that sets w. Those tight rows form a triangular system in the basic starts and w, so
// the basis is nonsingular and primal feasible. O((n + e) log n).
inline void favorite_child_warm_start(favorite_child_lp& built, std::span<const seconds> compute, std::size_t n) {
  linear_program& lp = built.lp;
  const std::size_t arcs = built.arc_source.size();
  // Arcs by source are consecutive; arcs into each vertex, by index.
  std::vector<std::uint32_t> out_first(n + 1, 0), in_first(n + 1, 0), in_list(arcs);
  for (std::size_t a = 0; a < arcs; ++a) {
    ++out_first[built.arc_source[a] + 1];
    ++in_first[built.arc_target[a] + 1];
  }
  for (std::size_t v = 0; v < n; ++v) {
    out_first[v + 1] += out_first[v];
    in_first[v + 1] += in_first[v];
  }
  {
    std::vector<std::uint32_t> fill(in_first.begin(), in_first.end() - 1);
    for (std::uint32_t a = 0; a < arcs; ++a) in_list[fill[built.arc_target[a]]++] = a;
  }
  // A topological order of the arcs' graph (Kahn); a cycle leaves no warm start.
  std::vector<vertex_id> order;
  order.reserve(n);
  {
    std::vector<std::uint32_t> indegree(n);
    for (vertex_id v = 0; v < n; ++v) {
      indegree[v] = in_first[v + 1] - in_first[v];
      if (indegree[v] == 0) order.push_back(v);
    }
    for (std::size_t head = 0; head < order.size(); ++head)
      for (std::uint32_t a = out_first[order[head]]; a < out_first[order[head] + 1]; ++a)
        if (--indegree[built.arc_target[a]] == 0) order.push_back(built.arc_target[a]);
    if (order.size() != n) return;
  }
  std::vector<seconds> bottom(n, 0);
  std::vector<std::uint32_t> best_arc(n, std::numeric_limits<std::uint32_t>::max());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    seconds tail = 0;
    for (std::uint32_t a = out_first[*it]; a < out_first[*it + 1]; ++a) {
      const seconds through = built.arc_transfer[a] + bottom[built.arc_target[a]];
      if (best_arc[*it] == std::numeric_limits<std::uint32_t>::max() || through > tail) {
        tail = through;
        best_arc[*it] = a;
      }
    }
    bottom[*it] = compute[*it] + tail;
  }
  std::vector<double> x(arcs, 1.0);
  std::vector<std::uint8_t> has_parent(n, 0);
  for (std::size_t a = 0; a < arcs; ++a)
    if (built.arc_column[a] < 0) {  // fixed favorites: their ends have no other arcs to compete
      x[a] = 0;
      has_parent[built.arc_target[a]] = 1;
    }
  std::vector<vertex_id> by_level(order);
  std::stable_sort(by_level.begin(), by_level.end(), [&](vertex_id a, vertex_id b) { return bottom[a] > bottom[b]; });
  for (const vertex_id u : by_level) {
    const std::uint32_t a = best_arc[u];
    if (a == std::numeric_limits<std::uint32_t>::max() || built.arc_column[a] < 0) continue;
    if (has_parent[built.arc_target[a]]) continue;
    x[a] = 0;
    has_parent[built.arc_target[a]] = 1;
  }
  // Longest paths with those lengths; the arc row that sets each start.
  std::vector<seconds> start(n, 0);
  std::vector<std::uint32_t> setting(n, std::numeric_limits<std::uint32_t>::max());
  for (const vertex_id v : order)
    for (std::uint32_t i = in_first[v]; i < in_first[v + 1]; ++i) {
      const std::uint32_t a = in_list[i];
      const seconds t = start[built.arc_source[a]] + compute[built.arc_source[a]] + built.arc_transfer[a] * x[a];
      if (setting[v] == std::numeric_limits<std::uint32_t>::max() || t > start[v]) {
        start[v] = t;
        setting[v] = a;
      }
    }
  // Rows: arcs first (row a is arc a), then the sink rows in vertex order, then the sum rows.
  lp.column_basis.assign(lp.column_count(), basis_status::at_lower);
  lp.row_basis.assign(lp.row_count(), basis_status::basic);
  for (std::size_t a = 0; a < arcs; ++a)
    if (built.arc_column[a] >= 0)
      lp.column_basis[built.arc_column[a]] = x[a] == 0 ? basis_status::at_lower : basis_status::at_upper;
  const int first_start = built.makespan_column - static_cast<int>(n);
  for (vertex_id v = 0; v < n; ++v)
    if (setting[v] != std::numeric_limits<std::uint32_t>::max()) {
      lp.column_basis[first_start + v] = basis_status::basic;
      lp.row_basis[setting[v]] = basis_status::at_upper;
    }
  lp.column_basis[built.makespan_column] = basis_status::basic;
  int row = static_cast<int>(arcs), last_sink_row = -1;
  seconds makespan = -1;
  for (vertex_id v = 0; v < n; ++v) {
    if (out_first[v + 1] != out_first[v]) continue;
    if (start[v] + compute[v] > makespan) {
      makespan = start[v] + compute[v];
      last_sink_row = row;
    }
    ++row;
  }
  if (last_sink_row >= 0) lp.row_basis[last_sink_row] = basis_status::at_upper;
  else {  // no vertices: no basis to offer
    lp.column_basis.clear();
    lp.row_basis.clear();
  }
}
}  // namespace detail

// Builds the LP for graph g with compute time p(v) = compute[v] and transfer time c = transfer[e]
// per edge. Throws invalid_input for spans of the wrong size or times that are negative or not finite.
[[nodiscard]] inline favorite_child_lp build_favorite_child_lp(const csr_graph& g, std::span<const seconds> compute,
                                                               std::span<const seconds> transfer) {
  const std::size_t n = g.vertex_count();
  if (compute.size() != n)
    throw invalid_input("favorite-child LP: " + std::to_string(compute.size()) + " compute times for " +
                        std::to_string(n) + " vertices");
  if (transfer.size() != g.edge_count())
    throw invalid_input("favorite-child LP: " + std::to_string(transfer.size()) + " transfer times for " +
                        std::to_string(g.edge_count()) + " edges");
  for (vertex_id v = 0; v < n; ++v)
    if (!std::isfinite(compute[v]) || compute[v] < 0)
      throw invalid_input("favorite-child LP: vertex " + std::to_string(v) + " has compute time " +
                          std::to_string(compute[v]));
  for (edge_id e = 0; e < g.edge_count(); ++e)
    if (!std::isfinite(transfer[e]) || transfer[e] < 0)
      throw invalid_input("favorite-child LP: edge " + std::to_string(e) + " has transfer time " +
                          std::to_string(transfer[e]));

  favorite_child_lp out;
  out.arc_of_edge.assign(g.edge_count(), 0);
  // Arcs: distinct (source, target) pairs, by source then target.
  std::vector<std::pair<vertex_id, edge_id>> scratch;
  std::vector<std::uint32_t> out_arcs(n, 0), in_arcs(n, 0);
  for (vertex_id u = 0; u < n; ++u) {
    scratch.clear();
    const auto succ = g.successors(u);
    const auto edges = g.out_edges(u);
    for (std::size_t i = 0; i < succ.size(); ++i) scratch.emplace_back(succ[i], edges[i]);
    std::sort(scratch.begin(), scratch.end());
    for (std::size_t i = 0; i < scratch.size();) {
      const vertex_id v = scratch[i].first;
      seconds c = 0;
      const auto arc = static_cast<std::uint32_t>(out.arc_source.size());
      for (; i < scratch.size() && scratch[i].first == v; ++i) {
        c = std::max(c, transfer[scratch[i].second]);
        out.arc_of_edge[scratch[i].second] = arc;
      }
      out.arc_source.push_back(u);
      out.arc_target.push_back(v);
      out.arc_transfer.push_back(c);
      ++out_arcs[u];
      ++in_arcs[v];
    }
  }
  const std::size_t arcs = out.arc_source.size();
  linear_program& lp = out.lp;
  out.arc_column.assign(arcs, -1);
  for (std::size_t a = 0; a < arcs; ++a)
    if (out_arcs[out.arc_source[a]] >= 2 || in_arcs[out.arc_target[a]] >= 2) out.arc_column[a] = lp.add_column(0, 0, 1);
  const int first_start = static_cast<int>(lp.column_count());
  for (vertex_id v = 0; v < n; ++v) lp.add_column(0, 0, lp_infinity);
  out.makespan_column = lp.add_column(1, 0, lp_infinity);
  const auto start = [&](vertex_id v) { return first_start + static_cast<int>(v); };

  for (std::size_t a = 0; a < arcs; ++a) {
    const vertex_id u = out.arc_source[a], v = out.arc_target[a];
    const int row = lp.add_row(-lp_infinity, -compute[u]);
    lp.add_entry(row, start(u), 1);
    lp.add_entry(row, start(v), -1);
    if (out.arc_column[a] >= 0 && out.arc_transfer[a] > 0) lp.add_entry(row, out.arc_column[a], out.arc_transfer[a]);
  }
  for (vertex_id v = 0; v < n; ++v) {
    if (out_arcs[v] != 0) continue;
    const int row = lp.add_row(-lp_infinity, -compute[v]);
    lp.add_entry(row, start(v), 1);
    lp.add_entry(row, out.makespan_column, -1);
  }
  // Sum rows; arcs are sorted by source, so each source's arcs are consecutive.
  for (std::size_t a = 0; a < arcs;) {
    const vertex_id u = out.arc_source[a];
    if (out_arcs[u] < 2) {
      ++a;
      continue;
    }
    const int row = lp.add_row(static_cast<double>(out_arcs[u]) - 1, lp_infinity);
    for (; a < arcs && out.arc_source[a] == u; ++a) lp.add_entry(row, out.arc_column[a], 1);
  }
  std::vector<int> in_row(n, -1);
  for (vertex_id v = 0; v < n; ++v)
    if (in_arcs[v] >= 2) in_row[v] = lp.add_row(static_cast<double>(in_arcs[v]) - 1, lp_infinity);
  for (std::size_t a = 0; a < arcs; ++a)
    if (in_row[out.arc_target[a]] >= 0) lp.add_entry(in_row[out.arc_target[a]], out.arc_column[a], 1);
  detail::favorite_child_warm_start(out, compute, n);
  return out;
}

struct favorite_child_options {
  // An arc is a favorite when its relaxed x is below this (Baechi's code runs 0.1). In (0, 1].
  double threshold = 0.5;
};

// Favorite children and parents, and how the LP was solved.
struct favorite_children {
  gantry::outcome outcome;        // ok, or the LP's failure (infeasible, solver_error) in the solver's words
  std::vector<vertex_id> child;   // per vertex: its favorite child, or no_vertex
  std::vector<vertex_id> parent;  // per vertex: the vertex it is the favorite child of, or no_vertex
  std::vector<double> relaxed;    // per edge: the LP's x of the edge's arc
  double lp_makespan = 0;         // the LP's w: a lower bound of nothing, a guide for the favorites
  std::string solver, method;
  double threshold = 0.5;
  std::size_t rows = 0, columns = 0;
  seconds build_seconds = 0, solve_seconds = 0;

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
};

// Rounds an LP solution: the arcs with x below the threshold are candidates; they are taken in
// order of x (smallest first: the LP is surest of them), then larger transfer time (more to save),
// then source and target id, and an arc is kept when its source has no favorite child yet and its
// target no favorite parent yet. The same LP solution always gives the same favorites.
inline void round_favorites(const favorite_child_lp& built, std::span<const double> x_of_arc, double threshold,
                            favorite_children& out, std::size_t n) {
  const std::size_t arcs = built.arc_source.size();
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t a = 0; a < arcs; ++a)
    if (x_of_arc[a] < threshold) candidates.push_back(a);
  std::sort(candidates.begin(), candidates.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tuple(x_of_arc[a], -built.arc_transfer[a], built.arc_source[a], built.arc_target[a]) <
           std::tuple(x_of_arc[b], -built.arc_transfer[b], built.arc_source[b], built.arc_target[b]);
  });
  out.child.assign(n, no_vertex);
  out.parent.assign(n, no_vertex);
  for (const std::uint32_t a : candidates) {
    const vertex_id u = built.arc_source[a], v = built.arc_target[a];
    if (out.child[u] != no_vertex || out.parent[v] != no_vertex) continue;
    out.child[u] = v;
    out.parent[v] = u;
  }
}

// Solves the favorite-child LP of g with `backend` and rounds it (round_favorites). Throws
// invalid_input as build_favorite_child_lp does, or for a threshold outside (0, 1]; a solver
// failure is the result's outcome.
template <lp_backend B>
[[nodiscard]] favorite_children solve_favorite_children(const csr_graph& g, std::span<const seconds> compute,
                                                        std::span<const seconds> transfer, const B& backend,
                                                        favorite_child_options options = {}) {
  if (!(options.threshold > 0 && options.threshold <= 1))
    throw invalid_input("favorite children: the rounding threshold must be in (0, 1], got " +
                        std::to_string(options.threshold));
  const auto t0 = std::chrono::steady_clock::now();
  const favorite_child_lp built = build_favorite_child_lp(g, compute, transfer);
  favorite_children out;
  out.threshold = options.threshold;
  out.rows = built.lp.row_count();
  out.columns = built.lp.column_count();
  out.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  lp_solution solved = backend.solve(built.lp);
  out.solver = solved.solver;
  out.method = solved.method;
  out.solve_seconds = solved.solve_seconds;
  if (!solved.ok()) {
    out.outcome = std::move(solved.outcome);
    out.outcome.message = "favorite-child LP (" + std::to_string(out.rows) + " rows, " + std::to_string(out.columns) +
                          " columns): " + out.outcome.message;
    return out;
  }
  out.lp_makespan = solved.values[built.makespan_column];
  std::vector<double> x(built.arc_source.size(), 0.0);
  for (std::size_t a = 0; a < x.size(); ++a)
    if (built.arc_column[a] >= 0) x[a] = std::clamp(solved.values[built.arc_column[a]], 0.0, 1.0);
  out.relaxed.resize(g.edge_count());
  for (edge_id e = 0; e < g.edge_count(); ++e) out.relaxed[e] = x[built.arc_of_edge[e]];
  round_favorites(built, x, options.threshold, out, g.vertex_count());
  return out;
}

// The same with the representative times of a placement model: the mean compute time over the
// devices and the mean transfer time over device pairs (model/model.hpp), as the levels use.
template <cost_model M, lp_backend B>
[[nodiscard]] favorite_children solve_favorite_children(const csr_graph& g, const M& model, std::size_t devices,
                                                        const B& backend, favorite_child_options options = {}) {
  std::vector<seconds> compute(g.vertex_count()), transfer(g.edge_count());
  for (vertex_id v = 0; v < compute.size(); ++v) compute[v] = mean_compute_time(model, v, devices);
  for (edge_id e = 0; e < transfer.size(); ++e) transfer[e] = mean_transfer_time(model, e, devices);
  // Times so large that their mean overflows are the model's answer, not a caller's mistake: an
  // LP cannot hold them, so the result says so (the schedulers would report an infinite makespan).
  const auto not_finite = [&](const char* what, std::size_t id, seconds t) {
    favorite_children out;
    out.threshold = options.threshold;
    out.outcome = {.code = status::infeasible,
                   .vertex = what[0] == 'v' ? static_cast<vertex_id>(id) : no_vertex,
                   .message = std::string("favorite-child LP: the mean ") + (what[0] == 'v' ? "compute" : "transfer") +
                              " time of " + what + " " + std::to_string(id) + " is not finite (" + std::to_string(t) +
                              ")"};
    return out;
  };
  for (vertex_id v = 0; v < compute.size(); ++v)
    if (!std::isfinite(compute[v])) return not_finite("vertex", v, compute[v]);
  for (edge_id e = 0; e < transfer.size(); ++e)
    if (!std::isfinite(transfer[e])) return not_finite("edge", e, transfer[e]);
  return solve_favorite_children(g, std::span<const seconds>(compute), std::span<const seconds>(transfer), backend,
                                 options);
}

}  // namespace gantry
