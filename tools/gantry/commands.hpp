// The tool's commands beyond place, simulate, compare (placement_commands.hpp) and algorithms. Each is
// compiled in a translation unit of its own (the file named beside it), so that no unit of the
// tool instantiates more than one command's algorithms; main.cpp sees only these declarations.
#pragma once

#include "inputs.hpp"

#include <gantry/core/types.hpp>

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <stdexcept>

namespace gantry::cli {

void register_pipeline_command(CLI::App& app);  // pipeline_command.cpp
void register_execute_commands(CLI::App& app);  // execute_command.cpp: execute and calibrate
void register_workload_command(CLI::App& app);  // workload_command.cpp
#if GANTRY_CLI_HAS_LEARN
// learn_command.cpp. `gantry learn` shares the cluster and input flags of place, simulate and compare.
void register_learn_command(CLI::App& app, cluster_flags& cluster_options, graph_reading& reading, input_flags& inputs);
#endif

// Subcommands that do their work in a CLI11 callback.
inline void register_extra_commands(CLI::App& app) {
  register_pipeline_command(app);
  register_execute_commands(app);
  register_workload_command(app);
}

// Runs a command's work in its CLI11 callback: bad input exits with 2 and a failure with 1, each
// with its message after "gantry <command>: ".
template <class Run>
void run_in_callback(const char* command, Run run) {
  int code = 0;
  try {
    code = run();
  } catch (const std::invalid_argument& e) {
    std::cerr << "gantry " << command << ": " << e.what() << "\n";
    code = 2;
  } catch (const parse_error& e) {
    std::cerr << "gantry " << command << ": " << e.what() << "\n";
    code = 2;
  } catch (const std::exception& e) {
    std::cerr << "gantry " << command << ": " << e.what() << "\n";
    code = 1;
  }
  if (code != 0) throw CLI::RuntimeError(code);
}

}  // namespace gantry::cli
