// The gantry command-line tool: place a graph, simulate a placement, compare every placer.
//   gantry place    --graph G.json --devices 4 --memory 8GiB --algorithm m-etf --out placement.json
//   gantry simulate --graph G.json --placement placement.json [--runs 100 --cv 0.1]
//   gantry compare  --graph G.json --devices 4 --memory 8GiB [--format json]
//   gantry learn    --graph G.json --devices 4 --episodes 1000 --out placement.json (built with Eigen)
// Exit status: 0 success, 1 an algorithm or simulation failed (e.g. out of memory), 2 bad input.
// A command's output files appear together, only when it succeeds; SIGINT, SIGTERM and SIGHUP
// remove the temporary files of writes in progress.

// Each command runs in a unit of its own (commands.hpp, placement_commands.hpp); this file wires the
// command line.

#include "bounds_report.hpp"
#include "commands.hpp"
#include "fuse_option.hpp"
#include "inputs.hpp"
#include "options.hpp"
#include "placement_commands.hpp"

#include <gantry/io/atomic_file.hpp>
#include <gantry/place/placers.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace gantry;
using namespace gantry::cli;

// How --graph is read (gantry JSON or a PipeDream profile), shared by place, simulate and compare.
graph_reading graph_input;

// The largest counts the options accept: beyond them a run would not finish or fit in memory.
constexpr std::size_t max_runs = 1'000'000;
constexpr double max_cv = 100;  // lognormal sigma = sqrt(ln(1 + cv^2)) stays near 3

}  // namespace

int main(int argc, char** argv) {
  remove_temporary_files_on_signals();
  CLI::App app{
      "gantry: place ML dataflow graphs on memory-limited devices and simulate the result.\n"
      "Graphs and clusters are JSON files (docs/format.md). Try:\n"
      "  gantry compare --graph examples/graphs/tiny.json --devices 4 --memory 8GiB\n"};
  app.require_subcommand(1);
  // CLI11's own errors (an unknown option, a missing value) name the command as every other error does.
  // A misspelt command ("gantry plcae", "gantry workload trnasformer") gets the nearest name.
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    std::string who = "gantry";
    const CLI::App* deepest = top;
    for (auto parsed = top->get_subcommands(); !parsed.empty(); parsed = deepest->get_subcommands()) {
      deepest = parsed.front();
      who += " " + deepest->get_name();
    }
    const auto extras = deepest->remaining();
    const auto commands = deepest->get_subcommands([](const CLI::App*) { return true; });
    if (!extras.empty() && !extras.front().starts_with('-') && !commands.empty()) {
      std::vector<std::string> names;
      std::string listed;
      for (const CLI::App* command : commands) {
        names.push_back(command->get_name());
        listed += (listed.empty() ? "" : ", ") + names.back();
      }
      return who + ": unknown command '" + extras.front() + "'" + did_you_mean(extras.front(), names) + " (expected " +
             listed + ")\n";
    }
    return who + ": " + CLI::FailureMessage::simple(top, e);
  });
  app.set_version_flag("--version", "gantry 0.1.0");

  std::string graph_path, algorithm = "m-etf", out, placement_path, format = "table", compare_svg_path;
  std::size_t runs = 0;
  double cv = 0;
  std::uint64_t seed = 1;
  bool check = false;
  std::vector<std::string> only;
  cluster_flags cf;
  simulation_flags sf;
  output_flags of;
  input_flags inputs;
  cli::fuse_flags ff;
  cli::placer_limit_flags ef;
  cli::after_placing_flags after;

  auto* place = app.add_subcommand("place", "place a graph with one algorithm and simulate the placement");
  place->add_option("--graph,-g", graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")
      ->required()
      ->check(CLI::ExistingFile);
  cli::add_graph_reading_options(*place, graph_input);
  cf.add_to(*place);
  place->add_option("--algorithm,-a", algorithm, "placer to run (`gantry algorithms` lists them)")
      ->capture_default_str();
  place->add_option("--out,-o", out, "write the placement (JSON) here");
  place
      ->add_option("--format", format,
                   "table or json (on stdout, every number at full precision, times in seconds, sizes in bytes; "
                   "the table then goes to stderr)")
      ->check(one_of({"table", "json"}))
      ->capture_default_str();
  after.add_to(*place);
  sf.add_to(*place);
  ff.add_to(*place);
  of.add_to(*place);
  ef.add_to(*place);
  inputs.add_to(*place);

  auto* sim = app.add_subcommand("simulate", "simulate a placement written by `gantry place`");
  sim->add_option("--graph,-g", graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")
      ->required()
      ->check(CLI::ExistingFile);
  cli::add_graph_reading_options(*sim, graph_input);
  sim->add_option("--placement,-p", placement_path, "placement file")->required()->check(CLI::ExistingFile);
  cf.add_to(*sim);
  sf.add_to(*sim);
  sim->add_option("--runs", runs, "with --cv: number of runs with drawn durations")
      ->check(whole_number_between<std::size_t>(0, max_runs));
  sim->add_option("--cv", cv, "coefficient of variation of the lognormal duration noise")
      ->check(finite_number_in(0, max_cv));
  sim->add_option("--seed", seed, "seed of the first run")
      ->check(whole_number_between<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))
      ->capture_default_str();
  sim->add_flag("--validate", check, "check the simulated schedule with validate()");
  sim->add_option("--format", format,
                  "table or json (every number at full precision, times in seconds, sizes in bytes)")
      ->check(one_of({"table", "json"}))
      ->capture_default_str();
  of.add_to(*sim);
  inputs.add_to(*sim);

  auto* compare = app.add_subcommand("compare", "run every placer on a graph and print one row each");
  compare->add_option("--graph,-g", graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")
      ->required()
      ->check(CLI::ExistingFile);
  cli::add_graph_reading_options(*compare, graph_input);
  cf.add_to(*compare);
  sf.add_to(*compare);
  compare->add_option("--algorithms,-a", only, "only these placers (comma separated)")->delimiter(',');
  ff.add_to(*compare);
  compare->add_option("--format", format, "table or json")->check(one_of({"table", "json"}))->capture_default_str();
  compare->add_option("--svg", compare_svg_path,
                      "write a bar chart: one bar per placer's makespan, and the lower bound");
  ef.add_to(*compare);
  after.add_search_to(*compare);
  inputs.add_to(*compare);

  auto* list = app.add_subcommand("algorithms", "list the placers");
  cli::register_extra_commands(app);
#if GANTRY_CLI_HAS_LEARN
  cli::register_learn_command(app, cf, graph_input, inputs);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {  // a subcommand's callback finished with this status
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version or the error
    return code == 0 ? 0 : exit_bad_input;
  }
  // Errors name the command, as the other commands' do ("gantry place: ...").
  const std::string who = *place ? "gantry place" : *sim ? "gantry simulate" : *compare ? "gantry compare" : "gantry";
  try {
    if (*list) {
      const auto entries = cli::tool_placers(1, nullptr);
      std::size_t width = 0;
      for (const auto& entry : entries) width = std::max(width, entry.name.size());
      for (const auto& entry : entries)
        std::cout << std::left << std::setw(static_cast<int>(width) + 2) << entry.name << entry.description
                  << (entry.respects_memory ? "" : " (ignores memory)") << "\n";
      return 0;
    }
    if (*place)
      return run_place(graph_path, graph_input, cf, sf, algorithm, after, out, format, of, ff, ef, inputs.make());
    if (*sim)
      return run_simulate(graph_path, graph_input, placement_path, cf, sf, runs, cv, seed, check, of, format,
                          inputs.make());
    if (*compare)
      return run_compare(graph_path, graph_input, cf, sf, after, only, format, ff, ef, compare_svg_path, inputs.make());
    return 0;  // an extra subcommand ran in its callback during parse()
  } catch (const std::invalid_argument& e) {
    std::cerr << who << ": " << e.what() << "\n";
    return exit_bad_input;
  } catch (const gantry::parse_error& e) {
    std::cerr << who << ": " << e.what() << "\n";
    return exit_bad_input;
  } catch (const std::exception& e) {
    std::cerr << who << ": " << e.what() << "\n";
    return exit_failed;
  }
}
