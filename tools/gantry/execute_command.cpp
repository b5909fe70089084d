// `gantry calibrate` and `gantry execute`: measure this machine's CPU backend (or, in gantry-cuda,
// its GPUs: --backend cuda) and write a cluster file; run placements for real on it and report how
// well the simulator predicted them (docs/executors.md). CPU devices are threads: on a machine of H
// hardware threads at most H devices (fewer, counting the executor's own thread) truly run in
// parallel, and the output says so. CUDA devices are SM partitions of one GPU (green contexts) or
// whole GPUs; both backends go through one flow (run_execution).

#include "bounds_report.hpp"
#include "commands.hpp"
#include "inputs.hpp"
#include "warnings.hpp"

#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/operations.hpp>
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
#ifndef GANTRY_CLI_HAS_CUDA  // tools/CMakeLists.txt sets it: 1 for gantry-cuda
#define GANTRY_CLI_HAS_CUDA 0
#endif
#if GANTRY_CLI_HAS_CUDA
#include "cuda_tool.hpp"
#endif

#include <CLI/CLI.hpp>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace gantry::cli {

// Which backend runs the devices, and for CUDA which GPUs; the same options on calibrate and
// execute. Unset values (0, empty, -1) are told apart from given ones so that a CUDA option with
// --backend cpu is refused rather than ignored.
struct backend_flags {
  std::string backend = "cpu";      // cpu or cuda
  std::size_t partitions = 0;       // SM partitions of one GPU as devices; 0: not given
  std::string gpus;                 // whole GPUs, comma separated; empty: not given
  int gpu = -1;                     // the GPU to partition; -1: not given (GPU 0)
  long long sms_per_partition = -1; // -1: not given; 0: the largest equal split the GPU allows
  bool devices_given = false;       // --devices was on the command line
};

struct calibrate_flags {
  backend_flags backend;
  std::size_t devices = 2;
  std::string memory = "unlimited";
  std::string comm = "parallel";
  std::string out;
};

struct execute_flags {
  backend_flags backend;
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

[[nodiscard]] inline std::string signed_percent(double x) { return (x >= 0 ? "+" : "") + fixed_text(100 * x, 1) + "%"; }

// The cluster with every link and bandwidth domain `scale` times slower (latency × scale,
// bandwidth / scale); nodes and cores as they were.
[[nodiscard]] inline cluster with_link_times(const cluster& c, double scale) {
  const auto scaled = [scale](link_model l) { return link_model{l.latency * scale, l.bandwidth / scale}; };
  cluster out(c.devices(), scaled(c.default_link()), c.comm());
  if (!c.nodes().empty()) out.set_nodes(c.nodes());
  for (auto domain : c.domains()) {  // every time `scale` times longer: the same bytes at 1 / scale the rate
    domain.bandwidth /= scale;
    out.add_domain(std::move(domain));
  }
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

// Where to get a gantry that runs --backend cuda.
inline constexpr const char* no_cuda_build_text =
    "--backend cuda: this gantry was built without CUDA. gantry-cuda runs it: configure with nvcc found "
    "(CUDACXX=/path/to/nvcc, or nvcc at /usr/local/cuda/bin/nvcc), build the target gantry_cuda_cli "
    "(cmake --build BUILD --target gantry_cuda_cli) and run BUILD/tools/gantry-cuda";

// GPU numbers separated by commas ("0,1"), each once: a GPU is one whole device.
[[nodiscard]] inline std::vector<int> parse_gpu_list(const std::string& text) {
  const auto bad = [&] {
    return invalid_input("--gpus: expected GPU numbers separated by commas, e.g. 0,1, got '" + text + "'");
  };
  std::vector<int> out;
  std::set<int> seen;
  for (std::size_t at = 0;;) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    int gpu = -1;
    const auto [end, error] = std::from_chars(text.data() + at, text.data() + comma, gpu);
    if (error != std::errc{} || end != text.data() + comma || gpu < 0) throw bad();
    if (!seen.insert(gpu).second)
      throw invalid_input("--gpus: GPU " + std::to_string(gpu) + " is listed twice in '" + text +
                          "'; each GPU is one whole device");
    out.push_back(gpu);
    if (comma == text.size()) return out;
    at = comma + 1;
  }
}

// The backend options, checked: for CUDA, which GPUs and how many devices.
struct backend_choice {
  bool cuda = false;
  std::vector<int> gpus;           // whole GPUs; empty: partitions of `gpu`
  int gpu = 0;
  unsigned sms_per_partition = 0;
  std::size_t devices = 0;         // CUDA: the partitions or GPUs (CPU: the command's own count)
};

// Checks the backend options against each other and against the device count the command was
// given (`devices`, from `devices_source`: "--devices" or the cluster file; empty when neither was
// given and `devices` is the default), naming the flag. Refuses --backend cuda where this gantry
// was built without CUDA, after the flags themselves are checked.
[[nodiscard]] inline backend_choice check_backend_flags(const backend_flags& f, std::size_t devices,
                                                        const std::string& devices_source) {
  backend_choice out;
  out.devices = devices;
  const char* cuda_only = f.partitions != 0          ? "--partitions"
                          : !f.gpus.empty()          ? "--gpus"
                          : f.gpu >= 0               ? "--gpu"
                          : f.sms_per_partition >= 0 ? "--sms-per-partition"
                                                     : nullptr;
  if (f.backend != "cuda") {
    if (f.backend != "cpu") throw invalid_input("--backend: expected cpu or cuda, got '" + f.backend + "'");
    if (cuda_only != nullptr)
      throw invalid_input(std::string(cuda_only) + " needs --backend cuda (CPU devices are threads: --devices N)");
    return out;
  }
  out.cuda = true;
  if (f.partitions != 0 && !f.gpus.empty())
    throw invalid_input("--gpus '" + f.gpus + "' and --partitions " + std::to_string(f.partitions) +
                        ": give one: whole GPUs (--gpus 0,1) or SM partitions of one GPU (--partitions N)");
  if (!f.gpus.empty()) {
    if (f.gpu >= 0)
      throw invalid_input("--gpu " + std::to_string(f.gpu) + " picks the GPU to partition; with --gpus every listed GPU "
                          "is one whole device");
    if (f.sms_per_partition >= 0)
      throw invalid_input("--sms-per-partition " + std::to_string(f.sms_per_partition) +
                          " sizes partitions; with --gpus every listed GPU is one whole device");
    out.gpus = parse_gpu_list(f.gpus);
    out.devices = out.gpus.size();
  } else {
    out.gpu = std::max(f.gpu, 0);
    out.sms_per_partition = static_cast<unsigned>(std::max(f.sms_per_partition, 0LL));
    if (f.partitions != 0) out.devices = f.partitions;
  }
  const bool chosen = f.partitions != 0 || !f.gpus.empty();
  if (chosen && !devices_source.empty() && devices != out.devices)
    throw invalid_input(devices_source + " gives " + std::to_string(devices) + " devices, but " +
                        (f.gpus.empty() ? "--partitions " + std::to_string(f.partitions)
                                        : "--gpus '" + f.gpus + "' lists " + std::to_string(out.devices) + " GPUs") +
                        ": give one count");
#if !GANTRY_CLI_HAS_CUDA
  throw invalid_input(no_cuda_build_text);
#endif
  return out;
}

// What a calibration measured: the round trip per vertex, the copies and the fitted link.
inline void print_calibration(std::ostream& out, seconds launch_overhead, const std::vector<transfer_sample>& samples,
                              const link_fit& link) {
  out << "launch         " << format_seconds(launch_overhead)
      << " per vertex (the executor's round trip for a vertex of no work)\n";
  out << "copies         ";
  for (const auto& s : samples) out << format_bytes(static_cast<byte_count>(s.bytes)) << " " << format_seconds(s.time) << "  ";
  out << "\nlink           " << format_seconds(link.link.latency) << " + bytes / "
      << format_bytes(static_cast<byte_count>(std::min(link.link.bandwidth, 1e18))) << "/s (r^2 "
      << fixed_text(link.r_squared, 3) << ")\n";
}

// What the memory-bandwidth probe measured, and the domain written with the cluster.
inline void print_domain(std::ostream& out, const domain_measurement& m, const std::string& unit) {
  out << "memory         " << unit << " alone " << format_bytes(static_cast<byte_count>(m.alone_bandwidth())) << "/s, all "
      << m.devices << " at once " << format_bytes(static_cast<byte_count>(m.together_bandwidth()))
      << "/s in all (a bandwidth-bound sum x" << fixed_text(m.slowdown(), 2)
      << " beside the others): the devices' shared bandwidth domain\n";
}

#if GANTRY_CLI_HAS_CUDA
// A GPU-less machine fails the run (exit 1); a GPU number beyond the machine's is bad input.
inline void check_cuda_gpus(const backend_choice& b) {
  std::string why;
  const int count = cuda_gpu_count(why);
  if (count == 0) throw std::runtime_error("--backend cuda: no CUDA GPU was found (" + why + ")");
  const auto beyond = [&](int gpu, const std::string& flag) {
    if (gpu >= count)
      throw invalid_input(flag + ": this machine has " + std::to_string(count) + " CUDA GPU" + (count == 1 ? "" : "s") +
                          ", numbered from 0 to " + std::to_string(count - 1));
  };
  if (b.gpus.empty()) beyond(b.gpu, "--gpu " + std::to_string(b.gpu));
  for (const int gpu : b.gpus) beyond(gpu, "--gpus: GPU " + std::to_string(gpu));
}

[[nodiscard]] inline cuda_tool_options cuda_options_of(const backend_choice& b) {
  cuda_tool_options o;
  o.gpus = b.gpus;
  o.gpu = b.gpu;
  o.sms_per_partition = b.sms_per_partition;
  return o;
}

// The CUDA devices ("gpu1" for a whole GPU, "gpu0.p2" for partition 2 of GPU 0; kind "gpu") of
// `capacity` bytes each, linked by `link` under `comm`.
[[nodiscard]] inline cluster cuda_cluster(const backend_choice& b, link_model link, byte_count capacity, comm_mode comm) {
  std::vector<device> list(b.devices);
  for (std::size_t d = 0; d < b.devices; ++d) {
    list[d].name = b.gpus.empty() ? "gpu" + std::to_string(b.gpu) + ".p" + std::to_string(d) : "gpu" + std::to_string(b.gpus[d]);
    list[d].kind = "gpu";
    list[d].capacity = capacity;
  }
  return cluster(std::move(list), link, comm);
}

// The round trip per vertex and, on 2 devices or more, the link between devices 0 and 1.
[[nodiscard]] inline backend_calibration calibrate_cuda(any_backend& backend, std::size_t devices) {
  if (devices >= 2) return calibrate_backend(backend, {.devices = devices});
  backend_calibration out;
  out.launch_overhead = launch_round_trip(backend, 1);
  return out;
}

inline int run_cuda_calibrate(const calibrate_flags& flags, const backend_choice& b, std::ostream& out) {
  if (b.devices < 2)
    throw invalid_input(std::string(b.gpus.empty() ? "--partitions" : "--gpus") +
                        ": calibrate times copies between two devices: give at least 2, got " + std::to_string(b.devices));
  const byte_count capacity = size_option("--memory", flags.memory, true);
  check_cuda_gpus(b);
  auto backend = make_cuda_backend(cuda_options_of(b));
  const auto calibration = calibrate_backend(*backend, {.devices = b.devices});
  cluster c = cuda_cluster(b, calibration.link.link, capacity, comm_from(flags.comm));
  // Partitions of one GPU share its memory; whole GPUs each have their own.
  std::optional<domain_measurement> domain;
  if (b.gpus.empty()) {
    constexpr std::uint64_t probe_elements = std::uint64_t{1} << 26;  // 256 MiB per tensor
    auto options = cuda_options_of(b);
    options.operations = operations_of(bandwidth_probe(b.devices, probe_elements));
    auto probe = make_cuda_backend(options);
    domain = measure_domain(*probe, b.devices, probe_elements);
    add_measured_domain(c, *domain, "gpu" + std::to_string(b.gpu));
  }
  if (!flags.out.empty()) write_cluster(flags.out, c);
  out << "executor       cuda backend: " << cuda_description(*backend) << "\n";
  print_calibration(out, calibration.launch_overhead, calibration.samples, calibration.link);
  if (domain) print_domain(out, *domain, "one partition");
  if (!flags.out.empty()) out << "cluster        " << b.devices << " GPU devices written to " << flags.out << "\n";
  return 0;
}
#endif

inline int run_calibrate_command(const calibrate_flags& flags, std::ostream& out) {
  [[maybe_unused]] const auto choice = check_backend_flags(flags.backend, flags.devices, flags.backend.devices_given ? "--devices" : "");
#if GANTRY_CLI_HAS_CUDA
  if (choice.cuda) return run_cuda_calibrate(flags, choice, out);
#endif
  const byte_count capacity = size_option("--memory", flags.memory, true);
  if (const auto warning = busy_machine()) std::cerr << "gantry calibrate: warning: " << *warning << "\n";
  const auto calibration = calibrate_cpu({.devices = flags.devices});
  cluster c = calibrated_cluster(calibration, flags.devices, capacity, comm_from(flags.comm));
#if GANTRY_CLI_HAS_LEARN
  // The devices share this machine's memory (a bandwidth-bound sum with Eigen, alone and on every
  // device at once) and its hardware threads (device threads and copies).
  constexpr std::uint64_t probe_elements = std::uint64_t{1} << 24;  // 64 MiB per tensor: past the caches
  eigen_operations probe_ops(operations_of(bandwidth_probe(flags.devices, probe_elements)), flags.devices);
  cpu_backend probe({.kernel = cpu_kernel::work, .work = [&probe_ops](const vertex_launch& v) { probe_ops(v); }});
  const auto domain = measure_domain(probe, flags.devices, probe_elements);
  add_measured_domain(c, domain, "host", calibration.hardware_threads);
#endif
  if (!flags.out.empty()) write_cluster(flags.out, c);
  out << "busy loop      " << std::setprecision(4) << calibration.loop_rate << " iterations/s\n";
  print_calibration(out, calibration.launch_overhead, calibration.samples, calibration.link);
#if GANTRY_CLI_HAS_LEARN
  print_domain(out, domain, "one device");
#else
  out << "memory         not measured (this build has no Eigen to run the bandwidth probe): no shared domain written\n";
#endif
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

// What a backend's own part of `gantry execute` hands the shared flow: the cluster it measured or
// was given (link times already scaled), the launch overhead charged to every simulated vertex,
// and facts about the machine for --format json.
struct execution_setup {
  cluster devices;
  seconds overhead = 0;
  nlohmann::ordered_json facts = nlohmann::ordered_json::object();
};

// Where execute writes one of its two runs for an output named like place's ("run.json"): the
// run's name goes before the extension ("run.simulated.json"); a name without that extension is
// taken as a prefix ("run" -> "run.simulated.json"), as earlier versions did.
inline std::string two_runs_path(const std::string& file, std::string_view suffix) {
  const std::string_view extension = suffix.substr(suffix.rfind('.'));  // ".json" or ".svg"
  const std::string_view run = suffix.substr(0, suffix.size() - extension.size());  // ".simulated"
  std::string_view stem = file;
  if (stem.size() > extension.size() && stem.ends_with(extension)) stem.remove_suffix(extension.size());
  return std::string(stem) + std::string(run) + std::string(extension);
}

// The flow both backends share: place, simulate, execute --runs times, validate every run,
// report, write traces. `profiled` has the compute times the backend measured or the file gave.
template <execution_backend B>
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
  const graph_model run_model(run_graph, c), sim_model(sim_graph, c);

  simulate_options rules;
  rules.policy = parse_enum<ready_policy>(flags.policy).value_or(ready_policy::placement_order);  // checked by CLI11
  rules.cache_transfers = !flags.no_cache;

  std::vector<placement_candidate> candidates;
  if (flags.placements > 0) {
    // Set field by field: GCC 12 fails on designated initialisers of this struct in a template.
    candidate_options which;
    which.count = flags.placements;
    which.seed = flags.seed;
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
    const auto stage = [&](const std::string& file, const char* suffix, auto content) {
      if (!file.empty()) add_text_file(outputs, two_runs_path(file, suffix), content());
    };
    stage(flags.trace, ".simulated.json", [&] { return chrome_trace_text(run_graph, r.simulation.schedule, {.devices = &c}); });
    stage(flags.trace, ".measured.json", [&] { return chrome_trace_text(run_graph, r.median_run.schedule, {.devices = &c}); });
    const std::string heading = std::filesystem::path(flags.graph_path).filename().string() + ": " + flags.algorithm;
    stage(flags.svg, ".simulated.svg", [&] {
      return svg_gantt(run_graph, r.simulation.schedule,
                       {.devices = &c, .title = heading + ", simulated, makespan " + format_seconds(r.simulated)});
    });
    stage(flags.svg, ".measured.svg", [&] {
      return svg_gantt(run_graph, r.median_run.schedule,
                       {.devices = &c, .title = heading + ", measured (median of " + std::to_string(flags.runs) +
                                                    " runs), makespan " + format_seconds(r.measured)});
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
    out << "start times   |measured - simulated| mean " << format_seconds(r.starts.mean) << ", median "
        << format_seconds(r.starts.median) << ", max " << format_seconds(r.starts.max)
        << (r.starts.worst == no_vertex ? std::string() : " ('" + run_graph[r.starts.worst].name + "')") << "\n";
    out << "validate      ok (every measured run)\n";
    if (!flags.trace.empty())
      out << "traces        " << two_runs_path(flags.trace, ".simulated.json") << ", " << two_runs_path(flags.trace, ".measured.json")
          << "\n";
    if (!flags.svg.empty())
      out << "pictures      " << two_runs_path(flags.svg, ".simulated.svg") << ", " << two_runs_path(flags.svg, ".measured.svg")
          << "\n";
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
    doc["placements"] = nlohmann::ordered_json::array();
    for (const auto& row : study.rows) doc["placements"].push_back(comparison_json(row.name, row.result, run_graph));
    out << doc.dump(2) << "\n";
    return all_valid ? 0 : 1;
  }
  std::size_t name_width = std::string("placement").size();
  for (const auto& row : study.rows) name_width = std::max(name_width, row.name.size());
  const int name_column = static_cast<int>(name_width) + 2;
  out << std::left << std::setw(name_column) << "placement" << std::right << std::setw(13) << "simulated" << std::setw(13)
      << "measured" << std::setw(10) << "error" << std::setw(14) << "start error" << "\n";
  for (const auto& row : study.rows) {
    out << std::left << std::setw(name_column) << row.name << std::right;
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

inline int run_cpu_execute(const execute_flags& flags, std::optional<cluster> given, graph_file& file, std::ostream& out,
                           std::ostream& err) {
  const bool json = flags.output_format == "json";
  std::ostream& text = json ? err : out;

  // The machine first: the busy loop's rate and the executor's launch overhead are always measured
  // here; the link comes from --cluster, or from this calibration.
  const auto calibration = calibrate_cpu({.devices = std::max<std::size_t>(flags.devices, 2)});
  cluster base_cluster;
  if (given) {
    base_cluster = std::move(*given);
  } else {
    const byte_count capacity = size_option("--memory", flags.memory, true);
    base_cluster = calibrated_cluster(calibration, flags.devices, capacity, comm_from(flags.comm));
  }
  const seconds overhead = flags.launch_overhead == "auto" ? calibration.launch_overhead
                                                            : duration_option("--launch-overhead", flags.launch_overhead);
  execution_setup setup{.devices = with_link_times(base_cluster, flags.time_scale), .overhead = overhead};
  const cluster& c = setup.devices;
  // Real work: the graph's products and element-wise ops run with Eigen, their times profiled here
  // first, so the placers and the simulator see this machine.
  const bool real_work = flags.kernel == "work";
#if GANTRY_CLI_HAS_LEARN
  std::unique_ptr<eigen_operations> operations;
  if (real_work) {
    std::size_t shaped = 0;
    auto ops = work_operations(flags, file.graph, shaped);
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
       << " kernels, memcpy copies paced to " << link_text(c) << "\n";
  text << "note          " << hardware_note(c.device_count(), calibration.hardware_threads, kernel == cpu_kernel::sleep) << "\n";
  if (real_work)
    text << "note          times were profiled with each vertex alone; devices computing side by side share caches and "
            "memory bandwidth, and a copy's memcpy takes a core (docs/executors.md)\n";
  setup.facts["backend"] = "cpu";
  setup.facts["hardware_threads"] = calibration.hardware_threads;
  return run_execution(flags, file.graph, setup, backend, out, err);
}

#if GANTRY_CLI_HAS_CUDA
inline int run_cuda_execute(const execute_flags& flags, const backend_choice& b, std::optional<cluster> given,
                            graph_file& file, std::ostream& out, std::ostream& err) {
  const bool json = flags.output_format == "json";
  std::ostream& text = json ? err : out;
  if (flags.kernel != "auto" && flags.kernel != "spin" && flags.kernel != "work")
    throw invalid_input("--kernel " + flags.kernel + " is a CPU backend's kernel; with --backend cuda: spin (the "
                        "default) or work");
  // Real work: products with cuBLAS and element-wise kernels, profiled on device 0 first.
  const bool real_work = flags.kernel == "work";
  std::size_t shaped = 0;
  std::vector<operation> operations;
  if (real_work) operations = work_operations(flags, file.graph, shaped);
  check_cuda_gpus(b);

  // The round trip per vertex is always measured here; the link comes from --cluster, or from
  // copies between devices 0 and 1 now. Calibration runs spin kernels (a vertex of no work is an
  // empty one), so a run of real work gets a backend of its own.
  cuda_tool_options options = cuda_options_of(b);
  // The simulation moves every byte of a tensor, so each device's copy buffer holds the largest
  // (a capped copy would run faster than simulated: FFNN's 1 GiB activations measured 20% short).
  byte_count largest = std::size_t{1} << 20;
  for (edge_id e = 0; e < file.graph.edge_count(); ++e) largest = std::max(largest, file.graph.bytes(e));
  options.max_copy_bytes = static_cast<std::size_t>(largest);
  std::unique_ptr<any_backend> backend = make_cuda_backend(options);
  const auto calibration = calibrate_cuda(*backend, b.devices);
  const byte_count capacity = size_option("--memory", flags.memory, true);
  const cluster base_cluster =
      given ? std::move(*given) : cuda_cluster(b, calibration.link.link, capacity, comm_from(flags.comm));
  const seconds overhead = flags.launch_overhead == "auto" ? calibration.launch_overhead
                                                            : duration_option("--launch-overhead", flags.launch_overhead);
  execution_setup setup{.devices = with_link_times(base_cluster, flags.time_scale), .overhead = overhead};
  const cluster& c = setup.devices;
  if (real_work) {
    options.operations = std::move(operations);
    backend.reset();  // one set of contexts on the GPU at a time
    backend = make_cuda_backend(options);
    file.graph = with_profiled_times(file.graph, cuda_profile(*backend, file.graph, c.device_count()));
    seconds work = 0;
    for (const auto& v : file.graph.vertices()) work += v.compute;
    text << "profile       " << shaped << " of " << file.graph.vertex_count()
         << " vertices run real work, timed on the GPU: " << format_seconds(work) << " of compute in all\n";
  }
  backend->begin(c.device_count());  // sets the GPUs or partitions up, so they can be described
  const std::string description = cuda_description(*backend);
  text << "executor      cuda backend: " << description << ", "
       << (real_work ? "real work (cuBLAS products, element-wise kernels)" : "spin kernels of the modelled durations")
       << ", copies modelled as " << link_text(c) << ", each moving its whole tensor (the largest "
       << format_bytes(largest) << ")\n";
  if (real_work)
    text << "note          times were profiled with each vertex alone on device 0; partitions of one GPU share its "
            "memory bandwidth and L2 cache (docs/executors.md)\n";
  setup.facts["backend"] = "cuda";
  setup.facts["executor"] = description;
  return run_execution(flags, file.graph, setup, *backend, out, err);
}
#endif

inline int run_execute_command(const execute_flags& flags, std::ostream& out, std::ostream& err) {
  if (!std::isfinite(flags.time_scale) || flags.time_scale <= 0)
    throw invalid_input("--time-scale must be a finite number > 0, got " + std::to_string(flags.time_scale));
  std::optional<cluster> given;
  if (!flags.cluster_path.empty()) given = read_cluster(flags.cluster_path);
  [[maybe_unused]] const auto choice = check_backend_flags(flags.backend, given ? given->device_count() : flags.devices,
                                          given                        ? "--cluster '" + flags.cluster_path + "'"
                                          : flags.backend.devices_given ? std::string("--devices")
                                                                        : std::string());
  auto file = read_any_graph_file(flags.graph_path, flags.reading);
  if (const auto warning = busy_machine()) err << "gantry execute: warning: " << *warning << "\n";
#if GANTRY_CLI_HAS_CUDA
  if (choice.cuda) return run_cuda_execute(flags, choice, std::move(given), file, out, err);
#endif
  return run_cpu_execute(flags, std::move(given), file, out, err);
}

// --backend and the CUDA backend's options, the same on calibrate and execute (the command's
// callback records whether --devices was given, so that a count given twice is checked).
inline void add_backend_options(CLI::App& command, backend_flags& flags) {
  command.add_option("--backend", flags.backend,
                     std::string("cpu (devices are threads) or cuda (devices are SM partitions of one GPU, or whole "
                                 "GPUs") + (GANTRY_CLI_HAS_CUDA ? ")" : "; needs gantry-cuda, a build with nvcc)"))
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  command.add_option("--partitions", flags.partitions,
                     "with --backend cuda: this many SM partitions of one GPU (green contexts) as devices "
                     "(default: --devices)")
      ->check(whole_number_between<std::size_t>(1, 256));
  command.add_option("--gpus", flags.gpus, "with --backend cuda: whole GPUs as devices, one each, e.g. 0,1");
  command.add_option("--gpu", flags.gpu, "with --backend cuda: the GPU to partition (default 0)")
      ->check(whole_number_between<int>(0, 1023));
  command.add_option("--sms-per-partition", flags.sms_per_partition,
                     "with --backend cuda: SMs per partition; 0 (the default): the largest equal split the GPU allows")
      ->check(whole_number_between<long long>(0, 1 << 20));
}

void register_execute_commands(CLI::App& app) {
  auto calibrate = std::make_shared<calibrate_flags>();
  auto* cal = app.add_subcommand("calibrate", "measure this machine's CPU backend (busy loop, launch overhead, copies "
                                              "between device buffers), or its GPUs with --backend cuda, and write a "
                                              "cluster file");
  auto* cal_devices = cal->add_option("--devices,-d", calibrate->devices, "devices in the cluster (CPU: threads)")
                          ->check(whole_number_between<std::size_t>(2, 256))
                          ->capture_default_str();
  add_backend_options(*cal, calibrate->backend);
  cal->add_option("--memory,-m", calibrate->memory, "memory per device, e.g. 1GiB, or 'unlimited'")->capture_default_str();
  cal->add_option("--comm", calibrate->comm, "parallel, sequential or duplex")
      ->check(CLI::IsMember({"parallel", "sequential", "duplex"}))
      ->capture_default_str();
  cal->add_option("--out,-o", calibrate->out, "write the cluster (JSON) here");
  cal->callback([calibrate, cal_devices] {
    calibrate->backend.devices_given = cal_devices->count() > 0;
    run_in_callback("calibrate", [&] { return run_calibrate_command(*calibrate, std::cout); });
  });

  auto flags = std::make_shared<execute_flags>();
  auto* ex = app.add_subcommand("execute", "place, simulate and run a graph for real on CPU threads (or GPUs: "
                                           "--backend cuda); report simulated vs measured makespans");
  ex->add_option("--graph,-g", flags->graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")
      ->required()
      ->check(CLI::ExistingFile);
  add_graph_reading_options(*ex, flags->reading);
  auto* cluster_option = ex->add_option("--cluster", flags->cluster_path, "cluster file (from `gantry calibrate`)")
                             ->check(CLI::ExistingFile);
  auto* ex_devices = ex->add_option("--devices,-d", flags->devices, "without --cluster: devices, linked as calibrated now")
                         ->check(whole_number_between<std::size_t>(1, 256))
                         ->excludes(cluster_option)
                         ->capture_default_str();
  add_backend_options(*ex, flags->backend);
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
      ->check(whole_number_between<std::size_t>(1, 1000))
      ->capture_default_str();
  ex->add_option("--placements", flags->placements,
                 "compare this many placements (every placer, then seeded random perturbations of them)")
      ->check(whole_number_between<std::size_t>(0, 10000));
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
                 "how a device spends a vertex's time: busy-loop (calibrated iterations), spin (on the clock), "
                 "sleep (frees the core), work (the graph's own products and element-wise ops with Eigen, or cuBLAS "
                 "and CUDA kernels with --backend cuda, profiled first: `gantry workload` graphs), auto (CPU: spin "
                 "when every device and the executor get a core, else sleep; CUDA: spin)")
      ->check(CLI::IsMember({"auto", "busy-loop", "spin", "sleep", "work"}))
      ->capture_default_str();
  ex->add_option("--trace", flags->trace, "Chrome traces, as in place: --trace run.json writes run.simulated.json and "
                                          "run.measured.json");
  ex->add_option("--svg", flags->svg, "Gantt charts, as in place: --svg run.svg writes run.simulated.svg and run.measured.svg");
  ex->add_option("--format", flags->output_format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  ex->callback([flags, ex_devices] {
    flags->backend.devices_given = ex_devices->count() > 0;
    run_in_callback("execute", [&] { return run_execute_command(*flags, std::cout, std::cerr); });
  });
}

}  // namespace gantry::cli
