// The optimal placement and schedule of a small DAG, as a mixed integer program solved by GLPK, with
// a time limit: the best schedule found and a proven lower bound, so that tests and users can see
// how far any placer is from the optimum. Needs GLPK (link gantry::lp); not in the umbrella header.
//
// The program (times divided by an upper bound H, so that GLPK's tolerances are relative):
//   x(v,d) ∈ {0,1}, Σ_d x(v,d) = 1                              v runs on one device
//   s(v) ≥ 0,  s(v) + p(v) ≤ T for sinks, p(v) = Σ_d p(v,d)·x(v,d)
//   s(v) ≥ s(u) + p(u) + c_min(e)·cross(e)                     every edge e = u -> v,
//       cross(e) ≥ x(u,d) − x(v,d) for every d                  cross = 1 when u and v are apart;
//       where links differ, also s(v) ≥ s(u) + p(u) + c(e,a,b) − M·(2 − x(u,a) − x(v,b))
//   y(u,v) ∈ {0,1} for u, v that no path orders: on each device d, u before v or v before u
//       (big-M rows with M = H + p), skipped where either takes no time
//   memory (static rule): Σ_v (persistent + output + temporary)(v)·x(v,d) + Σ_t bytes(t)·w(t,d) ≤ M(d),
//       w(t,d) ≥ x(c,d) − x(u,d) for every consumer c of u's tensor t (a received copy held all step)
//   minimise T.
// Communication is modelled as in comm_mode::parallel, where the program is exact; in the
// sequential and duplex modes channels only delay transfers, so its bound still holds there but the
// returned schedule (the simulator's run of the placement) may be longer than the program's value.
// Identical, interchangeable devices are told apart by the first vertex (in Kahn order) each runs.
#pragma once

#include <gantry/bounds/lower_bound.hpp>
#include <gantry/core/units.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/sim/simulator.hpp>

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

struct exact_options {
  // Larger graphs are refused (invalid_input): the program has n·m + n²/2 binaries.
  std::size_t max_vertices = 30;
  // Larger clusters are refused too: the program has n·m binaries and its table of transfer
  // times e·m² entries (100,000 devices would need 80 GB per edge).
  std::size_t max_devices = 64;
  // GLPK's branch and bound stops here and returns its best schedule and bound so far.
  int time_limit_ms = 10000;
  // Keep every device's static memory (every byte held for the whole step, received copies
  // included) within its capacity. The answer is then optimal among placements that fit this way,
  // which is stricter than the simulator's rules; with false, memory is ignored and the bound holds
  // for every placement.
  bool respect_memory = true;
  // Count a received tensor once per device (false: once per consumer), as the simulator does.
  bool cache_transfers = true;
  // Colocation group per vertex (no_group: alone); every group sits on one device.
  std::span<const std::uint32_t> group = {};
};

struct exact_result {
  gantry::outcome outcome;      // ok; infeasible or out_of_memory (memory); solver_error; not_a_dag
  gantry::placement placement;  // device per vertex; order: by start in the program's schedule
  gantry::schedule schedule;    // the simulator's run of the placement in that order (strict order;
                                // with respect_memory = false, on devices without memory limits)
  seconds makespan = 0;         // schedule.makespan
  seconds bound = 0;            // no schedule of the problem solved is shorter
  bool optimal = false;         // makespan equals the bound (within 1e-6): proven optimal
  bool time_limit_reached = false;

  // How far the schedule may be from the optimum: makespan / bound − 1 (0 when optimal).
  [[nodiscard]] double gap() const noexcept { return bound > 0 ? makespan / bound - 1 : 0.0; }
  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

namespace detail {

// The data of one exact problem, in dense arrays.
struct exact_problem {
  std::size_t n = 0, m = 0;
  std::vector<double> compute;             // p(v,d) at v·m + d
  std::vector<vertex_id> source, target;   // per edge
  std::vector<double> transfer;            // c(e,a,b) at (e·m + a)·m + b
  std::vector<double> min_transfer;        // per edge, min over a ≠ b
  std::vector<std::uint32_t> tensor_of;    // per edge
  std::vector<vertex_id> tensor_producer;  // per tensor
  std::vector<byte_count> tensor_bytes;    // per tensor
  std::vector<byte_count> vertex_bytes;    // persistent + output + temporary
  std::vector<byte_count> capacity;        // per device
  std::vector<vertex_id> kahn;
  std::vector<std::uint32_t> group;  // per vertex, or empty

  [[nodiscard]] double p(vertex_id v, device_id d) const { return compute[v * m + d]; }
  [[nodiscard]] double c(edge_id e, device_id a, device_id b) const { return transfer[(e * m + a) * m + b]; }
};

// Start times of a placement run in a topological `order` with appends (no insertion), parallel
// communication: the schedule the program's rows describe. Returns the makespan.
inline double exact_evaluate(const exact_problem& pr, const csr_graph& g, const std::vector<vertex_id>& order,
                             const std::vector<device_id>& device, std::vector<double>& start) {
  std::vector<double> available(pr.m, 0);
  start.assign(pr.n, 0);
  double makespan = 0;
  for (const vertex_id v : order) {
    double ready = available[device[v]];
    const auto preds = g.predecessors(v);
    const auto edges = g.in_edges(v);
    for (std::size_t i = 0; i < preds.size(); ++i) {
      const vertex_id u = preds[i];
      ready = std::max(ready, start[u] + pr.p(u, device[u]) + pr.c(edges[i], device[u], device[v]));
    }
    start[v] = ready;
    available[device[v]] = ready + pr.p(v, device[v]);
    makespan = std::max(makespan, available[device[v]]);
  }
  return makespan;
}

// The static memory of a placement on each device fits its capacity.
inline bool exact_memory_fits(const exact_problem& pr, const std::vector<device_id>& device) {
  std::vector<byte_count> used(pr.m, 0);
  for (vertex_id v = 0; v < pr.n; ++v) used[device[v]] = saturating_add(used[device[v]], pr.vertex_bytes[v]);
  std::vector<std::uint8_t> received(pr.tensor_bytes.size() * pr.m, 0);
  for (edge_id e = 0; e < pr.source.size(); ++e) {
    const device_id a = device[pr.source[e]], b = device[pr.target[e]];
    if (a == b) continue;
    auto& seen = received[pr.tensor_of[e] * pr.m + b];
    if (!seen) used[b] = saturating_add(used[b], pr.tensor_bytes[pr.tensor_of[e]]);
    seen = 1;
  }
  for (device_id d = 0; d < pr.m; ++d)
    if (used[d] > pr.capacity[d]) return false;
  return true;
}

// Whether every vertex and every link looks the same from every device.
inline bool exact_devices_interchangeable(const exact_problem& pr) {
  for (device_id d = 1; d < pr.m; ++d) {
    if (pr.capacity[d] != pr.capacity[0]) return false;
    for (vertex_id v = 0; v < pr.n; ++v)
      if (pr.p(v, d) != pr.p(v, 0)) return false;
  }
  for (edge_id e = 0; e < pr.source.size(); ++e)
    for (device_id a = 0; a < pr.m; ++a)
      for (device_id b = 0; b < pr.m; ++b)
        if (a != b && pr.c(e, a, b) != pr.min_transfer[e]) return false;
  return true;
}

// A feasible start for the search: the better of each device alone and an earliest-finish list
// schedule in bottom-level order that keeps static memory within capacity. Empty when neither fits.
struct exact_incumbent {
  std::vector<device_id> device;
  std::vector<vertex_id> order;
  std::vector<double> start;
  double makespan = std::numeric_limits<double>::infinity();
};

inline exact_incumbent exact_initial(const exact_problem& pr, const csr_graph& g, bool respect_memory) {
  exact_incumbent best;
  const auto consider = [&](std::vector<device_id> device, std::vector<vertex_id> order) {
    if (respect_memory && !exact_memory_fits(pr, device)) return;
    std::vector<double> start;
    const double makespan = exact_evaluate(pr, g, order, device, start);
    if (makespan < best.makespan) best = {std::move(device), std::move(order), std::move(start), makespan};
  };
  for (device_id d = 0; d < pr.m; ++d) consider(std::vector<device_id>(pr.n, d), pr.kahn);

  // Earliest finish, largest bottom level (mean times) first.
  std::vector<double> bottom(pr.n, 0);
  for (auto it = pr.kahn.rbegin(); it != pr.kahn.rend(); ++it) {
    const vertex_id v = *it;
    double mean = 0;
    for (device_id d = 0; d < pr.m; ++d) mean += pr.p(v, d);
    double below = 0;
    const auto succ = g.successors(v);
    const auto edges = g.out_edges(v);
    for (std::size_t i = 0; i < succ.size(); ++i) below = std::max(below, pr.min_transfer[edges[i]] + bottom[succ[i]]);
    bottom[v] = mean / static_cast<double>(pr.m) + below;
  }
  std::vector<device_id> device(pr.n, no_device);
  std::vector<vertex_id> order;
  std::vector<std::uint32_t> waiting(pr.n);
  std::vector<double> finish(pr.n, 0), available(pr.m, 0);
  std::vector<byte_count> used(pr.m, 0);
  std::map<std::uint32_t, device_id> group_device;
  std::vector<vertex_id> ready;
  for (vertex_id v = 0; v < pr.n; ++v)
    if ((waiting[v] = static_cast<std::uint32_t>(g.in_degree(v))) == 0) ready.push_back(v);
  while (!ready.empty()) {
    const auto pick = std::max_element(ready.begin(), ready.end(), [&](vertex_id a, vertex_id b) {
      return bottom[a] != bottom[b] ? bottom[a] < bottom[b] : a > b;
    });
    const vertex_id v = *pick;
    ready.erase(pick);
    const bool grouped = !pr.group.empty() && pr.group[v] != no_group;
    device_id chosen = no_device;
    double chosen_finish = std::numeric_limits<double>::infinity();
    for (device_id d = 0; d < pr.m; ++d) {
      if (grouped) {
        const auto it = group_device.find(pr.group[v]);
        if (it != group_device.end() && it->second != d) continue;
      }
      double ready_at = available[d];
      byte_count bytes = pr.vertex_bytes[v];
      const auto preds = g.predecessors(v);
      const auto edges = g.in_edges(v);
      for (std::size_t i = 0; i < preds.size(); ++i) {
        ready_at = std::max(ready_at, finish[preds[i]] + pr.c(edges[i], device[preds[i]], d));
        if (device[preds[i]] != d) bytes = saturating_add(bytes, pr.tensor_bytes[pr.tensor_of[edges[i]]]);
      }
      if (respect_memory && saturating_add(used[d], bytes) > pr.capacity[d]) continue;
      if (ready_at + pr.p(v, d) < chosen_finish) {
        chosen = d;
        chosen_finish = ready_at + pr.p(v, d);
      }
    }
    if (chosen == no_device) return best;  // memory ran out; keep a single device if one fitted
    device[v] = chosen;
    if (grouped) group_device.emplace(pr.group[v], chosen);
    finish[v] = chosen_finish;
    available[chosen] = chosen_finish;
    for (std::size_t i = 0; i < g.predecessors(v).size(); ++i)
      if (device[g.predecessors(v)[i]] != chosen)
        used[chosen] = saturating_add(used[chosen], pr.tensor_bytes[pr.tensor_of[g.in_edges(v)[i]]]);
    used[chosen] = saturating_add(used[chosen], pr.vertex_bytes[v]);
    order.push_back(v);
    for (const vertex_id w : g.successors(v))
      if (--waiting[w] == 0) ready.push_back(w);
  }
  consider(std::move(device), std::move(order));
  return best;
}

// Relabels devices by the first vertex in Kahn order that each runs (for interchangeable devices).
inline void exact_relabel(const exact_problem& pr, std::vector<device_id>& device) {
  std::vector<device_id> label(pr.m, no_device);
  device_id next = 0;
  for (const vertex_id v : pr.kahn)
    if (label[device[v]] == no_device) label[device[v]] = next++;
  for (auto& d : device) d = label[d];
}

// `devices` with every capacity unlimited: the replay of a placement found with memory ignored.
template <device_set D>
struct without_memory_limits {
  const D* devices;
  [[nodiscard]] std::size_t device_count() const { return devices->device_count(); }
  [[nodiscard]] byte_count capacity(device_id) const { return unlimited_memory; }
  [[nodiscard]] comm_mode comm() const { return devices->comm(); }
};

struct exact_search {
  const std::vector<double>* heuristic = nullptr;  // 1-based column values, or null
  bool offered = false;
  double bound = 0;  // best global bound seen, in the program's units
};

inline void exact_callback(glp_tree* tree, void* info) {
  auto& search = *static_cast<exact_search*>(info);
  switch (glp_ios_reason(tree)) {
    case GLP_IHEUR:
      if (search.heuristic != nullptr && !search.offered) {
        search.offered = true;
        glp_ios_heur_sol(tree, search.heuristic->data());
      }
      break;
    case GLP_ISELECT:
    case GLP_IBRANCH:
      if (const int node = glp_ios_best_node(tree); node != 0)
        search.bound = std::max(search.bound, glp_ios_node_bound(tree, node));
      break;
    default:
      break;
  }
}

// glp_prob owned, with GLPK's terminal output off while it lives.
struct glpk_problem {
  std::unique_ptr<glp_prob, decltype(&glp_delete_prob)> owner{glp_create_prob(), &glp_delete_prob};
  glpk_problem() { glp_term_out(GLP_OFF); }
  ~glpk_problem() { glp_term_out(GLP_ON); }
  glpk_problem(const glpk_problem&) = delete;
  glpk_problem& operator=(const glpk_problem&) = delete;
  [[nodiscard]] glp_prob* get() const noexcept { return owner.get(); }
};

}  // namespace detail

// The optimal placement and schedule of `graph` (at most options.max_vertices vertices) on
// `devices`, or the best found within options.time_limit_ms with a proven bound. Throws
// invalid_input for a graph above the limit or an empty cluster.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] exact_result exact_schedule(const G& graph, const M& model, const D& devices,
                                          exact_options options = {}) {
  const detail::csr_view<G> view(graph);
  const csr_graph& g = *view;
  detail::exact_problem pr;
  pr.n = g.vertex_count();
  pr.m = devices.device_count();
  const std::size_t edges = g.edge_count();
  if (pr.m == 0) throw invalid_input("exact_schedule: the cluster has no devices");
  if (pr.n > options.max_vertices)
    throw invalid_input("exact_schedule: the graph has " + std::to_string(pr.n) +
                        " vertices, more than max_vertices = " + std::to_string(options.max_vertices) +
                        " (the program grows as n² + n·m)");
  if (pr.m > options.max_devices)
    throw invalid_input("exact_schedule: the cluster has " + std::to_string(pr.m) +
                        " devices, more than max_devices = " + std::to_string(options.max_devices) +
                        " (the program grows as n·m + e·m²)");
  if (!options.group.empty() && options.group.size() != pr.n)
    throw invalid_input("exact_schedule: group has " + std::to_string(options.group.size()) + " entries for " +
                        std::to_string(pr.n) + " vertices");
  if (options.time_limit_ms <= 0)
    throw invalid_input("exact_schedule: time_limit_ms must be > 0, got " + std::to_string(options.time_limit_ms));
  exact_result r;
  pr.kahn = detail::kahn_on(g);
  if (pr.kahn.size() != pr.n)
    throw not_a_dag("exact_schedule: the graph has a cycle: " + describe_cycle(graph, g.find_cycle()));
  if (pr.n == 0) {
    r.optimal = true;
    return r;
  }
  const makespan_bound simple = makespan_lower_bound(g, model, devices);

  pr.compute.resize(pr.n * pr.m);
  for (vertex_id v = 0; v < pr.n; ++v)
    for (device_id d = 0; d < pr.m; ++d) pr.compute[v * pr.m + d] = model.compute_time(v, d);
  pr.source.resize(edges);
  pr.target.resize(edges);
  pr.transfer.assign(edges * pr.m * pr.m, 0);
  pr.min_transfer.assign(edges, 0);
  pr.tensor_of.resize(edges);
  std::map<std::pair<vertex_id, byte_count>, std::uint32_t> tensor_ids;
  for (edge_id e = 0; e < edges; ++e) {
    pr.source[e] = g.source(e);
    pr.target[e] = g.target(e);
    double least = pr.m > 1 ? std::numeric_limits<double>::infinity() : 0.0;
    for (device_id a = 0; a < pr.m; ++a)
      for (device_id b = 0; b < pr.m; ++b) {
        if (a == b) continue;
        const double t = model.transfer_time(e, a, b);
        if (!(t >= 0) || !std::isfinite(t))
          throw invalid_input("exact_schedule: edge " + vertex_name(graph, g.source(e)) + " -> " +
                              vertex_name(graph, g.target(e)) + " takes " + std::to_string(t) + " s from device " +
                              std::to_string(a) + " to " + std::to_string(b) + "; it must be finite and >= 0");
        pr.transfer[(e * pr.m + a) * pr.m + b] = t;
        least = std::min(least, t);
      }
    pr.min_transfer[e] = least;
    const byte_count bytes = model.edge_bytes(e);
    // A tensor is a producer's output of one size; without caching every edge is its own copy.
    const auto key = std::make_pair(g.source(e), options.cache_transfers ? bytes : static_cast<byte_count>(e));
    const auto [it, fresh] = tensor_ids.try_emplace(key, static_cast<std::uint32_t>(pr.tensor_bytes.size()));
    if (fresh) {
      pr.tensor_bytes.push_back(bytes);
      pr.tensor_producer.push_back(g.source(e));
    }
    pr.tensor_of[e] = it->second;
  }
  pr.vertex_bytes.resize(pr.n);
  for (vertex_id v = 0; v < pr.n; ++v) {
    pr.vertex_bytes[v] = total_bytes(model, v);
    if (!std::isfinite(pr.p(v, 0)))
      throw invalid_input("exact_schedule: vertex " + vertex_name(graph, v) + " has a compute time that is not finite");
  }
  pr.capacity.resize(pr.m);
  bool limited = false;
  for (device_id d = 0; d < pr.m; ++d) {
    pr.capacity[d] = options.respect_memory ? static_cast<byte_count>(devices.capacity(d)) : unlimited_memory;
    limited = limited || pr.capacity[d] != unlimited_memory;
  }
  pr.group.assign(options.group.begin(), options.group.end());
  if (limited) {
    // A vertex that no device can hold alone: the answer is out_of_memory, naming it.
    const byte_count largest = *std::max_element(pr.capacity.begin(), pr.capacity.end());
    for (vertex_id v = 0; v < pr.n; ++v)
      if (pr.vertex_bytes[v] > largest) {
        r.outcome = {.code = status::out_of_memory,
                     .vertex = v,
                     .needed = pr.vertex_bytes[v],
                     .available = largest,
                     .message = "vertex " + vertex_name(graph, v) + " needs " + format_bytes(pr.vertex_bytes[v]) +
                                ", more than any device holds (largest: " + format_bytes(largest) + ")"};
        r.placement.outcome = r.outcome;
        return r;
      }
  }

  const bool symmetric = pr.m > 1 && detail::exact_devices_interchangeable(pr);
  detail::exact_incumbent start = detail::exact_initial(pr, g, limited);
  if (symmetric && !start.device.empty()) detail::exact_relabel(pr, start.device);
  double horizon = start.makespan;
  if (!std::isfinite(horizon)) {  // no feasible start: every vertex one after another, every copy paid
    horizon = 0;
    for (vertex_id v = 0; v < pr.n; ++v)
      horizon += *std::max_element(pr.compute.begin() + v * pr.m, pr.compute.begin() + (v + 1) * pr.m);
    for (edge_id e = 0; e < edges; ++e)
      horizon += *std::max_element(pr.transfer.begin() + e * pr.m * pr.m, pr.transfer.begin() + (e + 1) * pr.m * pr.m);
  }
  if (!std::isfinite(horizon)) {
    r.outcome = {
        .code = status::infeasible,
        .message = "the compute and transfer times add up to more than a double holds; no finite schedule exists"};
    r.placement.outcome = r.outcome;
    return r;
  }
  if (horizon <= 0) {  // nothing takes time: any fitting placement is optimal
    if (start.device.empty()) {
      start.device.assign(pr.n, 0);
      start.order = pr.kahn;
    }
  }

  // Reachability, to skip pairs that a path already orders.
  std::vector<std::vector<bool>> reaches(pr.n, std::vector<bool>(pr.n, false));
  for (auto it = pr.kahn.rbegin(); it != pr.kahn.rend(); ++it)
    for (const vertex_id w : g.successors(*it)) {
      reaches[*it][w] = true;
      for (vertex_id x = 0; x < pr.n; ++x)
        if (reaches[w][x]) reaches[*it][x] = true;
    }

  std::vector<device_id> device;
  std::vector<double> program_start;
  double program_bound = simple.value;
  bool proven = false;
  if (horizon > 0) {
    const double unit = horizon;  // every time is divided by this
    detail::glpk_problem owner;
    glp_prob* lp = owner.get();
    glp_set_obj_dir(lp, GLP_MIN);
    const auto x_col = [&](vertex_id v, device_id d) { return static_cast<int>(v * pr.m + d) + 1; };
    const int s_first = static_cast<int>(pr.n * pr.m) + 1;
    const int t_col = s_first + static_cast<int>(pr.n);
    int columns = t_col;
    std::vector<int> cross_col(edges, 0);
    for (edge_id e = 0; e < edges; ++e)
      if (pr.min_transfer[e] > 0) cross_col[e] = ++columns;
    std::vector<std::pair<std::pair<vertex_id, vertex_id>, int>> pair_cols;
    for (vertex_id u = 0; u < pr.n; ++u)
      for (vertex_id v = u + 1; v < pr.n; ++v) {
        if (reaches[u][v] || reaches[v][u]) continue;
        bool conflict = false;
        for (device_id d = 0; d < pr.m && !conflict; ++d) conflict = pr.p(u, d) > 0 && pr.p(v, d) > 0;
        if (conflict) pair_cols.push_back({{u, v}, ++columns});
      }
    std::vector<int> held_col;  // w(t,d) at t·m + d
    if (limited) {
      held_col.resize(pr.tensor_bytes.size() * pr.m);
      for (auto& col : held_col) col = ++columns;
    }
    glp_add_cols(lp, columns);
    for (vertex_id v = 0; v < pr.n; ++v) {
      const std::size_t rank = static_cast<std::size_t>(std::find(pr.kahn.begin(), pr.kahn.end(), v) - pr.kahn.begin());
      for (device_id d = 0; d < pr.m; ++d) {
        glp_set_col_kind(lp, x_col(v, d), GLP_BV);
        if (symmetric && d > rank) glp_set_col_bnds(lp, x_col(v, d), GLP_FX, 0, 0);
      }
      glp_set_col_bnds(lp, s_first + static_cast<int>(v), GLP_DB, 0, 1);
    }
    const double low = std::min(simple.value / unit, 1.0);
    glp_set_col_bnds(lp, t_col, low < 1.0 ? GLP_DB : GLP_FX, low, 1.0);
    glp_set_obj_coef(lp, t_col, 1);
    for (edge_id e = 0; e < edges; ++e)
      if (cross_col[e] != 0) glp_set_col_bnds(lp, cross_col[e], GLP_DB, 0, 1);
    for (const auto& pair : pair_cols) glp_set_col_kind(lp, pair.second, GLP_BV);
    for (const int col : held_col) glp_set_col_bnds(lp, col, GLP_DB, 0, 1);

    std::vector<int> ia{0}, ja{0};
    std::vector<double> ar{0};
    int row = 0;
    const auto add_row = [&](int type, double low_bound, double high_bound) {
      glp_add_rows(lp, 1);
      ++row;
      glp_set_row_bnds(lp, row, type, low_bound, high_bound);
      return row;
    };
    const auto put = [&](int r_, int col, double value) {
      if (value == 0) return;
      ia.push_back(r_);
      ja.push_back(col);
      ar.push_back(value);
    };
    const auto s_col = [&](vertex_id v) { return s_first + static_cast<int>(v); };
    for (vertex_id v = 0; v < pr.n; ++v) {
      const int r_ = add_row(GLP_FX, 1, 1);
      for (device_id d = 0; d < pr.m; ++d) put(r_, x_col(v, d), 1);
      if (g.out_degree(v) == 0) {
        const int f = add_row(GLP_UP, 0, 0);
        put(f, s_col(v), 1);
        for (device_id d = 0; d < pr.m; ++d) put(f, x_col(v, d), pr.p(v, d) / unit);
        put(f, t_col, -1);
      }
    }
    for (edge_id e = 0; e < edges; ++e) {
      const vertex_id u = pr.source[e], v = pr.target[e];
      const int r_ = add_row(GLP_LO, 0, 0);
      put(r_, s_col(v), 1);
      put(r_, s_col(u), -1);
      for (device_id d = 0; d < pr.m; ++d) put(r_, x_col(u, d), -pr.p(u, d) / unit);
      if (cross_col[e] != 0) {
        put(r_, cross_col[e], -pr.min_transfer[e] / unit);
        for (device_id d = 0; d < pr.m; ++d) {
          const int c_ = add_row(GLP_LO, 0, 0);
          put(c_, cross_col[e], 1);
          put(c_, x_col(u, d), -1);
          put(c_, x_col(v, d), 1);
        }
      }
      for (device_id a = 0; a < pr.m; ++a)
        for (device_id b = 0; b < pr.m; ++b) {
          if (a == b || pr.c(e, a, b) <= pr.min_transfer[e]) continue;
          const double c = pr.c(e, a, b) / unit, big = 1.0 + c;
          const int p_ = add_row(GLP_LO, c - 2 * big, 0);
          put(p_, s_col(v), 1);
          put(p_, s_col(u), -1);
          for (device_id d = 0; d < pr.m; ++d) put(p_, x_col(u, d), -pr.p(u, d) / unit - (d == a ? big : 0.0));
          put(p_, x_col(v, b), -big);
        }
    }
    for (const auto& [uv, y] : pair_cols) {
      const auto [u, v] = uv;
      for (device_id d = 0; d < pr.m; ++d) {
        const double pu = pr.p(u, d) / unit, pv = pr.p(v, d) / unit;
        if (pu <= 0 || pv <= 0) continue;
        const double big_u = 1.0 + pu, big_v = 1.0 + pv;
        // y = 1: u before v on d.
        const int a = add_row(GLP_LO, pu - 3 * big_u, 0);
        put(a, s_col(v), 1);
        put(a, s_col(u), -1);
        put(a, x_col(u, d), -big_u);
        put(a, x_col(v, d), -big_u);
        put(a, y, -big_u);
        const int b = add_row(GLP_LO, pv - 2 * big_v, 0);
        put(b, s_col(u), 1);
        put(b, s_col(v), -1);
        put(b, x_col(u, d), -big_v);
        put(b, x_col(v, d), -big_v);
        put(b, y, big_v);
      }
    }
    if (limited) {
      for (device_id d = 0; d < pr.m; ++d) {
        if (pr.capacity[d] == unlimited_memory) continue;
        const double scale = std::max(1.0, static_cast<double>(pr.capacity[d]));
        const int r_ = add_row(GLP_UP, 0, static_cast<double>(pr.capacity[d]) / scale);
        for (vertex_id v = 0; v < pr.n; ++v) put(r_, x_col(v, d), static_cast<double>(pr.vertex_bytes[v]) / scale);
        for (std::size_t t = 0; t < pr.tensor_bytes.size(); ++t)
          put(r_, held_col[t * pr.m + d], static_cast<double>(pr.tensor_bytes[t]) / scale);
      }
      for (edge_id e = 0; e < edges; ++e)
        for (device_id d = 0; d < pr.m; ++d) {
          const int r_ = add_row(GLP_LO, 0, 0);
          put(r_, held_col[pr.tensor_of[e] * pr.m + d], 1);
          put(r_, x_col(pr.target[e], d), -1);
          put(r_, x_col(pr.source[e], d), 1);
        }
    }
    if (!pr.group.empty()) {
      std::map<std::uint32_t, vertex_id> first;
      for (vertex_id v = 0; v < pr.n; ++v) {
        if (pr.group[v] == no_group) continue;
        const auto [it, fresh] = first.try_emplace(pr.group[v], v);
        if (fresh) continue;
        for (device_id d = 0; d < pr.m; ++d) {
          const int r_ = add_row(GLP_FX, 0, 0);
          put(r_, x_col(v, d), 1);
          put(r_, x_col(it->second, d), -1);
        }
      }
    }
    glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());

    // The feasible start as column values, offered to the search as its first incumbent.
    std::vector<double> heuristic;
    if (!start.device.empty()) {
      heuristic.assign(static_cast<std::size_t>(columns) + 1, 0);
      for (vertex_id v = 0; v < pr.n; ++v) {
        heuristic[static_cast<std::size_t>(x_col(v, start.device[v]))] = 1;
        heuristic[static_cast<std::size_t>(s_col(v))] = start.start[v] / unit;
      }
      heuristic[static_cast<std::size_t>(t_col)] = start.makespan / unit;
      for (edge_id e = 0; e < edges; ++e)
        if (cross_col[e] != 0 && start.device[pr.source[e]] != start.device[pr.target[e]])
          heuristic[static_cast<std::size_t>(cross_col[e])] = 1;
      for (const auto& [uv, y] : pair_cols)
        heuristic[static_cast<std::size_t>(y)] = start.start[uv.first] <= start.start[uv.second] ? 1 : 0;
      if (limited)
        for (edge_id e = 0; e < edges; ++e)
          if (start.device[pr.source[e]] != start.device[pr.target[e]])
            heuristic[static_cast<std::size_t>(held_col[pr.tensor_of[e] * pr.m + start.device[pr.target[e]]])] = 1;
    }

    glp_smcp simplex;
    glp_init_smcp(&simplex);
    simplex.msg_lev = GLP_MSG_OFF;
    const int lp_code = glp_simplex(lp, &simplex);
    detail::exact_search search{heuristic.empty() ? nullptr : &heuristic, false, low};
    int code = 0;
    if (lp_code == 0 && glp_get_status(lp) == GLP_OPT) {
      search.bound = std::max(search.bound, glp_get_obj_val(lp));
      glp_iocp parameters;
      glp_init_iocp(&parameters);
      parameters.msg_lev = GLP_MSG_OFF;
      parameters.presolve = GLP_OFF;  // the callback's columns are the program's own
      parameters.gmi_cuts = GLP_ON;
      parameters.mir_cuts = GLP_ON;
      parameters.tm_lim = options.time_limit_ms;
      parameters.cb_func = detail::exact_callback;
      parameters.cb_info = &search;
      code = glp_intopt(lp, &parameters);
    } else if (lp_code == 0 && glp_get_status(lp) == GLP_NOFEAS) {
      code = GLP_ENOPFS;
    } else {
      r.outcome = {.code = status::solver_error,
                   .message = "GLPK's glp_simplex returned " + std::to_string(lp_code) + " with status " +
                              std::to_string(glp_get_status(lp)) + " on the relaxation"};
      r.placement.outcome = r.outcome;
      return r;
    }
    const int state = code == GLP_ENOPFS ? GLP_NOFEAS : glp_mip_status(lp);
    r.time_limit_reached = code == GLP_ETMLIM;
    if (state == GLP_NOFEAS) {
      byte_count total = 0, capacity = 0;
      for (vertex_id v = 0; v < pr.n; ++v) total = detail::saturating_add(total, pr.vertex_bytes[v]);
      for (device_id d = 0; d < pr.m; ++d) capacity = detail::saturating_add(capacity, pr.capacity[d]);
      r.outcome = {.code = status::infeasible,
                   .needed = total,
                   .available = capacity,
                   .message = "no placement of the " + std::to_string(pr.n) + " vertices on " + std::to_string(pr.m) +
                              " devices keeps every device's static memory (" + std::to_string(total) +
                              " bytes of vertices in all, plus received copies) within its capacity"};
      r.placement.outcome = r.outcome;
      return r;
    }
    if (state == GLP_OPT || state == GLP_FEAS) {
      device.assign(pr.n, 0);
      program_start.assign(pr.n, 0);
      for (vertex_id v = 0; v < pr.n; ++v) {
        for (device_id d = 0; d < pr.m; ++d)
          if (glp_mip_col_val(lp, x_col(v, d)) > 0.5) device[v] = d;
        program_start[v] = glp_mip_col_val(lp, s_col(v));
      }
      proven = state == GLP_OPT && code == 0;
      const double value = glp_mip_obj_val(lp);
      program_bound = std::max(program_bound, (proven ? value : std::min(search.bound, value)) * unit);
    } else if (!start.device.empty()) {
      program_bound = std::max(program_bound, search.bound * unit);
    } else if (code != 0 && code != GLP_ETMLIM) {
      r.outcome = {.code = status::solver_error,
                   .message = "GLPK's glp_intopt returned " + std::to_string(code) + " with MIP status " +
                              std::to_string(state)};
      r.placement.outcome = r.outcome;
      return r;
    } else {
      r.outcome = {.code = status::solver_error,
                   .time = options.time_limit_ms / 1000.0,
                   .message = "no schedule was found within the time limit of " +
                              std::to_string(options.time_limit_ms) + " ms; allow more time or use a list scheduler"};
      r.placement.outcome = r.outcome;
      return r;
    }
  } else {
    proven = true;
  }
  if (device.empty()) {  // the program found nothing better than its start
    device = start.device;
    program_start = start.start;
  }

  // The order: Kahn's, taking among ready vertices the one that starts first in the program.
  {
    std::vector<std::uint32_t> waiting(pr.n);
    using key = std::pair<double, vertex_id>;
    std::priority_queue<key, std::vector<key>, std::greater<>> ready;
    for (vertex_id v = 0; v < pr.n; ++v)
      if ((waiting[v] = static_cast<std::uint32_t>(g.in_degree(v))) == 0) ready.push({program_start[v], v});
    while (!ready.empty()) {
      const vertex_id v = ready.top().second;
      ready.pop();
      r.placement.order.push_back(v);
      for (const vertex_id w : g.successors(v))
        if (--waiting[w] == 0) ready.push({program_start[w], w});
    }
  }
  r.placement.device = device;
  const simulate_options replay{
      .policy = ready_policy::strict_order, .priority = r.placement.order, .cache_transfers = options.cache_transfers};
  auto run = options.respect_memory
                 ? simulate(graph, model, devices, std::span<const device_id>(r.placement.device), replay)
                 : simulate(graph, model, detail::without_memory_limits<D>{&devices},
                            std::span<const device_id>(r.placement.device), replay);
  if (!run.ok()) {
    r.outcome = run.outcome;
    r.outcome.message = "the simulator could not run the program's placement: " + run.outcome.message;
    r.placement.outcome = r.outcome;
    return r;
  }
  r.schedule = std::move(run.schedule);
  r.makespan = r.schedule.makespan;
  // GLPK proves the bound up to its tolerances (1e-7 of the horizon); keep it below the schedule.
  // The bound holds in every communication mode, so a schedule that meets it is optimal in any.
  r.bound = std::min(r.makespan, program_bound);
  r.optimal = r.makespan - program_bound <= 1e-6 * r.makespan;
  if (r.optimal) r.bound = r.makespan;
  if (!r.optimal && devices.comm() != comm_mode::parallel && proven)
    r.outcome.message = "optimal for parallel links; the " + std::string(to_string(devices.comm())) +
                        " links' channels may delay its transfers";
  else if (r.time_limit_reached && !r.optimal)
    r.outcome.message = "the time limit of " + std::to_string(options.time_limit_ms) +
                        " ms was reached: the best schedule found and a proven bound";
  return r;
}

}  // namespace gantry
