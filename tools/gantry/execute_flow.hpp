// The flow every backend of `gantry execute` goes through (run_execution): place, simulate,
// execute --runs times, validate every run, report, write traces. Included by the unit of each
// backend (execute_cpu.cpp, and in gantry-cuda execute_cuda.cpp), so that no unit compiles the
// flow for more than one backend.
#pragma once

#include "bounds_report.hpp"
#include "execute_support.hpp"
#include "files.hpp"

#include <gantry/core/units.hpp>
#include <gantry/exec/operations.hpp>
#include <gantry/exec/study.hpp>
#include <gantry/io/atomic_file.hpp>
#include <gantry/io/gzip.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::cli {

[[nodiscard]] inline nlohmann::ordered_json comparison_json(const std::string& name, const comparison& r,
                                                            const graph& g) {
  nlohmann::ordered_json row;
  row["placement"] = name;
  if (!r.ok()) {
    row["status"] = to_string(r.outcome.code);
    row["message"] = r.outcome.message;
    return row;
  }
  row["status"] = "ok";
  row["simulated"] = r.simulated;
  row["measured_median"] = r.measured;
  row["measured_min"] = r.measured_min;
  row["measured_max"] = r.measured_max;
  row["error"] = r.error;
  row["start_error_mean"] = r.starts.mean;
  row["start_error_median"] = r.starts.median;
  row["start_error_max"] = r.starts.max;
  row["start_error_worst_vertex"] = r.starts.worst == no_vertex ? std::string() : g[r.starts.worst].name;
  row["valid"] = r.valid;
  if (r.referenced_error) {
    row["reference_simulated"] = r.reference_simulated;
    row["reference_measured"] = r.reference_runs;
    row["referenced_error"] = *r.referenced_error;
    row["unsteady_runs"] = r.unsteady_runs;
  }
  return row;
}

// What a backend's own part of `gantry execute` hands the shared flow: the cluster it measured or
// was given (link times already scaled), the launch overhead charged to every simulated vertex,
// and facts about the machine for --format json.
struct execution_setup {
  cluster devices;
  seconds overhead = 0;
  seconds copy_overhead = 0;  // added to every simulated copy (a runtime whose copies are tasks too)
  bool ahead = false;  // replay each simulated schedule ahead (exec/replay_ahead.hpp) instead of deciding launches
  nlohmann::ordered_json facts = nlohmann::ordered_json::object();
};

// Where execute writes one of its two runs for an output named like place's ("run.json"): the
// run's name goes before the extension ("run.simulated.json"); a name without that extension is
// taken as a prefix ("run" -> "run.simulated.json"), as earlier versions did.
inline std::string two_runs_path(const std::string& file, std::string_view suffix) {
  const std::string_view extension = suffix.substr(suffix.rfind('.'));              // ".json" or ".svg"
  const std::string_view run = suffix.substr(0, suffix.size() - extension.size());  // ".simulated"
  std::string_view stem = file;
  if (stem.size() > extension.size() && stem.ends_with(extension)) stem.remove_suffix(extension.size());
  return std::string(stem) + std::string(run) + std::string(extension);
}

// Throws invalid_input naming the graph file (and --time-scale, the cluster) when a simulated
// makespan is not finite or longer than an executor's clock holds (executor_clock_limit).
inline void require_clock_range(seconds makespan, const graph& g, const execute_flags& flags) {
  if (std::isfinite(makespan) && makespan <= executor_clock_limit) return;
  std::ostringstream scale;
  if (flags.time_scale != 1) scale << " with --time-scale " << flags.time_scale;
  const std::string limit =
      "more than an executor's clock can time (2^63 ns, " + format_seconds(executor_clock_limit) + ")";
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (!(g[v].compute <= executor_clock_limit))
      throw invalid_input(flags.graph_path + ": vertex '" + g[v].name + "' takes " + format_seconds(g[v].compute) +
                          scale.str() + ", " + limit);
  const std::string cluster =
      flags.cluster_path.empty() ? std::string("its cluster") : "the cluster of " + flags.cluster_path;
  if (!std::isfinite(makespan))
    throw invalid_input("the simulated makespan of " + flags.graph_path + scale.str() + " on " + cluster +
                        " is not finite: its compute and transfer times are too large to add up in a double");
  throw invalid_input("the simulated makespan of " + flags.graph_path + scale.str() + " on " + cluster + " is " +
                      format_seconds(makespan) + ", " + limit);
}

// The flow both backends share: place, simulate, execute --runs times, validate every run,
// report, write traces. `profiled` has the compute times the backend measured or the file gave.
template <class B>
requires execution_backend<B> || ahead_backend<B>
int run_execution(const execute_flags& flags, const graph& profiled, const execution_setup& setup, B& backend,
                  std::ostream& out, std::ostream& err) {
  const bool json = flags.output_format == "json";
  std::ostream& text = json ? err : out;
  const cluster& c = setup.devices;
  const seconds overhead = setup.overhead;
  text << "launch        " << format_seconds(overhead) << " per vertex, added to every simulated vertex"
       << (flags.launch_overhead == "auto" ? " (measured)" : "") << "\n";
  // The executor runs the scaled graph; the simulator and placers see it with the launch overhead
  // added to every vertex, which the executor pays but does not run.
  const graph run_graph = with_compute_times(profiled, flags.time_scale, 0);
  const graph sim_graph = with_compute_times(profiled, flags.time_scale, overhead);
  const cluster sim_cluster = setup.copy_overhead > 0 ? with_link_times(c, 1, setup.copy_overhead) : c;
  const graph_model run_model(run_graph, c), sim_model(sim_graph, sim_cluster);

  simulate_options rules;
  rules.policy = parse_enum<ready_policy>(flags.policy).value_or(ready_policy::placement_order);  // checked by CLI11
  rules.cache_transfers = !flags.no_cache;
  compare_options options{.runs = flags.runs, .simulation = rules, .ahead = setup.ahead};
  if (flags.reference_device >= 0) {
    if (static_cast<std::size_t>(flags.reference_device) >= c.device_count())
      throw invalid_input("--reference-device " + std::to_string(flags.reference_device) + ": the cluster has " +
                          std::to_string(c.device_count()) + " devices (0 to " + std::to_string(c.device_count() - 1) +
                          ")");
    options.reference = placement_candidate{
        "device " + std::to_string(flags.reference_device),
        std::vector<device_id>(sim_graph.vertex_count(), static_cast<device_id>(flags.reference_device)),
        {}};
  }

  std::vector<placement_candidate> candidates;
  if (flags.placements > 0) {
    // Set field by field: GCC 12 fails on designated initialisers of this struct in a template.
    candidate_options which;
    which.count = flags.placements;
    which.seed = flags.seed;
    which.min_gap = flags.min_gap;
    which.simulation = rules;
    candidates = placement_candidates(sim_graph, sim_model, c, which);
    // placement_candidates() gives every placer's distinct placement, which may be more than asked.
    if (candidates.size() > flags.placements) candidates.resize(flags.placements);
    if (candidates.empty()) {
      err << "gantry execute: no placer places the graph on this cluster\n";
      return 1;
    }
  } else {
    const auto all = tool_placers(1, nullptr);
    const auto* entry = find_tool_placer(all, flags.algorithm);
    if (entry == nullptr) throw unknown_algorithm(all, flags.algorithm);
    auto placed = entry->place({sim_graph, sim_model, c, !flags.no_cache});
    if (!placed.placement.ok()) {
      err << "gantry execute: " << flags.algorithm << " failed (" << to_string(placed.placement.outcome.code)
          << "): " << placed.placement.outcome.message << "\n";
      return 1;
    }
    candidates.push_back({flags.algorithm, std::move(placed.placement.device), std::move(placed.placement.order)});
  }
  // Refused before anything runs: a makespan the simulator cannot add up, or one the executor's
  // clock cannot time (its deadlines would overflow and the run would end at once).
  for (const auto& candidate : candidates) {
    simulate_options check = rules;
    check.priority = candidate.order;
    const auto planned =
        simulate(sim_graph, sim_model, sim_cluster, std::span<const device_id>(candidate.device), check);
    if (planned.ok()) require_clock_range(planned.schedule.makespan, sim_graph, flags);
  }
  if (flags.kernel == "work") options.min_duration_share = 0;  // real operations take what they take
  // A first run warms the backend's buffers and threads up; it is not counted.
  (void)compare_run(sim_graph, sim_model, run_model, c, candidates.front(), backend,
                    {.runs = 1, .simulation = rules, .ahead = setup.ahead});

  if (flags.placements == 0) {
    const auto r = compare_run(sim_graph, sim_model, run_model, c, candidates.front(), backend, options);
    if (!r.ok()) {
      err << "gantry execute: " << r.outcome.message << "\n";
      return 1;
    }
    if (!r.valid) {
      err << "gantry execute: a measured schedule fails validate():\n" << r.violations;
      return 1;
    }
    atomic_file_group outputs;
    const auto stage = [&](const std::string& file, const char* suffix, auto content) {
      if (!file.empty()) add_text_file(outputs, two_runs_path(file, suffix), content());
    };
    stage(flags.trace, ".simulated.json", [&] { return trace_text(run_graph, r.simulation.schedule, c, false); });
    stage(flags.trace, ".measured.json", [&] { return trace_text(run_graph, r.median_run.schedule, c, false); });
    const std::string heading = std::filesystem::path(flags.graph_path).filename().string() + ": " + flags.algorithm;
    stage(flags.svg, ".simulated.svg", [&] {
      return gantt_text(run_graph, r.simulation.schedule, c,
                        heading + ", simulated, makespan " + format_seconds(r.simulated));
    });
    stage(flags.svg, ".measured.svg", [&] {
      return gantt_text(run_graph, r.median_run.schedule, c,
                        heading + ", measured (median of " + std::to_string(flags.runs) + " runs), makespan " +
                            format_seconds(r.measured));
    });
    outputs.commit();
    if (json) {
      auto row = comparison_json(flags.algorithm, r, run_graph);
      row["runs"] = flags.runs;
      row["launch_overhead"] = overhead;
      for (const auto& [key, value] : setup.facts.items()) row[key] = value;
      out << row.dump(2) << "\n";
      return 0;
    }
    out << "algorithm     " << flags.algorithm << "\n";
    out << "simulated     " << format_seconds(r.simulated) << "\n";
    out << "measured      " << format_seconds(r.measured) << " (median of " << flags.runs << " runs; min "
        << format_seconds(r.measured_min) << ", max " << format_seconds(r.measured_max) << ", spread "
        << fixed_text(100 * (r.measured_max - r.measured_min) / r.measured, 1) << "%)\n";
    out << "error         " << signed_percent(r.error) << " (measured / simulated - 1)\n";
    if (r.referenced_error)
      out << "referenced    " << signed_percent(*r.referenced_error) << " relative to the runs on device "
          << flags.reference_device << " around each (those runs "
          << signed_percent(median_of(r.reference_runs) / r.reference_simulated - 1)
          << " against their simulation, median; " << r.unsteady_runs << " of " << r.measured_runs.size()
          << " runs between two more than " << fixed_text(100 * options.reference_tolerance, 0) << "% apart)\n";
    out << "start times   |measured - simulated| mean " << format_seconds(r.starts.mean) << ", median "
        << format_seconds(r.starts.median) << ", max " << format_seconds(r.starts.max)
        << (r.starts.worst == no_vertex ? std::string() : " ('" + run_graph[r.starts.worst].name + "')") << "\n";
    out << "validate      ok (every measured run)\n";
    if (!flags.trace.empty())
      out << "traces        " << two_runs_path(flags.trace, ".simulated.json") << ", "
          << two_runs_path(flags.trace, ".measured.json") << "\n";
    if (!flags.svg.empty())
      out << "pictures      " << two_runs_path(flags.svg, ".simulated.svg") << ", "
          << two_runs_path(flags.svg, ".measured.svg") << "\n";
    return 0;
  }

  // A progress line on a terminal, none when stderr is piped.
  const bool terminal = isatty(STDERR_FILENO) != 0;
  const auto study = study_placements(sim_graph, sim_model, run_model, c, candidates, backend, options,
                                      [&](std::size_t done, std::size_t total, const std::string& name) {
                                        if (terminal)
                                          err << "\r[" << done + 1 << "/" << total << "] " << name << "\x1b[K"
                                              << std::flush;
                                      });
  if (terminal) err << "\r\x1b[K" << std::flush;
  bool all_valid = true;
  for (const auto& row : study.rows) all_valid = all_valid && row.result.valid;
  if (json) {
    nlohmann::ordered_json doc;
    doc["graph"] = flags.graph_path;
    doc["devices"] = c.device_count();
    for (const auto& [key, value] : setup.facts.items()) doc[key] = value;
    doc["runs"] = flags.runs;
    doc["launch_overhead"] = overhead;
    doc["compared"] = study.compared;
    doc["median_abs_error"] = study.median_abs_error;
    doc["spearman"] = study.spearman;
    doc["pearson"] = study.pearson;
    // What two runs of each placement allow (absent with --runs 1): their Spearman and median gap.
    if (study.repeatability) doc["repeatability"] = *study.repeatability;
    if (study.run_spread) doc["run_spread"] = *study.run_spread;
    // With --reference-device: the errors relative to the runs around each, how far those runs
    // moved against their simulation over the study, and how many runs lay between two that
    // disagreed by more than 10% (the machine changed speed during them).
    if (options.reference) {
      doc["reference_device"] = flags.reference_device;
      if (study.median_abs_referenced_error) doc["median_abs_referenced_error"] = *study.median_abs_referenced_error;
      if (study.referenced_spearman) doc["referenced_spearman"] = *study.referenced_spearman;
      if (study.reference_range)
        doc["reference_range"] = {study.reference_range->first - 1, study.reference_range->second - 1};
      doc["unsteady_runs"] = study.unsteady_runs;
    }
    doc["placements"] = nlohmann::ordered_json::array();
    for (const auto& row : study.rows) doc["placements"].push_back(comparison_json(row.name, row.result, run_graph));
    out << doc.dump(2) << "\n";
    return all_valid ? 0 : 1;
  }
  std::size_t name_width = std::string("placement").size();
  for (const auto& row : study.rows) name_width = std::max(name_width, row.name.size());
  const int name_column = static_cast<int>(name_width) + 2;
  out << std::left << std::setw(name_column) << "placement" << std::right << std::setw(13) << "simulated"
      << std::setw(13) << "measured" << std::setw(10) << "error" << std::setw(14) << "start error"
      << (options.reference ? "    referenced" : "") << "\n";
  for (const auto& row : study.rows) {
    out << std::left << std::setw(name_column) << row.name << std::right;
    if (!row.result.ok()) {
      out << "  " << to_string(row.result.outcome.code) << ": " << row.result.outcome.message << "\n";
      continue;
    }
    out << std::setw(13) << format_seconds(row.result.simulated) << std::setw(13) << format_seconds(row.result.measured)
        << std::setw(10) << signed_percent(row.result.error) << std::setw(14) << format_seconds(row.result.starts.mean);
    if (row.result.referenced_error) out << std::setw(14) << signed_percent(*row.result.referenced_error);
    out << (row.result.valid ? "" : "  INVALID") << "\n";
  }
  out << "\n"
      << study.compared << " placements, " << flags.runs << " runs each (median): median |error| "
      << fixed_text(100 * study.median_abs_error, 1) << "%, Spearman " << fixed_text(study.spearman, 3) << ", Pearson "
      << fixed_text(study.pearson, 3) << "\n";
  if (study.repeatability && study.run_spread)
    out << "first run against last: Spearman " << fixed_text(*study.repeatability, 3) << ", median gap "
        << fixed_text(100 * *study.run_spread, 1) << "% (what this machine's noise leaves any simulator)\n";
  if (study.reference_range) {
    out << "relative to the runs on device " << flags.reference_device << " around each: median |error| ";
    if (study.median_abs_referenced_error) out << fixed_text(100 * *study.median_abs_referenced_error, 1) << "%";
    else out << "- (every placement is the reference's)";
    if (study.referenced_spearman) out << ", Spearman " << fixed_text(*study.referenced_spearman, 3);
    out << "; that run measured " << signed_percent(study.reference_range->first - 1) << " to "
        << signed_percent(study.reference_range->second - 1) << " against its simulation; " << study.unsteady_runs
        << " of " << study.compared_runs << " runs between two more than "
        << fixed_text(100 * options.reference_tolerance, 0) << "% apart\n";
  }
  if (!all_valid) err << "gantry execute: a measured schedule fails validate()\n";
  return all_valid ? 0 : 1;
}

// The shaped operations of a graph for --kernel work; refuses a graph with none to run.
[[nodiscard]] inline std::vector<operation> work_operations(const execute_flags& flags, const graph& g,
                                                            std::size_t& shaped) {
  if (flags.time_scale != 1) throw invalid_input("--kernel work runs the real operations: --time-scale must be 1");
  auto ops = operations_of(g);
  shaped = static_cast<std::size_t>(
      std::count_if(ops.begin(), ops.end(), [](const operation& o) { return o.kind != operation_kind::timed; }));
  if (shaped == 0)
    throw invalid_input("--kernel work: '" + flags.graph_path +
                        "' has no operation to run (the matmul and element-wise ops of `gantry workload` graphs)");
  return ops;
}

// The backends' own parts: execute_cpu.cpp, execute_starpu.cpp where StarPU was found, and, in
// gantry-cuda, execute_cuda.cpp.
int run_cpu_execute(const execute_flags& flags, std::optional<cluster> given, graph_file& file, std::ostream& out,
                    std::ostream& err);
#if GANTRY_CLI_HAS_STARPU
int run_starpu_execute(const execute_flags& flags, std::optional<cluster> given, graph_file& file, std::ostream& out,
                       std::ostream& err);
#endif
#if GANTRY_CLI_HAS_STARPU_MPI
int run_starpu_mpi_execute(const execute_flags& flags, std::optional<cluster> given, graph_file& file,
                           std::ostream& out, std::ostream& err);
#endif
#if GANTRY_CLI_HAS_CUDA
int run_cuda_execute(const execute_flags& flags, const backend_choice& b, std::optional<cluster> given,
                     graph_file& file, std::ostream& out, std::ostream& err);
#endif

}  // namespace gantry::cli
