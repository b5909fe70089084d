// Memory over time of a finished schedule, by the rules in schedule/schedule.hpp, and the summary
// numbers of a schedule. O((n + e + t) log(n + e + t)) for t transfers.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace gantry {

namespace detail {
inline constexpr std::uint32_t no_transfer = std::numeric_limits<std::uint32_t>::max();

// For each edge, the index of the transfer that serves it (no_transfer for same-device edges and
// for cross-device edges that no transfer serves).
inline std::vector<std::uint32_t> serving_transfers(const csr_graph& g, const schedule& s) {
  std::vector<std::uint32_t> serving(g.edge_count(), no_transfer);
  std::vector<std::uint32_t> by_tensor(s.transfers.size());
  for (std::uint32_t i = 0; i < by_tensor.size(); ++i) by_tensor[i] = i;
  const auto key = [&](std::uint32_t i) {
    const auto& t = s.transfers[i];
    return std::tuple(t.tensor, t.to, t.finish, i);
  };
  std::sort(by_tensor.begin(), by_tensor.end(), [&](auto a, auto b) { return key(a) < key(b); });
  for (std::uint32_t i = 0; i < s.transfers.size(); ++i) {
    const auto e = s.transfers[i].edge;
    if (e < serving.size() && serving[e] == no_transfer && g.source(e) == s.transfers[i].tensor &&
        s.device[g.target(e)] == s.transfers[i].to)
      serving[e] = i;
  }
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const auto u = g.source(e), v = g.target(e);
    if (serving[e] != no_transfer || s.device[u] == s.device[v]) continue;
    const auto it = std::lower_bound(by_tensor.begin(), by_tensor.end(), std::pair(u, s.device[v]),
                                     [&](std::uint32_t i, const std::pair<vertex_id, device_id>& k) {
                                       const auto& t = s.transfers[i];
                                       return std::pair(t.tensor, t.to) < k;
                                     });
    if (it != by_tensor.end() && s.transfers[*it].tensor == u && s.transfers[*it].to == s.device[v])
      serving[e] = *it;
  }
  return serving;
}
}  // namespace detail

struct memory_profile {
  std::vector<byte_count> peak;       // per device
  std::vector<seconds> peak_time;     // per device: when the peak was first reached
};

// Requires a schedule whose device, start and finish vectors cover every vertex and whose device
// ids are below device_count (validate() checks that first).
template <memory_model M>
[[nodiscard]] memory_profile compute_memory_profile(const csr_graph& g, const schedule& s, const M& model,
                                                    std::size_t device_count) {
  const auto serving = detail::serving_transfers(g, s);
  const std::size_t n = g.vertex_count();
  struct event {
    seconds time;
    int is_alloc;  // frees (0) sort before allocations (1) at the same time
    byte_count bytes;
    device_id device;
  };
  std::vector<event> events;
  events.reserve(4 * n + 2 * s.transfers.size());
  std::vector<byte_count> base(device_count, 0);
  std::vector<seconds> output_end(s.finish.begin(), s.finish.end());
  std::vector<seconds> transfer_end(s.transfers.size());
  for (std::size_t i = 0; i < s.transfers.size(); ++i) transfer_end[i] = s.transfers[i].finish;
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const auto u = g.source(e), v = g.target(e);
    if (s.device[u] == s.device[v]) output_end[u] = std::max(output_end[u], s.finish[v]);
    else if (serving[e] != detail::no_transfer)
      transfer_end[serving[e]] = std::max(transfer_end[serving[e]], s.finish[v]);
  }
  for (const auto& t : s.transfers)
    if (t.tensor < n && t.from == s.device[t.tensor]) output_end[t.tensor] = std::max(output_end[t.tensor], t.finish);
  // Memory is held over half-open intervals [from, to): an empty interval holds nothing.
  const auto hold = [&](seconds from, seconds to, byte_count bytes, device_id d) {
    if (bytes == 0 || !(from < to)) return;
    events.push_back({from, 1, bytes, d});
    events.push_back({to, 0, bytes, d});
  };
  for (vertex_id v = 0; v < n; ++v) {
    const auto d = s.device[v];
    base[d] += model.persistent_bytes(v);
    hold(s.start[v], s.finish[v], model.temporary_bytes(v), d);
    hold(s.start[v], output_end[v], model.output_bytes(v), d);
  }
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const auto& t = s.transfers[i];
    if (t.to < device_count) hold(t.start, transfer_end[i], t.bytes, t.to);
  }
  std::sort(events.begin(), events.end(), [](const event& a, const event& b) {
    return std::tie(a.time, a.is_alloc) < std::tie(b.time, b.is_alloc);
  });
  memory_profile profile{base, std::vector<seconds>(device_count, 0)};
  std::vector<byte_count> now = base;
  for (const auto& ev : events) {
    if (ev.is_alloc) {
      now[ev.device] += ev.bytes;
      if (now[ev.device] > profile.peak[ev.device]) {
        profile.peak[ev.device] = now[ev.device];
        profile.peak_time[ev.device] = ev.time;
      }
    } else {
      now[ev.device] -= ev.bytes;
    }
  }
  return profile;
}

// Fills makespan, busy time, bytes moved and the per-device order of s; fills peak memory from the
// memory profile unless with_memory is false (the simulator tracks it while it runs).
template <memory_model M>
void summarize(schedule& s, const csr_graph& g, const M& model, std::size_t device_count, bool with_memory = true) {
  s.makespan = 0;
  s.busy.assign(device_count, 0);
  s.bytes_moved = 0;
  s.order.assign(device_count, {});
  for (vertex_id v = 0; v < s.start.size(); ++v) {
    s.makespan = std::max(s.makespan, s.finish[v]);
    s.busy[s.device[v]] += s.finish[v] - s.start[v];
    s.order[s.device[v]].push_back(v);
  }
  for (auto& list : s.order)
    std::stable_sort(list.begin(), list.end(), [&](vertex_id a, vertex_id b) {
      return std::tie(s.start[a], s.finish[a]) < std::tie(s.start[b], s.finish[b]);
    });
  for (const auto& t : s.transfers) {
    s.makespan = std::max(s.makespan, t.finish);
    s.bytes_moved += t.bytes;
  }
  if (with_memory) {
    auto profile = compute_memory_profile(g, s, model, device_count);
    s.peak_memory = std::move(profile.peak);
    s.peak_memory_time = std::move(profile.peak_time);
  }
}

}  // namespace gantry
