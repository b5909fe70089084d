// m-TOPO (Baechi §2.2): walk Kahn's topological order and fill the devices one after another, each
// up to a balanced cap of  sum_v mem(v) / m + max_v mem(v),  where mem(v) = persistent + output +
// temporary bytes. O(n + e log d).
// Departure from the published code (kept reachable): Baechi's code only checks the cap and can
// overshoot a device's real capacity; gantry also requires each device's running total to fit its
// capacity M(d), and reports failure by status instead of overshooting.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <string>

namespace gantry {

struct m_topo_options {
  // Check each device's capacity as well as the cap; false reproduces the published code, which
  // ignores capacity (its placements may then run out of memory in the simulator).
  bool respect_capacity = true;
};

template <adapted_graph G, memory_model M, device_set D>
[[nodiscard]] placement m_topo(const G& graph, const M& model, const D& devices, m_topo_options options = {}) {
  const detail::csr_view<G> g(graph);
  const std::size_t n = g->vertex_count(), m = devices.device_count();
  placement p;
  p.order = detail::kahn_on(*g);
  if (p.order.size() != n) {
    p.status = status::not_a_dag;
    p.message = "the graph has a cycle: " + describe_cycle(graph, g->find_cycle());
    p.order.clear();
    return p;
  }
  p.device.assign(n, no_device);
  if (m == 0) {
    if (n == 0) return p;
    p.status = status::out_of_memory;
    p.message = "m-TOPO: there are no devices to place " + std::to_string(n) + " vertices on";
    return p;
  }
  byte_count total = 0, largest = 0;
  for (vertex_id v = 0; v < n; ++v) {
    const byte_count need = total_bytes(model, v);
    total += need;
    largest = std::max(largest, need);
  }
  const byte_count cap = total / m + largest;
  const auto limit = [&](device_id d) {
    return options.respect_capacity ? std::min(cap, devices.capacity(d)) : cap;
  };
  device_id d = 0;
  byte_count used = 0;
  for (const vertex_id v : p.order) {
    const byte_count need = total_bytes(model, v);
    while (d < m && used + need > limit(d)) {
      ++d;
      used = 0;
    }
    if (d == m) {
      p.status = status::out_of_memory;
      p.message = "m-TOPO: vertex '" + vertex_name(graph, v) + "' needs " + std::to_string(need) +
                  " bytes but no device has room left (cap per device " + std::to_string(cap) + " bytes" +
                  (options.respect_capacity ? ", capacity of the last device " + std::to_string(devices.capacity(m - 1)) + " bytes"
                                            : std::string()) +
                  ")";
      return p;
    }
    p.device[v] = d;
    used += need;
  }
  return p;
}

}  // namespace gantry
