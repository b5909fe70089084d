// The gantry command-line tool: place a graph, simulate a placement, compare every placer.
//   gantry place    --graph G.json --devices 4 --memory 8GiB --algorithm m-etf --out placement.json
//   gantry simulate --graph G.json --placement placement.json [--runs 100 --cv 0.1]
//   gantry compare  --graph G.json --devices 4 --memory 8GiB [--format json]
//   gantry learn    --graph G.json --devices 4 --episodes 1000 --out placement.json (built with Eigen)
// Exit status: 0 success, 1 an algorithm or simulation failed (e.g. out of memory), 2 bad input.
// A command's output files appear together, only when it succeeds; SIGINT, SIGTERM and SIGHUP
// remove the temporary files of writes in progress.

#include "bounds_report.hpp"
#include "options.hpp"
#include "fuse_option.hpp"
#include "registry.hpp"
#include "warnings.hpp"

#include <gantry/io/io.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace gantry;

// How --graph is read (gantry JSON or a PipeDream profile), shared by place, simulate and compare.
cli::graph_reading graph_input;

// Exit codes.
constexpr int exit_failed = 1;
constexpr int exit_bad_input = 2;

// The largest counts the options accept: beyond them a run would not finish or fit in memory.
constexpr std::size_t max_devices = std::size_t{1} << 20;
constexpr std::size_t max_runs = 1'000'000;
constexpr double max_cv = 100;  // lognormal sigma = sqrt(ln(1 + cv^2)) stays near 3

using cli::finite_number_in;
using cli::whole_number_between;

// Limits on input files (--max-inflated-size).
struct input_flags {
  std::string max_inflated_size = "512MiB";

  void add_to(CLI::App& app) {
    app.add_option("--max-inflated-size", max_inflated_size,
                   "refuse gzip input that inflates to more than this (a guard against decompression bombs)")
        ->capture_default_str();
  }
  [[nodiscard]] read_limits make() const {
    read_limits limits;
    limits.max_inflated_bytes =
        static_cast<std::size_t>(cli::size_option("--max-inflated-size", max_inflated_size, false));
    return limits;
  }
};

struct cluster_flags {
  std::string cluster_file;
  std::size_t devices = 0;
  std::string memory = "unlimited";
  std::string bandwidth = cli::default_bandwidth;
  std::string latency = cli::default_latency;
  std::string comm = "parallel";

  // A cluster file, or the flags that describe identical devices: never both (a file's devices,
  // memories and links would silently win over flags, or the other way round).
  void add_to(CLI::App& app) {
    auto* file = app.add_option("--cluster", cluster_file, "cluster description (JSON, see docs/format.md)")
                     ->check(CLI::ExistingFile);
    app.add_option("--devices,-d", devices, "without --cluster: number of identical devices")
        ->check(whole_number_between<std::size_t>(1, max_devices))
        ->excludes(file);
    app.add_option("--memory,-m", memory, "without --cluster: memory per device, e.g. 8GiB, 512MiB, or 'unlimited'")
        ->capture_default_str()
        ->excludes(file);
    app.add_option("--bandwidth", bandwidth,
                   "without --cluster: link bandwidth between any two devices, e.g. 12GB/s, or 'unlimited'")
        ->capture_default_str()
        ->excludes(file);
    app.add_option("--latency", latency, "without --cluster: link latency, e.g. 10us")
        ->capture_default_str()
        ->excludes(file);
    app.add_option("--comm", comm, "without --cluster: transfers: parallel (any number at once), sequential (one per "
                                   "device), duplex")
        ->check(CLI::IsMember(enum_name_list<comm_mode>()))
        ->capture_default_str()
        ->excludes(file);
  }

  [[nodiscard]] cluster make(const read_limits& limits) const {
    if (!cluster_file.empty()) return read_cluster(cluster_file, limits);
    if (devices == 0) throw invalid_input("give --devices N (N >= 1) or --cluster FILE");
    const byte_count capacity = cli::size_option("--memory", memory, true);
    const link_model link{cli::duration_option("--latency", latency), cli::rate_option("--bandwidth", bandwidth, true)};
    const comm_mode mode = parse_enum_name<comm_mode>(comm, "--comm");
    return cluster::uniform(devices, capacity, link, mode);
  }
};

struct simulation_flags {
  std::string policy = "placement-order";
  bool no_cache = false;

  void add_to(CLI::App& app) {
    app.add_option("--policy", policy, "which ready vertex a device runs first")
        ->check(CLI::IsMember(enum_name_list<ready_policy>()))
        ->capture_default_str();
    app.add_flag("--no-cache", no_cache,
                 "send a tensor once per consumer instead of once per device (placers and simulation alike)");
  }
  [[nodiscard]] simulate_options make(std::span<const vertex_id> order) const {
    simulate_options o;
    o.policy = parse_enum<ready_policy>(policy).value_or(ready_policy::placement_order);  // checked above
    o.priority = order;
    o.cache_transfers = !no_cache;
    return o;
  }
  // The same run with each device taking its vertices in the placer's order (strict-order): what
  // following the placer gives, which compare ranks by.
  [[nodiscard]] simulate_options make_in_order(std::span<const vertex_id> order) const {
    simulate_options o = make(order);
    o.policy = ready_policy::strict_order;
    return o;
  }
};

bool progress_wanted(const graph& g) { return isatty(STDERR_FILENO) != 0 || g.vertex_count() >= 50000; }

void progress(bool on, const std::string& text) {
  if (on) std::cerr << text << std::flush;
}

double elapsed_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string fixed(double x, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << x;
  return out.str();
}

std::string percent_list(const std::vector<byte_count>& peak, const cluster& c) {
  std::string text;
  for (device_id d = 0; d < peak.size(); ++d) {
    if (!text.empty()) text += " ";
    if (c.capacity(d) == unlimited_memory) text += format_bytes(peak[d]);
    else text += fixed(100.0 * static_cast<double>(peak[d]) / static_cast<double>(c.capacity(d)), 1) + "%";
  }
  return text;
}

// Adds one output to the command's group of files; a content that cannot be written (a name
// JSON cannot hold, say) is reported with the file's name.
template <class Content>
void stage_output(atomic_file_group& outputs, const std::string& path, Content&& content) {
  if (!path.empty()) add_text_file(outputs, path, detail::content_for(path, content));
}

// The optional outputs of a simulated schedule.
struct output_flags {
  std::string trace, svg, dot;
  void add_to(CLI::App& app) {
    app.add_option("--trace", trace, "write a Chrome trace of the simulated run, with memory per device (open in Perfetto)");
    app.add_option("--svg", svg, "write an SVG Gantt chart of the simulated run");
    app.add_option("--dot", dot, "write the graph as Graphviz DOT, vertices coloured by device");
  }
  // `title` heads the SVG: which graph, which placement, which makespan.
  void stage(atomic_file_group& outputs, const graph& g, const cluster& c, const placement& p, const schedule& s,
             const std::string& title) const {
    stage_output(outputs, dot, [&] { return to_dot(g, {.device = p.device, .devices = &c}); });
    stage_output(outputs, trace, [&] {
      // A memory counter track per device, by the same rules as the reported peaks.
      const memory_curve memory =
          compute_memory_curve(snapshot(g), s, graph_model(g, c), detail::schedule_device_count(s, c.device_count()));
      return chrome_trace_text(g, s, {.devices = &c, .memory = &memory});
    });
    stage_output(outputs, svg, [&] { return svg_gantt(g, s, {.devices = &c, .title = title}); });
  }
};

// JSON cannot hold, and no reader should believe, a makespan that overflowed: compute or transfer
// times near the largest double add up to infinity.
void require_finite(seconds makespan, const std::string& graph_path, const std::string& what) {
  if (!std::isfinite(makespan))
    throw invalid_input(what + " is not finite (" + format_seconds(makespan) + "): the compute and transfer times of " +
                        graph_path + " are too large to add up in a double");
}

// How many times faster than `baseline` a run of `makespan` is: 1 when both are 0 (a graph of
// zero-time work), nothing when only the run takes no time.
std::optional<double> speedup(seconds baseline, seconds makespan) {
  if (makespan > 0) return baseline / makespan;
  if (baseline == 0) return 1.0;
  return std::nullopt;
}

void print_schedule_summary(const schedule& s, const cluster& c) {
  std::cout << "makespan      " << format_seconds(s.makespan) << "\n";
  std::cout << "bytes moved   " << format_bytes(s.bytes_moved) << " in " << s.transfers.size() << " transfers\n";
  std::cout << "device        busy         peak memory\n";
  for (device_id d = 0; d < c.device_count(); ++d) {
    std::cout << std::left << std::setw(14) << c[d].name << std::setw(13) << format_seconds(s.busy[d])
              << format_bytes(s.peak_memory[d]);
    if (c.capacity(d) != unlimited_memory)
      std::cout << " of " << format_bytes(c.capacity(d)) << " ("
                << fixed(100.0 * static_cast<double>(s.peak_memory[d]) / static_cast<double>(c.capacity(d)), 1) << "%)";
    std::cout << "\n";
  }
}

// The same summary as JSON, with every number at full precision; times in seconds, sizes in bytes.
nlohmann::ordered_json schedule_summary_json(const schedule& s, const cluster& c) {
  nlohmann::ordered_json out;
  out["units"] = {{"time", "seconds"}, {"memory", "bytes"}};
  out["makespan"] = s.makespan;
  out["bytes_moved"] = s.bytes_moved;
  out["transfers"] = s.transfers.size();
  out["devices"] = nlohmann::ordered_json::array();
  for (device_id d = 0; d < c.device_count(); ++d)
    out["devices"].push_back({{"name", c[d].name},
                              {"busy", s.busy[d]},
                              {"peak_memory", s.peak_memory[d]},
                              {"capacity", c.capacity(d) == unlimited_memory ? nlohmann::ordered_json(nullptr)
                                                                             : nlohmann::ordered_json(c.capacity(d))}});
  return out;
}

// The fastest single device that can hold the whole run, simulated: the reference every placement
// should beat. Devices are tried in order (at most 16; one of each kind, speed and capacity) and
// the first of equal makespans wins.
struct single_device_reference {
  device_id device = no_device;
  placement placed;
  simulation_result simulated;
};
std::optional<single_device_reference> best_single_device(const graph& g, const graph_model& model, const cluster& c,
                                                          const simulation_flags& sf) {
  std::optional<single_device_reference> best;
  for (device_id d = 0; d < std::min<std::size_t>(c.device_count(), 16); ++d) {
    const auto same = [&](device_id e) {
      return c[e].kind == c[d].kind && c[e].speed == c[d].speed && c[e].capacity == c[d].capacity;
    };
    bool seen = false;
    for (device_id e = 0; e < d && !seen; ++e) seen = same(e);
    if (seen) continue;  // runs exactly as an earlier device does
    auto p = single_device(g, c, {.device = d});
    if (!p.ok()) continue;
    auto sim = simulate(g, model, c, std::span<const device_id>(p.device), sf.make(p.order));
    if (sim.ok() && (!best || sim.schedule.makespan < best->simulated.schedule.makespan))
      best = single_device_reference{d, std::move(p), std::move(sim)};
  }
  return best;
}

std::string describe_devices(const cluster& c);

// What a placer says its user must know about this run (metadata "note"), if anything.
std::optional<std::string> note_of(const placer_result& placed) {
  for (const auto& [key, value] : placed.metadata)
    if (key == "note") return value;
  return std::nullopt;
}

// "name: message", without repeating the name where the message starts with it (in any case).
std::string named_message(const std::string& name, const std::string& message) {
  const bool named = message.size() > name.size() && message[name.size()] == ':' &&
                     std::equal(name.begin(), name.end(), message.begin(), [](char a, char b) {
                       return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
                     });
  return named ? message : name + ": " + message;
}

int run_place(const std::string& graph_path, const cluster_flags& cf, const simulation_flags& sf,
              const std::string& algorithm, const std::string& fallback, const std::string& out,
              const output_flags& of, const cli::fuse_flags& ff, const cli::placer_limit_flags& ef,
              const read_limits& limits) {
  const auto file = cli::read_any_graph_file(graph_path, graph_input, limits);
  const graph& g = file.graph;
  const cluster c = cf.make(limits);
  const graph_model model(g, c);
  if (const auto warning = cli::profile_mismatch(g, file.metadata, c))
    std::cerr << "gantry place: warning: " << *warning << "\n";
  const auto proof = std::make_shared<cli::exact_proof>();
  const auto all = cli::tool_placers(algorithm == "exact" ? ef.exact_milliseconds() : 1, proof, ef.doppler_seconds());
  const auto* entry = cli::find_tool_placer(all, algorithm);
  if (entry == nullptr) throw invalid_input("unknown algorithm '" + algorithm + "'; `gantry algorithms` lists them");
  const bool show = progress_wanted(g);
  progress(show, "placing " + std::to_string(g.vertex_count()) + " vertices with " + algorithm + "...");
  const auto t0 = std::chrono::steady_clock::now();
  const auto coarse = ff.reduce(g);
  placer_result placed = cli::place_reduced(*entry, ff.request(g, model, c, !sf.no_cache), coarse, ff);
  placement& p = placed.placement;
  p.placement_time = elapsed_since(t0);
  progress(show, " " + fixed(p.placement_time * 1e3, 1) + " ms\n");
  if (!p.ok()) {
    std::cerr << "gantry place: " << algorithm << " failed (" << to_string(p.outcome.code) << "): " << p.outcome.message << "\n";
    return exit_failed;
  }
  auto sim = simulate(g, model, c, std::span<const device_id>(p.device), sf.make(p.order));
  std::string chosen = ff.fuse == "none" ? algorithm : algorithm + " (--fuse " + ff.fuse + ")";
  // Never silently worse than one device: say so, and with --fallback take the device instead.
  if (const auto reference = best_single_device(g, model, c, sf);
      reference && (!sim.ok() || reference->simulated.schedule.makespan * (1 + 1e-9) < sim.schedule.makespan)) {
    const std::string device = c[reference->device].name;
    std::cerr << "gantry place: " << algorithm << "'s placement "
              << (sim.ok() ? "runs in " + format_seconds(sim.schedule.makespan) : std::string("does not run")) << ", "
              << device << " alone runs the whole graph in " << format_seconds(reference->simulated.schedule.makespan)
              << (fallback == "single-device" ? "; using " + device + " alone (--fallback single-device)"
                                              : "; --fallback single-device would use it")
              << "\n";
    if (fallback == "single-device") {
      placed = {reference->placed, std::nullopt};
      p.placement_time = elapsed_since(t0);
      sim = reference->simulated;
      chosen = "single-device (fallback from " + algorithm + ")";
    }
  }
  std::cout << "cluster       " << describe_devices(c) << ", " << to_string(c.comm()) << " transfers, links "
            << cli::link_text(c) << "\n";
  std::cout << "algorithm     " << chosen << " (placed in " << fixed(p.placement_time * 1e3, 2) << " ms, "
            << (entry->respects_memory ? "honours device memory" : "ignores device memory") << ")\n";
  if (placed.placement.outcome.message.find(" instead") != std::string::npos)
    std::cout << "fallback      " << placed.placement.outcome.message << "\n";
  if (const auto note = note_of(placed)) std::cout << "note          " << *note << "\n";
  if (placed.own_schedule)
    std::cout << "own schedule  " << format_seconds(placed.own_schedule->makespan)
              << " (the placer's schedule; below: "
              << (sf.policy == "strict-order" ? "its placement replayed in the placer's order on each device"
                                              : "the replay of its placement with --policy " + sf.policy)
              << ")\n";
  if (sim.ok() && sf.policy != "strict-order" && p.ok()) {
    // What following the placer gives: each device runs its vertices in the placer's order.
    const auto in_order = simulate(g, model, c, std::span<const device_id>(p.device), sf.make_in_order(p.order));
    std::cout << "in its order  "
              << (in_order.ok() ? format_seconds(in_order.schedule.makespan) : "does not run (" + std::string(to_string(in_order.outcome.code)) + ")")
              << " (each device runs its vertices in the placer's order: --policy strict-order)\n";
  }
  if (algorithm == "exact")
    std::cout << "proven bound  " << format_seconds(proof->bound)
              << (proof->optimal ? " (the schedule is optimal)"
                                 : proof->time_limit_reached ? " (time limit reached: the schedule may be longer than the optimum)"
                                                             : " (the schedule may be longer than the optimum)")
              << "\n";
  if (!sim.ok()) {
    std::cerr << "gantry place: the placement does not run: " << sim.outcome.message << " (no output files written)\n";
    return exit_failed;
  }
  require_finite(sim.schedule.makespan, graph_path, "the simulated makespan");
  atomic_file_group outputs;
  nlohmann::json metadata = nlohmann::json::object();
  for (const auto& [key, value] : placed.metadata) metadata[key] = value;
  if (ff.fuse != "none") metadata["fuse"] = ff.fuse;
  stage_output(outputs, out, [&] {
    return placement_to_json_text(g, c, p, {.algorithm = chosen, .schedule = &sim.schedule, .metadata = metadata});
  });
  of.stage(outputs, g, c, p, sim.schedule,
           std::filesystem::path(graph_path).filename().string() + ": " + chosen + " on " + describe_devices(c) +
               ", makespan " + format_seconds(sim.schedule.makespan));
  outputs.commit();
  print_schedule_summary(sim.schedule, c);
  return 0;
}

int run_simulate(const std::string& graph_path, const std::string& placement_path, const cluster_flags& cf,
                 const simulation_flags& sf, std::size_t runs, double cv, std::uint64_t seed, bool check,
                 const output_flags& of, const std::string& format, const read_limits& limits) {
  if ((runs > 0) != (cv > 0))
    throw invalid_input(runs > 0 ? "--runs " + std::to_string(runs) + " needs --cv C > 0 (the spread of the drawn durations)"
                                 : "--cv needs --runs N > 0 (the number of runs with drawn durations)");
  const auto file = cli::read_any_graph_file(graph_path, graph_input, limits);
  const graph& g = file.graph;
  const cluster c =
      cf.cluster_file.empty() && cf.devices == 0 ? read_placement_cluster(placement_path, limits) : cf.make(limits);
  const graph_model model(g, c);
  const auto placement_read = read_placement(placement_path, g, c, limits);
  require_complete_placement(placement_read, placement_path);
  const placement& p = placement_read.placement;
  auto options = sf.make(p.order);
  const auto sim = simulate(g, model, c, std::span<const device_id>(p.device), options);
  if (!sim.ok()) {
    std::cerr << "gantry simulate: " << sim.outcome.message << " (no output files written)\n";
    return exit_failed;
  }
  require_finite(sim.schedule.makespan, graph_path, "the simulated makespan");
  atomic_file_group outputs;
  of.stage(outputs, g, c, p, sim.schedule,
           std::filesystem::path(graph_path).filename().string() + ": the placement in " +
               std::filesystem::path(placement_path).filename().string() + " on " + describe_devices(c) +
               ", makespan " + format_seconds(sim.schedule.makespan));
  outputs.commit();
  const bool json = format == "json";
  nlohmann::ordered_json document;
  if (json) document = schedule_summary_json(sim.schedule, c);
  else print_schedule_summary(sim.schedule, c);
  if (check) {
    const auto report = validate(sim.schedule, g, model, c);
    if (json) document["valid"] = report.ok();
    if (json && !report.ok()) document["violations"] = report.to_string();
    if (!json) std::cout << "validate      " << (report.ok() ? "ok" : report.to_string()) << "\n";
    if (!report.ok()) {
      if (json) std::cout << document.dump(2) << "\n";
      return exit_failed;
    }
  }
  if (runs > 0 && cv > 0) {
    options.cv = cv;
    options.seed = seed;
    const auto dist = simulate_runs(g, model, c, std::span<const device_id>(p.device), runs, options);
    for (const seconds x : {dist.mean, dist.p50, dist.p95, dist.min, dist.max})
      require_finite(x, graph_path, "a makespan of the runs with drawn durations");
    if (json) {
      document["runs"] = {{"count", runs}, {"cv", cv},        {"seed", seed},         {"mean", dist.mean},
                          {"stddev", dist.stddev}, {"p50", dist.p50}, {"p95", dist.p95}, {"min", dist.min},
                          {"max", dist.max},      {"out_of_memory", dist.failed}};
      std::cout << document.dump(2) << "\n";
      return 0;
    }
    std::cout << runs << " runs, cv " << cv << ": mean " << format_seconds(dist.mean) << ", p50 "
              << format_seconds(dist.p50) << ", p95 " << format_seconds(dist.p95) << ", min "
              << format_seconds(dist.min) << ", max " << format_seconds(dist.max);
    if (dist.failed > 0) std::cout << ", " << dist.failed << " runs out of memory";
    std::cout << "\n";
  }
  if (json) std::cout << document.dump(2) << "\n";
  return 0;
}

// The devices in words, identical ones counted once: "4 devices of 8.00 GiB" or
// "3 devices: gpu0 and gpu1 (gpu, 16.0 GiB), cpu (default, speed 0.25, unlimited memory)".
std::string describe_devices(const cluster& c) {
  const auto same = [&](device_id a, device_id b) {
    return c[a].kind == c[b].kind && c[a].speed == c[b].speed && c[a].capacity == c[b].capacity;
  };
  const auto traits = [&](device_id d, bool with_kind) {
    std::string text = with_kind ? c[d].kind : std::string();
    const auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    if (c[d].speed != 1.0) add("speed " + cli::number_text(c[d].speed));
    add(c.capacity(d) == unlimited_memory ? std::string("unlimited memory") : format_bytes(c.capacity(d)));
    return text;
  };
  const std::size_t m = c.device_count();
  std::string text = std::to_string(m) + (m == 1 ? " device" : " devices");
  bool uniform = m > 0;
  for (device_id d = 1; d < m && uniform; ++d) uniform = same(0, d);
  if (uniform) return text + " of " + traits(0, c[0].kind != "default");
  text += ":";
  std::vector<bool> listed(m, false);
  for (device_id d = 0; d < m; ++d) {
    if (listed[d]) continue;
    std::vector<std::string> names;
    for (device_id e = d; e < m; ++e)
      if (!listed[e] && same(d, e)) {
        listed[e] = true;
        names.push_back(c[e].name);
      }
    text += (d == 0 ? " " : "; ");
    if (names.size() > 3) text += std::to_string(names.size()) + " like " + names.front();
    else
      for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    text += " (" + traits(d, true) + ")";
  }
  return text;
}

struct compare_row {
  const placer_entry* entry;
  placer_result placed;
  std::optional<simulation_result> simulated;  // replayed by --policy (work-conserving by default)
  std::optional<simulation_result> in_order;   // replayed with each device in the placer's order
  // The run the row is ranked and judged by: in the placer's order where that runs, else the replay.
  [[nodiscard]] const simulation_result* judged() const {
    if (in_order && in_order->ok()) return &*in_order;
    if (simulated && simulated->ok()) return &*simulated;
    return nullptr;
  }
};

int run_compare(const std::string& graph_path, const cluster_flags& cf, const simulation_flags& sf,
                const std::vector<std::string>& only, const std::string& format, const cli::fuse_flags& ff,
                const cli::placer_limit_flags& ef, const std::string& svg_path, const read_limits& limits) {
  const auto file = cli::read_any_graph_file(graph_path, graph_input, limits);
  const graph& g = file.graph;
  const cluster c = cf.make(limits);
  const graph_model model(g, c);
  if (const auto warning = cli::profile_mismatch(g, file.metadata, c))
    std::cerr << "gantry compare: warning: " << *warning << "\n";
  const bool show = progress_wanted(g);
  std::vector<compare_row> rows;
  const auto proof = std::make_shared<cli::exact_proof>();
  const auto all = cli::tool_placers(ef.exact_milliseconds(), proof, ef.doppler_seconds());
  for (const auto& name : only)
    if (cli::find_tool_placer(all, name) == nullptr)
      throw invalid_input("unknown algorithm '" + name + "'; `gantry algorithms` lists them");
  const std::string exact_refusal = cli::exact_too_large(g.vertex_count(), c.device_count());
  const bool exact_too_large = !exact_refusal.empty();
  if (exact_too_large && std::find(only.begin(), only.end(), "exact") != only.end())
    throw invalid_input("--algorithms exact: " + exact_refusal);
  std::optional<cli::exact_proof> exact_ran;
  const auto coarse = ff.reduce(g);
  std::size_t index = 0;
  for (const auto& entry : all) {
    ++index;
    if (!only.empty() && std::find(only.begin(), only.end(), entry.name) == only.end()) continue;
    if (entry.name == "exact" && exact_too_large) continue;
    progress(show, "[" + std::to_string(index) + "/" + std::to_string(all.size()) + "] " + entry.name + "...");
    compare_row row{&entry, {}, std::nullopt, std::nullopt};
    const auto t0 = std::chrono::steady_clock::now();
    row.placed = cli::place_reduced(entry, ff.request(g, model, c, !sf.no_cache), coarse, ff);
    auto& p = row.placed.placement;
    p.placement_time = elapsed_since(t0);
    if (p.ok()) {
      row.simulated = simulate(g, model, c, std::span<const device_id>(p.device), sf.make(p.order));
      row.in_order = sf.policy == "strict-order"
                         ? *row.simulated
                         : simulate(g, model, c, std::span<const device_id>(p.device), sf.make_in_order(p.order));
    }
    if (entry.name == "exact" && p.ok()) exact_ran = *proof;
    progress(show, " done\n");
    rows.push_back(std::move(row));
  }
  // Speed-ups are over the fastest device running the whole graph with unlimited memory, so that
  // they exist even when one device cannot hold the run.
  std::optional<seconds> baseline;
  std::string baseline_device;
  {
    std::vector<device> roomy = c.devices();
    for (auto& d : roomy) d.capacity = unlimited_memory;
    cluster unlimited(std::move(roomy), c.default_link(), c.comm());
    for (const auto& domain : c.domains()) unlimited.add_domain(domain);
    const graph_model unlimited_model(g, unlimited);
    if (const auto fastest = best_single_device(g, unlimited_model, unlimited, sf)) {
      baseline = fastest->simulated.schedule.makespan;
      baseline_device = c[fastest->device].name;
    }
  }
  if (baseline) require_finite(*baseline, graph_path, "the baseline's simulated makespan");
  for (const auto& row : rows)
    for (const auto* run : {&row.simulated, &row.in_order})
      if (*run && (*run)->ok()) require_finite((*run)->schedule.makespan, graph_path, row.entry->name + "'s simulated makespan");
  // Ranked by what following the placer gives (its order on each device; the replay where that
  // does not run), failures last in the registry's order.
  std::stable_sort(rows.begin(), rows.end(), [](const compare_row& a, const compare_row& b) {
    const auto* x = a.judged();
    const auto* y = b.judged();
    if (x == nullptr || y == nullptr) return x != nullptr && y == nullptr;
    return x->schedule.makespan < y->schedule.makespan;
  });
  // The fastest device that can hold the whole run within its memory, if any.
  const auto alone = best_single_device(g, model, c, sf);
  const auto bound = cli::make_compare_bound(g, model, c, exact_ran);
  if (!svg_path.empty()) {
    std::vector<cli::chart_row> chart;
    for (const auto& row : rows) {
      cli::chart_row bar{row.entry->name, std::nullopt, {}};
      if (!row.placed.placement.ok()) bar.failure = std::string("failed: ") + to_string(row.placed.placement.outcome.code);
      else if (row.judged() == nullptr) bar.failure = std::string("does not run: ") + to_string(row.simulated->outcome.code);
      else bar.makespan = row.judged()->schedule.makespan;
      chart.push_back(std::move(bar));
    }
    atomic_file_group outputs;
    stage_output(outputs, svg_path, [&] {
      return cli::compare_svg(std::filesystem::path(graph_path).filename().string() + " on " + describe_devices(c) + ", " +
                                  to_string(c.comm()) + " transfers",
                              chart, bound);
    });
    outputs.commit();
  }
  // Placed by a fallback (memory_fallback(), the one-device answer, m-ETF's rescue): the message says which.
  const auto is_fallback = [](const placement& p) {
    return p.ok() && p.outcome.message.find(" instead") != std::string::npos;
  };
  const auto slower_than_alone = [&](const compare_row& row) {
    // Relative: a placement that is the one device's run may differ from it by rounding alone.
    return alone && row.judged() != nullptr && row.judged()->schedule.makespan > alone->simulated.schedule.makespan * (1 + 1e-9);
  };
  if (format == "json") {
    nlohmann::ordered_json out;
    out["graph"] = graph_path;
    out["vertices"] = g.vertex_count();
    out["edges"] = g.edge_count();
    out["devices"] = c.device_count();
    out["communication"] = to_string(c.comm());
    const link_model& link = c.default_link();
    out["link"] = {{"latency", link.latency},
                   {"bandwidth", std::isfinite(link.bandwidth) ? nlohmann::ordered_json(link.bandwidth)
                                                               : nlohmann::ordered_json(nullptr)},
                   {"pairs_with_own_link", c.own_link_count()}};
    out["units"] = {{"time", "seconds"}, {"memory", "bytes"}};
    out["cluster"] = describe_devices(c);
    out["baseline"] = baseline ? baseline_device + " alone with unlimited memory (the fastest device)"
                               : std::string("none: no device runs the graph alone");
    out["lower_bound"] = nlohmann::ordered_json{
        {"value", bound.value}, {"binding", bound.source}, {"critical_path", bound.simple.critical_path},
        {"work", bound.simple.work},
        {"exact", bound.exact ? nlohmann::ordered_json{{"bound", bound.exact->bound}, {"optimal", bound.exact->optimal},
                                                       {"time_limit_reached", bound.exact->time_limit_reached}}
                              : nlohmann::ordered_json(nullptr)}};
    out["baseline_makespan"] = baseline ? nlohmann::ordered_json(*baseline) : nlohmann::ordered_json(nullptr);
    out["results"] = nlohmann::ordered_json::array();
    out["single_device"] = alone ? nlohmann::ordered_json{{"device", c[alone->device].name},
                                                          {"makespan", alone->simulated.schedule.makespan}}
                                 : nlohmann::ordered_json(nullptr);
    out["ranked_by"] = "in_order_makespan: each device runs its vertices in the placer's order (strict-order); "
                       "where that does not run, makespan (the --policy replay)";
    std::size_t rank = 0;
    for (const auto& row : rows) {
      nlohmann::ordered_json r;
      const auto& p = row.placed.placement;
      r["rank"] = row.judged() != nullptr ? nlohmann::ordered_json(++rank) : nlohmann::ordered_json(nullptr);
      r["algorithm"] = row.entry->name;
      r["respects_memory"] = row.entry->respects_memory;
      r["placement_seconds"] = p.placement_time;
      r["own_makespan"] = row.placed.own_schedule ? nlohmann::ordered_json(row.placed.own_schedule->makespan)
                                                  : nlohmann::ordered_json(nullptr);
      if (!p.ok()) {
        r["status"] = to_string(p.outcome.code);
        r["message"] = p.outcome.message;
      } else if (row.judged() == nullptr) {
        r["status"] = "simulation: " + std::string(to_string(row.simulated->outcome.code));
        r["message"] = row.simulated->outcome.message;
      } else {
        if (is_fallback(p)) r["fallback"] = p.outcome.message;
        if (const auto note = note_of(row.placed)) r["note"] = *note;
        const auto& s = row.judged()->schedule;
        r["status"] = "ok";
        r["in_order_makespan"] = row.in_order->ok() ? nlohmann::ordered_json(row.in_order->schedule.makespan)
                                                    : nlohmann::ordered_json(nullptr);
        if (!row.in_order->ok()) r["in_order_message"] = row.in_order->outcome.message;
        r["makespan"] = row.simulated->ok() ? nlohmann::ordered_json(row.simulated->schedule.makespan) : nlohmann::ordered_json(nullptr);
        const auto up = baseline ? speedup(*baseline, s.makespan) : std::nullopt;
        r["speedup"] = up ? nlohmann::ordered_json(*up) : nlohmann::ordered_json(nullptr);
        r["bound_ratio"] = bound.value > 0 ? nlohmann::ordered_json(s.makespan / bound.value) : nlohmann::ordered_json(nullptr);
        r["slower_than_single_device"] = slower_than_alone(row);
        r["peak_memory"] = s.peak_memory;
        r["bytes_moved"] = s.bytes_moved;
      }
      out["results"].push_back(std::move(r));
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << g.vertex_count() << " vertices, " << g.edge_count() << " edges on " << describe_devices(c) << ", "
            << to_string(c.comm()) << " transfers, links " << cli::link_text(c) << "\n";
  std::cout << cli::describe_bound(bound) << "\n\n";
  // The name column fits the longest placer name (backward-critical-path is 22 characters).
  std::size_t name_width = std::string("algorithm").size();
  for (const auto& row : rows) name_width = std::max(name_width, row.entry->name.size());
  const int name_column = static_cast<int>(name_width) + 2;
  std::cout << std::right << std::setw(4) << "rank" << "  " << std::left << std::setw(name_column) << "algorithm" << std::right
            << std::setw(12) << "place (ms)" << std::setw(14) << "own schedule" << std::setw(14) << "in its order"
            << std::setw(14) << "replayed" << std::setw(10) << "speed-up" << std::setw(10) << "vs bound" << std::setw(14)
            << "bytes moved" << "  peak memory per device\n";
  std::size_t rank = 0;
  for (const auto& row : rows) {
    const auto& p = row.placed.placement;
    const auto* judged = row.judged();
    std::cout << std::right << std::setw(4) << (judged != nullptr ? std::to_string(++rank) : std::string("-")) << "  "
              << std::left << std::setw(name_column) << row.entry->name << std::right << std::setw(12)
              << fixed(p.placement_time * 1e3, 2);
    std::vector<std::string> notes;
    if (!row.entry->respects_memory) notes.emplace_back("ignores memory");
    if (!p.ok()) {
      std::cout << "  failed: " << to_string(p.outcome.code) << "\n";
      continue;
    }
    std::cout << std::setw(14) << (row.placed.own_schedule ? format_seconds(row.placed.own_schedule->makespan) : "-");
    if (judged == nullptr) {
      std::cout << "  does not run: " << to_string(row.simulated->outcome.code) << " on device "
                << row.simulated->outcome.device << (notes.empty() ? "" : " (" + notes.front() + ")") << "\n";
      continue;
    }
    const auto shown = [](const simulation_result& r) { return r.ok() ? format_seconds(r.schedule.makespan) : std::string("no run"); };
    const auto& s = judged->schedule;
    if (!row.in_order->ok()) notes.emplace_back("in its order: " + std::string(to_string(row.in_order->outcome.code)));
    if (slower_than_alone(row)) notes.emplace_back("slower than " + c[alone->device].name + " alone");
    if (is_fallback(p)) notes.emplace_back("a fallback, see below");
    if (note_of(row.placed)) notes.emplace_back("see below");
    std::cout << std::setw(14) << shown(*row.in_order) << std::setw(14) << shown(*row.simulated) << std::setw(10)
              << (baseline && speedup(*baseline, s.makespan) ? fixed(*speedup(*baseline, s.makespan), 2) + "x" : std::string("-"))
              << std::setw(10)
              << cli::ratio_to_bound(s.makespan, bound) << std::setw(14) << format_bytes(s.bytes_moved) << "  " << percent_list(s.peak_memory, c);
    for (std::size_t i = 0; i < notes.size(); ++i) std::cout << (i == 0 ? "  (" : ", ") << notes[i];
    std::cout << (notes.empty() ? "" : ")") << "\n";
  }
  for (const auto& row : rows) {
    if (!row.placed.placement.ok() || is_fallback(row.placed.placement))
      std::cout << "\n" << named_message(row.entry->name, row.placed.placement.outcome.message);
    else if (row.judged() == nullptr) std::cout << "\n" << named_message(row.entry->name, row.simulated->outcome.message);
    if (const auto note = note_of(row.placed); note && row.placed.placement.ok())
      std::cout << "\n" << row.entry->name << ": " << *note;
  }
  std::cout << "\n\"own schedule\" is the placer's own schedule; \"in its order\" simulates its placement with each device "
               "running its vertices in the placer's order (strict-order): what following the placer gives, by which "
               "rows are ranked; \"replayed\" simulates it with the "
            << sf.policy << " policy" << (sf.policy == "placement-order" ? " (work-conserving)" : "")
            << (sf.no_cache ? ", no transfer caching" : "");
  if (alone)
    std::cout << "; " << c[alone->device].name << " alone runs it in " << format_seconds(alone->simulated.schedule.makespan);
  std::cout << "\nspeed-up (over " << (baseline ? baseline_device : std::string("one device"))
            << " alone with unlimited memory), \"vs bound\" (makespan over the lower bound, 1.000x: optimal), bytes moved "
               "and peak memory (% of capacity) are those of the ranked run\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  remove_temporary_files_on_signals();
  CLI::App app{
      "gantry: place ML dataflow graphs on memory-limited devices and simulate the result.\n"
      "Graphs and clusters are JSON files (docs/format.md). Try:\n"
      "  gantry compare --graph examples/graphs/tiny.json --devices 4 --memory 8GiB\n"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gantry 0.1.0");

  std::string graph_path, algorithm = "m-etf", fallback = "none", out, placement_path, format = "table", compare_svg_path;
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

  auto* place = app.add_subcommand("place", "place a graph with one algorithm and simulate the placement");
  place->add_option("--graph,-g", graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")->required()->check(CLI::ExistingFile);
  cli::add_graph_reading_options(*place, graph_input);
  cf.add_to(*place);
  place->add_option("--algorithm,-a", algorithm, "placer to run (`gantry algorithms` lists them)")->capture_default_str();
  place->add_option("--out,-o", out, "write the placement (JSON) here");
  place->add_option("--fallback", fallback,
                    "single-device: when one device alone runs the graph faster than the placement, use it")
      ->check(CLI::IsMember({"none", "single-device"}))
      ->capture_default_str();
  sf.add_to(*place);
  ff.add_to(*place);
  of.add_to(*place);
  ef.add_to(*place);
  inputs.add_to(*place);

  auto* sim = app.add_subcommand("simulate", "simulate a placement written by `gantry place`");
  sim->add_option("--graph,-g", graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")->required()->check(CLI::ExistingFile);
  cli::add_graph_reading_options(*sim, graph_input);
  sim->add_option("--placement,-p", placement_path, "placement file")->required()->check(CLI::ExistingFile);
  cf.add_to(*sim);
  sf.add_to(*sim);
  sim->add_option("--runs", runs, "with --cv: number of runs with drawn durations")
      ->check(whole_number_between<std::size_t>(0, max_runs));
  sim->add_option("--cv", cv, "coefficient of variation of the lognormal duration noise")->check(finite_number_in(0, max_cv));
  sim->add_option("--seed", seed, "seed of the first run")
      ->check(whole_number_between<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))
      ->capture_default_str();
  sim->add_flag("--validate", check, "check the simulated schedule with validate()");
  sim->add_option("--format", format, "table or json (every number at full precision, times in seconds, sizes in bytes)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  of.add_to(*sim);
  inputs.add_to(*sim);

  auto* compare = app.add_subcommand("compare", "run every placer on a graph and print one row each");
  compare->add_option("--graph,-g", graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")->required()->check(CLI::ExistingFile);
  cli::add_graph_reading_options(*compare, graph_input);
  cf.add_to(*compare);
  sf.add_to(*compare);
  compare->add_option("--algorithms", only, "only these placers (comma separated)")->delimiter(',');
  ff.add_to(*compare);
  compare->add_option("--format", format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  compare->add_option("--svg", compare_svg_path, "write a bar chart: one bar per placer's makespan, and the lower bound");
  ef.add_to(*compare);
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
    if (*place) return run_place(graph_path, cf, sf, algorithm, fallback, out, of, ff, ef, inputs.make());
    if (*sim) return run_simulate(graph_path, placement_path, cf, sf, runs, cv, seed, check, of, format, inputs.make());
    if (*compare) return run_compare(graph_path, cf, sf, only, format, ff, ef, compare_svg_path, inputs.make());
    return 0;  // an extra subcommand ran in its callback during parse()
  } catch (const std::invalid_argument& e) {
    std::cerr << "gantry: " << e.what() << "\n";
    return exit_bad_input;
  } catch (const gantry::parse_error& e) {
    std::cerr << "gantry: " << e.what() << "\n";
    return exit_bad_input;
  } catch (const std::exception& e) {
    std::cerr << "gantry: " << e.what() << "\n";
    return exit_failed;
  }
}
