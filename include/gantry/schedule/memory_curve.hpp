// Bytes in use on each device over the whole of a finished schedule: a step curve per device,
// from the same events as compute_memory_profile() (detail::memory_events(), the memory rules of
// schedule/schedule.hpp), so the curve's highest step is the profile's peak and is first reached
// at its peak_time. Used for the memory counter tracks of Chrome traces.
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
  const auto memory = detail::memory_events(g, s, model, device_count);
  memory_curve curve(device_count);
  for (std::size_t d = 0; d < device_count; ++d) {
    const detail::memory_event* list = memory.events.get() + memory.first[d];
    const std::size_t count = memory.first[d + 1] - memory.first[d];
    auto& steps = curve[d];
    steps.push_back({0, memory.base[d]});
    byte_count now = memory.base[d];
    // Frees sort before allocations at the same time, so a time's level is the one after all
    // of its events; a step is recorded per time, when the level changed.
    for (std::size_t i = 0; i < count;) {
      const std::uint64_t time_bits = list[i].key >> 1;
      for (; i < count && (list[i].key >> 1) == time_bits; ++i)
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
