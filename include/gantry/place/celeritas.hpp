// Celeritas (Celeritas §5): CPD-TOPO order -> Kernighan fusion along it (fusion/kernighan.hpp) ->
// Adjusting Placement of the coarse graph (place/adjusting_placement.hpp), memory respected with
// best effort -> the coarse placement expanded to the original graph. On a gantry::graph with the
// default model; colocation groups named in the graph are carried to the coarse graph and honoured.
// O((n + e) log n + n·R + e) for the order and the fusion, then Adjusting Placement on the k
// clusters.
#pragma once

#include <gantry/fusion/kernighan.hpp>
#include <gantry/graph/coarsen.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/adjusting_placement.hpp>
#include <gantry/place/colocation.hpp>

#include <optional>
#include <string>

namespace gantry {

struct celeritas_options {
  std::size_t window = 200;  // R of the breakpoint DP
  // M of the breakpoint DP; empty: a quarter of the smallest device's memory (Celeritas's choice).
  std::optional<byte_count> cluster_memory{};
  bool cache_transfers = true;  // the engine's tensor cache (list_options::cache_transfers)
};

struct celeritas_result {
  // ok, or why the coarse placement failed or went over capacity; vertex names the original vertex
  // (the first member, in topological order, of the cluster the engine named) and device the device.
  gantry::outcome outcome;
  gantry::placement placement;            // of the original graph; status and message as outcome's
  kernighan_fusion fusion;                // the order, the breakpoints and the coarse graph
  list_schedule_result coarse;            // Adjusting Placement's run on the coarse graph

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

[[nodiscard]] inline celeritas_result celeritas(const graph& g, const cluster& devices, celeritas_options options = {}) {
  const graph_model model(g, devices);
  celeritas_result out;
  const byte_count cap = options.cluster_memory.value_or(quarter_device_memory(devices));
  out.fusion = fuse_kernighan(g, model, devices, {.window = options.window, .cluster_memory = cap});
  const graph& coarse = out.fusion.coarsening.coarse;
  const graph_model coarse_model(coarse, devices);
  // The walk is CPD-TOPO of the coarse graph (the policy's default).
  list_scheduler scheduler(coarse, coarse_model, devices, adjusting_placement_policy("Celeritas"),
                           list_options{.respect_memory = true,
                                        .cache_transfers = options.cache_transfers,
                                        .group = colocation_groups(coarse),
                                        .best_effort = true});
  out.coarse = scheduler.run();
  out.placement = expand(out.fusion.coarsening, out.coarse.placement);
  // The engine's outcome names the cluster that did not fit (the first placed over capacity, or the
  // one it failed on), the device and the bytes; expand() turned it into the cluster's first member.
  out.outcome = out.placement.outcome;
  return out;
}

}  // namespace gantry
