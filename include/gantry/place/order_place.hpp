// Celeritas's Order-Place (Celeritas §5.2) as a list-scheduling policy: vertices in CPD-TOPO order
// (order/topological.hpp) fill device 0 until the next one does not fit, then device 1, and so on;
// a device once left is not used again (except by a colocation group already bound to it).
// Memory is the engine's (list_options::respect_memory, dynamic by default), so "fits" means the
// vertex's holds keep the device within capacity at every time. A vertex that fits on no device
// from the current one on waits while later ready vertices are placed; when none fits the run
// fails with status::out_of_memory naming the vertex. Without respect_memory every vertex goes to
// device 0. O(m) fit checks per vertex in all (the current device only moves forward).
#pragma once

#include <gantry/place/adjusting_placement.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <string>
#include <vector>

namespace gantry {

struct order_place_rule {
  static constexpr bool insertion = false;
  std::vector<vertex_id> order{};  // the walk; empty: CPD-TOPO of the graph being placed
  device_id current = 0;           // the device being filled

  template <class View>
  [[nodiscard]] std::vector<seconds> priorities(const View& view) {
    current = 0;
    return detail::order_priorities(view, order, view.name());
  }

  template <class View>
  [[nodiscard]] device_id device(const View& view, vertex_id v) {
    if (const device_id bound = view.bound_device(v); bound != no_device)
      return view.fits(v, bound) ? bound : no_device;
    for (device_id d = current; d < view.device_count(); ++d)
      if (view.allowed(v, d) && view.fits(v, d)) return current = d;
    return no_device;
  }
};

class order_place_policy : public priority_list_policy<order_place_rule> {
 public:
  explicit order_place_policy(std::string name = "Order-Place", std::vector<vertex_id> order = {})
      : priority_list_policy(std::move(name), order_place_rule{std::move(order), 0}) {}
};

// Order-Place of any graph, walking `order` (empty: CPD-TOPO).
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result order_place(const G& graph, const M& model, const D& devices,
                                               list_options options = {}, std::vector<vertex_id> order = {}) {
  return list_schedule(graph, model, devices, order_place_policy("Order-Place", std::move(order)), std::move(options));
}

}  // namespace gantry
