// Memory over time of a finished schedule, by the rules in schedule/schedule.hpp, and the summary
// numbers of a schedule. O(n + e + t) plus sorting each device's allocation events, for t transfers.
#pragma once

#include <gantry/core/radix_sort.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

namespace gantry {

namespace detail {
inline constexpr std::uint32_t no_transfer = std::numeric_limits<std::uint32_t>::max();

// For each edge, the index of the transfer that serves it (no_transfer for same-device edges and
// for cross-device edges that no transfer serves). O(n + e·k + t) for at most k transfers of one
// tensor: transfers are bucketed by tensor, no sorting.
template <class M>
std::vector<std::uint32_t> serving_transfers(const csr_graph& g, const schedule& s, const M& model) {
  const std::size_t n = g.vertex_count();
  std::vector<std::uint32_t> serving(g.edge_count(), no_transfer);
  std::vector<std::uint32_t> first(n + 1, 0);
  for (const auto& t : s.transfers)
    if (t.tensor < n) ++first[t.tensor + 1];
  for (std::size_t v = 0; v < n; ++v) first[v + 1] += first[v];
  std::vector<std::uint32_t> by_tensor(first[n]);
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::uint32_t i = 0; i < s.transfers.size(); ++i) {
      const auto& t = s.transfers[i];
      if (t.tensor >= n) continue;
      by_tensor[fill[t.tensor]++] = i;
      if (t.edge < serving.size() && serving[t.edge] == no_transfer && g.source(t.edge) == t.tensor &&
          s.device[g.target(t.edge)] == t.to)
        serving[t.edge] = i;
    }
  }
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const auto u = g.source(e), v = g.target(e);
    if (serving[e] != no_transfer || s.device[u] == s.device[v]) continue;
    // The earliest-finishing copy of u's tensor on v's device: of the edge's own size if there is
    // one, else of any larger size.
    const byte_count bytes = model.edge_bytes(e);
    std::uint32_t best = no_transfer;
    const auto better = [&](const transfer& t, const transfer& than) {
      const bool exact = t.bytes == bytes, than_exact = than.bytes == bytes;
      return exact != than_exact ? exact : t.finish < than.finish;
    };
    for (std::uint32_t k = first[u]; k < first[u + 1]; ++k) {
      const auto& t = s.transfers[by_tensor[k]];
      if (t.to == s.device[v] && t.bytes >= bytes && (best == no_transfer || better(t, s.transfers[best])))
        best = by_tensor[k];
    }
    serving[e] = best;
  }
  return serving;
}

// Sort key of a memory event: the time's bit pattern (order-preserving for non-negative doubles)
// shifted left, with frees (0) before allocations (1) at the same time.
inline std::uint64_t memory_event_key(seconds time, bool is_alloc) {
  const double t = time + 0.0;  // -0.0 becomes +0.0
  std::uint64_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  return (bits << 1) | static_cast<std::uint64_t>(is_alloc);
}
struct memory_event {
  std::uint64_t key;  // memory_event_key
  byte_count bytes;
};

// Sorts events by key: std::sort for short runs, else a radix sort (about five times faster on
// the hundreds of thousands of events of a 100k-vertex schedule).
inline void sort_memory_events(memory_event* events, std::size_t n, std::vector<memory_event>& scratch) {
  if (n < 1024) {
    std::sort(events, events + n, [](const memory_event& a, const memory_event& b) { return a.key < b.key; });
    return;
  }
  radix_sort_by_key(events, n, scratch);
}

// The memory a schedule holds, by the rules in schedule/schedule.hpp: per device, the persistent
// bytes held the whole step and the allocation and free events of everything else, sorted by
// memory_event_key (frees before allocations at one time). The one place the rules become numbers:
// peak memory, validate()'s memory check and the memory curves of traces all read these events.
struct schedule_memory {
  std::vector<byte_count> base;            // per device
  std::vector<std::size_t> first;          // device d's events are events[first[d], first[d + 1])
  std::unique_ptr<memory_event[]> events;  // first.back() of them (not zeroed before they are written)
  [[nodiscard]] static bool is_allocation(const memory_event& e) noexcept { return (e.key & 1) != 0; }
  [[nodiscard]] static seconds time_of(const memory_event& e) noexcept {
    const std::uint64_t bits = e.key >> 1;
    seconds time;
    std::memcpy(&time, &bits, sizeof time);
    return time;
  }
};

// Requires a schedule whose device, start and finish vectors cover every vertex and whose device
// ids are below device_count (validate() checks that first), and `serving` as serving_transfers()
// gives it for that schedule. O(n + e + t) plus sorting each device's events (unless `sorted` is
// false: each device's events are then in no particular order).
template <class M>
[[nodiscard]] schedule_memory memory_events(const csr_graph& g, const schedule& s, const M& model,
                                            std::size_t device_count, const std::vector<std::uint32_t>& serving,
                                            bool sorted = true) {
  const std::size_t n = g.vertex_count();
  // When each output and each received copy is last needed.
  std::vector<seconds> output_end(s.finish.begin(), s.finish.end());
  std::vector<seconds> transfer_end(s.transfers.size());
  for (std::size_t i = 0; i < s.transfers.size(); ++i) transfer_end[i] = s.transfers[i].finish;
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const auto u = g.source(e), v = g.target(e);
    if (s.device[u] == s.device[v]) output_end[u] = std::max(output_end[u], s.finish[v]);
    else if (serving[e] != no_transfer) transfer_end[serving[e]] = std::max(transfer_end[serving[e]], s.finish[v]);
  }
  for (const auto& t : s.transfers)
    if (t.tensor < n && t.from == s.device[t.tensor]) output_end[t.tensor] = std::max(output_end[t.tensor], t.finish);

  // Memory is held over half-open intervals [from, to): an empty interval holds nothing. A vertex's
  // temporary and output bytes are allocated together, at its start. Two passes: count each
  // device's events, then write them into its bucket.
  schedule_memory out;
  out.base.assign(device_count, 0);
  out.first.assign(device_count + 1, 0);
  const auto vertex_holds = [&](vertex_id v, auto&& emit) {
    const seconds start = s.start[v];
    const byte_count temporary = start < s.finish[v] ? model.temporary_bytes(v) : 0;
    const byte_count output = start < output_end[v] ? model.output_bytes(v) : 0;
    if (temporary + output == 0) return;
    emit(memory_event_key(start, true), temporary + output);
    if (temporary != 0) emit(memory_event_key(s.finish[v], false), temporary);
    if (output != 0) emit(memory_event_key(output_end[v], false), output);
  };
  for (vertex_id v = 0; v < n; ++v) {
    const auto d = s.device[v];
    out.base[d] += model.persistent_bytes(v);
    vertex_holds(v, [&](std::uint64_t, byte_count) { ++out.first[d + 1]; });
  }
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const auto& t = s.transfers[i];
    if (t.to < device_count && t.bytes != 0 && t.start < transfer_end[i]) out.first[t.to + 1] += 2;
  }
  for (std::size_t d = 0; d < device_count; ++d) out.first[d + 1] += out.first[d];
  out.events.reset(new memory_event[out.first[device_count]]);
  {
    std::vector<std::size_t> fill(out.first.begin(), out.first.end() - 1);
    for (vertex_id v = 0; v < n; ++v) {
      auto& at = fill[s.device[v]];
      vertex_holds(v, [&](std::uint64_t key, byte_count bytes) { out.events[at++] = {key, bytes}; });
    }
    for (std::size_t i = 0; i < s.transfers.size(); ++i) {
      const auto& t = s.transfers[i];
      if (t.to >= device_count || t.bytes == 0 || !(t.start < transfer_end[i])) continue;
      out.events[fill[t.to]++] = {memory_event_key(t.start, true), t.bytes};
      out.events[fill[t.to]++] = {memory_event_key(transfer_end[i], false), t.bytes};
    }
  }
  if (!sorted) return out;
  std::vector<memory_event> scratch;
  for (std::size_t d = 0; d < device_count; ++d)
    sort_memory_events(out.events.get() + out.first[d], out.first[d + 1] - out.first[d], scratch);
  return out;
}
template <class M>
[[nodiscard]] schedule_memory memory_events(const csr_graph& g, const schedule& s, const M& model,
                                            std::size_t device_count) {
  return memory_events(g, s, model, device_count, serving_transfers(g, s, model));
}
}  // namespace detail

struct memory_profile {
  std::vector<byte_count> peak;    // per device
  std::vector<seconds> peak_time;  // per device: when the peak was first reached
};

namespace detail {
// Scans sorted events from `now` bytes held, raising `peak` (and its first `time`) where they go
// above it.
inline void scan_peak(byte_count now, const memory_event* events, std::size_t count, byte_count& peak, seconds& time) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto& event = events[i];
    if (!schedule_memory::is_allocation(event)) {
      now -= event.bytes;
    } else if ((now += event.bytes) > peak) {
      peak = now;
      time = schedule_memory::time_of(event);
    }
  }
}
// The peak of one device's sorted events over `base` held throughout, and when it was first
// reached (time 0 when never above base).
inline void peak_of(byte_count base, const memory_event* events, std::size_t count, byte_count& peak, seconds& time) {
  peak = base;
  time = 0;
  scan_peak(base, events, count, peak, time);
}

// peak_of() for a device's events in any order, sorting only the stretches of time that can hold
// the peak. The events go into buckets by time (monotone in the key, so a bucket's events all
// come before the next bucket's in sorted order). The level at each bucket boundary is reached,
// so the highest one is a lower bound on the peak; a bucket whose level at its start plus all its
// allocations stays below that bound cannot hold the peak and is skipped. The others are sorted
// and scanned in time order from their start level, which finds the first time the peak is
// reached, as a scan of everything would. Equal keys may come in any order: allocations at one
// time end at the same level, whatever their order. May sort the events in place.
inline void peak_of_unsorted(byte_count base, memory_event* events, std::size_t count, byte_count& peak, seconds& time,
                             std::vector<memory_event>& scratch) {
  const auto sorted_peak = [&] {
    sort_memory_events(events, count, scratch);
    peak_of(base, events, count, peak, time);
  };
  constexpr std::size_t buckets = 1024;
  if (count < 8 * buckets) return sorted_peak();
  double low = schedule_memory::time_of(events[0]), high = low;
  for (std::size_t i = 1; i < count; ++i) {
    const double t = schedule_memory::time_of(events[i]);
    low = std::min(low, t);
    high = std::max(high, t);
  }
  const double scale = static_cast<double>(buckets) / (high - low);
  if (!std::isfinite(low) || !std::isfinite(high) || !(high > low) || !std::isfinite(scale)) return sorted_peak();
  const auto bucket_of = [&](const memory_event& e) {
    return std::min(buckets - 1, static_cast<std::size_t>((schedule_memory::time_of(e) - low) * scale));
  };
  std::vector<std::size_t> first(buckets + 1, 0);
  std::vector<byte_count> allocated(buckets, 0), freed(buckets, 0);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t b = bucket_of(events[i]);
    ++first[b + 1];
    byte_count& sum = schedule_memory::is_allocation(events[i]) ? allocated[b] : freed[b];
    if (sum + events[i].bytes < sum) return sorted_peak();  // overflow: not a real schedule's bytes
    sum += events[i].bytes;
  }
  // Levels at bucket starts; a level that would fall below zero or overflow takes the plain path.
  std::vector<byte_count> level(buckets + 1);
  level[0] = base;
  byte_count bound = base;
  for (std::size_t b = 0; b < buckets; ++b) {
    const byte_count high_water = level[b] + allocated[b];
    if (high_water < level[b] || high_water < freed[b]) return sorted_peak();
    level[b + 1] = high_water - freed[b];
    bound = std::max(bound, level[b + 1]);
    first[b + 1] += first[b];
  }
  scratch.resize(count);
  {
    std::vector<std::size_t> fill(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < count; ++i) scratch[fill[bucket_of(events[i])]++] = events[i];
  }
  peak = base;
  time = 0;
  std::vector<memory_event> bucket_scratch;
  for (std::size_t b = 0; b < buckets; ++b) {
    if (level[b] + allocated[b] < bound) continue;
    memory_event* part = scratch.data() + first[b];
    const std::size_t size = first[b + 1] - first[b];
    sort_memory_events(part, size, bucket_scratch);
    scan_peak(level[b], part, size, peak, time);
  }
}

// The peak of each device's events, and when it was first reached.
[[nodiscard]] inline memory_profile profile_of(const schedule_memory& memory) {
  const std::size_t device_count = memory.base.size();
  memory_profile profile{memory.base, std::vector<seconds>(device_count, 0)};
  for (std::size_t d = 0; d < device_count; ++d)
    peak_of(memory.base[d], memory.events.get() + memory.first[d], memory.first[d + 1] - memory.first[d],
            profile.peak[d], profile.peak_time[d]);
  return profile;
}
}  // namespace detail

// Peak memory per device of a finished schedule, and when it was first reached. Requires what
// detail::memory_events() requires.
template <memory_model M>
[[nodiscard]] memory_profile compute_memory_profile(const csr_graph& g, const schedule& s, const M& model,
                                                    std::size_t device_count) {
  auto memory = detail::memory_events(g, s, model, device_count, detail::serving_transfers(g, s, model), false);
  memory_profile profile{memory.base, std::vector<seconds>(device_count, 0)};
  std::vector<detail::memory_event> scratch;
  for (std::size_t d = 0; d < device_count; ++d)
    detail::peak_of_unsorted(memory.base[d], memory.events.get() + memory.first[d],
                             memory.first[d + 1] - memory.first[d], profile.peak[d], profile.peak_time[d], scratch);
  return profile;
}

// Fills makespan, busy time, bytes moved and the per-device order of s; fills peak memory from the
// memory profile unless with_memory is false (the simulator tracks it while it runs). A caller
// that has every vertex sorted by (start, finish) may pass it as by_start (ties in any order):
// each device's order is then read off it in O(n) instead of sorted.
template <memory_model M>
void summarize(schedule& s, const csr_graph& g, const M& model, std::size_t device_count, bool with_memory = true,
               std::span<const vertex_id> by_start = {}) {
  s.makespan = 0;
  s.busy.assign(device_count, 0);
  s.bytes_moved = 0;
  s.order.assign(device_count, {});
  std::vector<std::size_t> count(device_count, 0);
  for (vertex_id v = 0; v < s.start.size(); ++v) {
    s.makespan = std::max(s.makespan, s.finish[v]);
    s.busy[s.device[v]] += s.finish[v] - s.start[v];
    ++count[s.device[v]];
  }
  for (std::size_t d = 0; d < device_count; ++d) s.order[d].reserve(count[d]);
  const auto earlier = [&](vertex_id a, vertex_id b) {
    return std::tie(s.start[a], s.finish[a]) < std::tie(s.start[b], s.finish[b]);
  };
  if (by_start.size() == s.start.size()) {
    for (const vertex_id v : by_start) s.order[s.device[v]].push_back(v);
    // Ties by vertex id, as the stable sort below leaves them; a list out of order is sorted.
    for (auto& list : s.order) {
      bool sorted = true;
      for (std::size_t i = 0; i < list.size() && sorted;) {
        std::size_t end = i + 1;
        while (end < list.size() && !earlier(list[i], list[end]) && !earlier(list[end], list[i])) ++end;
        sorted = end == list.size() || earlier(list[i], list[end]);
        std::sort(list.begin() + static_cast<std::ptrdiff_t>(i), list.begin() + static_cast<std::ptrdiff_t>(end));
        i = end;
      }
      if (!sorted) {
        std::sort(list.begin(), list.end());
        std::stable_sort(list.begin(), list.end(), earlier);
      }
    }
  } else {
    for (vertex_id v = 0; v < s.start.size(); ++v) s.order[s.device[v]].push_back(v);
    for (auto& list : s.order) std::stable_sort(list.begin(), list.end(), earlier);
  }
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
