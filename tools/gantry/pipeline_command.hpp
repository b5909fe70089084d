// `gantry pipeline`: plans pipelined model parallelism for a chain file (docs/pipeline.md) on P
// processors of memory M each, prints the partition, the period and NCA and memory per processor
// for 1F1B*, 1F1B and GPipe, and writes an SVG of the chosen schedule's periodic pattern.
#pragma once

#include <gantry/io/json_graph.hpp>
#include <gantry/io/units.hpp>
#include <gantry/pipeline/chain_io.hpp>
#include <gantry/pipeline/plan.hpp>
#include <gantry/pipeline/svg.hpp>
#include <gantry/pipeline/unroll.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>

namespace gantry::cli {

struct pipeline_command_flags {
  std::string chain_path;
  std::string graph_path;   // alternative to chain_path: a training graph grouped into layers
  std::size_t layers = 0;   // with graph_path: how many layers (0: one per forward vertex)
  std::size_t processors = 0;
  std::string memory = "unlimited";
  std::string schedule = "1f1b*";
  std::size_t micro_batches = 0;
  std::string svg_path;
  bool check = false;
};

// Runs the command; returns the exit status (0 ok, 1 no plan fits, 2 bad input). Writes the
// report to `out` and problems to `err`.
inline int run_pipeline_command(const pipeline_command_flags& flags, std::ostream& out, std::ostream& err) {
  try {
    if (flags.chain_path.empty() == flags.graph_path.empty())
      throw invalid_input("give either --chain FILE or --graph FILE");
    const std::string& input = flags.chain_path.empty() ? flags.graph_path : flags.chain_path;
    const auto c = flags.chain_path.empty() ? chain_from_graph(read_graph(flags.graph_path), {.layers = flags.layers})
                                            : read_chain(flags.chain_path);
    if (c.size() == 0) throw invalid_input(input + ": the chain has no layers");
    const byte_count capacity = detail::equals_ignoring_case(flags.memory, "unlimited") ? unlimited_memory
                                                                                         : parse_bytes(flags.memory);
    const auto plan = plan_pipeline(c, flags.processors, capacity,
                                    {.schedule = parse_pipeline_schedule(flags.schedule),
                                     .micro_batches = flags.micro_batches});
    out << c.size() << " layers on " << flags.processors << " processors\n" << describe(c, plan);
    if (!plan.ok()) return 1;
    if (flags.check) {
      for (const auto& p : plan.compared) {
        const auto report = check_pattern(c, p);
        out << "check " << p.name << ": " << (report.ok() ? "valid" : "INVALID") << "\n";
        if (!report.ok()) {
          err << report.to_string();
          return 1;
        }
      }
    }
    const std::string svg_path = flags.svg_path.empty() ? "pipeline.svg" : flags.svg_path;
    write_text_file(svg_path, pattern_svg(c, plan.chosen));
    out << "pattern of " << plan.chosen.name << " written to " << svg_path << "\n";
    return 0;
  } catch (const std::invalid_argument& e) {
    err << "gantry pipeline: " << e.what() << "\n";
    return 2;
  } catch (const parse_error& e) {
    err << "gantry pipeline: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "gantry pipeline: " << e.what() << "\n";
    return 1;
  }
}

inline void register_pipeline_command(CLI::App& app) {
  auto flags = std::make_shared<pipeline_command_flags>();
  auto* command = app.add_subcommand("pipeline", "plan pipelined model parallelism for a chain of layers: partition, "
                                                 "1F1B*/1F1B/GPipe period, NCA and memory per processor");
  auto* chain_option = command->add_option("--chain,-c", flags->chain_path, "chain file (gantry.chain JSON, see docs/pipeline.md)")
      ->check(CLI::ExistingFile);
  auto* graph_option = command->add_option("--graph,-g", flags->graph_path,
                                           "or a training graph (.json/.json.gz), grouped into layers along a topological order")
      ->check(CLI::ExistingFile);
  chain_option->excludes(graph_option);
  command->add_option("--layers", flags->layers, "with --graph: number of layers (default: one per forward vertex)")
      ->needs(graph_option);
  command->add_option("--processors,-p", flags->processors, "number of processors P")->required()->check(CLI::PositiveNumber);
  command->add_option("--memory,-m", flags->memory, "memory M of each processor, e.g. 16GiB")->capture_default_str();
  command->add_option("--schedule,-s", flags->schedule, "1f1b*, 1f1b or gpipe: the pattern drawn in the SVG")
      ->capture_default_str();
  command->add_option("--micro-batches", flags->micro_batches, "GPipe's micro-batches per mini-batch (default: P)");
  command->add_option("--svg", flags->svg_path, "where to write the SVG of the pattern (default: pipeline.svg)");
  command->add_flag("--validate", flags->check, "unroll every pattern over several periods and check it with validate()");
  command->callback([flags] {
    const int code = run_pipeline_command(*flags, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace gantry::cli
