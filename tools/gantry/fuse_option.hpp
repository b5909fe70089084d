// --fuse for every placer: reduce the graph before placing it and expand the placement back
// (fusion/fusion.hpp, fusion/coarsen.hpp). One table of reductions that need only the graph (a new
// one is one more row), plus Kernighan's breakpoint DP (fusion/kernighan.hpp), which cuts the
// CPD-TOPO order by transfer costs and so needs the model and devices too: --window and
// --cluster-memory set it, here and inside the celeritas placer.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/fusion/fusion.hpp>
#include <gantry/fusion/kernighan.hpp>
#include <gantry/place/placers.hpp>

#include "options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gantry::cli {

struct reduction {
  std::string name;         // the --fuse value
  std::string description;  // for --help
  std::function<coarsening(const graph&, bool co_place, byte_count max_cluster_bytes)> reduce;
};

// Every --fuse value but "none". Forward/backward pairs become colocation groups first, so that
// the coarse graph keeps them (coarsen() carries named groups). With co_place false only the edges
// inside named groups and forward/backward pairs are fused. No cluster grows past
// max_cluster_bytes (fusion_options::max_cluster_bytes).
inline const std::vector<reduction>& reductions() {
  static const std::vector<reduction> all = {
      {to_string(fusion_rule::baechi_degree), "Baechi's degree rule",
       [](const graph& g, bool co_place, byte_count cap) {
         return fuse(colocate_forward_backward(g),
                     {.rule = fusion_rule::baechi_degree, .co_place = co_place, .max_cluster_bytes = cap});
       }},
      {to_string(fusion_rule::exact), "merge iff no other path exists",
       [](const graph& g, bool co_place, byte_count cap) {
         return fuse(colocate_forward_backward(g),
                     {.rule = fusion_rule::exact, .co_place = co_place, .max_cluster_bytes = cap});
       }},
  };
  return all;
}

struct fuse_flags {
  std::string fuse = "none";
  std::string co_place = "on";
  std::size_t window = 200;
  std::string cluster_memory = "quarter";

  void add_to(CLI::App& app) {
    std::vector<std::string> names{"none"};
    std::string help = "fuse the graph before placing: none";
    for (const auto& r : reductions()) {
      names.push_back(r.name);
      help += ", " + r.name + " (" + r.description + ")";
    }
    names.emplace_back("kernighan");
    help += ", kernighan (Celeritas's breakpoint DP along the CPD-TOPO order)";
    app.add_option("--fuse", fuse, help)->check(one_of(names))->capture_default_str();
    app.add_option("--co-place", co_place,
                   "with --fuse baechi or exact: also fuse a vertex into the one consumer of its outputs (Baechi's "
                   "co-placement); off fuses only inside named colocation groups and forward/backward pairs, for "
                   "graphs whose groups already are co-placement groups (Baechi's profiles)")
        ->check(one_of({"on", "off"}))
        ->capture_default_str();
    app.add_option("--window", window, "Kernighan fusion (--fuse kernighan, celeritas): most vertices per cluster")
        ->check(whole_number_between<std::size_t>(1, std::size_t{1} << 20))
        ->capture_default_str();
    app.add_option("--cluster-memory", cluster_memory,
                   "fusion (every --fuse value, celeritas): most bytes per cluster, e.g. 2GiB, 'unlimited', or "
                   "'quarter' (of the smallest device's memory)")
        ->capture_default_str();
  }

  // The cluster memory M, empty for a quarter of the smallest device's memory.
  [[nodiscard]] std::optional<byte_count> cluster_bytes() const {
    if (cluster_memory == "quarter") return std::nullopt;
    return size_option("--cluster-memory", cluster_memory, true);
  }

  [[nodiscard]] placer_request request(const graph& g, const graph_model& model, const cluster& c, bool cache) const {
    return {g, model, c, cache, window, cluster_bytes()};
  }

  // The coarse graph to place on `c`, or nothing for --fuse none.
  [[nodiscard]] std::optional<coarsening> reduce(const graph& g, const cluster& c) const {
    const byte_count cap = cluster_bytes().value_or(quarter_device_memory(c));
    for (const auto& r : reductions())
      if (r.name == fuse) return r.reduce(g, co_place == "on", cap);
    return std::nullopt;
  }
};

// Where a fused graph's placement runs everything on one device of several, the fusion did it (a
// small graph may fuse into fewer clusters than devices): a note says so, before the placer's own.
inline void say_when_fusion_left_one_device(placer_result& placed, std::size_t devices, const fuse_flags& flags) {
  const auto& where = placed.placement.device;
  if (devices < 2 || where.empty() ||
      std::any_of(where.begin(), where.end(), [&](device_id d) { return d != where.front(); }))
    return;
  std::string shrank;
  for (const auto& [key, value] : placed.metadata)
    if (key == "fused_vertices") shrank = " into " + value.substr(0, value.find(' ')) + " vertices";
  std::string why = "--fuse " + flags.fuse + " fused the graph" + shrank + " and the placement runs on one device" +
                    (flags.fuse == "kernighan" ? " (a smaller --window or --cluster-memory leaves more clusters)" : "");
  const auto note = std::find_if(placed.metadata.begin(), placed.metadata.end(),
                                 [](const auto& entry) { return entry.first == "note"; });
  if (note == placed.metadata.end()) placed.metadata.emplace_back("note", std::move(why));
  else note->second = why + "; " + note->second;
}

// Runs a placer on g, or on the coarse graph when there is one, and returns the placement of g:
// place_fused() or place_kernighan_fused() (place/placers.hpp), which place the unfused graph where
// the fused one leaves a memory-aware placer no room, and say so.
inline placer_result place_reduced(const placer_entry& entry, const placer_request& request,
                                   const std::optional<coarsening>& coarse, const fuse_flags& flags) {
  if (flags.fuse != "kernighan" && !coarse) return entry.place(request);
  placer_result out = flags.fuse == "kernighan" ? place_kernighan_fused(entry, request)
                                                : place_fused(entry, request, *coarse, "--fuse " + flags.fuse);
  if (out.placement.ok() && !placed_unfused(out))
    say_when_fusion_left_one_device(out, request.devices.device_count(), flags);
  return out;
}

}  // namespace gantry::cli
