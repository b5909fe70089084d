// Every placer by name, on gantry's own graph and cluster types: what the `gantry` tool runs and
// what the tests run over every placer. An entry says whether it honours device memory and returns,
// besides the placement, the placer's own schedule when it builds one. Built with gantry::lp
// (GANTRY_HAS_LP), the registry also offers the LP-based placers (SCT, m-SCT).
//
// The entries come in families, each defined in its own header under place/registry/: list.hpp
// (single device, m-TOPO and the list schedulers), backward.hpp (the list schedulers from the
// exits back, and ETF justified), lp.hpp (SCT, m-SCT), celeritas.hpp (Order-Place, Adjusting Placement, Celeritas,
// EnumerativeOptimizer, place_kernighan_fused) and guards.hpp (what every entry goes through).
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

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

// Runs `entry` on the Kernighan-fused graph of r.g (CPD-TOPO cut with r.window and r.cluster_memory,
// fusion/kernighan.hpp) and expands its placement to r.g. The placer's own schedule is of the
// coarse graph and is dropped; a failure that placed nothing expands to no device for every vertex.
// Defined in registry/celeritas.hpp.
[[nodiscard]] GANTRY_DECL placer_result place_kernighan_fused(const placer_entry& entry, const placer_request& r);

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
