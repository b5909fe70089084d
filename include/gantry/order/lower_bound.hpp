// Lower bounds on the makespan of any placement and schedule of a DAG, so that a placer's result
// can be judged against the best possible. Both bounds hold in every communication mode, with or
// without memory limits, for every placer and for the simulator. O(n·m + e).
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace gantry {

struct makespan_bound {
  // The longest path when every vertex runs on its fastest device and communication is free.
  seconds critical_path = 0;
  // Total work spread perfectly over the devices: every device busy until the end and no vertex
  // split. With devices of one kind this is Σ compute / Σ speed.
  seconds work = 0;
  // The larger of the two: no schedule is shorter.
  seconds value = 0;
  // The vertices of one longest path, from a source to a sink.
  std::vector<vertex_id> path;

  // Which bound is the binding one: "critical path" or "work".
  [[nodiscard]] const char* binding() const noexcept { return critical_path >= work ? "critical path" : "work"; }
};

namespace detail {
// Σ_v min_d w_d·p(v,d) / Σ_d w_d: every device d works at most T, so Σ_d w_d·busy(d) ≤ T·Σ_d w_d,
// and each vertex adds at least its cheapest weighted time to the left side. Valid for any
// weights w_d > 0.
template <cost_model M>
seconds weighted_work_bound(const M& model, std::size_t n, std::size_t m, const std::vector<double>& weight) {
  double total_weight = 0;
  for (const double w : weight) total_weight += w;
  double work = 0;
  for (vertex_id v = 0; v < n; ++v) {
    double cheapest = std::numeric_limits<double>::infinity();
    for (device_id d = 0; d < m; ++d) cheapest = std::min(cheapest, weight[d] * model.compute_time(v, d));
    work += cheapest;
  }
  return total_weight > 0 ? work / total_weight : 0.0;
}
}  // namespace detail

// The critical-path and work bounds of `graph` on `devices`. The work bound takes the better of
// equal weights and weights proportional to each device's speed as the model shows it (the inverse
// of the time it needs for the whole graph), so a cluster of fast and slow devices of one kind gets
// Σ compute / Σ speed. Throws not_a_dag for a cycle and invalid_input for an empty cluster or a
// negative or NaN compute time.
template <adapted_graph G, cost_model M, device_set D>
[[nodiscard]] makespan_bound makespan_lower_bound(const G& graph, const M& model, const D& devices) {
  const std::size_t m = devices.device_count();
  if (m == 0) throw invalid_input("makespan_lower_bound: the cluster has no devices");
  const detail::csr_view<G> g(graph);
  const auto topo = detail::kahn_on(*g);
  detail::require_dag(graph, *g, topo);
  const std::size_t n = g->vertex_count();
  makespan_bound out;
  if (n == 0) return out;

  std::vector<seconds> fastest(n, std::numeric_limits<double>::infinity());
  std::vector<double> per_device(m, 0);
  for (vertex_id v = 0; v < n; ++v)
    for (device_id d = 0; d < m; ++d) {
      const seconds p = model.compute_time(v, d);
      if (!(p >= 0))
        throw invalid_input("makespan_lower_bound: vertex " + vertex_name(graph, v) + " has compute time " +
                            std::to_string(p) + " on device " + std::to_string(d) + "; it must be >= 0");
      fastest[v] = std::min(fastest[v], p);
      per_device[d] += p;
    }

  // Longest path of fastest times; `via` keeps each vertex's heaviest predecessor for the path.
  std::vector<seconds> finish(n, 0);
  std::vector<vertex_id> via(n, no_vertex);
  vertex_id last = topo.front();
  for (const vertex_id v : topo) {
    seconds ready = 0;
    for (const vertex_id u : g->predecessors(v))
      if (via[v] == no_vertex || finish[u] > ready) {
        ready = finish[u];
        via[v] = u;
      }
    finish[v] = ready + fastest[v];
    if (finish[v] > finish[last]) last = v;
  }
  out.critical_path = finish[last];
  for (vertex_id v = last; v != no_vertex; v = via[v]) out.path.push_back(v);
  std::reverse(out.path.begin(), out.path.end());

  out.work = detail::weighted_work_bound(model, n, m, std::vector<double>(m, 1.0));
  if (std::all_of(per_device.begin(), per_device.end(), [](double t) { return t > 0; })) {
    std::vector<double> speed(m);
    for (device_id d = 0; d < m; ++d) speed[d] = 1.0 / per_device[d];
    out.work = std::max(out.work, detail::weighted_work_bound(model, n, m, speed));
  }
  out.value = std::max(out.critical_path, out.work);
  return out;
}

}  // namespace gantry
