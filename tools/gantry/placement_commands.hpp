// What `gantry place`, `simulate` and `compare` share: their flags, and the commands themselves, each
// compiled in a unit of its own (place_command.cpp, simulate_command.cpp, compare_command.cpp), so
// main.cpp, which wires the command line, instantiates no algorithm.
#pragma once

#include "bounds_report.hpp"
#include "fuse_option.hpp"
#include "inputs.hpp"

#include <gantry/io/atomic_file.hpp>
#include <gantry/sim/simulator.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gantry::cli {

// Exit codes.
inline constexpr int exit_failed = 1;
inline constexpr int exit_bad_input = 2;

struct simulation_flags {
  std::string policy = "placement-order";
  bool no_cache = false;

  void add_to(CLI::App& app) {
    app.add_option("--policy", policy, "which ready vertex a device runs first")
        ->check(one_of(enum_name_list<ready_policy>()))
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

// The optional outputs of a simulated schedule.
struct output_flags {
  std::string trace, svg, dot;
  void add_to(CLI::App& app) {
    app.add_option("--trace", trace,
                   "write a Chrome trace of the simulated run, with memory per device (open in Perfetto)");
    app.add_option("--svg", svg, "write an SVG Gantt chart of the simulated run");
    app.add_option("--dot", dot, "write the graph as Graphviz DOT, vertices coloured by device");
  }
  // `title` heads the SVG: which graph, which placement, which makespan (placement_support.hpp).
  void stage(atomic_file_group& outputs, const graph& g, const cluster& c, const placement& p, const schedule& s,
             const std::string& title) const;
};

// What `gantry place` does after the placer: take one device when it is faster, improve the
// placement with the simulator as judge (compare offers the search alone: add_search_to()).
struct after_placing_flags {
  std::string fallback = "none";
  std::size_t local_search = 0;  // simulations at most; 0: off
  std::string local_search_time = "none";  // wall-clock budget of the local search

  void add_to(CLI::App& app) {
    app.add_option("--fallback", fallback,
                   "single-device: when one device alone runs the graph faster than the placement, use it")
        ->check(one_of({"none", "single-device"}))
        ->capture_default_str();
    add_search_to(app);
  }
  void add_search_to(CLI::App& app) {
    app.add_option("--local-search", local_search,
                   "then improve the placement with the simulator as judge (the faster of the --policy replay and "
                   "the run in the placer's order): move colocation groups "
                   "(and --fuse clusters) one at a time to the device where the makespan is shortest, in at most "
                   "this many simulations (0: off)")
        ->check(whole_number_between<std::size_t>(0, std::size_t{1} << 30))
        ->capture_default_str();
    app.add_option("--local-search-time", local_search_time,
                   "with --local-search: stop after this long, e.g. 30s, keeping the best placement found "
                   "('none': no limit; a limit makes the answer depend on the machine's speed)")
        ->capture_default_str();
  }
  // Empty for none.
  [[nodiscard]] std::optional<seconds> local_search_seconds() const {
    return time_limit_option("--local-search-time", local_search_time);
  }
};

// gantry place (place_command.cpp).
int run_place(const std::string& graph_path, const graph_reading& reading, const cluster_flags& cf,
              const simulation_flags& sf, const std::string& algorithm, const after_placing_flags& after,
              const std::string& out, const std::string& format, const output_flags& of, const fuse_flags& ff,
              const placer_limit_flags& ef, const read_limits& limits);
// gantry simulate (simulate_command.cpp).
int run_simulate(const std::string& graph_path, const graph_reading& reading, const std::string& placement_path,
                 const cluster_flags& cf, const simulation_flags& sf, std::size_t runs, double cv, std::uint64_t seed,
                 bool check, const output_flags& of, const std::string& format, const read_limits& limits);
// gantry compare (compare_command.cpp).
int run_compare(const std::string& graph_path, const graph_reading& reading, const cluster_flags& cf,
                const simulation_flags& sf, const after_placing_flags& after, const std::vector<std::string>& only,
                const std::string& format, const fuse_flags& ff, const placer_limit_flags& ef,
                const std::string& svg_path, const read_limits& limits);

}  // namespace gantry::cli
