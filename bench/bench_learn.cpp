// DOPPLER's learned dual policy (learn/doppler.hpp) against every other gantry placer, on two sets
// of graphs:
//  * "published": the four compute graphs DOPPLER published (workloads/doppler_published.hpp:
//    chain_mm, ffnn, transformer block and layer, node for node) in DOPPLER's own setting: compute
//    = the file's cost / 1e10 s, 4 devices of unlimited memory, links of 1e10 B/s with no latency,
//    transfers in parallel;
//  * "generated": gantry's generators of the same four workloads (workloads/doppler.hpp) on DOPPLER's
//    hardware (§7: 4 P100 GPUs, 16 GB each; fp32 at 9.3 TFLOP/s, 10 us per kernel, PCIe links of
//    12 GB/s).
// Argument 4 (or GANTRY_LEARN_GRAPHS) picks published, generated or all (the default). Every
// placement, learned or not, is judged the same way: the mean makespan of the work-conserving
// simulator over the same 50 drawn durations (lognormal, cv 0.1, seeds 1000 .. 1049), draws that
// training never sees: training picks its best placement on other seeds (10 draws per candidate,
// then its 4 best candidates again on 40 fresh draws), so the reported figure is not the lucky
// minimum of many noisy judgements.
// Training: imitation of a teacher, then REINFORCE, for a time budget per graph: argument 1 or
// GANTRY_LEARN_BUDGET, seconds (default 120). The teacher (argument 2 or GANTRY_LEARN_TEACHER) is
// "best" (the default, as `gantry learn`'s): the registry placer whose placement has the lowest
// mean over the training draws (never the held-out ones), or "doppler-critical-path", DOPPLER's
// built-in rule. Training never returns worse than the teacher's placement under its judge; the
// output says whether the answer is the policy's own, and the policy's best beside it. Argument 3
// (or GANTRY_LEARN_COMM_FACTOR), default 1, is DOPPLER's communication factor (App. D): every
// transfer costs that many times its bytes over the link, the factor DOPPLER fitted its own
// simulator to its real engine with (4); training and judging both use it, and the TARGET names
// carry it when it is not 1. Writes learning curves to bench_learn_<graph>[_comm<F>].csv in the
// working directory. Each graph trains on one thread. For ablations, GANTRY_LEARN_RESTART_AFTER
// (default 500, 0: never) and GANTRY_LEARN_FLAGS_FOLLOW_BEST (1, the default, or 0) set
// doppler_options::restart_after and flags_follow_best.
#include "bench_support.hpp"

#include <gantry/learn/doppler.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>
#include <gantry/workloads/doppler_published.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr std::size_t evaluation_draws = 50;
constexpr std::uint64_t evaluation_seed = 1000;
constexpr double cv = 0.1;

// The mean makespan over `draws` draws with seeds first_seed, first_seed + 1, ...
double evaluated_makespan(const gantry::graph& g, const gantry::graph_model& model, const gantry::cluster& c,
                          const gantry::placement& p, std::uint64_t first_seed = evaluation_seed,
                          std::size_t draws = evaluation_draws) {
  double sum = 0;
  for (std::size_t i = 0; i < draws; ++i) {
    const auto sim = gantry::simulate(g, model, c, std::span<const gantry::device_id>(p.device),
                                      {.priority = p.order, .cv = cv, .seed = first_seed + i});
    if (!sim.ok()) return std::numeric_limits<double>::infinity();
    sum += sim.schedule.makespan;
  }
  return sum / static_cast<double>(draws);
}

double load_average() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

struct outcome_row {
  std::string graph;
  double learned = 0, critical_path = 0, best_other = 0, teacher_makespan = 0;  // held-out means
  double seconds = 0, episodes_per_second = 0;
  std::size_t episodes = 0;
  bool from_policy = false;
  std::string best_other_name, teacher;
};

}  // namespace

int main(int argc, char** argv) {
  double budget = 120;
  if (const char* env = std::getenv("GANTRY_LEARN_BUDGET")) budget = std::atof(env);
  if (argc > 1) budget = std::atof(argv[1]);
  if (!(budget > 0)) {
    std::fprintf(stderr, "bench_learn: the training budget must be > 0 seconds\n");
    return 2;
  }
  std::string teacher = "best";
  if (const char* env = std::getenv("GANTRY_LEARN_TEACHER")) teacher = env;
  if (argc > 2) teacher = argv[2];
  if (teacher != "doppler-critical-path" && teacher != "best") {
    std::fprintf(stderr, "bench_learn: the teacher must be best or doppler-critical-path, got '%s'\n", teacher.c_str());
    return 2;
  }
  double comm_factor = 1;
  if (const char* env = std::getenv("GANTRY_LEARN_COMM_FACTOR")) comm_factor = std::atof(env);
  if (argc > 3) comm_factor = std::atof(argv[3]);
  if (!(comm_factor >= 1) || !std::isfinite(comm_factor)) {
    std::fprintf(stderr, "bench_learn: the communication factor must be a finite number >= 1\n");
    return 2;
  }
  char factor_text[32];
  std::snprintf(factor_text, sizeof factor_text, "%g", comm_factor);
  const std::string suffix = comm_factor == 1 ? std::string() : std::string("_comm") + factor_text;
  std::string which = "all";
  if (const char* env = std::getenv("GANTRY_LEARN_GRAPHS")) which = env;
  if (argc > 4) which = argv[4];
  if (which != "all" && which != "published" && which != "generated") {
    std::fprintf(stderr, "bench_learn: the graphs must be all, published or generated, got '%s'\n", which.c_str());
    return 2;
  }
  const gantry::learn::doppler_options defaults;
  std::size_t restart_after = defaults.restart_after;
  if (const char* env = std::getenv("GANTRY_LEARN_RESTART_AFTER")) restart_after = std::strtoull(env, nullptr, 10);
  bool follow_best = defaults.flags_follow_best;
  if (const char* env = std::getenv("GANTRY_LEARN_FLAGS_FOLLOW_BEST")) follow_best = std::string(env) != "0";
  // DOPPLER's setting for its published graphs: a transfer of b bytes takes comm_factor * b / 1e10 s.
  const auto doppler_devices = gantry::cluster::uniform(4, gantry::unlimited_memory, {.bandwidth = 1e10 / comm_factor});
  const gantry::workload_device p100{.flops_per_second = 9.3e12, .op_overhead = 1e-5, .element_bytes = 4};
  // A transfer of b bytes takes latency + comm_factor * b / 12 GB/s.
  const auto gpus =
      gantry::cluster::uniform(4, gantry::byte_count{16} << 30, {.latency = 10e-6, .bandwidth = 12e9 / comm_factor});
  struct named_graph {
    std::string name;
    gantry::graph g;
    const gantry::cluster* devices;
  };
  std::vector<named_graph> graphs;
  if (which != "generated")
    for (const auto& entry : gantry::doppler_graph_names)
      graphs.push_back(
          {std::string("published_") + entry.name, gantry::doppler_published(entry.value), &doppler_devices});
  if (which != "published") {
    graphs.push_back({"chainmm", gantry::chain_mm({.device = p100}), &gpus});
    graphs.push_back({"ffnn", gantry::ffnn({.device = p100}), &gpus});
    graphs.push_back({"llama_block", gantry::llama_block({.device = p100}), &gpus});
    graphs.push_back({"llama_layer", gantry::llama_layer({.block = {.device = p100}}), &gpus});
  }

  std::printf(
      "DOPPLER dual policy vs every gantry placer; DOPPLER's published graphs on 4 devices with 1e10 B/s "
      "links, gantry's generated ones on 4 P100-like GPUs (9.3 TFLOP/s, 16 GiB, 12 GB/s links); "
      "communication factor %g; mean simulated makespan over the same %zu held-out draws with cv %.1f; "
      "training budget %.0f s per graph; imitation teacher: %s; entropy restart after %zu stalled episodes; "
      "flags follow the best placement: %s; load average %.2f\n\n",
      comm_factor, evaluation_draws, cv, budget, teacher.c_str(), restart_after, follow_best ? "yes" : "no",
      load_average());
  std::vector<outcome_row> rows;
  for (auto& [name, g, devices] : graphs) {
    const auto& gpus = *devices;
    const gantry::graph_model model(g, gpus);
    outcome_row row{name};
    row.best_other = std::numeric_limits<double>::infinity();
    std::printf("%s: %zu vertices, %zu edges\n", name.c_str(), g.vertex_count(), g.edge_count());
    gantry::learn::doppler_options options{.imitation_episodes = 50,
                                           .reinforce_episodes = std::numeric_limits<std::size_t>::max(),
                                           .restart_after = restart_after,
                                           .flags_follow_best = follow_best,
                                           .judge_cv = cv,
                                           .judge_draws = 10,
                                           .recheck_candidates = 4,
                                           .recheck_draws = 40,
                                           .baseline_decay = 0.9,
                                           .seed = 1,
                                           .time_limit = budget};
    double best_trained = std::numeric_limits<double>::infinity();
    std::string teacher_name = teacher;
    for (const auto& entry : gantry::placers()) {
      const auto placed = entry.place({g, model, gpus});
      if (!placed.placement.ok()) continue;
      const double makespan = evaluated_makespan(g, model, gpus, placed.placement);
      if (teacher == "best") {  // judged by training's own judge, on the training draws
        const auto trained = gantry::learn::doppler_judge(g, model, gpus, placed.placement, options);
        if (trained && *trained < best_trained) {
          best_trained = *trained;
          teacher_name = entry.name;
          options.teacher = placed.placement;
          options.teacher_makespan = *trained;
          row.teacher_makespan = makespan;
        }
      }
      std::printf("  %-22s %9.3f ms\n", entry.name.c_str(), makespan * 1e3);
      if (entry.name == "critical-path") row.critical_path = makespan;
      if (makespan < row.best_other) {
        row.best_other = makespan;
        row.best_other_name = entry.name;
      }
    }
    std::printf("  imitation teacher: %s\n", teacher_name.c_str());
    const auto learned = gantry::learn::doppler(g, model, gpus, options);
    if (!learned.ok()) {
      std::printf("  doppler failed: %s\n", learned.outcome.message.c_str());
      row.learned = std::numeric_limits<double>::infinity();
    } else {
      row.learned = evaluated_makespan(g, model, gpus, learned.placement);
    }
    row.seconds = learned.training_seconds;
    row.episodes = learned.episodes;
    row.teacher = teacher_name;
    row.from_policy = learned.from_policy;
    row.episodes_per_second = static_cast<double>(learned.episodes) / learned.training_seconds;
    const double best_judged = learned.curve.empty() ? 0.0 : learned.curve.back().best;
    std::printf(
        "  %-22s %9.3f ms  (%zu episodes in %.1f s, %.1f episodes/s, %zu entropy restarts; imitation agreement "
        "%.3f; best judged in training %.3f ms, rechecked %.3f ms)\n",
        "doppler", row.learned * 1e3, learned.episodes, learned.training_seconds, row.episodes_per_second,
        learned.restarts, learned.agreement, best_judged * 1e3, learned.makespan * 1e3);
    // Whether the answer is the policy's own or its teacher's, which training never returns worse than.
    std::printf("  the answer is %s; the policy's own best judged in training %.3f ms, the teacher's %.3f ms\n",
                learned.from_policy ? "decoded by the policy" : "the teacher's placement",
                learned.policy_makespan * 1e3, learned.teacher_makespan * 1e3);
    std::printf("  doppler / best other (%s) = %.4f, doppler / critical-path = %.4f; load average %.2f\n\n",
                row.best_other_name.c_str(), row.learned / row.best_other, row.learned / row.critical_path,
                load_average());
    std::ofstream csv("bench_learn_" + name + suffix + ".csv");
    csv << "episode,stage,makespan,best,baseline,agreement,seconds\n";
    for (const auto& p : learned.curve)
      csv << p.episode << ',' << gantry::learn::to_string(p.stage) << ',' << p.makespan << ',' << p.best << ','
          << p.baseline << ',' << p.agreement << ',' << p.seconds_elapsed << '\n';
    rows.push_back(row);
  }

  int below_cp = 0, published_below_best = 0;
  for (const auto& r : rows) {
    below_cp += r.learned <= 0.95 * r.critical_path ? 1 : 0;
    published_below_best += r.graph.starts_with("published_") && r.learned <= 0.97 * r.best_other ? 1 : 0;
  }
  std::printf(
      "graph                    learn/best other  learn/CP  teacher                 answer    episodes  seconds\n");
  for (const auto& r : rows)
    std::printf("%-24s %16.4f  %8.4f  %-22s  %-8s  %8zu  %7.1f\n", r.graph.c_str(), r.learned / r.best_other,
                r.learned / r.critical_path, r.teacher.c_str(), r.from_policy ? "policy" : "teacher", r.episodes,
                r.seconds);
  std::printf("\n");
  for (const auto& r : rows) {
    const std::string stem = "learn_" + r.graph;
    bench::print_target((stem + "_vs_best_other" + suffix).c_str(), r.learned / r.best_other, 1.0);
    bench::print_target((stem + "_vs_critical_path" + suffix).c_str(), r.learned / r.critical_path, 1.0);
    // Against the teacher, named, on the held-out draws (training keeps the teacher's placement
    // among its candidates, so only the draws can tell them apart).
    if (r.teacher_makespan > 0)
      bench::print_target((stem + "_vs_teacher_" + r.teacher + suffix).c_str(), r.learned / r.teacher_makespan, 1.0);
    // Training, its final decode and rechecks included, stays within the budget, and runs episodes.
    bench::print_target((stem + "_train_seconds" + suffix).c_str(), r.seconds, budget);
    bench::print_target_at_least((stem + "_episodes" + suffix).c_str(), static_cast<double>(r.episodes), 1);
  }
  if (which != "generated")
    bench::print_target_at_least(("learn_published_graphs_3pct_below_best_other_at_least" + suffix).c_str(),
                                 published_below_best, 2);
  bench::print_target_at_least(("learn_graphs_5pct_below_critical_path_at_least" + suffix).c_str(), below_cp, 2);
  return 0;
}
