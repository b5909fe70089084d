// Fusion before placement in `gantry place` and `gantry compare`: `--fuse kernighan` cuts the
// CPD-TOPO order with Kernighan's breakpoint DP (--window, --cluster-memory), runs the chosen placer
// on the coarse graph and expands its placement to the original graph, which is then simulated as
// any other. The same two options set the fusion inside the `celeritas` placer.
#pragma once

#include <gantry/io/units.hpp>
#include <gantry/place/placers.hpp>

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace gantry::cli {

struct fusion_flags {
  std::string fuse = "none";
  std::size_t window = 200;
  std::string cluster_memory = "quarter";

  void add_to(CLI::App& command) {
    command.add_option("--fuse", fuse, "fuse the graph before placing it: none, or kernighan (Celeritas's breakpoint DP)")
        ->check(CLI::IsMember({"none", "kernighan"}))
        ->capture_default_str();
    command.add_option("--window", window, "Kernighan fusion (--fuse kernighan, celeritas): most vertices per cluster")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
        ->capture_default_str();
    command.add_option("--cluster-memory", cluster_memory,
                       "Kernighan fusion: most bytes per cluster, e.g. 2GiB, 'unlimited', or 'quarter' (of the "
                       "smallest device's memory)")
        ->capture_default_str();
  }

  // The cluster memory M, empty for a quarter of the smallest device's memory.
  [[nodiscard]] std::optional<byte_count> cluster_bytes() const {
    if (cluster_memory == "quarter") return std::nullopt;
    if (cluster_memory == "unlimited") return unlimited_memory;
    try {
      return parse_bytes(cluster_memory);
    } catch (const invalid_input& e) {
      throw invalid_input(std::string("--cluster-memory: ") + e.what());
    }
  }

  [[nodiscard]] placer_request request(const graph& g, const graph_model& model, const cluster& c, bool cache) const {
    return {g, model, c, cache, window, cluster_bytes()};
  }
};

// Runs `entry` on the graph of `r`, fused first when the flags ask (place_kernighan_fused).
[[nodiscard]] inline placer_result place_fused(const placer_entry& entry, const placer_request& r,
                                               const fusion_flags& flags) {
  return flags.fuse == "none" ? entry.place(r) : place_kernighan_fused(entry, r);
}

}  // namespace gantry::cli
