// Celeritas's Adjusting Placement (Celeritas §5.2) as a list-scheduling policy: vertices in CPD-TOPO
// order (order/topological.hpp); each stays on the device of the vertex placed before it unless
// it could start there later than on the best device by more than its largest outgoing transfer:
//   est(v, d) = earliest start with insertion (an idle gap long enough after the inputs arrive);
//   d_prev = device of the previous vertex; back_cost = max over v's out-edges of c(v, s), the
//   model's representative transfer time;
//   est(v, d_prev) - min_d est(v, d) > back_cost ? argmin_d est (lowest id on ties) : d_prev.
// A device that v may not use or that cannot hold it counts as est = infinity. A vertex that fits
// nowhere now waits while later ready vertices are placed (their placement may free memory); with
// list_options::best_effort, when nothing fits at all the engine places a vertex on the device
// with the most free memory and reports status::over_capacity. O(m) est queries per vertex.
#pragma once

#include <gantry/order/topological.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace gantry {

namespace detail {
// Priorities that make ready_by_priority pick the ready vertex earliest in `order` (CPD-TOPO of the
// view's graph when empty). Throws invalid_input when the order is not a permutation of the vertices.
template <class View>
[[nodiscard]] std::vector<seconds> order_priorities(const View& view, const std::vector<vertex_id>& order,
                                                    std::string_view who) {
  const std::size_t n = view.vertex_count();
  const std::vector<vertex_id> computed =
      order.empty() ? cpd_topo_order(view.graph(), view.model(), view.devices()) : std::vector<vertex_id>{};
  const std::vector<vertex_id>& walk = order.empty() ? computed : order;
  if (walk.size() != n)
    throw invalid_input(std::string(who) + ": the order has " + std::to_string(walk.size()) + " entries for " +
                        std::to_string(n) + " vertices");
  std::vector<seconds> priority(n, -1.0);
  for (std::size_t k = 0; k < n; ++k) {
    if (walk[k] >= n || priority[walk[k]] >= 0)
      throw invalid_input(std::string(who) + ": order[" + std::to_string(k) + "] = " + std::to_string(walk[k]) +
                          (walk[k] >= n ? " is not a vertex" : " appears twice"));
    priority[walk[k]] = static_cast<seconds>(n - k);  // earlier in the order: higher priority
  }
  return priority;
}
}  // namespace detail

struct adjusting_placement_rule {
  static constexpr bool insertion = true;
  std::vector<vertex_id> order{};  // the walk; empty: CPD-TOPO of the graph being placed

  template <class View>
  [[nodiscard]] std::vector<seconds> priorities(const View& view) const {
    return detail::order_priorities(view, order, view.name());
  }

  template <class View>
  [[nodiscard]] device_id device(const View& view, vertex_id v) const {
    constexpr seconds never = std::numeric_limits<seconds>::infinity();
    const std::size_t m = view.device_count();
    device_id argmin = no_device;
    seconds least = never;
    const vertex_id previous = view.last_placed();
    const device_id stay = previous == no_vertex ? no_device : view.device_of(previous);
    seconds at_stay = never;
    for (device_id d = 0; d < m; ++d) {
      if (!view.allowed(v, d) || !view.fits(v, d)) continue;
      const seconds est = view.earliest_start(v, d);
      if (est < least) {
        least = est;
        argmin = d;
      }
      if (d == stay) at_stay = est;
    }
    if (argmin == no_device) return no_device;
    if (at_stay == never) return argmin;
    seconds back_cost = 0;
    for (const edge_id e : view.graph().out_edges(v))
      back_cost = std::max(back_cost, static_cast<seconds>(mean_transfer_time(view.model(), e, m)));
    return at_stay - least > back_cost ? argmin : stay;
  }
};

class adjusting_placement_policy : public priority_list_policy<adjusting_placement_rule> {
 public:
  explicit adjusting_placement_policy(std::string name = "Adjusting Placement", std::vector<vertex_id> order = {})
      : priority_list_policy(std::move(name), adjusting_placement_rule{std::move(order)}) {}
};

// Adjusting Placement of any graph, walking `order` (empty: CPD-TOPO). Memory counts when
// options.respect_memory is set; set options.best_effort too for Celeritas's rule that a vertex no
// device can hold still goes somewhere (reported as status::over_capacity).
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result adjusting_placement(const G& graph, const M& model, const D& devices,
                                                       list_options options = {}, std::vector<vertex_id> order = {}) {
  return list_schedule(graph, model, devices, adjusting_placement_policy("Adjusting Placement", std::move(order)),
                       std::move(options));
}

}  // namespace gantry
