// What every entry of the registry (place/placers.hpp) goes through: a memory-aware entry plans on
// the capacity grid (feasibility monotone in capacity), and an entry with a schedule of its own is
// never slower than one device.
// A family of the registry: defined inline here, or compiled once in a source file of its own with
// GANTRY_SEPARATE_COMPILATION.
#pragma once

#include <gantry/place/kahn_one_device.hpp>
#include <gantry/place/registry/common.hpp>

#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gantry {
namespace detail {

// A placer's own schedule is never slower than one device: where every vertex on the fastest device
// (least total compute time; the most memory among equals) finishes before the placer's own
// schedule, and fits that device's memory (place/list_scheduler.hpp, one device in Kahn order or
// the first ready vertex that fits), that is the result, saying so. Greedy placers can lose to it:
// on Baechi's GNMT with sequential links every list placer's own schedule took 140-211 ms where
// one device runs the step in 117 ms (each transfer waits for the one before it). O(n m) when the
// placer wins; one more run on one device otherwise. Nothing changes for a result without a
// schedule of its own (m-TOPO, Celeritas, EnumerativeOptimizer).
inline void no_slower_than_one_device(const placer_request& r, placer_result& result, std::string_view name) {
  if (!result.placement.ok() || !result.own_schedule || r.devices.device_count() < 2) return;
  const std::size_t n = r.g.vertex_count();
  device_id fastest = 0;
  seconds least = std::numeric_limits<seconds>::infinity();
  for (device_id d = 0; d < r.devices.device_count(); ++d) {
    seconds work = 0;
    for (vertex_id v = 0; v < n; ++v) work += r.model.compute_time(v, d);
    if (work < least || (work == least && r.devices.capacity(d) > r.devices.capacity(fastest))) {
      least = work;
      fastest = d;
    }
  }
  const seconds own = result.own_schedule->makespan;
  if (!(least < own)) return;
  auto alone = one_device_run(r.g, r.model, r.devices, {.cache_transfers = r.cache_transfers}, name, fastest, false);
  if (!alone)
    alone = one_device_run(r.g, r.model, r.devices, {.cache_transfers = r.cache_transfers}, name, fastest, true);
  if (!alone || !(alone->schedule.makespan < own)) return;
  const auto text = [](seconds t) {
    std::ostringstream out;
    out << t << " s";
    return out.str();
  };
  alone->placement.outcome.message = "placed every vertex on " + list_device_label(r.devices, fastest) +
                                     " instead: " + text(alone->schedule.makespan) + ", shorter than " +
                                     std::string(name) + "'s own schedule, " + text(own);
  result.placement = std::move(alone->placement);
  result.own_schedule = std::move(alone->schedule);
  // What the metadata said of the placer's own placement (a hand-off to m-ETF) no longer holds.
  std::erase_if(result.metadata, [](const auto& entry) { return entry.first == "etf_from_step"; });
}

// A memory-aware entry plans within capacity_grid: its first run within the grid point at or below
// each device's memory, its retries (memory_fallback(), Celeritas) within the points below. Every
// capacity a run with less memory tries, a run with more memory then tries too, so feasibility is
// monotone in capacity (a greedy placer is not by nature: with more memory m-ETF may pack a device
// fuller, and a later group fits nowhere). Every vertex in Kahn order on the device with the most
// memory, within all of it (place_in_kahn_order(), monotone as well: it fits where that order's
// peak fits), is the answer where nothing on the grid fits, so no memory-aware entry fails where
// one device runs the graph in Kahn order. The placer first tries quality_retries grid points
// below its first, without the one-device answer; where that fails and Kahn order fits, that is
// the answer (feasibility needs no more: a long way down the grid is not worth its runs), else the
// whole descent and the one-device answers run.
inline constexpr unsigned quality_retries = 8;
[[nodiscard]] inline std::function<placer_result(const placer_request&)> planned_on_grid(
    std::function<placer_result(const placer_request&)> place, std::string name) {
  return [place = std::move(place), name = std::move(name)](const placer_request& r) {
    const cluster snapped = on_capacity_grid(r.devices);
    const auto failed = [](const placer_result& p) {
      const status code = p.placement.outcome.code;
      return !p.placement.ok() && (code == status::out_of_memory || code == status::over_capacity);
    };
    placer_result out = place({r.g, r.model, snapped, r.cache_transfers, r.window, r.cluster_memory,
                               std::min(quality_retries, r.memory_retries), false});
    if (!failed(out) || !r.one_device_answer) return out;
    if (auto alone = place_in_kahn_order(r.g, r.model, r.devices, {.cache_transfers = r.cache_transfers}, name)) {
      alone->placement.outcome.message = out.placement.outcome.message + "; " + alone->placement.outcome.message;
      return placer_result{std::move(alone->placement), std::move(alone->schedule), std::move(out.metadata)};
    }
    if (r.memory_retries <= quality_retries) return out;
    return place({r.g, r.model, snapped, r.cache_transfers, r.window, r.cluster_memory, r.memory_retries, true});
  };
}

GANTRY_DECL void guard_placers(std::vector<placer_entry>& out) {
  for (auto& entry : out) {
    if (entry.respects_memory) entry.place = planned_on_grid(std::move(entry.place), entry.name);
    // Every entry that returns a schedule of its own (the list schedulers and SCT), judged within
    // the devices' whole memory.
    entry.place = [place = std::move(entry.place), name = entry.name](const placer_request& r) {
      placer_result result = place(r);
      no_slower_than_one_device(r, result, name);
      return result;
    };
  }
}

}  // namespace detail
}  // namespace gantry
