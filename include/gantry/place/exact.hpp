// The optimal placement and schedule of a small DAG, as a mixed integer program solved by GLPK's
// branch and bound (lp/glpk.hpp), with a time limit: the best schedule found and a proven lower
// bound, so that tests and users can see how far any placer is from the optimum. Needs GLPK (link
// gantry::lp); not in the umbrella header.
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

#include <gantry/order/lower_bound.hpp>
#include <gantry/core/units.hpp>
#include <gantry/lp/glpk.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
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

// --- the steps of exact_schedule() ------------------------------------------------------------

// The problem's dense tables: compute times, transfer times, tensors, bytes and capacities.
// Throws invalid_input for a time that is negative or not finite.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] exact_problem exact_tables(const G& graph, const csr_graph& g, const M& model, const D& devices,
                                         const exact_options& options) {
  exact_problem pr;
  pr.n = g.vertex_count();
  pr.m = devices.device_count();
  const std::size_t edges = g.edge_count();
  pr.kahn = kahn_on(g);
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
  for (device_id d = 0; d < pr.m; ++d)
    pr.capacity[d] = options.respect_memory ? static_cast<byte_count>(devices.capacity(d)) : unlimited_memory;
  pr.group.assign(options.group.begin(), options.group.end());
  return pr;
}

// Whether some device's memory is limited.
inline bool exact_limited(const exact_problem& pr) {
  return std::any_of(pr.capacity.begin(), pr.capacity.end(), [](byte_count c) { return c != unlimited_memory; });
}

// The out_of_memory outcome of a vertex that no device can hold alone, if there is one.
template <adapted_graph G>
[[nodiscard]] std::optional<outcome> exact_too_large(const exact_problem& pr, const G& graph) {
  const byte_count largest = *std::max_element(pr.capacity.begin(), pr.capacity.end());
  for (vertex_id v = 0; v < pr.n; ++v)
    if (pr.vertex_bytes[v] > largest)
      return outcome{.code = status::out_of_memory,
                     .vertex = v,
                     .needed = pr.vertex_bytes[v],
                     .available = largest,
                     .message = "vertex " + vertex_name(graph, v) + " needs " + format_bytes(pr.vertex_bytes[v]) +
                                ", more than any device holds (largest: " + format_bytes(largest) + ")"};
  return std::nullopt;
}

// No optimal schedule is longer: the start's makespan, or without a start every vertex and every
// copy one after another at their slowest. Not finite when those times overflow.
inline double exact_horizon(const exact_problem& pr, const exact_incumbent& start) {
  if (std::isfinite(start.makespan)) return start.makespan;
  double horizon = 0;
  for (vertex_id v = 0; v < pr.n; ++v)
    horizon += *std::max_element(pr.compute.begin() + v * pr.m, pr.compute.begin() + (v + 1) * pr.m);
  for (edge_id e = 0; e < pr.source.size(); ++e)
    horizon += *std::max_element(pr.transfer.begin() + e * pr.m * pr.m, pr.transfer.begin() + (e + 1) * pr.m * pr.m);
  return horizon;
}

// Whether u reaches v by a path, for every pair: pairs a path orders need no ordering binary.
inline std::vector<std::vector<bool>> exact_reachability(const exact_problem& pr, const csr_graph& g) {
  std::vector<std::vector<bool>> reaches(pr.n, std::vector<bool>(pr.n, false));
  for (auto it = pr.kahn.rbegin(); it != pr.kahn.rend(); ++it)
    for (const vertex_id w : g.successors(*it)) {
      reaches[*it][w] = true;
      for (vertex_id x = 0; x < pr.n; ++x)
        if (reaches[w][x]) reaches[*it][x] = true;
    }
  return reaches;
}

// The program's columns: x(v,d), s(v), T, then cross(e) for the edges whose transfers take time,
// y(u,v) for the unordered pairs that could share a device, and w(t,d) when memory is limited.
struct exact_columns {
  std::size_t m = 0;
  int s_first = 0, t = 0, count = 0;
  std::vector<int> cross;                                              // per edge, -1 for none
  std::vector<std::pair<std::pair<vertex_id, vertex_id>, int>> pairs;  // (u, v) and y(u,v)
  std::vector<int> held;                                               // w(t,d) at t·m + d

  [[nodiscard]] int x(vertex_id v, device_id d) const { return static_cast<int>(v * m + d); }
  [[nodiscard]] int s(vertex_id v) const { return s_first + static_cast<int>(v); }
};

// Adds the columns with their kinds and bounds (times in units of the horizon; T at least `low`),
// and T as the objective. Interchangeable devices are told apart: the k-th vertex in Kahn order
// runs on one of the first k + 1 devices.
inline exact_columns exact_add_columns(linear_program& lp, const exact_problem& pr,
                                       const std::vector<std::vector<bool>>& reaches, bool limited, bool symmetric,
                                       double low) {
  exact_columns col;
  col.m = pr.m;
  col.s_first = static_cast<int>(pr.n * pr.m);
  col.t = col.s_first + static_cast<int>(pr.n);
  col.count = col.t + 1;
  col.cross.assign(pr.source.size(), -1);
  for (edge_id e = 0; e < pr.source.size(); ++e)
    if (pr.min_transfer[e] > 0) col.cross[e] = col.count++;
  for (vertex_id u = 0; u < pr.n; ++u)
    for (vertex_id v = u + 1; v < pr.n; ++v) {
      if (reaches[u][v] || reaches[v][u]) continue;
      bool conflict = false;
      for (device_id d = 0; d < pr.m && !conflict; ++d) conflict = pr.p(u, d) > 0 && pr.p(v, d) > 0;
      if (conflict) col.pairs.push_back({{u, v}, col.count++});
    }
  if (limited) {
    col.held.resize(pr.tensor_bytes.size() * pr.m);
    for (auto& held : col.held) held = col.count++;
  }
  // In the order of their numbers: x, s, T, cross, y, w.
  for (vertex_id v = 0; v < pr.n; ++v) {
    const std::size_t rank = static_cast<std::size_t>(std::find(pr.kahn.begin(), pr.kahn.end(), v) - pr.kahn.begin());
    for (device_id d = 0; d < pr.m; ++d) lp.add_integer_column(0, 0, symmetric && d > rank ? 0 : 1);
  }
  for (vertex_id v = 0; v < pr.n; ++v) lp.add_column(0, 0, 1);
  lp.add_column(1, low, 1.0);
  for (const int cross : col.cross)
    if (cross >= 0) lp.add_column(0, 0, 1);
  for (std::size_t k = 0; k < col.pairs.size(); ++k) lp.add_integer_column(0, 0, 1);
  for (std::size_t k = 0; k < col.held.size(); ++k) lp.add_column(0, 0, 1);
  return col;
}

// Adds the rows of the program at the top of this file (times divided by `unit`) and loads them.
inline void exact_add_rows(linear_program& lp, const exact_problem& pr, const csr_graph& g, const exact_columns& col,
                           bool limited, double unit) {
  const auto put = [&](int row, int column, double value) {
    if (value != 0) lp.add_entry(row, column, value);
  };
  // One device per vertex; every sink ends by T.
  for (vertex_id v = 0; v < pr.n; ++v) {
    const int r_ = lp.add_row(1, 1);
    for (device_id d = 0; d < pr.m; ++d) put(r_, col.x(v, d), 1);
    if (g.out_degree(v) == 0) {
      const int f = lp.add_row(-lp_infinity, 0);
      put(f, col.s(v), 1);
      for (device_id d = 0; d < pr.m; ++d) put(f, col.x(v, d), pr.p(v, d) / unit);
      put(f, col.t, -1);
    }
  }
  // Every edge: its consumer starts after its producer ends and, apart, after the transfer.
  for (edge_id e = 0; e < pr.source.size(); ++e) {
    const vertex_id u = pr.source[e], v = pr.target[e];
    const int r_ = lp.add_row(0, lp_infinity);
    put(r_, col.s(v), 1);
    put(r_, col.s(u), -1);
    for (device_id d = 0; d < pr.m; ++d) put(r_, col.x(u, d), -pr.p(u, d) / unit);
    if (col.cross[e] >= 0) {
      put(r_, col.cross[e], -pr.min_transfer[e] / unit);
      for (device_id d = 0; d < pr.m; ++d) {
        const int c_ = lp.add_row(0, lp_infinity);
        put(c_, col.cross[e], 1);
        put(c_, col.x(u, d), -1);
        put(c_, col.x(v, d), 1);
      }
    }
    for (device_id a = 0; a < pr.m; ++a)
      for (device_id b = 0; b < pr.m; ++b) {
        if (a == b || pr.c(e, a, b) <= pr.min_transfer[e]) continue;
        const double c = pr.c(e, a, b) / unit, big = 1.0 + c;
        const int p_ = lp.add_row(c - 2 * big, lp_infinity);
        put(p_, col.s(v), 1);
        put(p_, col.s(u), -1);
        for (device_id d = 0; d < pr.m; ++d) put(p_, col.x(u, d), -pr.p(u, d) / unit - (d == a ? big : 0.0));
        put(p_, col.x(v, b), -big);
      }
  }
  // Two vertices on one device run one after the other.
  for (const auto& [uv, y] : col.pairs) {
    const auto [u, v] = uv;
    for (device_id d = 0; d < pr.m; ++d) {
      const double pu = pr.p(u, d) / unit, pv = pr.p(v, d) / unit;
      if (pu <= 0 || pv <= 0) continue;
      const double big_u = 1.0 + pu, big_v = 1.0 + pv;
      // y = 1: u before v on d.
      const int a = lp.add_row(pu - 3 * big_u, lp_infinity);
      put(a, col.s(v), 1);
      put(a, col.s(u), -1);
      put(a, col.x(u, d), -big_u);
      put(a, col.x(v, d), -big_u);
      put(a, y, -big_u);
      const int b = lp.add_row(pv - 2 * big_v, lp_infinity);
      put(b, col.s(u), 1);
      put(b, col.s(v), -1);
      put(b, col.x(u, d), -big_v);
      put(b, col.x(v, d), -big_v);
      put(b, y, big_v);
    }
  }
  // Static memory: vertices and received copies within each limited device's capacity.
  if (limited) {
    for (device_id d = 0; d < pr.m; ++d) {
      if (pr.capacity[d] == unlimited_memory) continue;
      const double scale = std::max(1.0, static_cast<double>(pr.capacity[d]));
      const int r_ = lp.add_row(-lp_infinity, static_cast<double>(pr.capacity[d]) / scale);
      for (vertex_id v = 0; v < pr.n; ++v) put(r_, col.x(v, d), static_cast<double>(pr.vertex_bytes[v]) / scale);
      for (std::size_t t = 0; t < pr.tensor_bytes.size(); ++t)
        put(r_, col.held[t * pr.m + d], static_cast<double>(pr.tensor_bytes[t]) / scale);
    }
    for (edge_id e = 0; e < pr.source.size(); ++e)
      for (device_id d = 0; d < pr.m; ++d) {
        const int r_ = lp.add_row(0, lp_infinity);
        put(r_, col.held[pr.tensor_of[e] * pr.m + d], 1);
        put(r_, col.x(pr.target[e], d), -1);
        put(r_, col.x(pr.source[e], d), 1);
      }
  }
  // A group's members on its first member's device.
  if (!pr.group.empty()) {
    std::map<std::uint32_t, vertex_id> first;
    for (vertex_id v = 0; v < pr.n; ++v) {
      if (pr.group[v] == no_group) continue;
      const auto [it, fresh] = first.try_emplace(pr.group[v], v);
      if (fresh) continue;
      for (device_id d = 0; d < pr.m; ++d) {
        const int r_ = lp.add_row(0, 0);
        put(r_, col.x(v, d), 1);
        put(r_, col.x(it->second, d), -1);
      }
    }
  }
}

// The feasible start as column values, offered to the search as its first incumbent; empty
// without a start.
inline std::vector<double> exact_heuristic(const exact_problem& pr, const exact_columns& col,
                                           const exact_incumbent& start, bool limited, double unit) {
  std::vector<double> values;
  if (start.device.empty()) return values;
  values.assign(static_cast<std::size_t>(col.count), 0);
  const auto at = [&](int column) -> double& { return values[static_cast<std::size_t>(column)]; };
  for (vertex_id v = 0; v < pr.n; ++v) {
    at(col.x(v, start.device[v])) = 1;
    at(col.s(v)) = start.start[v] / unit;
  }
  at(col.t) = start.makespan / unit;
  for (edge_id e = 0; e < pr.source.size(); ++e)
    if (col.cross[e] >= 0 && start.device[pr.source[e]] != start.device[pr.target[e]]) at(col.cross[e]) = 1;
  for (const auto& [uv, y] : col.pairs) at(y) = start.start[uv.first] <= start.start[uv.second] ? 1 : 0;
  if (limited)
    for (edge_id e = 0; e < pr.source.size(); ++e)
      if (start.device[pr.source[e]] != start.device[pr.target[e]])
        at(col.held[pr.tensor_of[e] * pr.m + start.device[pr.target[e]]]) = 1;
  return values;
}

// What GLPK found: a placement with the program's start times (empty when it found nothing better
// than the start), a bound in seconds, and whether it is proven optimal; or why it failed.
struct exact_solution {
  std::vector<device_id> device;
  std::vector<double> start;  // in units of the horizon
  double bound = 0;           // seconds
  bool proven = false;
  bool time_limit_reached = false;
  std::string stopped{};  // why GLPK's search ended before proving, other than the time limit
  outcome failure;        // ok unless the program cannot be solved (infeasible, solver_error)
};

// Solves the program by GLPK's branch and bound within options.time_limit_ms from `heuristic`
// (column values, or empty). `bound` is a bound known before (seconds), `low` T's lower bound and
// `unit` the horizon. Where GLPK stops on an internal error (its simplex can fail an assertion on a
// badly scaled node), the solution is the last integer solution the search reported, if any, with
// the bound proven until then.
inline exact_solution exact_solve(const linear_program& lp, const exact_problem& pr, const exact_columns& col,
                                  const std::vector<double>& heuristic, const exact_options& options, double bound,
                                  double low, double unit) {
  exact_solution out;
  // The primal simplex from GLPK's standard basis for the relaxation; the program's columns stay
  // its own (no presolve), so that the start can be offered.
  const glpk_backend solver{
      .method = glpk_method::primal_simplex, .time_limit = options.time_limit_ms / 1000.0, .cuts = true};
  const mip_solution found = solver.solve_mip(lp, heuristic, low);
  out.time_limit_reached = found.time_limit_reached;
  out.bound = std::max(bound, found.bound * unit);
  if (found.outcome.code == status::infeasible) {
    byte_count total = 0, capacity = 0;
    for (vertex_id v = 0; v < pr.n; ++v) total = saturating_add(total, pr.vertex_bytes[v]);
    for (device_id d = 0; d < pr.m; ++d) capacity = saturating_add(capacity, pr.capacity[d]);
    out.failure = {.code = status::infeasible,
                   .needed = total,
                   .available = capacity,
                   .message = "no placement of the " + std::to_string(pr.n) + " vertices on " + std::to_string(pr.m) +
                              " devices keeps every device's static memory (" + std::to_string(total) +
                              " bytes of vertices in all, plus received copies) within its capacity"};
    return out;
  }
  if (!found.values.empty()) {
    out.device.assign(pr.n, 0);
    out.start.assign(pr.n, 0);
    for (vertex_id v = 0; v < pr.n; ++v) {
      for (device_id d = 0; d < pr.m; ++d)
        if (found.values[static_cast<std::size_t>(col.x(v, d))] > 0.5) out.device[v] = d;
      out.start[v] = found.values[static_cast<std::size_t>(col.s(v))];
    }
    out.proven = found.proven;
    out.stopped = found.stopped;
  } else if (!heuristic.empty()) {  // nothing better than the start
    if (!found.time_limit_reached) out.stopped = found.outcome.message;
  } else if (found.time_limit_reached) {
    out.failure = {.code = status::solver_error,
                   .time = options.time_limit_ms / 1000.0,
                   .message = "no schedule was found within the time limit of " +
                              format_seconds(options.time_limit_ms / 1000.0) +
                              "; allow more time or use a list scheduler"};
  } else {
    out.failure = {.code = status::solver_error, .message = found.outcome.message};
  }
  return out;
}

// Kahn's order, taking among ready vertices the one that starts first in `start`.
inline std::vector<vertex_id> exact_order(const csr_graph& g, const std::vector<double>& start) {
  const std::size_t n = g.vertex_count();
  std::vector<vertex_id> order;
  order.reserve(n);
  std::vector<std::uint32_t> waiting(n);
  using key = std::pair<double, vertex_id>;
  std::priority_queue<key, std::vector<key>, std::greater<>> ready;
  for (vertex_id v = 0; v < n; ++v)
    if ((waiting[v] = static_cast<std::uint32_t>(g.in_degree(v))) == 0) ready.push({start[v], v});
  while (!ready.empty()) {
    const vertex_id v = ready.top().second;
    ready.pop();
    order.push_back(v);
    for (const vertex_id w : g.successors(v))
      if (--waiting[w] == 0) ready.push({start[w], w});
  }
  return order;
}

}  // namespace detail

// The optimal placement and schedule of `graph` (at most options.max_vertices vertices) on
// `devices`, or the best found within options.time_limit_ms with a proven bound. Throws
// invalid_input for a graph above the limit or an empty cluster.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] exact_result exact_schedule(const G& graph, const M& model, const D& devices,
                                          exact_options options = {}) {
  const detail::csr_view<G> view(graph);
  const csr_graph& g = *view;
  const std::size_t n = g.vertex_count(), m = devices.device_count();
  if (m == 0) throw invalid_input("exact_schedule: the cluster has no devices");
  if (n > options.max_vertices)
    throw invalid_input("exact_schedule: the graph has " + std::to_string(n) + " vertices, more than max_vertices = " +
                        std::to_string(options.max_vertices) + " (the program grows as n² + n·m)");
  if (m > options.max_devices)
    throw invalid_input("exact_schedule: the cluster has " + std::to_string(m) + " devices, more than max_devices = " +
                        std::to_string(options.max_devices) + " (the program grows as n·m + e·m²)");
  if (!options.group.empty() && options.group.size() != n)
    throw invalid_input("exact_schedule: group has " + std::to_string(options.group.size()) + " entries for " +
                        std::to_string(n) + " vertices");
  if (options.time_limit_ms <= 0)
    throw invalid_input("exact_schedule: time_limit_ms must be > 0, got " + std::to_string(options.time_limit_ms));
  exact_result r;
  const auto failed = [&](outcome why) {
    r.outcome = std::move(why);
    r.placement.outcome = r.outcome;
    return r;
  };
  if (detail::kahn_on(g).size() != n)
    throw not_a_dag("exact_schedule: the graph has a cycle: " + describe_cycle(graph, g.find_cycle()));
  if (n == 0) {
    r.optimal = true;
    return r;
  }
  const makespan_bound simple = makespan_lower_bound(g, model, devices);

  // 1. The problem's tables; a vertex no device holds needs no program.
  const detail::exact_problem pr = detail::exact_tables(graph, g, model, devices, options);
  const bool limited = detail::exact_limited(pr);
  if (limited)
    if (auto too_large = detail::exact_too_large(pr, graph)) return failed(std::move(*too_large));

  // 2. A feasible start and the horizon it gives.
  const bool symmetric = pr.m > 1 && detail::exact_devices_interchangeable(pr);
  detail::exact_incumbent start = detail::exact_initial(pr, g, limited);
  if (symmetric && !start.device.empty()) detail::exact_relabel(pr, start.device);
  const double horizon = detail::exact_horizon(pr, start);
  if (!std::isfinite(horizon))
    return failed(
        {.code = status::infeasible,
         .message = "the compute and transfer times add up to more than a double holds; no finite schedule exists"});
  if (horizon <= 0 && start.device.empty()) {  // nothing takes time: any fitting placement is optimal
    start.device.assign(pr.n, 0);
    start.order = pr.kahn;
  }

  // 3. The program, solved from the start (times divided by the horizon, so that GLPK's
  //    tolerances are relative).
  detail::exact_solution solution;
  solution.bound = simple.value;
  solution.proven = true;  // unless the program runs
  if (horizon > 0) {
    linear_program lp;
    const double low = std::min(simple.value / horizon, 1.0);
    const detail::exact_columns col =
        detail::exact_add_columns(lp, pr, detail::exact_reachability(pr, g), limited, symmetric, low);
    detail::exact_add_rows(lp, pr, g, col, limited, horizon);
    solution = detail::exact_solve(lp, pr, col, detail::exact_heuristic(pr, col, start, limited, horizon), options,
                                   simple.value, low, horizon);
    r.time_limit_reached = solution.time_limit_reached;
    if (!solution.failure.ok()) return failed(std::move(solution.failure));
  }
  if (solution.device.empty()) {  // the program found nothing better than its start
    solution.device = start.device;
    solution.start = start.start;
  }

  // 4. The placement in the program's order, replayed by the simulator.
  r.placement.order = detail::exact_order(g, solution.start);
  r.placement.device = solution.device;
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
  const double program_bound = solution.bound;
  r.bound = std::min(r.makespan, program_bound);
  r.optimal = r.makespan - program_bound <= 1e-6 * r.makespan;
  if (r.optimal) r.bound = r.makespan;
  if (!r.optimal && devices.comm() != comm_mode::parallel && solution.proven)
    r.outcome.message = "optimal for parallel links; the " + std::string(to_string(devices.comm())) +
                        " links' channels may delay its transfers";
  else if (!solution.stopped.empty() && !r.optimal)
    r.outcome.message = solution.stopped + ": the best schedule found before it and a proven bound";
  else if (r.time_limit_reached && !r.optimal)
    r.outcome.message = "the time limit of " + format_seconds(options.time_limit_ms / 1000.0) +
                        " was reached: the best schedule found and a proven bound";
  return r;
}

}  // namespace gantry
