// What the registry's families share (place/placers.hpp): a list scheduler as an entry, and the
// capacity grid memory-aware entries plan on.
#pragma once

#include <gantry/model/capacity_scaled.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/placers.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gantry::detail {

// A list scheduler as an entry: colocation groups named in the graph are honoured. A memory-aware
// entry other than m-ETF that runs out of memory, after its own fallbacks (memory_fallback() in
// place/list_scheduler.hpp), returns m-ETF's placement where that fits, saying so: greedy policies
// fill devices differently, and on seeded random DAGs m-ETF fits in 69 of 10,000 cases where one
// of the others does not (Order-Place 38, m-CPOP 8, Adjusting Placement 8, m-HEFT 6, m-Critical
// Path 6, m-PEFT 3), as on Baechi's GNMT at 720 to 750 MB per device for m-PEFT.
template <class Run>
placer_entry list_entry(std::string name, std::string description, bool memory, Run run) {
  const bool rescue = memory && std::string_view(name) != std::string_view("m-etf");
  return {std::move(name), std::move(description), memory, [memory, rescue, run](const placer_request& r) {
            list_options options{.respect_memory = memory,
                                 .cache_transfers = r.cache_transfers,
                                 .group = colocation_groups(r.g),
                                 .memory_retries = r.memory_retries,
                                 .one_device_answer = r.one_device_answer};
            list_schedule_result out = run(r, rescue ? options : std::move(options));
            const status code = out.placement.outcome.code;
            if (rescue && (code == status::out_of_memory || code == status::over_capacity)) {
              options.best_effort = false;
              list_schedule_result etf_result = m_etf(r.g, r.model, r.devices, std::move(options));
              if (etf_result.ok()) {
                etf_result.placement.outcome.message =
                    out.placement.outcome.message + "; placed by m-ETF instead, which fits";
                out = std::move(etf_result);
              }
            }
            placer_result result{std::move(out.placement), std::nullopt};
            if (result.placement.ok()) result.own_schedule = std::move(out.schedule);
            return result;
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
