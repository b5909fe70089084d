// Critical Path list scheduling, DOPPLER's non-learning baseline (DOPPLER §7; Kwok & Ahmad 1999):
// the ready vertex with the largest bottom level goes first, onto the device where it can start
// earliest. Bottom levels use mean compute and transfer times. O((n + e) · m + n log n).
// Departure from the published baseline: its code selects in FIFO order by mistake; this is the
// intended rule.
#pragma once

#include <gantry/order/levels.hpp>
#include <gantry/place/list_scheduler.hpp>

namespace gantry {

[[nodiscard]] inline list_policy critical_path_policy(std::vector<seconds> bottom_levels) {
  return {.name = "Critical Path",
          .selection = vertex_selection::highest_priority,
          .device = device_selection::earliest_start,
          .insertion = false,
          .priority = std::move(bottom_levels)};
}

// Named critical_path_schedule because critical_path() (order/levels.hpp) is the path's length.
// Memory is respected when options.respect_memory is set.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result critical_path_schedule(const G& graph, const M& model, const D& devices,
                                                          list_options options = {}) {
  return list_schedule(graph, model, devices, critical_path_policy(bottom_level(graph, model, devices)),
                       std::move(options));
}

}  // namespace gantry
