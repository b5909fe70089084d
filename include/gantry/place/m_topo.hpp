// m-TOPO (Baechi §2.2): walk Kahn's topological order and fill the devices one after another, each
// up to a balanced cap of  sum_v mem(v) / m + max_v mem(v),  where mem(v) = persistent + output +
// temporary bytes. A colocation group goes where its first member goes, its memory counted whole.
// O(n + e log e).
// Beyond the published code: the tensors a device receives count too (each distinct tensor once per
// device when copies are cached, once per edge otherwise; for a group, every tensor entering it from
// outside at its first member, unless already on the device), so that the sum of everything a device
// ever holds stays within its capacity and every run of the placement, in any order, fits.
// Departure from the published code (kept reachable): Baechi's code only checks the cap and can
// overshoot a device's real capacity; gantry also requires each device's running total to fit its
// capacity M(d), and reports failure by status instead of overshooting.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

namespace gantry {

struct m_topo_options {
  // Check each device's capacity as well as the cap; false reproduces the published code, which
  // ignores capacity (its placements may then run out of memory in the simulator).
  bool respect_capacity = true;
  // Colocation group per vertex (no_group: alone); empty for none. A group goes where its first
  // member in the order goes, and its whole memory is counted there at once.
  std::vector<std::uint32_t> group{};
  // Count a tensor once per receiving device (as the simulator with cache_transfers); false: per edge.
  bool cache_transfers = true;
  // Count the tensors devices receive; false reproduces the published rule (vertex bytes only).
  bool count_received = true;
};

template <adapted_graph G, memory_model M, device_set D>
[[nodiscard]] placement m_topo(const G& graph, const M& model, const D& devices, m_topo_options options = {}) {
  const detail::csr_view<G> g(graph);
  const std::size_t n = g->vertex_count(), m = devices.device_count();
  placement p;
  p.order = detail::kahn_on(*g);
  if (p.order.size() != n) throw not_a_dag("m-TOPO: the graph has a cycle: " + describe_cycle(graph, g->find_cycle()));
  p.device.assign(n, no_device);
  if (m == 0) {
    if (n == 0) return p;
    p.outcome.code = status::out_of_memory;
    p.outcome.message = "m-TOPO: there are no devices to place " + std::to_string(n) + " vertices on";
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
  // Members of each group, to count the tensors entering a group when its first member is placed.
  std::vector<std::vector<vertex_id>> members(n);
  if (!options.group.empty())
    for (vertex_id v = 0; v < n; ++v) members[grouped[v]].push_back(v);
  // Tensors already counted on a device: (producer, bytes, device).
  std::set<std::tuple<vertex_id, byte_count, device_id>> received;
  std::vector<std::pair<vertex_id, edge_id>> entering;
  const auto collect_entering = [&](vertex_id v) {
    entering.clear();
    const auto add = [&](vertex_id w) {
      const auto pred = g->predecessors(w);
      const auto in = g->in_edges(w);
      for (std::size_t i = 0; i < pred.size(); ++i)
        if (grouped[pred[i]] != grouped[w]) entering.emplace_back(pred[i], in[i]);
    };
    if (members[grouped[v]].empty()) add(v);
    else
      for (const vertex_id w : members[grouped[v]]) add(w);
  };
  // Bytes d would receive for v's group: inputs from elsewhere (or not placed yet), not yet on d.
  const auto received_need = [&](device_id to) {
    byte_count bytes = 0;
    std::set<std::pair<vertex_id, byte_count>> seen;
    for (const auto& [u, e] : entering) {
      if (p.device[u] == to) continue;
      const byte_count size = model.edge_bytes(e);
      if (options.cache_transfers && (received.contains({u, size, to}) || !seen.emplace(u, size).second)) continue;
      bytes = detail::saturating_add(bytes, size);
    }
    return bytes;
  };
  device_id d = 0;
  byte_count used = 0, held = 0;  // on device d: the vertices' own bytes; those plus received tensors
  for (const vertex_id v : p.order) {
    if (group_device[grouped[v]] != no_device) {
      p.device[v] = group_device[grouped[v]];
      continue;
    }
    // The balanced cap counts the vertices' own bytes; the capacity also what d receives.
    const byte_count need = group_need[grouped[v]];
    const bool count_received = options.count_received && options.respect_capacity;
    if (count_received) collect_entering(v);
    const auto fits = [&](device_id to) {
      if (need > cap || used > cap - need) return false;
      if (!options.respect_capacity) return true;
      const byte_count all = count_received ? detail::saturating_add(need, received_need(to)) : need;
      return all <= devices.capacity(to) && held <= devices.capacity(to) - all;
    };
    while (d < m && !fits(d)) {
      if (d + 1 < m) used = held = 0;  // the last device's numbers stay for the outcome
      ++d;
    }
    if (d == m) {
      const device_id last = static_cast<device_id>(m - 1);
      // The outcome's numbers are the last device's: what v (with its group and the tensors it would
      // receive there) needs, and the memory free there (the room under the cap without capacities).
      p.outcome = {.code = status::out_of_memory,
                   .vertex = v,
                   .device = last,
                   .needed = count_received ? detail::saturating_add(need, received_need(last)) : need,
                   .available = options.respect_capacity
                                    ? devices.capacity(last) - std::min(devices.capacity(last), held)
                                    : cap - std::min(cap, used)};
      p.outcome.message =
          "m-TOPO: vertex '" + vertex_name(graph, v) + "' needs " + format_bytes(p.outcome.needed) +
          (group_need[grouped[v]] != total_bytes(model, v) ? " (with its colocation group)" : "") +
          (p.outcome.needed != need ? " (with the tensors it would receive)" : "") +
          " but no device has room left (cap per device " + format_bytes(cap) +
          (options.respect_capacity ? ", capacity of the last device " + format_bytes(devices.capacity(m - 1))
                                    : std::string()) +
          ")";
      return p;
    }
    p.device[v] = d;
    group_device[grouped[v]] = d;
    held = detail::saturating_add(held, count_received ? detail::saturating_add(need, received_need(d)) : need);
    used += need;
    if (count_received && options.cache_transfers)
      for (const auto& [u, e] : entering)
        if (p.device[u] != d) received.emplace(u, model.edge_bytes(e), d);
  }
  return p;
}

#if defined(GANTRY_SEPARATE_COMPILATION)
// Compiled once for gantry's own types, in the unit that includes place/instances.hpp.
extern template placement m_topo(const graph&, const graph_model&, const cluster&, m_topo_options);
#endif

}  // namespace gantry
