// Celeritas's placers (Order-Place, Adjusting Placement, the whole Celeritas pipeline, the paper's
// pipeline alone over a ladder of windows), DOPPLER's EnumerativeOptimizer, and place_fused() with
// place_kernighan_fused().
// A family of the registry (place/placers.hpp): defined inline here, or compiled once in a source
// file of its own with GANTRY_SEPARATE_COMPILATION.
#pragma once

#include <gantry/fusion/coarsen.hpp>
#include <gantry/fusion/kernighan.hpp>
#include <gantry/place/adjusting_placement.hpp>
#include <gantry/place/celeritas.hpp>
#include <gantry/place/enumerative.hpp>
#include <gantry/place/order_place.hpp>
#include <gantry/place/registry/common.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gantry {
namespace detail {

GANTRY_DECL void add_celeritas_placers(std::vector<placer_entry>& out) {
  const auto order_place_run = [](const placer_request& r, list_options o) {
    return order_place(r.g, r.model, r.devices, std::move(o));
  };
  const auto adjusting_run = [](const placer_request& r, list_options o) {
    o.best_effort = true;
    return adjusting_placement(r.g, r.model, r.devices, std::move(o));
  };
  add_list_entry(out, "order-place",
                 "Celeritas's Order-Place: CPD-TOPO order fills one device to its memory, then the next", true,
                 order_place_run);
  add_list_entry(out, "adjusting-placement",
                 "Celeritas's Adjusting Placement: CPD-TOPO order, stays on the previous device unless another starts "
                 "earlier by more than the largest outgoing transfer; best effort when memory runs out",
                 true, adjusting_run);
  out.push_back({"celeritas",
                 "Celeritas: CPD-TOPO, Kernighan fusion (window, cluster memory), Adjusting Placement of the "
                 "clusters; best effort when memory runs out; beside it the unfused graph on an earliest-start "
                 "walk, the faster kept",
                 true, [](const placer_request& r) {
                   auto result = celeritas(r.g, r.devices,
                                           {.window = r.window,
                                            .cluster_memory = r.cluster_memory,
                                            .cache_transfers = r.cache_transfers,
                                            .memory_retries = r.memory_retries,
                                            .one_device_answer = r.one_device_answer});
                   return placer_result{std::move(result.placement), std::nullopt, {}};
                 }});
  out.push_back({"celeritas-paper",
                 "Celeritas's own pipeline alone (CPD-TOPO, Kernighan fusion, Adjusting Placement of the clusters), "
                 "run with each window of a ladder from --window down to 1, the fastest placement kept",
                 true, [](const placer_request& r) {
                   auto result = celeritas(r.g, r.devices,
                                           {.window = r.window,
                                            .windows = celeritas_window_ladder(r.window),
                                            .cluster_memory = r.cluster_memory,
                                            .cache_transfers = r.cache_transfers,
                                            .also_unfused = false,
                                            .memory_retries = r.memory_retries,
                                            .one_device_answer = r.one_device_answer});
                   // The kept window and the clusters it made go into the placement file's metadata
                   // (none for the one-device answer).
                   std::vector<std::pair<std::string, std::string>> metadata;
                   if (result.ok() && result.window > 0)
                     metadata = {
                         {"celeritas_window", std::to_string(result.window)},
                         {"celeritas_clusters", std::to_string(result.fusion.coarsening.coarse.vertex_count())}};
                   return placer_result{std::move(result.placement), std::nullopt, std::move(metadata)};
                 }});
  out.push_back({"enumerative",
                 "DOPPLER's EnumerativeOptimizer: meta-ops (from vertex names \"op[i,j]\") in topological order, "
                 "each shard assignment tried, the one with the cheapest input transfers kept",
                 false, [](const placer_request& r) {
                   return placer_result{
                       enumerative_optimizer(r.g, r.model, r.devices, doppler_meta_ops(r.g),
                                             {.cache_transfers = r.cache_transfers, .group = colocation_groups(r.g)}),
                       std::nullopt,
                       {}};
                 }});
}

}  // namespace detail

// Declared, and said what it does, in place/placers.hpp.
GANTRY_DECL placer_result place_fused(const placer_entry& entry, const placer_request& r, const coarsening& fused,
                                      std::string_view fusion) {
  const graph& coarse = fused.coarse;
  const graph_model coarse_model(coarse, r.devices);
  // The entry on the coarse graph, its placement expanded to r.g.
  const auto on_coarse = [&](bool one_device_answer) {
    placer_result placed = entry.place({coarse, coarse_model, r.devices, r.cache_transfers, r.window, r.cluster_memory,
                                        r.memory_retries, one_device_answer});
    placer_result out;
    if (placed.placement.device.size() == coarse.vertex_count()) {
      out = {expand(fused, placed.placement), std::nullopt, std::move(placed.metadata)};
      out.metadata.emplace_back("fused_vertices",
                                std::to_string(coarse.vertex_count()) + " of " + std::to_string(r.g.vertex_count()));
    } else {  // a failure that placed nothing
      out.placement = std::move(placed.placement);
      out.placement.device.assign(r.g.vertex_count(), no_device);
      out.placement.order.clear();
      if (out.placement.outcome.vertex != no_vertex && out.placement.outcome.vertex < coarse.vertex_count())
        out.placement.outcome.vertex = fused.members[out.placement.outcome.vertex].front();
    }
    return out;
  };
  // A memory-aware entry's one-device answer for the coarse graph comes last, after the unfused
  // graph's own fallbacks: a fused graph that fits only on one device does not leave the unfused
  // graph there.
  placer_result out = on_coarse(!entry.respects_memory && r.one_device_answer);
  const status code = out.placement.outcome.code;
  if (out.placement.ok() || !entry.respects_memory || (code != status::out_of_memory && code != status::over_capacity))
    return out;
  placer_result unfused = entry.place(r);
  if (!unfused.placement.ok()) {
    if (!r.one_device_answer) return out;
    placer_result alone = on_coarse(true);
    return alone.placement.ok() ? alone : out;
  }
  std::string why =
      std::string(fusion) + " left no room (" + out.placement.outcome.message + "); placed the unfused graph instead";
  unfused.placement.outcome.message =
      unfused.placement.outcome.message.empty() ? why : why + "; " + unfused.placement.outcome.message;
  unfused.metadata.emplace_back("fusion", std::move(why));
  return unfused;
}

// Declared, and said what it does, in place/placers.hpp.
GANTRY_DECL placer_result place_kernighan_fused(const placer_entry& entry, const placer_request& r) {
  const byte_count cap = r.cluster_memory.value_or(quarter_device_memory(r.devices));
  const kernighan_fusion fused = fuse_kernighan(
      r.g, r.model, r.devices, {.window = r.window, .cluster_memory = cap, .group = colocation_groups(r.g)});
  return place_fused(entry, r, fused.coarsening, "Kernighan fusion");
}

}  // namespace gantry
