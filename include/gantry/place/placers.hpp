// Every placer by name, on gantry's own graph and cluster types: what the `gantry` tool runs and
// what the tests run over every placer. An entry says whether it honours device memory and returns,
// besides the placement, the placer's own schedule when it builds one. Built with gantry::lp
// (GANTRY_HAS_LP), the registry also offers the LP-based placers (SCT, m-SCT).
//
// The entries come in families, each defined in its own header under place/registry/: list.hpp
// (single device, m-TOPO and the list schedulers), backward.hpp (the list schedulers from the
// exits back, and ETF justified), lp.hpp (SCT, m-SCT), celeritas.hpp (Order-Place, Adjusting Placement, Celeritas,
// EnumerativeOptimizer, place_fused) and guards.hpp (what every entry goes through).
// Header-only (the default) this header includes them all. A family instantiates the
// list-scheduling engine once per policy, so a program that names placers at run time pays for
// every family in the translation unit that includes this header; with GANTRY_SEPARATE_COMPILATION
// (core/config.hpp) this header only declares them, and the program compiles each family header
// once, in a source file of its own (gantry::compiled does: src/compiled/registry_*.cpp), where no
// unit instantiates more than a family.
#pragma once

#include <gantry/core/config.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gantry {

struct coarsening;  // fusion/coarsen.hpp

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
  std::string name;         // as typed on the command line, e.g. "m-etf"
  std::string description;  // one line
  bool respects_memory;     // false: the placement may not fit; only a simulation can tell
  std::function<placer_result(const placer_request&)> place;
};

namespace detail {
// The registry's families, in the order `gantry compare` prints them (see the top of this file).
GANTRY_DECL void add_list_placers(std::vector<placer_entry>& out);
GANTRY_DECL void add_backward_placers(std::vector<placer_entry>& out);
GANTRY_DECL void add_lp_placers(std::vector<placer_entry>& out);  // none without GANTRY_HAS_LP
GANTRY_DECL void add_celeritas_placers(std::vector<placer_entry>& out);
// Wraps every entry in what the registry promises of all of them (registry/guards.hpp).
GANTRY_DECL void guard_placers(std::vector<placer_entry>& out);
}  // namespace detail

// Every placer, in the order `gantry compare` prints them.
[[nodiscard]] inline const std::vector<placer_entry>& placers() {
  static const std::vector<placer_entry> all = [] {
    std::vector<placer_entry> out;
    detail::add_list_placers(out);
    detail::add_backward_placers(out);
    detail::add_lp_placers(out);
    detail::add_celeritas_placers(out);
    detail::guard_placers(out);
    return out;
  }();
  return all;
}

// Runs `entry` on `fused`, a coarse graph of r.g (fusion/fusion.hpp, fusion/coarsen.hpp), and
// expands its placement to r.g. The placer's own schedule is of the coarse graph and is dropped;
// the metadata adds "fused_vertices" ("k of n"), and a failure that placed nothing expands to no
// device for every vertex. Fusion never makes a capacity infeasible that the unfused graph fits:
// where a memory-aware entry finds no room for the coarse graph (out_of_memory or over_capacity),
// it runs on r.g itself, and the message and the metadata key "fusion" say so: `fusion` (e.g.
// "exact fusion") "left no room (" the coarse run's reason ")"; placed_unfused() below tells.
// "No room" includes a coarse graph that fits only on one device: the one-device answer
// (r.one_device_answer) of the coarse graph comes only where the unfused graph fits nowhere.
// Defined in registry/celeritas.hpp.
[[nodiscard]] GANTRY_DECL placer_result place_fused(const placer_entry& entry, const placer_request& r,
                                                    const coarsening& fused, std::string_view fusion);

// place_fused() on the Kernighan-fused graph of r.g: the CPD-TOPO order cut with r.window and
// r.cluster_memory (fusion/kernighan.hpp), colocation groups kept whole. Defined in
// registry/celeritas.hpp.
[[nodiscard]] GANTRY_DECL placer_result place_kernighan_fused(const placer_entry& entry, const placer_request& r);

// Whether place_fused() placed the unfused graph although it was given a fused one.
[[nodiscard]] inline bool placed_unfused(const placer_result& placed) {
  return std::any_of(placed.metadata.begin(), placed.metadata.end(),
                     [](const auto& entry) { return entry.first == "fusion"; });
}

[[nodiscard]] inline const placer_entry* find_placer(std::string_view name) {
  for (const auto& entry : placers())
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace gantry

#if !defined(GANTRY_SEPARATE_COMPILATION)
#include <gantry/place/registry/backward.hpp>
#include <gantry/place/registry/celeritas.hpp>
#include <gantry/place/registry/guards.hpp>
#include <gantry/place/registry/list.hpp>
#include <gantry/place/registry/lp.hpp>
#endif
