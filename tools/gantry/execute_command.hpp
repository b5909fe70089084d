// `gantry calibrate` and `gantry execute`: measure this machine's CPU backend and write a cluster
// file; run placements for real on it and report how well the simulator predicted them
// (docs/executors.md). Devices are threads: on a machine of H hardware threads at most H devices
// (fewer, counting the executor's own thread) truly run in parallel, and the output says so.
#pragma once

#include "bounds_report.hpp"
#include "pipeline_command.hpp"

#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/study.hpp>
#include <gantry/io/atomic_file.hpp>
#include <gantry/io/chrome_trace.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/io/svg_gantt.hpp>
#include <gantry/io/units.hpp>
#if GANTRY_CLI_HAS_LEARN
#include <gantry/exec/eigen_operations.hpp>
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace gantry::cli {

struct calibrate_flags {
  std::size_t devices = 2;
  std::string memory = "unlimited";
  std::string comm = "parallel";
  std::string out;
};

struct execute_flags {
  std::string graph_path;
  graph_reading reading;
  std::string cluster_path;
  std::size_t devices = 2;
  std::string memory = "unlimited";
  std::string comm = "parallel";
  std::string algorithm = "m-etf";
  std::string policy = "placement-order";
  bool no_cache = false;
  std::size_t runs = 5;
  std::size_t placements = 0;
  std::uint64_t seed = 1;
  double time_scale = 1;
  std::string launch_overhead = "auto";
  std::string kernel = "auto";
  std::string trace, svg;
  std::string output_format = "table";
};

[[nodiscard]] inline comm_mode comm_from(const std::string& text) {
  return text == "sequential" ? comm_mode::sequential : text == "duplex" ? comm_mode::duplex : comm_mode::parallel;
}

[[nodiscard]] inline std::string fixed_text(double x, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << x;
  return out.str();
}
[[nodiscard]] inline std::string signed_percent(double x) { return (x >= 0 ? "+" : "") + fixed_text(100 * x, 1) + "%"; }

// The cluster with every link `scale` times slower (latency × scale, bandwidth / scale).
[[nodiscard]] inline cluster with_link_times(const cluster& c, double scale) {
  const auto scaled = [scale](link_model l) { return link_model{l.latency * scale, l.bandwidth / scale}; };
  cluster out(c.devices(), scaled(c.default_link()), c.comm());
  if (!c.nodes().empty()) out.set_nodes(c.nodes());
  for (const auto& [pair, l] : c.own_links()) out.set_link(pair.first, pair.second, scaled(l));
  return out;
}

[[nodiscard]] inline std::string hardware_note(std::size_t devices, unsigned threads, bool sleeping = false) {
  std::string text = "this machine has " + std::to_string(threads) + " hardware threads";
  if (threads == 0 || devices + 1 <= threads) return text;
  if (sleeping)
    return text + ": sleep kernels free the cores, so all " + std::to_string(devices) +
           " devices run in parallel; copies and the executor share the cores";
  return text + ": the " + std::to_string(devices) + " device threads and the executor's own share them, so at most " +
         std::to_string(std::min<std::size_t>(devices, threads)) +
         " devices truly run in parallel and measured times include the sharing";
}

inline int run_calibrate_command(const calibrate_flags& flags, std::ostream& out) {
  const byte_count capacity = flags.memory == "unlimited" ? unlimited_memory : parse_bytes(flags.memory);
  const auto calibration = calibrate_cpu({.devices = flags.devices});
  const cluster c = calibrated_cluster(calibration, flags.devices, capacity, comm_from(flags.comm));
  if (!flags.out.empty()) write_cluster(flags.out, c);
  out << "busy loop      " << std::setprecision(4) << calibration.loop_rate << " iterations/s\n";
  out << "launch         " << format_seconds(calibration.launch_overhead)
      << " per vertex (the executor's round trip for a vertex of no work)\n";
  out << "copies         ";
  for (const auto& s : calibration.samples)
    out << format_bytes(static_cast<byte_count>(s.bytes)) << " " << format_seconds(s.time) << "  ";
  out << "\nlink           " << format_seconds(calibration.link.link.latency) << " + bytes / "
      << format_bytes(static_cast<byte_count>(calibration.link.link.bandwidth)) << "/s (r^2 "
      << fixed_text(calibration.link.r_squared, 3) << ")\n";
  out << "note           " << hardware_note(flags.devices, calibration.hardware_threads) << "\n";
  if (!flags.out.empty()) out << "cluster        " << flags.devices << " CPU devices written to " << flags.out << "\n";
  return 0;
}

[[nodiscard]] inline nlohmann::ordered_json comparison_json(const std::string& name, const comparison& r, const graph& g) {
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
  return row;
}

inline int run_execute_command(const execute_flags& flags, std::ostream& out, std::ostream& err) {
  if (!std::isfinite(flags.time_scale) || flags.time_scale <= 0)
    throw invalid_input("--time-scale must be a finite number > 0, got " + std::to_string(flags.time_scale));
  auto file = read_any_graph_file(flags.graph_path, flags.reading);
  const bool json = flags.output_format == "json";
  std::ostream& text = json ? err : out;

  // The machine first: the busy loop's rate and the executor's launch overhead are always measured
  // here; the link comes from --cluster, or from this calibration.
  const auto calibration = calibrate_cpu({.devices = std::max<std::size_t>(flags.devices, 2)});
  cluster base_cluster;
  if (!flags.cluster_path.empty()) {
    base_cluster = read_cluster(flags.cluster_path);
  } else {
    const byte_count capacity = flags.memory == "unlimited" ? unlimited_memory : parse_bytes(flags.memory);
    base_cluster = calibrated_cluster(calibration, flags.devices, capacity, comm_from(flags.comm));
  }
  const cluster c = with_link_times(base_cluster, flags.time_scale);
  const seconds overhead = flags.launch_overhead == "auto" ? calibration.launch_overhead : parse_duration(flags.launch_overhead);
  // Real work: the graph's products and element-wise ops run with Eigen, their times profiled here
  // first, so the placers and the simulator see this machine.
  const bool real_work = flags.kernel == "work";
#if GANTRY_CLI_HAS_LEARN
  std::unique_ptr<eigen_operations> operations;
  if (real_work) {
    if (flags.time_scale != 1) throw invalid_input("--kernel work runs the real operations: --time-scale must be 1");
    auto ops = operations_of(file.graph);
    const auto shaped = static_cast<std::size_t>(std::count_if(
        ops.begin(), ops.end(), [](const operation& o) { return o.kind != operation_kind::timed; }));
    if (shaped == 0)
      throw invalid_input("--kernel work: '" + flags.graph_path +
                          "' has no operation to run (the matmul and element-wise ops of `gantry workload` graphs)");
    operations = std::make_unique<eigen_operations>(std::move(ops), c.device_count());
    file.graph = with_profiled_times(file.graph, profile_operations(*operations, file.graph));
    seconds work = 0;
    for (const auto& v : file.graph.vertices()) work += v.compute;
    text << "profile       " << shaped << " of " << file.graph.vertex_count() << " vertices run real work, timed here: "
         << format_seconds(work) << " of compute in all\n";
  }
#else
  if (real_work) throw invalid_input("--kernel work needs a gantry built with Eigen");
#endif
  // The executor runs the scaled graph; the simulator and placers see it with the launch overhead
  // added to every vertex, which the executor pays but does not run.
  const graph run_graph = with_compute_times(file.graph, flags.time_scale, 0);
  const graph sim_graph = with_compute_times(file.graph, flags.time_scale, overhead);
  const graph_model run_model(run_graph, c), sim_model(sim_graph, c);

  simulate_options rules;
  rules.policy = parse_enum<ready_policy>(flags.policy).value_or(ready_policy::placement_order);  // checked by CLI11
  rules.cache_transfers = !flags.no_cache;
  // auto: spin where every device thread and the executor's get a core of their own, else sleep
  // (a spinning device would take the core the executor needs to dispatch).
  const cpu_kernel kernel = flags.kernel == "busy-loop" ? cpu_kernel::busy_loop
                            : flags.kernel == "spin"    ? cpu_kernel::spin
                            : flags.kernel == "sleep"   ? cpu_kernel::sleep
                            : real_work                 ? cpu_kernel::work
                            : c.device_count() + 1 <= calibration.hardware_threads ? cpu_kernel::spin
                                                                                   : cpu_kernel::sleep;
  cpu_backend_options backend_options{.kernel = kernel, .loop_rate = calibration.loop_rate};
#if GANTRY_CLI_HAS_LEARN
  if (real_work) backend_options.work = [&operations](const vertex_launch& v) { (*operations)(v); };
#endif
  cpu_backend backend(std::move(backend_options));

  text << "executor      cpu backend: " << c.device_count() << " devices as threads, " << to_string(kernel)
       << " kernels, memcpy copies paced to "
       << format_seconds(c.default_link().latency) << " + bytes / "
       << format_bytes(static_cast<byte_count>(std::min(c.default_link().bandwidth, 1e18))) << "/s\n";
  text << "note          " << hardware_note(c.device_count(), calibration.hardware_threads, kernel == cpu_kernel::sleep) << "\n";
  if (real_work)
    text << "note          times were profiled with each vertex alone; devices computing side by side share caches and "
            "memory bandwidth, and a copy's memcpy takes a core (docs/executors.md)\n";
  text << "launch        " << format_seconds(overhead) << " per vertex, added to every simulated vertex"
       << (flags.launch_overhead == "auto" ? " (measured)" : "") << "\n";

  std::vector<placement_candidate> candidates;
  if (flags.placements > 0) {
    candidates = placement_candidates(sim_graph, sim_model, c, {.count = flags.placements, .seed = flags.seed});
    if (candidates.empty()) {
      err << "gantry execute: no placer places the graph on this cluster\n";
      return 1;
    }
  } else {
    const auto all = tool_placers(1, nullptr);
    const auto* entry = find_tool_placer(all, flags.algorithm);
    if (entry == nullptr) throw invalid_input("unknown algorithm '" + flags.algorithm + "'; `gantry algorithms` lists them");
    auto placed = entry->place({sim_graph, sim_model, c, !flags.no_cache});
    if (!placed.placement.ok()) {
      err << "gantry execute: " << flags.algorithm << " failed (" << to_string(placed.placement.outcome.code)
          << "): " << placed.placement.outcome.message << "\n";
      return 1;
    }
    candidates.push_back({flags.algorithm, std::move(placed.placement.device), std::move(placed.placement.order)});
  }
  // A first run warms the backend's buffers and threads up; it is not counted.
  (void)compare_run(sim_graph, sim_model, run_model, c, candidates.front(), backend, {.runs = 1, .simulation = rules});
  const compare_options options{.runs = flags.runs, .simulation = rules};

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
    const auto stage = [&](const std::string& prefix, const char* suffix, auto content) {
      if (!prefix.empty()) add_text_file(outputs, prefix + suffix, content());
    };
    stage(flags.trace, ".simulated.json", [&] { return chrome_trace_text(run_graph, r.simulation.schedule, {.devices = &c}); });
    stage(flags.trace, ".measured.json", [&] { return chrome_trace_text(run_graph, r.median_run.schedule, {.devices = &c}); });
    stage(flags.svg, ".simulated.svg", [&] {
      return svg_gantt(run_graph, r.simulation.schedule, {.devices = &c, .title = "simulated"});
    });
    stage(flags.svg, ".measured.svg", [&] {
      return svg_gantt(run_graph, r.median_run.schedule, {.devices = &c, .title = "measured (median run)"});
    });
    outputs.commit();
    if (json) {
      auto row = comparison_json(flags.algorithm, r, run_graph);
      row["runs"] = flags.runs;
      row["launch_overhead"] = overhead;
      row["hardware_threads"] = calibration.hardware_threads;
      out << row.dump(2) << "\n";
      return 0;
    }
    out << "algorithm     " << flags.algorithm << "\n";
    out << "simulated     " << format_seconds(r.simulated) << "\n";
    out << "measured      " << format_seconds(r.measured) << " (median of " << flags.runs << " runs; min "
        << format_seconds(r.measured_min) << ", max " << format_seconds(r.measured_max) << ", spread "
        << fixed_text(100 * (r.measured_max - r.measured_min) / r.measured, 1) << "%)\n";
    out << "error         " << signed_percent(r.error) << " (measured / simulated - 1)\n";
    out << "start times   |measured - simulated| mean " << format_seconds(r.starts.mean) << ", median "
        << format_seconds(r.starts.median) << ", max " << format_seconds(r.starts.max)
        << (r.starts.worst == no_vertex ? std::string() : " ('" + run_graph[r.starts.worst].name + "')") << "\n";
    out << "validate      ok (every measured run)\n";
    if (!flags.trace.empty()) out << "traces        " << flags.trace << ".simulated.json, " << flags.trace << ".measured.json\n";
    return 0;
  }

  const auto study = study_placements(sim_graph, sim_model, run_model, c, candidates, backend, options);
  bool all_valid = true;
  for (const auto& row : study.rows) all_valid = all_valid && row.result.valid;
  if (json) {
    nlohmann::ordered_json doc;
    doc["graph"] = flags.graph_path;
    doc["devices"] = c.device_count();
    doc["hardware_threads"] = calibration.hardware_threads;
    doc["runs"] = flags.runs;
    doc["launch_overhead"] = overhead;
    doc["compared"] = study.compared;
    doc["median_abs_error"] = study.median_abs_error;
    doc["spearman"] = study.spearman;
    doc["pearson"] = study.pearson;
    doc["placements"] = nlohmann::ordered_json::array();
    for (const auto& row : study.rows) doc["placements"].push_back(comparison_json(row.name, row.result, run_graph));
    out << doc.dump(2) << "\n";
    return all_valid ? 0 : 1;
  }
  out << std::left << std::setw(22) << "placement" << std::right << std::setw(13) << "simulated" << std::setw(13)
      << "measured" << std::setw(10) << "error" << std::setw(14) << "start error" << "\n";
  for (const auto& row : study.rows) {
    out << std::left << std::setw(22) << row.name << std::right;
    if (!row.result.ok()) {
      out << "  " << to_string(row.result.outcome.code) << ": " << row.result.outcome.message << "\n";
      continue;
    }
    out << std::setw(13) << format_seconds(row.result.simulated) << std::setw(13) << format_seconds(row.result.measured)
        << std::setw(10) << signed_percent(row.result.error) << std::setw(14) << format_seconds(row.result.starts.mean)
        << (row.result.valid ? "" : "  INVALID") << "\n";
  }
  out << "\n" << study.compared << " placements, " << flags.runs << " runs each (median): median |error| "
      << fixed_text(100 * study.median_abs_error, 1) << "%, Spearman " << fixed_text(study.spearman, 3) << ", Pearson "
      << fixed_text(study.pearson, 3) << "\n";
  if (!all_valid) err << "gantry execute: a measured schedule fails validate()\n";
  return all_valid ? 0 : 1;
}

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

inline void register_execute_commands(CLI::App& app) {
  auto calibrate = std::make_shared<calibrate_flags>();
  auto* cal = app.add_subcommand("calibrate", "measure this machine's CPU backend (busy loop, launch overhead, copies "
                                              "between device buffers) and write a cluster file");
  cal->add_option("--devices,-d", calibrate->devices, "CPU devices (threads) in the cluster")
      ->check(CLI::Range(std::size_t{2}, std::size_t{256}))
      ->capture_default_str();
  cal->add_option("--memory,-m", calibrate->memory, "memory per device, e.g. 1GiB, or 'unlimited'")->capture_default_str();
  cal->add_option("--comm", calibrate->comm, "parallel, sequential or duplex")
      ->check(CLI::IsMember({"parallel", "sequential", "duplex"}))
      ->capture_default_str();
  cal->add_option("--out,-o", calibrate->out, "write the cluster (JSON) here");
  cal->callback([calibrate] { run_in_callback("calibrate", [&] { return run_calibrate_command(*calibrate, std::cout); }); });

  auto flags = std::make_shared<execute_flags>();
  auto* ex = app.add_subcommand("execute", "place, simulate and run a graph for real on CPU threads; report simulated "
                                           "vs measured makespans");
  ex->add_option("--graph,-g", flags->graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")
      ->required()
      ->check(CLI::ExistingFile);
  add_graph_reading_options(*ex, flags->reading);
  auto* cluster_option = ex->add_option("--cluster", flags->cluster_path, "cluster file (from `gantry calibrate`)")
                             ->check(CLI::ExistingFile);
  ex->add_option("--devices,-d", flags->devices, "without --cluster: CPU devices, linked as calibrated now")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}))
      ->excludes(cluster_option)
      ->capture_default_str();
  ex->add_option("--memory,-m", flags->memory, "without --cluster: memory per device")->excludes(cluster_option)->capture_default_str();
  ex->add_option("--comm", flags->comm, "without --cluster: parallel, sequential or duplex")
      ->check(CLI::IsMember({"parallel", "sequential", "duplex"}))
      ->excludes(cluster_option)
      ->capture_default_str();
  ex->add_option("--algorithm,-a", flags->algorithm, "placer to run (`gantry algorithms` lists them)")->capture_default_str();
  ex->add_option("--policy", flags->policy, "which ready vertex a device runs first (simulation and execution alike)")
      ->check(CLI::IsMember(enum_name_list<ready_policy>()))
      ->capture_default_str();
  ex->add_flag("--no-cache", flags->no_cache, "send a tensor once per consumer instead of once per device");
  ex->add_option("--runs", flags->runs, "measured runs per placement (the median is reported)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}))
      ->capture_default_str();
  ex->add_option("--placements", flags->placements,
                 "compare this many placements (every placer, then seeded random perturbations of them)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{10000}));
  ex->add_option("--seed", flags->seed, "seed of the perturbations")->capture_default_str();
  ex->add_option("--time-scale", flags->time_scale, "run every compute and transfer time this many times longer")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              std::size_t used = 0;
              const double x = std::stod(text, &used);
              if (used == text.size() && std::isfinite(x) && x > 0) return {};
            } catch (const std::exception&) {
            }
            return "expected a finite number > 0, got '" + text + "'";
          },
          "a finite number > 0"))
      ->capture_default_str();
  ex->add_option("--launch-overhead", flags->launch_overhead,
                 "added to every vertex's simulated time: 'auto' (measured now) or a duration, e.g. 0s, 20us")
      ->capture_default_str();
  ex->add_option("--kernel", flags->kernel,
                 "how a device thread spends a vertex's time: busy-loop (calibrated iterations), spin (on the clock), "
                 "sleep (frees the core), work (the graph's own products and element-wise ops with Eigen, profiled "
                 "first: `gantry workload` graphs), auto (spin when every device and the executor get a core, "
                 "else sleep)")
      ->check(CLI::IsMember({"auto", "busy-loop", "spin", "sleep", "work"}))
      ->capture_default_str();
  ex->add_option("--trace", flags->trace, "write PREFIX.simulated.json and PREFIX.measured.json (Chrome traces)");
  ex->add_option("--svg", flags->svg, "write PREFIX.simulated.svg and PREFIX.measured.svg (Gantt charts)");
  ex->add_option("--format", flags->output_format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  ex->callback([flags] { run_in_callback("execute", [&] { return run_execute_command(*flags, std::cout, std::cerr); }); });
}

}  // namespace gantry::cli
