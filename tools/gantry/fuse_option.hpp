// --fuse for every placer: reduce the graph before placing it and expand the placement back
// (graph/fusion.hpp, graph/coarsen.hpp). One table of reductions: a new one is one more row.
#pragma once

#include <gantry/graph/fusion.hpp>
#include <gantry/place/placers.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gantry::cli {

struct reduction {
  std::string name;         // the --fuse value
  std::string description;  // for --help
  std::function<coarsening(const graph&)> reduce;
};

// Every --fuse value but "none". Forward/backward pairs become colocation groups first, so that
// the coarse graph keeps them (coarsen() carries named groups).
inline const std::vector<reduction>& reductions() {
  static const std::vector<reduction> all = {
      {"baechi", "Baechi's degree rule",
       [](const graph& g) { return fuse(colocate_forward_backward(g), {.rule = fusion_rule::baechi_degree}); }},
      {"exact", "merge iff no other path exists",
       [](const graph& g) { return fuse(colocate_forward_backward(g), {.rule = fusion_rule::exact}); }},
  };
  return all;
}

struct fuse_flags {
  std::string fuse = "none";

  void add_to(CLI::App& app) {
    std::vector<std::string> names{"none"};
    std::string help = "fuse co-placed vertices before placing: none";
    for (const auto& r : reductions()) {
      names.push_back(r.name);
      help += ", " + r.name + " (" + r.description + ")";
    }
    app.add_option("--fuse", fuse, help)->check(CLI::IsMember(names))->capture_default_str();
  }

  // The coarse graph to place, or nothing for --fuse none.
  [[nodiscard]] std::optional<coarsening> reduce(const graph& g) const {
    for (const auto& r : reductions())
      if (r.name == fuse) return r.reduce(g);
    return std::nullopt;
  }
};

// Runs a placer on g, or on the coarse graph when there is one, and returns the placement of g.
// A coarse run's own schedule is of the coarse graph, so it is dropped; its metadata says how
// much the graph shrank.
inline placer_result place_reduced(const placer_entry& entry, const placer_request& request,
                                   const std::optional<coarsening>& coarse) {
  if (!coarse) return entry.place(request);
  const graph_model model(coarse->coarse, request.devices);
  placer_result placed = entry.place({coarse->coarse, model, request.devices, request.cache_transfers});
  placer_result out{expand(*coarse, placed.placement), std::nullopt, std::move(placed.metadata)};
  out.metadata.emplace_back("fused_vertices", std::to_string(coarse->coarse.vertex_count()) + " of " +
                                                  std::to_string(request.g.vertex_count()));
  return out;
}

}  // namespace gantry::cli
