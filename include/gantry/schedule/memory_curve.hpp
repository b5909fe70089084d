// Bytes in use on each device over the whole of a finished schedule: a step curve per device,
// by the memory rules of schedule/schedule.hpp as compute_memory_profile() applies them (the
// same holds, the same event order), so the curve's highest step is the profile's peak and is
// first reached at its peak_time. Used for the memory counter tracks of Chrome traces.
// O(n + e + t) plus sorting each device's events, for t transfers.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

namespace gantry {

// From `time` on (until the next step), `bytes` are in use.
struct memory_step {
  seconds time = 0;
  byte_count bytes = 0;
  friend bool operator==(const memory_step&, const memory_step&) = default;
};

// curve[d]: device d's steps in increasing time, the first at time 0 (its persistent bytes), each
// with a different level from the one before; the last returns to the persistent bytes.
using memory_curve = std::vector<std::vector<memory_step>>;

// Requires what compute_memory_profile() requires: a schedule whose device, start and finish
// vectors cover every vertex, with device ids below device_count (validate() checks that first).
template <memory_model M>
[[nodiscard]] memory_curve compute_memory_curve(const csr_graph& g, const schedule& s, const M& model,
                                                std::size_t device_count) {
  // The holds of compute_memory_profile(): persistent bytes from time 0 to the end; temporary
  // bytes while the vertex runs; the output from its start until its last same-device consumer
  // and its last outgoing copy finish; a received copy from its start until the last consumer it
  // serves finishes. Intervals are half-open, so an empty one holds nothing.
  const auto serving = detail::serving_transfers(g, s, model);
  const std::size_t n = g.vertex_count();
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

  std::vector<byte_count> base(device_count, 0);
  std::vector<std::vector<detail::memory_event>> events(device_count);
  const auto hold = [&](seconds from, seconds to, byte_count bytes, device_id d) {
    if (bytes == 0 || !(from < to)) return;
    events[d].push_back({detail::memory_event_key(from, true), bytes});
    events[d].push_back({detail::memory_event_key(to, false), bytes});
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

  memory_curve curve(device_count);
  std::vector<detail::memory_event> scratch;
  for (std::size_t d = 0; d < device_count; ++d) {
    auto& list = events[d];
    detail::sort_memory_events(list.data(), list.size(), scratch);
    auto& steps = curve[d];
    steps.push_back({0, base[d]});
    byte_count now = base[d];
    // Frees sort before allocations at the same time, so a time's level is the one after all
    // of its events; a step is recorded per time, when the level changed.
    for (std::size_t i = 0; i < list.size();) {
      const std::uint64_t time_bits = list[i].key >> 1;
      for (; i < list.size() && (list[i].key >> 1) == time_bits; ++i)
        now = (list[i].key & 1) ? now + list[i].bytes : now - list[i].bytes;
      seconds time = 0;
      std::memcpy(&time, &time_bits, sizeof time);
      if (now == steps.back().bytes) continue;
      if (steps.back().time == time) steps.back().bytes = now;  // events at time 0
      else steps.push_back({time, now});
    }
  }
  return curve;
}

}  // namespace gantry
