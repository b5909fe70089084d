// Every placer and extra subcommand the gantry tool offers, gathered from the families' entry files.
#pragma once

#include "algorithms.hpp"
#include "list_scheduling_entries.hpp"
#include "pipeline_command.hpp"

#include <CLI/CLI.hpp>

#include <string_view>
#include <vector>

namespace gantry::cli {

[[nodiscard]] inline const std::vector<algorithm_entry>& algorithms() {
  static const std::vector<algorithm_entry> all = [] {
    std::vector<algorithm_entry> out;
    add_baseline_algorithms(out);
    add_list_scheduling_algorithms(out);
    return out;
  }();
  return all;
}

[[nodiscard]] inline const algorithm_entry* find_algorithm(std::string_view name) {
  for (const auto& entry : algorithms())
    if (entry.name == name) return &entry;
  return nullptr;
}

// Subcommands that do their work in a CLI11 callback (see pipeline_command.hpp).
inline void register_extra_commands(CLI::App& app) { register_pipeline_command(app); }

}  // namespace gantry::cli
