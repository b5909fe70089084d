// CPOP, Critical-Path-on-a-Processor (Topcuoglu, Hariri & Wu, IEEE TPDS 2002): priority = upward
// rank + downward rank (mean costs); the vertices whose priority equals the entry's form the
// critical path (one path of them, from an entry to an exit), and the one device that runs all of
// them fastest is the critical-path device.
// The ready vertex with the highest priority goes next: onto the critical-path device if it is on
// the critical path (and fits there), otherwise where it finishes earliest, with insertion.
// O((n + e) · m + n log n) plus the gap search.
#pragma once

#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace gantry {

struct cpop_rule {
  static constexpr bool insertion = true;

  template <class View>
  [[nodiscard]] std::vector<seconds> priorities(const View& view) {
    const std::size_t n = view.vertex_count();
    const csr_graph& g = view.graph();
    std::vector<seconds> priority(n);
    seconds longest = 0;  // |CP| = the largest priority, an entry's (Topcuoglu §4.2)
    for (vertex_id v = 0; v < n; ++v) {
      priority[v] = view.bottom_level(v) + view.top_level(v);
      longest = std::max(longest, priority[v]);
    }
    // Equal up to rounding: the two levels are sums taken along different paths.
    const seconds tolerance = 1e-9 * std::max(longest, seconds{1e-300});
    const auto critical = [&](vertex_id v) { return std::abs(priority[v] - longest) <= tolerance; };
    // SET_CP is one path (the CPOP algorithm, steps 6-12): from a critical entry, a critical successor at a
    // time, down to an exit; where several qualify, the first in Kahn order. Marking every
    // critical vertex instead would put parallel critical paths on one device. Departure: the edge
    // taken must lie on a longest path too (the paper checks the successor's priority alone, which
    // may step from one critical path onto another by an edge on neither).
    const std::size_t m = view.device_count();
    on_path.assign(n, 0);
    vertex_id at = no_vertex;
    for (vertex_id v = 0; v < n; ++v)
      if (g.in_degree(v) == 0 && critical(v) && (at == no_vertex || view.kahn_rank(v) < view.kahn_rank(at))) at = v;
    while (at != no_vertex) {
      on_path[at] = 1;
      const seconds below = view.bottom_level(at) - mean_compute_time(view.model(), at, m);
      const auto succ = g.successors(at);
      const auto out = g.out_edges(at);
      vertex_id next = no_vertex;
      for (std::size_t i = 0; i < succ.size(); ++i) {
        const vertex_id s = succ[i];
        const bool tight =
            std::abs(mean_transfer_time(view.model(), out[i], m) + view.bottom_level(s) - below) <= tolerance;
        if (tight && critical(s) && (next == no_vertex || view.kahn_rank(s) < view.kahn_rank(next))) next = s;
      }
      at = next;
    }
    path_device = no_device;
    seconds best = 0;
    for (device_id d = 0; d < view.device_count(); ++d) {
      seconds sum = 0;
      for (vertex_id v = 0; v < n; ++v)
        if (on_path[v]) sum += view.model().compute_time(v, d);
      if (path_device == no_device || sum < best) {
        path_device = d;
        best = sum;
      }
    }
    return priority;
  }
  template <class View>
  [[nodiscard]] device_id device(const View& view, vertex_id v) const {
    if (on_path[v] && view.allowed(v, path_device) && view.fits(v, path_device)) return path_device;
    return best_device(view, v, [&](device_id d) { return view.earliest_finish(v, d); });
  }

  [[nodiscard]] bool on_critical_path(vertex_id v) const { return on_path[v] != 0; }

  std::vector<std::uint8_t> on_path;  // per vertex, after priorities()
  device_id path_device = no_device;  // the critical-path device
};

class cpop_policy : public priority_list_policy<cpop_rule> {
 public:
  explicit cpop_policy(std::string name = "CPOP") : priority_list_policy(std::move(name)) {}
};

// Memory is respected when options.respect_memory is set.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result cpop(const G& graph, const M& model, const D& devices, list_options options = {}) {
  return list_schedule(graph, model, devices, cpop_policy(options.respect_memory ? "m-CPOP" : "CPOP"),
                       std::move(options));
}

// m-CPOP: cpop() with options.respect_memory set, as every m_ function of a list placer is.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result m_cpop(const G& graph, const M& model, const D& devices, list_options options = {}) {
  options.respect_memory = true;
  return cpop(graph, model, devices, std::move(options));
}

#if defined(GANTRY_SEPARATE_COMPILATION)
// Compiled once for gantry's own types, in the unit that includes place/instances.hpp.
extern template list_schedule_result cpop(const graph&, const graph_model&, const cluster&, list_options);
#endif

}  // namespace gantry
