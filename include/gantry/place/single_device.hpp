// The baseline every comparison starts from: the whole graph on one device.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/schedule/schedule.hpp>

namespace gantry {

struct single_device_options {
  device_id device = 0;
};

// Places every vertex on options.device; the order is Kahn's. Whether the device can hold the run
// is for the simulator to say (memory is freed as the run goes). A cycle throws not_a_dag.
template <adapted_graph G, device_set D>
[[nodiscard]] placement single_device(const G& graph, const D& devices, single_device_options options = {}) {
  if (options.device >= devices.device_count())
    throw invalid_input("single_device: device " + std::to_string(options.device) + " is out of range (there are " +
                        std::to_string(devices.device_count()) + " devices)");
  const detail::csr_view<G> g(graph);
  placement p;
  p.order = detail::kahn_on(*g);
  if (p.order.size() != g->vertex_count())
    throw not_a_dag("single_device: the graph has a cycle: " + describe_cycle(graph, g->find_cycle()));
  p.device.assign(g->vertex_count(), options.device);
  return p;
}

}  // namespace gantry
