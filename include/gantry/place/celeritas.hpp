// Celeritas (Celeritas §5): CPD-TOPO order -> Kernighan fusion along it (fusion/kernighan.hpp) ->
// Adjusting Placement of the coarse graph (place/adjusting_placement.hpp), memory respected with
// best effort -> the coarse placement expanded to the original graph. On a gantry::graph with the
// default model; colocation groups named in the graph are carried to the coarse graph and honoured.
// Beyond the paper (celeritas_options::also_unfused), the original graph is also placed by
// Adjusting Placement with the earliest-start walk, and the faster placement in a strict replay is
// kept; with celeritas_options::windows the pipeline runs with each window and the placement whose
// work-conserving run finishes first is kept. O((n + e) log n + n·R + e) for the order and the
// fusion, then Adjusting Placement on the k clusters, per window, and O((n + e) · m · log n) for the
// unfused placement.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/fusion/coarsen.hpp>
#include <gantry/fusion/kernighan.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/adjusting_placement.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace gantry {

struct celeritas_options {
  std::size_t window = 200;  // R of the breakpoint DP
  // Beyond the paper: windows to try besides `window`; the pipeline runs with each, and the placement
  // whose work-conserving run in its order (the simulator's default, the tool's judge) finishes first
  // is kept (ties: the earlier in the list, `window` first). Empty: `window` alone, as the paper.
  // celeritas_window_ladder() gives the ladder the registry's celeritas-paper entry tries.
  std::vector<std::size_t> windows{};
  // Beyond the paper: the window is at most n / (this x devices), so that the coarse graph keeps at
  // least this many clusters per device. With R alone a graph of at most R vertices whose vertices
  // carry no memory (or on devices of unlimited memory) is one cluster, on one device. 0: R alone.
  std::size_t min_clusters_per_device = 2;
  // M of the breakpoint DP; empty: a quarter of the smallest device's memory (Celeritas's choice).
  std::optional<byte_count> cluster_memory{};
  bool cache_transfers = true;  // the engine's tensor cache (list_options::cache_transfers)
  // Beyond the paper: also place the original graph, unfused, by Adjusting Placement with the
  // earliest-start walk (adjusting_placement_earliest_policy), and keep whichever placement, that
  // or the paper's, finishes first when replayed in its order. A cluster runs its members one after
  // another and starts when all their inputs are there, so the coarse graph loses the parallelism
  // inside clusters (see docs/algorithms.md for the measurements). false: the paper's pipeline alone.
  bool also_unfused = true;
  // Where the placement does not fit: how many points of capacity_grid below the devices' memory
  // are tried, and whether every vertex on one device comes last (list_options' fields of the names).
  unsigned memory_retries = 64;
  bool one_device_answer = true;
};

struct celeritas_result {
  // ok, or why the coarse placement failed or went over capacity; vertex names the original vertex
  // (the first member, in topological order, of the cluster the engine named) and device the device.
  gantry::outcome outcome;
  gantry::placement placement;  // of the original graph; status and message as outcome's
  kernighan_fusion fusion;      // the order, the breakpoints and the coarse graph
  list_schedule_result coarse;  // Adjusting Placement's run on the coarse graph
  // Whether `placement` is the unfused placement: with celeritas_options::also_unfused, the one that
  // replayed faster than the coarse one; without, Adjusting Placement of the unfused graph where the
  // coarse one does not fit. `fusion` and `coarse` still say what the paper's pipeline found.
  bool unfused = false;
  // The window R of the kept fusion (after min_clusters_per_device); 0 when the placement is the
  // one-device answer, not the pipeline's.
  std::size_t window = 0;

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

namespace detail {
// R after celeritas_options::min_clusters_per_device.
[[nodiscard]] inline std::size_t effective_window(const graph& g, const cluster& on, const celeritas_options& options,
                                                  std::size_t window) {
  if (options.min_clusters_per_device > 0 && on.device_count() > 0)
    window = std::min(
        window, std::max<std::size_t>(1, g.vertex_count() / (options.min_clusters_per_device * on.device_count())));
  return window;
}

// The paper's pipeline (with gantry's memory safeguards), and the makespan of the strict replay of
// its placement in its order when that placement is ok.
[[nodiscard]] inline celeritas_result celeritas_fused(const graph& g, const graph_model& model, const cluster& devices,
                                                      const celeritas_options& options,
                                                      std::optional<seconds>& replayed) {
  // The pipeline within the memory of `on`: the fusion (M a quarter of on's smallest memory unless
  // the options name it), the placement of the clusters (best effort or not) and its expansion.
  const auto pipeline = [&](const cluster& on, bool best_effort) {
    celeritas_result out;
    const byte_count cap = options.cluster_memory.value_or(quarter_device_memory(on));
    const std::size_t window = effective_window(g, on, options, options.window);
    out.window = window;
    out.fusion = fuse_kernighan(g, model, on, {.window = window, .cluster_memory = cap, .group = colocation_groups(g)});
    const graph& coarse = out.fusion.coarsening.coarse;
    const graph_model coarse_model(coarse, on);
    // The walk is CPD-TOPO of the coarse graph (the policy's default).
    list_scheduler scheduler(coarse, coarse_model, on, adjusting_placement_policy("Celeritas"),
                             list_options{.respect_memory = true,
                                          .cache_transfers = options.cache_transfers,
                                          .group = colocation_groups(coarse),
                                          .best_effort = best_effort});
    out.coarse = scheduler.run();
    // The first member of each cluster runs first; the placement's order is the coarse order
    // expanded. The engine's outcome names the cluster that did not fit (the first placed over
    // capacity, or the one it failed on), the device and the bytes; expand() turned it into the
    // cluster's first member.
    out.placement = expand(out.fusion.coarsening, out.coarse.placement);
    out.outcome = out.placement.outcome;
    return out;
  };
  const auto replay = [&](const cluster& on, const placement& p) {
    return simulate(
        g, model, on, std::span<const device_id>(p.device),
        {.policy = ready_policy::strict_order, .priority = p.order, .cache_transfers = options.cache_transfers});
  };
  // Beyond the paper, the last answer of every memory-aware placer: where Celeritas's placement does
  // not fit, every vertex on the device with the most memory (place_on_one_device); `fusion` and
  // `coarse` still say what Celeritas found.
  const auto or_one_device = [&](celeritas_result failed) {
    if (!options.one_device_answer) return failed;
    auto alone = place_on_one_device(
        g, model, devices,
        list_options{.cache_transfers = options.cache_transfers, .memory_retries = options.memory_retries},
        "Celeritas");
    if (!alone) return failed;
    const std::string why = failed.outcome.message;
    failed.window = 0;
    failed.placement = std::move(alone->placement);
    failed.placement.outcome.message = why + "; " + failed.placement.outcome.message;
    failed.outcome = failed.placement.outcome;
    return failed;
  };
  celeritas_result out = pipeline(devices, true);
  // Beyond the paper: the coarse graph counts memory per cluster and per coarse edge, which a run of
  // the original graph can exceed (members of clusters that share a device interleave; without the
  // tensor cache each original edge takes its own copy). A placement that says ok must replay, in
  // its order, within memory. When the coarse placement does not fit, or its expansion does not
  // replay, the pipeline runs again within each point of capacity_grid below the devices' memory,
  // as memory_fallback() steps down, fusion included (M follows the memory), so that fitting with
  // some memory means fitting with more; the first that fits and replays is kept. Else the result
  // is over capacity, with the engine's or the replay's words.
  std::optional<simulation_result> first;
  if (out.ok()) {
    first = replay(devices, out.placement);
    if (first->ok()) {
      replayed = first->schedule.makespan;
      return out;
    }
  }
  const bool found = detail::down_the_grid(
      devices, detail::least_capacity(g, model, devices.device_count()), options.memory_retries,
      [&](const auto&, byte_count cap) {
        cluster capped = devices;
        for (device_id d = 0; d < capped.device_count(); ++d)
          if (capped.capacity(d) != unlimited_memory) capped.set_capacity(d, std::min(cap, capped.capacity(d)));
        celeritas_result smaller = pipeline(capped, false);
        if (!smaller.ok()) return false;
        // Judged within the devices' own memory, as the placement will run: a replay that waits for
        // memory is not monotone in it (with more, a start no longer waits and a later one may).
        const auto again = replay(devices, smaller.placement);
        if (!again.ok()) return false;
        replayed = again.schedule.makespan;
        out = std::move(smaller);
        out.placement.outcome.message = "Celeritas: placed within " + format_bytes(cap) + " per device, since " +
                                        (first ? "the placement within all of it runs out of memory when replayed"
                                               : "the placement within all of it does not fit");
        out.outcome = out.placement.outcome;
        return true;
      });
  if (found) return out;
  if (!first) return or_one_device(std::move(out));
  out.outcome = {
      .code = status::over_capacity,
      .vertex = first->outcome.vertex,
      .device = first->outcome.device,
      .time = first->outcome.time,
      .needed = first->outcome.needed,
      .available = first->outcome.available,
      .message = "Celeritas: the placement runs out of memory when replayed in its order: " + first->outcome.message};
  out.placement.outcome = out.outcome;
  return or_one_device(std::move(out));
}
}  // namespace detail

// The windows the registry's celeritas-paper entry tries: `widest` (the paper's R = 200 by default)
// and those of {50, 20, 8, 5, 3, 2, 1} below it. Measured on the shipped graphs at 60% of the
// one-device peak, the fastest placement comes from a different window on each graph and the makespan
// is not monotone in R (docs/algorithms.md), so a ladder, not a formula.
[[nodiscard]] inline std::vector<std::size_t> celeritas_window_ladder(std::size_t widest = 200) {
  std::vector<std::size_t> out{std::max<std::size_t>(widest, 1)};
  for (const std::size_t r : {50, 20, 8, 5, 3, 2, 1})
    if (r < out.front()) out.push_back(r);
  return out;
}

[[nodiscard]] inline celeritas_result celeritas(const graph& g, const cluster& devices,
                                                celeritas_options options = {}) {
  const graph_model model(g, devices);
  std::optional<seconds> fused_makespan;
  // The paper's pipeline alone answers on one device only after Adjusting Placement of the unfused
  // graph (below) found nothing either.
  celeritas_options fused = options;
  if (!options.also_unfused) fused.one_device_answer = false;
  celeritas_result out = detail::celeritas_fused(g, model, devices, fused, fused_makespan);
  if (!options.windows.empty()) {
    // Each window's placement judged by the work-conserving run in its order, within the devices'
    // memory; one that does not run there loses to one that does.
    const auto judged = [&](const celeritas_result& r) -> std::optional<seconds> {
      if (!r.ok()) return std::nullopt;
      const auto run = simulate(g, model, devices, std::span<const device_id>(r.placement.device),
                                {.priority = r.placement.order, .cache_transfers = options.cache_transfers});
      return run.ok() ? std::optional<seconds>(run.schedule.makespan) : std::nullopt;
    };
    std::optional<seconds> best = judged(out);
    std::vector<std::size_t> tried{detail::effective_window(g, devices, options, options.window)};
    for (const std::size_t window : options.windows) {
      const std::size_t effective = detail::effective_window(g, devices, options, window);
      if (std::find(tried.begin(), tried.end(), effective) != tried.end()) continue;
      tried.push_back(effective);
      celeritas_options narrower = fused;
      narrower.window = window;
      std::optional<seconds> narrower_replayed;
      celeritas_result candidate = detail::celeritas_fused(g, model, devices, narrower, narrower_replayed);
      const std::optional<seconds> run = judged(candidate);
      if (!run || (best && *run >= *best)) continue;
      best = run;
      out = std::move(candidate);
      fused_makespan = narrower_replayed;
    }
  }
  // The unfused graph, placed with the same memory options as the clusters were.
  const list_options unfused_options{.respect_memory = true,
                                     .cache_transfers = options.cache_transfers,
                                     .group = colocation_groups(g),
                                     .memory_retries = options.memory_retries,
                                     .one_device_answer = options.one_device_answer};
  if (!options.also_unfused) {
    // Beyond the paper: a cluster's memory, or its members' interleaving with other clusters, can
    // make a capacity too small for the coarse graph where the original fits. Then Adjusting
    // Placement (the pipeline's placing step, CPD-TOPO order) places the unfused graph, with its
    // own fallbacks (memory_fallback()), and says so.
    const status code = out.outcome.code;
    if (out.ok() || (code != status::out_of_memory && code != status::over_capacity)) return out;
    list_schedule_result unfused = adjusting_placement(g, model, devices, unfused_options);
    if (!unfused.ok()) return out;
    const std::string why = out.outcome.message;
    out.placement = std::move(unfused.placement);
    out.placement.outcome.message =
        why + "; placed the unfused graph by Adjusting Placement instead" +
        (out.placement.outcome.message.empty() ? "" : " (" + out.placement.outcome.message + ")");
    out.outcome = out.placement.outcome;
    out.unfused = true;
    out.window = 0;
    return out;
  }
  // The engine's schedule of the unfused placement is within memory; the strict replay reproduces
  // it in every communication mode (place/engine/scheduler.hpp) and is run as the coarse placement's
  // is, so that both are judged alike, and a placement that does not replay is never kept.
  list_schedule_result unfused =
      list_schedule(g, model, devices, adjusting_placement_earliest_policy("Celeritas"), unfused_options);
  if (!unfused.ok()) return out;
  const auto run = simulate(g, model, devices, std::span<const device_id>(unfused.placement.device),
                            {.policy = ready_policy::strict_order,
                             .priority = unfused.placement.order,
                             .cache_transfers = options.cache_transfers});
  if (!run.ok()) return out;
  if (out.ok() && !fused_makespan) {  // placed on one device at the end: replayed like the others
    const auto alone = simulate(g, model, devices, std::span<const device_id>(out.placement.device),
                                {.policy = ready_policy::strict_order,
                                 .priority = out.placement.order,
                                 .cache_transfers = options.cache_transfers});
    if (alone.ok()) fused_makespan = alone.schedule.makespan;
  }
  if (fused_makespan && *fused_makespan <= run.schedule.makespan) return out;
  out.placement = std::move(unfused.placement);
  out.outcome = out.placement.outcome;
  out.unfused = true;
  return out;
}

}  // namespace gantry
