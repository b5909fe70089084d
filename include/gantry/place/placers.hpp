// Every placer by name, on gantry's own graph and cluster types: what the `gantry` tool runs and
// what the tests run over every placer. An entry says whether it honours device memory and returns,
// besides the placement, the placer's own schedule when it builds one. Built with gantry::lp
// (GANTRY_HAS_LP), the registry also offers the LP-based placers (SCT, m-SCT).
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/adjusting_placement.hpp>
#include <gantry/place/backward.hpp>
#include <gantry/place/celeritas.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/enumerative.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/order_place.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/schedule/schedule.hpp>
#ifdef GANTRY_HAS_LP
#include <gantry/place/sct.hpp>
#endif

#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gantry {

struct placer_request {
  const graph& g;
  const graph_model& model;
  const cluster& devices;
  bool cache_transfers = true;  // send a tensor once per device (false: once per consumer)
  // Kernighan fusion (celeritas): the DP's window R and cluster memory M (empty: a quarter of the
  // smallest device's memory).
  std::size_t window = 200;
  std::optional<byte_count> cluster_memory{};
  // A memory-aware placer that runs out of memory: how many points of capacity_grid below the
  // devices' memory it tries again within, and whether every vertex on one device comes last
  // (list_options' fields of the names).
  unsigned memory_retries = 64;
  bool one_device_answer = true;
};

struct placer_result {
  gantry::placement placement;
  std::optional<gantry::schedule> own_schedule;  // the placer's own schedule, for list schedulers
  // What the placer records about its run, as (key, value): e.g. the LP solver, method and threshold.
  std::vector<std::pair<std::string, std::string>> metadata{};
};

struct placer_entry {
  std::string name;          // as typed on the command line, e.g. "m-etf"
  std::string description;   // one line
  bool respects_memory;      // false: the placement may not fit; only a simulation can tell
  std::function<placer_result(const placer_request&)> place;
};

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
  if (!alone) alone = one_device_run(r.g, r.model, r.devices, {.cache_transfers = r.cache_transfers}, name, fastest, true);
  if (!alone || !(alone->schedule.makespan < own)) return;
  const auto text = [](seconds t) {
    std::ostringstream out;
    out << t << " s";
    return out.str();
  };
  alone->placement.outcome.message = "placed every vertex on " + list_device_label(r.devices, fastest) + " instead: " +
                                     text(alone->schedule.makespan) + ", shorter than " + std::string(name) +
                                     "'s own schedule, " + text(own);
  result.placement = std::move(alone->placement);
  result.own_schedule = std::move(alone->schedule);
}

// A list scheduler as an entry: colocation groups named in the graph are honoured. A memory-aware
// entry other than m-ETF that runs out of memory, after its own fallbacks (memory_fallback() in
// place/list_scheduler.hpp), returns m-ETF's placement where that fits, saying so: greedy policies
// fill devices differently, and on seeded random DAGs m-ETF fits in 69 of 10,000 cases where one
// of the others does not (Order-Place 38, m-CPOP 8, Adjusting Placement 8, m-HEFT 6, m-Critical
// Path 6, m-PEFT 3), as on Baechi's GNMT at 720 to 750 MB per device for m-PEFT.
template <class Run>
placer_entry list_entry(std::string name, std::string description, bool memory, Run run) {
  const bool rescue = memory && name != "m-etf";
  return {std::move(name), std::move(description), memory, [memory, rescue, run](const placer_request& r) {
            list_options options{.respect_memory = memory, .cache_transfers = r.cache_transfers,
                                 .group = colocation_groups(r.g), .memory_retries = r.memory_retries,
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
}  // namespace detail

// Every placer, in the order `gantry compare` prints them.
[[nodiscard]] inline const std::vector<placer_entry>& placers() {
  static const std::vector<placer_entry> all = [] {
    std::vector<placer_entry> out;
    out.push_back({"single-device", "every vertex on device 0: the baseline", false,
                   [](const placer_request& r) { return placer_result{single_device(r.g, r.devices), std::nullopt}; }});
    out.push_back({"m-topo", "Baechi's m-TOPO: Kahn order, devices filled one by one up to a balanced cap", true,
                   [](const placer_request& r) {
                     placement p = m_topo(r.g, r.model, r.devices, {.group = colocation_groups(r.g), .cache_transfers = r.cache_transfers});
                     if (p.outcome.code != status::out_of_memory || !r.one_device_answer)
                       return placer_result{std::move(p), std::nullopt};
                     // m-TOPO counts every byte a device ever holds; where that is too much, one
                     // device that frees what it no longer needs may still hold the run.
                     auto alone = place_on_one_device(r.g, r.model, r.devices,
                                                      {.cache_transfers = r.cache_transfers,
                                                       .memory_retries = r.memory_retries},
                                                      "m-TOPO");
                     if (!alone) return placer_result{std::move(p), std::nullopt};
                     alone->placement.outcome.message = p.outcome.message + "; " + alone->placement.outcome.message;
                     return placer_result{std::move(alone->placement), std::move(alone->schedule)};
                   }});
    const auto add = [&](std::string name, std::string description, bool memory, auto run) {
      out.push_back(detail::list_entry(std::move(name), std::move(description), memory, run));
    };
    const auto etf_run = [](const placer_request& r, list_options o) { return etf(r.g, r.model, r.devices, std::move(o)); };
    const auto m_etf_run = [](const placer_request& r, list_options o) { return m_etf(r.g, r.model, r.devices, std::move(o)); };
    const auto cp_run = [](const placer_request& r, list_options o) {
      return critical_path_schedule(r.g, r.model, r.devices, std::move(o));
    };
    const auto heft_run = [](const placer_request& r, list_options o) { return heft(r.g, r.model, r.devices, std::move(o)); };
    const auto cpop_run = [](const placer_request& r, list_options o) { return cpop(r.g, r.model, r.devices, std::move(o)); };
    const auto peft_run = [](const placer_request& r, list_options o) { return peft(r.g, r.model, r.devices, std::move(o)); };
    add("etf", "ETF: the (vertex, device) pair that can start earliest goes first", false, etf_run);
    add("m-etf", "Baechi's m-ETF: ETF on devices whose memory can hold the vertex", true, m_etf_run);
    add("critical-path", "DOPPLER's baseline: largest bottom level first, on the earliest-start device", false, cp_run);
    add("m-critical-path", "Critical Path on devices whose memory can hold the vertex", true, cp_run);
    add("heft", "HEFT: largest upward rank first, on the earliest-finish device, into idle gaps", false, heft_run);
    add("m-heft", "HEFT on devices whose memory can hold the vertex", true, heft_run);
    add("cpop", "CPOP: critical-path vertices on one device, the others on the earliest-finish device", false, cpop_run);
    add("m-cpop", "CPOP on devices whose memory can hold the vertex", true, cpop_run);
    add("peft", "PEFT: optimistic cost table ranks vertices and looks one step ahead for the device", false, peft_run);
    add("m-peft", "PEFT on devices whose memory can hold the vertex", true, peft_run);
    // The same five policies from the exits back (place/backward.hpp), replayed forward.
    const auto backward_entry = [&]<class Policy>(std::string name, std::string what) {
      add(std::move(name), what + " on the reversed graph, from the exits back, replayed forward in mirrored order", false,
          [](const placer_request& r, list_options o) {
            return backward_list_schedule(r.g, r.model, r.devices, Policy{}, std::move(o));
          });
    };
    backward_entry.operator()<etf_policy>("backward-etf", "ETF");
    backward_entry.operator()<critical_path_policy>("backward-critical-path", "Critical Path");
    backward_entry.operator()<heft_policy>("backward-heft", "HEFT");
    backward_entry.operator()<cpop_policy>("backward-cpop", "CPOP");
    backward_entry.operator()<peft_policy>("backward-peft", "PEFT");
#ifdef GANTRY_HAS_LP
    const auto sct_entry = [&](std::string name, std::string description, bool memory) {
      out.push_back({std::move(name), std::move(description), memory, [memory](const placer_request& r) {
                       sct_options options;
                       options.list = {.cache_transfers = r.cache_transfers, .group = colocation_groups(r.g),
                                       .memory_retries = r.memory_retries, .one_device_answer = r.one_device_answer};
                       sct_result run = memory ? m_sct(r.g, r.model, r.devices, std::move(options))
                                               : sct(r.g, r.model, r.devices, std::move(options));
                       placer_result result{std::move(run.scheduled.placement), std::nullopt, {}};
                       if (result.placement.ok()) result.own_schedule = std::move(run.scheduled.schedule);
                       const auto& f = run.favorites;
                       result.metadata = {{"lp_solver", f.solver},
                                          {"lp_method", f.method},
                                          {"lp_threshold", std::to_string(f.threshold)},
                                          {"lp_seconds", std::to_string(f.solve_seconds)}};
                       return result;
                     }});
    };
    sct_entry("sct", "SCT: ETF that keeps favorite children (from an LP relaxation) on their parent's device", false);
    sct_entry("m-sct", "Baechi's m-SCT: SCT within device memory, excluding devices that ran out of it", true);
#endif
    const auto order_place_run = [](const placer_request& r, list_options o) {
      return order_place(r.g, r.model, r.devices, std::move(o));
    };
    const auto adjusting_run = [](const placer_request& r, list_options o) {
      o.best_effort = true;
      return adjusting_placement(r.g, r.model, r.devices, std::move(o));
    };
    add("order-place", "Celeritas's Order-Place: CPD-TOPO order fills one device to its memory, then the next", true,
        order_place_run);
    add("adjusting-placement",
        "Celeritas's Adjusting Placement: CPD-TOPO order, stays on the previous device unless another starts "
        "earlier by more than the largest outgoing transfer; best effort when memory runs out",
        true, adjusting_run);
    out.push_back({"celeritas",
                   "Celeritas: CPD-TOPO, Kernighan fusion (window, cluster memory), Adjusting Placement of the "
                   "clusters; best effort when memory runs out; beside it the unfused graph on an earliest-start "
                   "walk, the faster kept",
                   true, [](const placer_request& r) {
                     auto result = celeritas(r.g, r.devices,
                                             {.window = r.window, .cluster_memory = r.cluster_memory,
                                              .cache_transfers = r.cache_transfers,
                                              .memory_retries = r.memory_retries,
                                              .one_device_answer = r.one_device_answer});
                     return placer_result{std::move(result.placement), std::nullopt, {}};
                   }});
    out.push_back({"enumerative",
                   "DOPPLER's EnumerativeOptimizer: meta-ops (from vertex names \"op[i,j]\") in topological order, "
                   "each shard assignment tried, the one with the cheapest input transfers kept",
                   false, [](const placer_request& r) {
                     return placer_result{enumerative_optimizer(r.g, r.model, r.devices, doppler_meta_ops(r.g),
                                                                {.cache_transfers = r.cache_transfers,
                                                                 .group = colocation_groups(r.g)}),
                                          std::nullopt, {}};
                   }});
    for (auto& entry : out) {
      if (entry.respects_memory) entry.place = detail::planned_on_grid(std::move(entry.place), entry.name);
      // Every entry that returns a schedule of its own (the list schedulers and SCT), judged within
      // the devices' whole memory.
      entry.place = [place = std::move(entry.place), name = entry.name](const placer_request& r) {
        placer_result result = place(r);
        detail::no_slower_than_one_device(r, result, name);
        return result;
      };
    }
    return out;
  }();
  return all;
}

// Runs `entry` on the Kernighan-fused graph of r.g (CPD-TOPO cut with r.window and r.cluster_memory,
// fusion/kernighan.hpp) and expands its placement to r.g. The placer's own schedule is of the
// coarse graph and is dropped; a failure that placed nothing expands to no device for every vertex.
[[nodiscard]] inline placer_result place_kernighan_fused(const placer_entry& entry, const placer_request& r) {
  const byte_count cap = r.cluster_memory.value_or(quarter_device_memory(r.devices));
  const kernighan_fusion fused = fuse_kernighan(r.g, r.model, r.devices,
                                                {.window = r.window, .cluster_memory = cap, .group = colocation_groups(r.g)});
  const graph& coarse = fused.coarsening.coarse;
  const graph_model coarse_model(coarse, r.devices);
  placer_result placed = entry.place({coarse, coarse_model, r.devices, r.cache_transfers, r.window, r.cluster_memory});
  if (placed.placement.device.size() != coarse.vertex_count()) {
    placed.placement.device.assign(r.g.vertex_count(), no_device);
    placed.placement.order.clear();
    return {std::move(placed.placement), std::nullopt};
  }
  return {expand(fused.coarsening, placed.placement), std::nullopt};
}

[[nodiscard]] inline const placer_entry* find_placer(std::string_view name) {
  for (const auto& entry : placers())
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace gantry
