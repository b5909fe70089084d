// Subcommands of the gantry tool beyond place, simulate and compare, gathered from their files.
// The placers themselves are the library's registry (gantry/place/placers.hpp).
#pragma once

#include "execute_command.hpp"
#include "pipeline_command.hpp"
#include "workload_command.hpp"

#include <CLI/CLI.hpp>

namespace gantry::cli {

// Subcommands that do their work in a CLI11 callback (see pipeline_command.hpp).
inline void register_extra_commands(CLI::App& app) {
  register_pipeline_command(app);
  register_execute_commands(app);
  register_workload_command(app);
}

}  // namespace gantry::cli
