// How well the simulator predicts placements run by StarPU (exec/starpu_backend.hpp) on 2 device
// workers and 1 copy engine: ChainMM, FFNN and a Llama block (DOPPLER's workloads; pooled for the
// targets) and Inception-V3 (a profiled training graph, reported beside them), each placed by every
// registry placer and by seeded random perturbations (>= 20 placements each), simulated, then run
// 3 times (median) with sleep kernels, two ways: ahead (the whole simulated schedule submitted to
// StarPU at once, each worker in the plan's order, tensors as data handles) and decided (the
// executor's loop launches each vertex as a pinned task). Compute is scaled so that a run takes
// tens of milliseconds and the mean vertex 0.5 ms or more; links are this machine's memcpy, as
// calibrated, joined sequentially (the one copy engine runs one copy at a time, as the simulation
// then does). The simulation adds StarPU's own cost per task, measured in the same run on a chain
// of empty tasks, to every vertex and every copy.
//
// Also measured: StarPU's per-task cost on each workload's own plan with every time zero (an empty
// task graph of the same shape), the host time to submit a task, and the same graphs placed by
// StarPU's own dmda scheduler (no gantry placement, the same compute times as cost model) beside
// the measured makespans of gantry's placers. In one process StarPU's CPU workers share one memory
// node, so dmda's runs move no bytes and pay no link time: that comparison is made with free links
// for gantry's placers too.
//
// StarPU's workers poll when idle (Debian's build): 3 workers share this machine's cores with the
// bench's thread, and figures vary from run to run.
#include "bench_support.hpp"
#include "timed_study.hpp"

#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/starpu_backend.hpp>
#include <gantry/exec/study.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace gantry;

namespace {

struct figures {
  std::vector<double> simulated, measured, errors;
  std::size_t invalid = 0;
  double host_seconds = 0;
  std::size_t host_tasks = 0;
};

}  // namespace

int main(int argc, char** argv) {
  bool details = false;  // --details: one line per placement
  for (int i = 1; i < argc; ++i) details = details || std::string(argv[i]) == "--details";
  constexpr seconds target_work = 0.06;  // total compute per run, in seconds, before dividing by 2 devices
  constexpr std::size_t placements = 20;
  constexpr std::size_t runs = 3;
  // The CPU backend's calibration first: StarPU's polling workers would slow it.
  const auto calibration = calibrate_cpu({.devices = 2});
  std::printf("calibration: copies %.2f us + bytes / %.2f GB/s, %u hardware threads\n",
              calibration.link.link.latency * 1e6, calibration.link.link.bandwidth / 1e9, calibration.hardware_threads);

  const auto workloads = bench::study_workloads(argc, argv, true);

  starpu_backend backend({.devices = 2});
  const seconds per_task = measure_task_cost(backend);
  std::printf(
      "StarPU %d.%d, scheduler %s, 2 device workers + 1 copy engine; a chain of empty tasks on one worker: "
      "%.1f us per task (added to every simulated vertex)\n",
      STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, backend.options().scheduler.c_str(), 1e6 * per_task);

  figures ahead_pooled, decided_pooled;
  std::vector<std::string> lines;
  std::vector<double> dmda_ratios;  // per DOPPLER workload: gantry's best placer / dmda, measured
  for (const auto& w : workloads) {
    const auto [scale, link] = bench::timed_scaling_of(w.g, target_work, calibration.link.link);
    const cluster c = cluster::uniform(2, unlimited_memory, link, comm_mode::sequential);
    // A copy is a StarPU task too: the simulation charges it StarPU's cost per task, as every vertex.
    const cluster sim_c = cluster::uniform(
        2, unlimited_memory, {.latency = link.latency + per_task, .bandwidth = link.bandwidth}, comm_mode::sequential);
    const graph run_graph = with_compute_times(w.g, scale, 0), sim_graph = with_compute_times(w.g, scale, per_task);
    const graph_model run_model(run_graph, c), sim_model(sim_graph, sim_c);
    const auto candidates = placement_candidates(sim_graph, sim_model, c, {.count = placements, .seed = 1});

    std::printf("\n%s: %zu vertices, %zu placements\n", w.name.c_str(), run_graph.vertex_count(), candidates.size());
    for (const bool ahead : {true, false}) {
      (void)compare_run(sim_graph, sim_model, run_model, c, candidates.front(), backend, {.runs = 1, .ahead = ahead});
      const auto study =
          study_placements(sim_graph, sim_model, run_model, c, candidates, backend, {.runs = runs, .ahead = ahead});
      figures& pool = ahead ? ahead_pooled : decided_pooled;
      std::string worst;
      double worst_error = -1;
      std::size_t invalid = 0;
      for (const auto& row : study.rows) {
        const auto& r = row.result;
        if (!r.ok()) {
          std::printf("    %-22s %s\n", row.name.c_str(), r.outcome.message.c_str());
          continue;
        }
        invalid += r.invalid_runs;
        if (!r.valid) std::printf("    %-22s INVALID: %s\n", row.name.c_str(), r.violations.c_str());
        if (std::abs(r.error) > worst_error) worst_error = std::abs(r.error), worst = row.name;
        if (w.pooled) {
          pool.simulated.push_back(r.simulated);
          pool.measured.push_back(r.measured);
          pool.errors.push_back(std::abs(r.error));
          pool.invalid += r.invalid_runs;
          pool.host_seconds += r.median_run.host_seconds;
          pool.host_tasks += run_graph.vertex_count() + r.median_run.schedule.transfers.size();
        }
        if (details)
          std::printf("    %-22s simulated %8.3f ms  measured %8.3f ms  (%+.1f%%)\n", row.name.c_str(),
                      1e3 * r.simulated, 1e3 * r.measured, 100 * r.error);
      }
      std::printf("  %-8s median |error| %.1f%%, Spearman %.3f, Pearson %.3f, worst %s (%.1f%%), invalid runs %zu\n",
                  ahead ? "ahead" : "decided", 100 * study.median_abs_error, study.spearman, study.pearson,
                  worst.c_str(), 100 * worst_error, invalid);
    }

    // StarPU's cost per task on this workload's plan with every time zero.
    {
      const auto empty =
          bench::empty_graph_cost_of(w.g, std::span<const device_id>(candidates.front().device), backend);
      std::printf(
          "  empty task graph (%s's placement, %.0f tasks): makespan %.2f ms, %.1f us per task; submitting "
          "%.1f us per task\n",
          candidates.front().name.c_str(), empty.tasks, 1e3 * empty.makespan, 1e6 * empty.makespan / empty.tasks,
          1e6 * empty.host / empty.tasks);
    }

    // StarPU's own scheduler against gantry's placers on the same footing: in one process StarPU
    // moves no bytes between CPU workers, so dmda's runs pay no link time; gantry's placers place
    // for free links here too, and their placements run ahead on the same workers.
    {
      const cluster free_links =
          cluster::uniform(2, unlimited_memory, {.latency = 0, .bandwidth = 1e30}, comm_mode::sequential);
      const graph_model free_run(run_graph, free_links), free_sim(sim_graph, free_links);
      const auto placed = placement_candidates(sim_graph, free_sim, free_links, {.count = 1});
      std::vector<double> placer_measured;
      for (const auto& candidate : placed) {
        const auto r =
            compare_run(sim_graph, free_sim, free_run, free_links, candidate, backend, {.runs = runs, .ahead = true});
        if (r.ok()) placer_measured.push_back(r.measured);
      }
      std::vector<double> makespans;
      for (std::size_t run = 0; run < runs; ++run)
        makespans.push_back(run_with_starpu_scheduler(run_graph, free_run, backend).makespan);
      const double dmda = median_of(makespans);
      const double best = *std::min_element(placer_measured.begin(), placer_measured.end());
      std::printf(
          "  links free (one process): %s measured %.2f ms; gantry's %zu placers measured %.2f ms best, "
          "%.2f ms median; best / %s %.3f\n",
          backend.options().scheduler.c_str(), 1e3 * dmda, placer_measured.size(), 1e3 * best,
          1e3 * median_of(placer_measured), backend.options().scheduler.c_str(), best / dmda);
      if (w.pooled) dmda_ratios.push_back(best / dmda);
    }
  }

  const auto report = [](const char* how, const figures& f) {
    std::printf(
        "pooled %-8s %zu placements of DOPPLER's workloads: median |error| %.2f%%, Spearman %.3f, Pearson %.3f, "
        "invalid runs %zu, host %.2f us per task\n",
        how, f.errors.size(), 100 * median_of(f.errors), spearman(f.simulated, f.measured),
        pearson(f.simulated, f.measured), f.invalid,
        f.host_tasks > 0 ? 1e6 * f.host_seconds / static_cast<double>(f.host_tasks) : 0.0);
  };
  std::printf("\n");
  report("ahead", ahead_pooled);
  report("decided", decided_pooled);
  std::printf("links free: gantry's best placer / %s, measured, median over DOPPLER's workloads: %.3f\n",
              backend.options().scheduler.c_str(), median_of(dmda_ratios));
  bench::print_target("starpu_ahead_median_abs_error", median_of(ahead_pooled.errors), 0.10);
  bench::print_target_at_least("starpu_ahead_spearman_at_least",
                               spearman(ahead_pooled.simulated, ahead_pooled.measured), 0.9);
  bench::print_target("starpu_decided_median_abs_error", median_of(decided_pooled.errors), 0.10);
  bench::print_target_at_least("starpu_decided_spearman_at_least",
                               spearman(decided_pooled.simulated, decided_pooled.measured), 0.9);
  bench::print_target("starpu_invalid_measured_schedules",
                      static_cast<double>(ahead_pooled.invalid + decided_pooled.invalid), 0);
  bench::print_target("starpu_task_cost_us", 1e6 * per_task, 50);
  return ahead_pooled.invalid + decided_pooled.invalid == 0 ? 0 : 1;
}
