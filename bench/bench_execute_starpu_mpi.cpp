// How well the simulator predicts placements run across MPI ranks by StarPU-MPI
// (exec/starpu_mpi_backend.hpp): run it under `mpirun -np 2` (one rank per device; `cmake --build
// DIR --target bench` does). ChainMM, FFNN and a Llama block (DOPPLER's workloads; pooled for the
// targets) and Inception-V3 (a profiled training graph, reported beside them), each placed by every
// registry placer and by seeded random perturbations (>= 20 placements each), simulated, then
// replayed ahead across the ranks 3 times (median) with sleep kernels. Compute is scaled as in
// bench_execute_starpu (tens of milliseconds a run, 0.5 ms or more per vertex); the link is the
// reference link slowed by the same factor but never faster than the MPI link between the ranks,
// measured first (unpaced StarPU-MPI messages): its bandwidth as fitted, and as latency the slowest
// of the sizes' median times beyond their bytes. A paced copy lasts at least its modelled time, so
// a model that covers the messages' usual time predicts them; on 2 cores a message's time swings
// by milliseconds (below), and the fit's latency, from the smallest message, leaves most of them
// late. Links are independent (parallel): each rank sends
// on its own, as MPI does; sequential links would make every transfer wait for a message from the
// rank that received the one before, a latency the simulation does not charge. The simulation adds StarPU-MPI's
// cost per task, measured on a chain of empty tasks, to every vertex.
//
// Also measured: StarPU-MPI's cost per task on each workload's own plan with every time zero (an
// empty task graph of the same shape) and the host time to submit a task.
//
// StarPU's dmda is not run beside: across ranks StarPU-MPI has no scheduler of its own. A task runs
// on the rank that owns the data it writes (or where the application says), so the placement
// across ranks is the application's, which is what gantry's placers compute.
//
// Each rank has a polling StarPU worker and StarPU-MPI's polling progress thread: with 2 ranks on
// a 2-core machine, 4 busy threads share 2 cores, a message waits for its thread's turn on a core
// (milliseconds), and figures vary from run to run.
#include "bench_support.hpp"
#include "timed_study.hpp"

#include <gantry/exec/starpu_mpi_backend.hpp>
#include <gantry/exec/study.hpp>

#include <cstdio>
#include <string>
#include <vector>

using namespace gantry;

namespace {}  // namespace

int main(int argc, char** argv) {
  bool details = false;  // --details: one line per placement
  for (int i = 1; i < argc; ++i) details = details || std::string(argv[i]) == "--details";
  constexpr seconds target_work = 0.06;
  constexpr std::size_t placements = 20;
  constexpr std::size_t runs = 3;

  starpu_mpi_backend backend;
  const bool talk = backend.rank() == 0;
  if (backend.ranks() < 2) {
    std::printf("bench_execute_starpu_mpi: run it under mpirun -np 2 (one rank per device); %d rank ran\n",
                backend.ranks());
    bench::print_target("starpu_mpi_ranks_at_least_2", 0, 0);
    return 1;
  }
  const auto mpi = measure_mpi_link(backend);
  link_model paced = mpi.link.link;
  for (const auto& s : mpi.samples) paced.latency = std::max(paced.latency, s.time - s.bytes / paced.bandwidth);
  const seconds per_task = measure_task_cost(backend);
  if (talk) {
    std::printf("StarPU %d.%d-MPI, %d ranks on %u hardware threads here; clocks tied to within %.2f us\n",
                STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, backend.ranks(), std::thread::hardware_concurrency(),
                1e6 * backend.clock_uncertainty());
    std::printf("MPI link, rank 0 -> 1, unpaced:");
    for (const auto& s : mpi.samples) std::printf("  %.0f B %.3f ms", s.bytes, 1e3 * s.time);
    std::printf(
        "\n  fitted %.3f ms + bytes / %.3f GB/s (r^2 %.3f), paced to %.3f ms + bytes at that rate; cost per task "
        "%.2f us (a chain of empty tasks)\n",
        1e3 * mpi.link.link.latency, mpi.link.link.bandwidth / 1e9, mpi.link.r_squared, 1e3 * paced.latency,
        1e6 * per_task);
  }

  const auto workloads = bench::study_workloads(argc, argv, talk);

  std::vector<double> simulated, measured, errors;
  std::size_t invalid = 0, host_tasks = 0;
  double host_seconds = 0;
  for (const auto& w : workloads) {
    const auto [scale, link] = bench::timed_scaling_of(w.g, target_work, paced);
    const cluster c = cluster::uniform(2, unlimited_memory, link, comm_mode::parallel);
    const graph run_graph = with_compute_times(w.g, scale, 0), sim_graph = with_compute_times(w.g, scale, per_task);
    const graph_model run_model(run_graph, c), sim_model(sim_graph, c);
    const auto candidates = placement_candidates(sim_graph, sim_model, c, {.count = placements, .seed = 1});
    if (talk)
      std::printf("\n%s: %zu vertices, %zu placements, link %.3f ms + bytes / %.3f GB/s\n", w.name.c_str(),
                  run_graph.vertex_count(), candidates.size(), 1e3 * link.latency, link.bandwidth / 1e9);
    (void)compare_run(sim_graph, sim_model, run_model, c, candidates.front(), backend, {.runs = 1, .ahead = true});
    const auto study =
        study_placements(sim_graph, sim_model, run_model, c, candidates, backend, {.runs = runs, .ahead = true});
    std::string worst;
    double worst_error = -1;
    std::size_t workload_invalid = 0;
    for (const auto& row : study.rows) {
      const auto& r = row.result;
      if (!r.ok()) {
        if (talk) std::printf("    %-22s %s\n", row.name.c_str(), r.outcome.message.c_str());
        continue;
      }
      workload_invalid += r.invalid_runs;
      if (!r.valid && talk) std::printf("    %-22s INVALID: %s\n", row.name.c_str(), r.violations.c_str());
      if (std::abs(r.error) > worst_error) worst_error = std::abs(r.error), worst = row.name;
      if (w.pooled) {
        simulated.push_back(r.simulated);
        measured.push_back(r.measured);
        errors.push_back(std::abs(r.error));
        invalid += r.invalid_runs;
        host_seconds += r.median_run.host_seconds;
        host_tasks += run_graph.vertex_count() + r.median_run.schedule.transfers.size();
      }
      if (details && talk)
        std::printf("    %-22s simulated %8.3f ms  measured %8.3f ms  (%+.1f%%)\n", row.name.c_str(), 1e3 * r.simulated,
                    1e3 * r.measured, 100 * r.error);
    }
    if (talk)
      std::printf("  median |error| %.1f%%, Spearman %.3f, Pearson %.3f, worst %s (%.1f%%), invalid runs %zu\n",
                  100 * study.median_abs_error, study.spearman, study.pearson, worst.c_str(), 100 * worst_error,
                  workload_invalid);

    // StarPU-MPI's cost per task on this workload's plan with every time zero.
    const auto empty = bench::empty_graph_cost_of(w.g, std::span<const device_id>(candidates.front().device), backend);
    if (talk)
      std::printf(
          "  empty task graph (%s's placement, %.0f tasks and messages): makespan %.2f ms, %.1f us per task; "
          "submitting %.1f us per task\n",
          candidates.front().name.c_str(), empty.tasks, 1e3 * empty.makespan, 1e6 * empty.makespan / empty.tasks,
          1e6 * empty.host / empty.tasks);
  }

  if (!talk) return invalid == 0 ? 0 : 1;
  std::printf(
      "\npooled %zu placements of DOPPLER's workloads on 2 ranks: median |error| %.2f%%, Spearman %.3f, Pearson "
      "%.3f, invalid runs %zu, host %.2f us per task\n",
      errors.size(), 100 * median_of(errors), spearman(simulated, measured), pearson(simulated, measured), invalid,
      host_tasks > 0 ? 1e6 * host_seconds / static_cast<double>(host_tasks) : 0.0);
  bench::print_target("starpu_mpi_median_abs_error", median_of(errors), 0.10);
  bench::print_target_at_least("starpu_mpi_spearman_at_least", spearman(simulated, measured), 0.9);
  bench::print_target("starpu_mpi_invalid_measured_schedules", static_cast<double>(invalid), 0);
  bench::print_target("starpu_mpi_task_cost_us", 1e6 * per_task, 50);
  return invalid == 0 ? 0 : 1;
}
