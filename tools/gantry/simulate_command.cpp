// `gantry simulate`: a placement file simulated, checked, and run again with drawn durations.
#include "placement_support.hpp"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace gantry::cli {

int run_simulate(const std::string& graph_path, const graph_reading& reading, const std::string& placement_path,
                 const cluster_flags& cf, const simulation_flags& sf, std::size_t runs, double cv, std::uint64_t seed,
                 bool check, const output_flags& of, const std::string& format, const read_limits& limits) {
  if ((runs > 0) != (cv > 0))
    throw invalid_input(runs > 0
                            ? "--runs " + std::to_string(runs) + " needs --cv C > 0 (the spread of the drawn durations)"
                            : "--cv needs --runs N > 0 (the number of runs with drawn durations)");
  const auto file = read_any_graph_file(graph_path, reading, limits);
  const graph& g = file.graph;
  const cluster c = cf.cluster_file.empty() && cf.devices == 0 ? read_placement_file_cluster(placement_path, limits)
                                                               : cf.make(limits);
  const graph_model model(g, c);
  const auto placement_read = read_complete_placement(placement_path, g, c, limits);
  const placement& p = placement_read.placement;
  // Judged as place judges it: the faster of the --policy replay and the run in the file's order.
  const auto judged = judge_placement(g, model, c, std::span<const device_id>(p.device), p.order, sf);
  if (!judged.ok()) {
    std::cerr << "gantry simulate: " << judged.replay.outcome.message
              << (sf.policy != "strict-order" ? "; nor in the file's order: " + judged.in_order.outcome.message : "")
              << " (no output files written)\n";
    return exit_failed;
  }
  const simulation_result& sim = judged.kept();
  auto options = judged.options(sf, p.order);
  require_finite(sim.schedule.makespan, graph_path, "the simulated makespan");
  atomic_file_group outputs;
  of.stage(outputs, g, c, p, sim.schedule,
           std::filesystem::path(graph_path).filename().string() + ": the placement in " +
               std::filesystem::path(placement_path).filename().string() + " on " + describe_devices(c) +
               ", makespan " + format_seconds(sim.schedule.makespan));
  outputs.commit();
  const bool json = format == "json";
  nlohmann::ordered_json document;
  // Which run that is, and the other's makespan.
  const std::string kept = judged.by_order() ? "strict-order" : sf.policy;
  if (json) {
    document = schedule_summary_json(sim.schedule, c);
    document["run"] = kept;
    if (sf.policy != "strict-order") {
      const auto& other = judged.by_order() ? judged.replay : judged.in_order;
      document["other_run"] = {
          {"policy", judged.by_order() ? sf.policy : std::string("strict-order")},
          {"makespan", other.ok() ? nlohmann::ordered_json(other.schedule.makespan) : nlohmann::ordered_json(nullptr)}};
    }
  } else {
    std::cout << "run           "
              << (judged.by_order() ? "each device in the file's order (strict-order)" : "--policy " + sf.policy);
    if (sf.policy != "strict-order") {
      const auto& other = judged.by_order() ? judged.replay : judged.in_order;
      std::cout << "; " << (judged.by_order() ? "--policy " + sf.policy : std::string("in the file's order")) << ": "
                << (other.ok() ? format_seconds(other.schedule.makespan)
                               : "does not run (" + std::string(to_string(other.outcome.code)) + ")");
    }
    std::cout << "\n";
    print_schedule_summary(sim.schedule, c);
  }
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
      document["runs"] = {
          {"count", runs},   {"cv", cv},        {"seed", seed},    {"mean", dist.mean}, {"stddev", dist.stddev},
          {"p50", dist.p50}, {"p95", dist.p95}, {"min", dist.min}, {"max", dist.max},   {"out_of_memory", dist.failed}};
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

}  // namespace gantry::cli
