// m-TOPO (Baechi §2.2): walk Kahn's topological order and fill the devices one after another, each
// up to a balanced cap of  sum_v mem(v) / m + max_v mem(v),  where mem(v) = persistent + output +
// temporary bytes. A colocation group goes where its first member goes, its memory counted whole.
// O(n + e).
// Departure from the published code (kept reachable): Baechi's code only checks the cap and can
// overshoot a device's real capacity; gantry also requires each device's running total to fit its
// capacity M(d), and reports failure by status instead of overshooting.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <string>

namespace gantry {

struct m_topo_options {
  // Check each device's capacity as well as the cap; false reproduces the published code, which
  // ignores capacity (its placements may then run out of memory in the simulator).
  bool respect_capacity = true;
  // Colocation group per vertex (no_group: alone); empty for none. A group goes where its first
  // member in the order goes, and its whole memory is counted there at once.
  std::vector<std::uint32_t> group{};
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
  if (!options.group.empty() && options.group.size() != n)
    throw invalid_input("m-TOPO: the group vector has " + std::to_string(options.group.size()) + " entries for " +
                        std::to_string(n) + " vertices");
  // need(v): v's bytes, or its whole group's at the group's first member (0 at the others).
  const auto grouped = detail::merge_groups(*g, options.group, false, {});
  std::vector<byte_count> group_need(n, 0);
  std::vector<device_id> group_device(n, no_device);
  for (vertex_id v = 0; v < n; ++v)
    group_need[grouped[v]] = detail::saturating_add(group_need[grouped[v]], total_bytes(model, v));
  byte_count total = 0, largest = 0;
  for (vertex_id v = 0; v < n; ++v) total = detail::saturating_add(total, total_bytes(model, v));
  for (const byte_count need : group_need) largest = std::max(largest, need);
  const byte_count cap = detail::saturating_add(total / m, largest);
  const auto limit = [&](device_id d) {
    return options.respect_capacity ? std::min(cap, devices.capacity(d)) : cap;
  };
  device_id d = 0;
  byte_count used = 0;
  for (const vertex_id v : p.order) {
    if (group_device[grouped[v]] != no_device) {
      p.device[v] = group_device[grouped[v]];
      continue;
    }
    const byte_count need = group_need[grouped[v]];
    while (d < m && (need > limit(d) || used > limit(d) - need)) {
      ++d;
      used = 0;
    }
    if (d == m) {
      p.status = status::out_of_memory;
      p.message = "m-TOPO: vertex '" + vertex_name(graph, v) + "' needs " + std::to_string(need) +
                  (group_need[grouped[v]] != total_bytes(model, v) ? " (with its colocation group)" : "") +
                  " bytes but no device has room left (cap per device " + std::to_string(cap) + " bytes" +
                  (options.respect_capacity ? ", capacity of the last device " + std::to_string(devices.capacity(m - 1)) + " bytes"
                                            : std::string()) +
                  ")";
      return p;
    }
    p.device[v] = d;
    group_device[grouped[v]] = d;
    used += need;
  }
  return p;
}

}  // namespace gantry
