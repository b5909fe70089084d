// What the registry's families share (place/placers.hpp): a list scheduler as an entry, and the
// capacity grid memory-aware entries plan on.
#pragma once

#include <gantry/model/capacity_scaled.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/placers.hpp>

#include <string>
#include <utility>
#include <vector>

namespace gantry::detail {

// A list run as an entry's result: its schedule beside a placement that fits (a run that has one:
// m-TOPO's own placements come without), and where memory_fallback() handed the run to m-ETF, the
// metadata "etf_from_step": "K of n", K the placer's own placements kept.
[[nodiscard]] inline placer_result list_entry_result(list_schedule_result out, std::size_t n) {
  placer_result result{std::move(out.placement), std::nullopt, {}};
  if (!result.placement.ok()) return result;
  if (out.schedule.device.size() == n) result.own_schedule = std::move(out.schedule);
  if (out.etf_from_step)
    result.metadata.emplace_back("etf_from_step", std::to_string(*out.etf_from_step) + " of " + std::to_string(n));
  return result;
}

// A list scheduler as an entry: colocation groups named in the graph are honoured. A memory-aware
// run that finds no device for a vertex takes its own fallbacks (memory_fallback() in
// place/list_scheduler.hpp), the hand-off to m-ETF among them.
template <class Run>
placer_entry list_entry(std::string name, std::string description, bool memory, Run run) {
  return {std::move(name), std::move(description), memory, [memory, run](const placer_request& r) {
            return list_entry_result(run(r, list_options{.respect_memory = memory,
                                                         .cache_transfers = r.cache_transfers,
                                                         .group = colocation_groups(r.g),
                                                         .memory_retries = r.memory_retries,
                                                         .one_device_answer = r.one_device_answer}),
                                     r.g.vertex_count());
          }};
}

// Appends list_entry(...) to a family's entries.
template <class Run>
void add_list_entry(std::vector<placer_entry>& out, std::string name, std::string description, bool memory, Run run) {
  out.push_back(list_entry(std::move(name), std::move(description), memory, std::move(run)));
}

// `devices` with each finite capacity rounded down to the largest point of capacity_grid at or
// below it (model/capacity_scaled.hpp): at most 2.2% less.
[[nodiscard]] inline cluster on_capacity_grid(cluster devices) {
  for (device_id d = 0; d < devices.device_count(); ++d) {
    const byte_count full = devices.capacity(d);
    if (full == unlimited_memory || full == 0) continue;
    devices.set_capacity(d, capacity_grid::point(*capacity_grid::index_below(full + 1)));
  }
  return devices;
}

}  // namespace gantry::detail
