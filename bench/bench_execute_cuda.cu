// How well the simulator predicts real runs of the CUDA backend on 4 virtual devices (SM partitions
// of GPU 0 made with green contexts): ChainMM, FFNN and a Llama block run their real work (cuBLAS
// products and element-wise kernels), their compute times profiled on the GPU a moment before;
// Inception-V3 (a profiled training graph) runs spin kernels of its profiled durations, scaled so
// the mean vertex takes 100 us. Each is placed by every registry placer and by seeded random
// perturbations (20 placements, and 2 more below), simulated, then executed 3 times (median). The
// link and the executor's round trip per vertex are calibrated on the GPU first
// (calibrate_backend), and the simulation adds that round trip to every vertex. The partitions
// share the GPU's memory: a bandwidth-bound sum timed on one partition alone and on all at once
// (measure_domain) gives the shared domain the real workloads are simulated with
// (sim/shared_bandwidth.hpp); each is also reported against a simulation of independent partitions,
// with the candidate either simulation would pick and what it measured. The real workloads have up
// to two candidates more: local search from the shared simulation's pick, judged as independent
// partitions and sharing the bandwidth (what knowing the shared memory gains a placer's search,
// measured). Then the first placements of each workload are replayed strictly with the whole plan
// enqueued ahead (exec/replay_ahead.hpp), on streams and as one captured CUDA graph, against their
// strict simulation without the round trip. Reports per workload and pooled: the median absolute
// error of the simulated makespan (the baseline: each placement's simulation, measured in the same
// run), Spearman and Pearson, the worst placement, every run validate() refused with its first
// violation, and the host time per vertex.
// Usage: bench_execute_cuda [details] [--graphs DIR] (DIR holds inception_v3.json.gz; default: the
// source tree's examples/graphs, or ./examples/graphs). Without a GPU it says so and prints every
// target as not measured (FAIL).
#include "bench_support.hpp"

#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cuda_backend.cuh>
#include <gantry/exec/replay_ahead.hpp>
#include <gantry/exec/study.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/place/local_search.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/workloads/doppler.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace gantry;

namespace {

constexpr std::size_t devices = 4;
const char* const workload_names[] = {"chainmm", "ffnn", "llama-block", "inception-v3"};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

struct totals {
  std::vector<double> simulated, measured, errors;
  double host_seconds = 0;
  std::size_t host_vertices = 0, invalid = 0;
};

void print_targets(const std::vector<double>& workload_errors, const std::vector<double>& workload_rhos, double error,
                   double rho, double host_us, double invalid, double ahead_stream_us, double ahead_graph_us,
                   double ahead_error, double ahead_invalid) {
  bench::print_target("gpu_median_abs_error", error, 0.05);
  bench::print_target_at_least("gpu_spearman_at_least", rho, 0.95);
  for (std::size_t w = 0; w < workload_errors.size(); ++w) {
    const std::string name(workload_names[w]);
    bench::print_target(("gpu_" + name + "_median_abs_error").c_str(), workload_errors[w], 0.10);
    bench::print_target_at_least(("gpu_" + name + "_spearman_at_least").c_str(), workload_rhos[w], 0.95);
  }
  bench::print_target("gpu_executor_host_us_per_vertex", host_us, 10);
  bench::print_target("gpu_invalid_measured_schedules", invalid, 0);
  bench::print_target("gpu_ahead_streams_host_us_per_vertex", ahead_stream_us, 10);
  bench::print_target("gpu_ahead_graph_host_us_per_vertex", ahead_graph_us, 2);
  bench::print_target("gpu_ahead_median_abs_error", ahead_error, 0.05);
  bench::print_target("gpu_ahead_invalid_schedules", ahead_invalid, 0);
}

// Local search (place/local_search.hpp) from the candidate the shared simulation ranks first, with
// `judge` (a model of g on `judged`) as its judge, appended to the candidates as `name` unless it
// repeats one: the same search told of the shared memory or not, to be measured beside the others.
void add_searched(std::vector<placement_candidate>& candidates, const graph& g, const graph_model& shared_model,
                  const cluster& shared, const graph_model& judge, const cluster& judged, const std::string& name) {
  const placement_candidate* best = nullptr;
  seconds best_makespan = std::numeric_limits<seconds>::infinity();
  for (const auto& c : candidates) {
    const auto r = simulate(g, shared_model, shared, std::span<const device_id>(c.device), {.priority = c.order});
    if (r.ok() && r.schedule.makespan < best_makespan) best = &c, best_makespan = r.schedule.makespan;
  }
  if (best == nullptr) return;
  placement start;
  start.device = best->device;
  start.order = best->order;
  auto searched = local_search(g, judge, judged, start, {.max_simulations = 3000}).placement;
  if (!searched.ok()) return;
  for (const auto& c : candidates)
    if (c.device == searched.device) return;
  candidates.push_back({name, std::move(searched.device), std::move(searched.order)});
}

std::filesystem::path graph_directory(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--graphs") == 0) return argv[i + 1];
  const std::filesystem::path built(GANTRY_BENCH_GRAPH_DIR);
  if (std::filesystem::exists(built / "inception_v3.json.gz")) return built;
  return "examples/graphs";
}

}  // namespace

int main(int argc, char** argv) {
  bool details = false;
  for (int i = 1; i < argc; ++i) details = details || std::strcmp(argv[i], "details") == 0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> nans(std::size(workload_names), nan);
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("no CUDA GPU here: the GPU targets were not measured\n");
    print_targets(nans, nans, nan, nan, nan, nan, nan, nan, nan, nan);
    return 0;
  }
  const std::filesystem::path graphs = graph_directory(argc, argv);
  if (!std::filesystem::exists(graphs / "inception_v3.json.gz")) {
    std::fprintf(stderr, "bench_execute_cuda: no %s: pass --graphs DIR (the source tree's examples/graphs)\n",
                 (graphs / "inception_v3.json.gz").c_str());
    return 2;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int driver = 0;
  cudaDriverGetVersion(&driver);
  std::printf("GPU 0: %s, %d SMs, driver CUDA %d.%d, built with CUDA %d.%d\n", prop.name, prop.multiProcessorCount,
              driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);

  backend_calibration calibration;
  {
    cuda_backend plain;  // no operations: a vertex of no work is an empty spin kernel
    calibration = calibrate_backend(plain, {.devices = devices,
                                            .copy_sizes = {std::uint64_t{4} << 10, std::uint64_t{1} << 20,
                                                           std::uint64_t{16} << 20, std::uint64_t{128} << 20}});
    std::printf("devices: %s\n", plain.description().c_str());
  }
  std::printf("calibration: round trip %.2f us per vertex, copies between partitions %.2f us + bytes / %.1f GB/s\n",
              1e6 * calibration.launch_overhead, 1e6 * calibration.link.link.latency,
              calibration.link.link.bandwidth / 1e9);
  const cluster independent = cluster::uniform(devices, unlimited_memory, calibration.link.link, comm_mode::parallel);
  // The partitions share the GPU's memory bandwidth: measured with a bandwidth-bound sum on one
  // partition alone and on every partition at once, it becomes the shared domain the real
  // workloads are simulated with (sim/shared_bandwidth.hpp).
  cluster shared = independent;
  {
    constexpr std::uint64_t probe_elements = std::uint64_t{1} << 26;  // 256 MiB per tensor
    cuda_backend probe({.operations = operations_of(bandwidth_probe(devices, probe_elements))});
    const auto domain = measure_domain(probe, devices, probe_elements);
    add_measured_domain(shared, domain, "gpu0");
    std::printf(
        "memory bandwidth (a sum of 256 MiB tensors): one partition alone %.0f GB/s, all %zu at once %.0f GB/s "
        "in all (each sum x%.2f)\n",
        domain.alone_bandwidth() / 1e9, devices, domain.together_bandwidth() / 1e9, domain.slowdown());
  }

  struct workload {
    std::string name;
    graph g;
    bool real;
  };
  std::vector<workload> workloads;
  workloads.push_back({workload_names[0], chain_mm({.dimension = 8192, .blocks_per_side = 4, .inner_split = 2}), true});
  workloads.push_back({workload_names[1], ffnn({.batch = 1 << 15, .hidden = 1 << 16}), true});
  workloads.push_back(
      {workload_names[2], llama_block({.sequence = 4096, .hidden = 4096, .heads = 32, .ffn_hidden = 11008}), true});
  workloads.push_back({workload_names[3], read_graph((graphs / "inception_v3.json.gz").string()), false});

  totals all, ahead_streams, ahead_graph;
  std::vector<double> workload_errors, workload_rhos;
  std::size_t graph_failures = 0;
  for (const auto& w : workloads) {
    graph run_graph;
    std::unique_ptr<cuda_backend> backend;
    // Every copy moves its whole tensor (the backend does not pace copies to the model).
    std::size_t largest = std::size_t{1} << 20;
    for (edge_id e = 0; e < w.g.edge_count(); ++e) largest = std::max<std::size_t>(largest, w.g.bytes(e));
    if (w.real) {
      backend = std::make_unique<cuda_backend>(
          cuda_backend_options{.max_copy_bytes = largest, .operations = operations_of(w.g)});
      run_graph = with_profiled_times(w.g, backend->profile(w.g, devices));
    } else {
      backend = std::make_unique<cuda_backend>(cuda_backend_options{.max_copy_bytes = largest});
      seconds work = 0;
      std::size_t working = 0;
      for (const auto& v : w.g.vertices()) work += v.compute, working += v.compute > 0 ? 1 : 0;
      run_graph = with_compute_times(w.g, 100e-6 * static_cast<double>(working) / work, 0);
    }
    const graph sim_graph = with_compute_times(run_graph, 1, calibration.launch_overhead);
    // Real work moves its tensors through the shared memory; spin kernels move nothing.
    const cluster& c = w.real ? shared : independent;
    const graph_model run_model(run_graph, c), sim_model(sim_graph, c);
    auto candidates = placement_candidates(sim_graph, sim_model, c, {.count = 20, .seed = 1});
    // The same measured runs against a simulation of independent partitions (no shared bandwidth).
    const graph_model alone_model(sim_graph, independent);
    if (w.real) {  // what a placer's search gains from knowing the shared memory, measured
      add_searched(candidates, sim_graph, sim_model, c, alone_model, independent, "search (independent)");
      add_searched(candidates, sim_graph, sim_model, c, sim_model, c, "search (shared)");
    }
    (void)compare_run(sim_graph, sim_model, run_model, c, candidates.front(), *backend, {.runs = 1});  // warm-up
    const auto study = study_placements(sim_graph, sim_model, run_model, c, candidates, *backend, {.runs = 3});
    std::vector<double> errors_independent;
    // Which candidate each judge would pick (the least simulated makespan), and what it measured.
    double pick_independent = nan, pick_independent_measured = nan, pick_shared = nan, pick_shared_measured = nan,
           best_measured = nan;
    std::size_t compared = 0;
    const study_row* worst = nullptr;
    for (const auto& row : study.rows) {
      const auto& r = row.result;
      if (details)
        std::printf("    %-22s simulated %9.3f ms  measured %9.3f ms  (%+.1f%%)%s\n", row.name.c_str(),
                    1e3 * r.simulated, 1e3 * r.measured, 100 * r.error, r.valid ? "" : "  INVALID");
      if (!r.ok()) {
        std::printf("    %s: %s\n", row.name.c_str(), r.outcome.message.c_str());
        continue;
      }
      if (!r.valid) {
        std::printf("    INVALID %s: %zu of 3 runs, first: %s\n", row.name.c_str(), r.invalid_runs,
                    first_line(r.violations).c_str());
        all.invalid += r.invalid_runs;
      }
      ++compared;
      const auto alone = simulate(sim_graph, alone_model, independent,
                                  std::span<const device_id>(candidates[&row - study.rows.data()].device),
                                  {.priority = candidates[&row - study.rows.data()].order});
      if (alone.ok()) {
        errors_independent.push_back(std::abs(relative_error(alone.schedule.makespan, r.measured)));
        if (!(alone.schedule.makespan >= pick_independent))
          pick_independent = alone.schedule.makespan, pick_independent_measured = r.measured;
      }
      if (!(r.simulated >= pick_shared)) pick_shared = r.simulated, pick_shared_measured = r.measured;
      if (!(r.measured >= best_measured)) best_measured = r.measured;
      if (worst == nullptr || std::abs(r.error) > std::abs(worst->result.error)) worst = &row;
      all.simulated.push_back(r.simulated);
      all.measured.push_back(r.measured);
      all.errors.push_back(std::abs(r.error));
      all.host_seconds += r.median_run.host_seconds;
      all.host_vertices += run_graph.vertex_count();
    }
    workload_errors.push_back(compared > 0 ? study.median_abs_error : nan);
    workload_rhos.push_back(compared > 1 ? study.spearman : nan);
    std::printf(
        "%-13s %5zu vertices, %2zu placements: median |error| %.1f%% (%.1f%% as independent partitions), "
        "Spearman %.3f, Pearson %.3f",
        w.name.c_str(), run_graph.vertex_count(), compared, 100 * study.median_abs_error,
        100 * median_of(errors_independent), study.spearman, study.pearson);
    if (worst != nullptr)
      std::printf("; worst %s %+.1f%% (%.3f ms simulated, %.3f measured)", worst->name.c_str(),
                  100 * worst->result.error, 1e3 * worst->result.simulated, 1e3 * worst->result.measured);
    std::printf("\n");
    if (w.real)
      std::printf(
          "  choosing by simulation: as independent partitions %.3f ms measured, sharing the bandwidth %.3f ms "
          "measured; best measured %.3f ms\n",
          1e3 * pick_independent_measured, 1e3 * pick_shared_measured, 1e3 * best_measured);
    for (const auto& row : study.rows)
      if (row.name.starts_with("search (") && row.result.ok())
        std::printf(
            "  local search from the shared simulation's pick, judged %s: simulated %.3f ms, measured %.3f ms\n",
            row.name == "search (shared)" ? "sharing the bandwidth" : "as independent partitions",
            1e3 * row.result.simulated, 1e3 * row.result.measured);

    // Strict replay, enqueued ahead, of the first placements: no host round trip per vertex, so the
    // simulation is the run graph's (no launch overhead added).
    for (const auto mode : {cuda_replay::streams, cuda_replay::graph}) {
      backend->set_replay(mode);
      auto& sums = mode == cuda_replay::streams ? ahead_streams : ahead_graph;
      std::vector<double> errors;
      double prepare = 0;
      std::size_t prepared = 0, paced = 0;
      double host = 0;
      for (std::size_t k = 0; k < std::min<std::size_t>(candidates.size(), 5); ++k) {
        const auto& cand = candidates[k];
        const auto sim = simulate(run_graph, run_model, c, std::span<const device_id>(cand.device),
                                  {.policy = ready_policy::strict_order, .priority = cand.order});
        if (!sim.ok()) continue;
        std::vector<double> makespans;
        for (int run = 0; run < 4; ++run) {  // the first run warms up
          execution_result r;
          try {
            r = replay_ahead(run_graph, run_model, c, sim.schedule, *backend);
          } catch (const std::exception& e) {
            std::printf("    ahead (%s) %s: %s\n", mode == cuda_replay::streams ? "streams" : "graph",
                        cand.name.c_str(), e.what());
            ++graph_failures;
            break;
          }
          if (run == 0) continue;
          paced += backend->last_host_paced() ? 1 : 0;
          const auto report = validate(r.schedule, run_graph, run_model, c, {.exact_durations = false});
          if (!report.ok()) {
            ++sums.invalid;
            std::printf("    INVALID ahead %s: %s\n", cand.name.c_str(), first_line(report.to_string()).c_str());
          }
          makespans.push_back(r.schedule.makespan);
          sums.host_seconds += r.host_seconds;
          sums.host_vertices += run_graph.vertex_count();
          host += r.host_seconds;
          prepare += backend->last_prepare_seconds();
          ++prepared;
        }
        if (makespans.empty()) continue;
        std::sort(makespans.begin(), makespans.end());
        const double measured = makespans[makespans.size() / 2];
        const double error = relative_error(sim.schedule.makespan, measured);
        errors.push_back(std::abs(error));
        sums.errors.push_back(std::abs(error));
        if (details)
          std::printf("    ahead %-16s simulated %9.3f ms  measured %9.3f ms  (%+.1f%%)\n", cand.name.c_str(),
                      1e3 * sim.schedule.makespan, 1e3 * measured, 100 * error);
      }
      std::printf("  ahead on %-7s %zu placements: median |error| %.1f%%, host %.2f us per vertex",
                  mode == cuda_replay::streams ? "streams" : "a graph", errors.size(), 100 * median_of(errors),
                  prepared > 0 ? 1e6 * host / static_cast<double>(prepared * run_graph.vertex_count()) : nan);
      if (mode == cuda_replay::graph && prepared > 0)
        std::printf(" (capture and instantiation %.2f us per vertex)",
                    1e6 * prepare / static_cast<double>(prepared * run_graph.vertex_count()));
      if (paced > 0) std::printf("; %zu of %zu runs started before all was enqueued (host-paced)", paced, prepared);
      std::printf("\n");
    }
  }
  const double error = median_of(all.errors), rho = spearman(all.simulated, all.measured);
  const auto per_vertex = [&](const totals& t) {
    return t.host_vertices > 0 ? 1e6 * t.host_seconds / static_cast<double>(t.host_vertices) : nan;
  };
  std::printf(
      "pooled: %zu placements, median |error| %.2f%%, Spearman %.3f, Pearson %.3f, invalid measured schedules: %zu\n",
      all.errors.size(), 100 * error, rho, pearson(all.simulated, all.measured), all.invalid);
  std::printf("executor: %.2f us of host time per vertex; ahead: %.2f on streams, %.2f as a graph\n", per_vertex(all),
              per_vertex(ahead_streams), per_vertex(ahead_graph));
  std::vector<double> ahead_errors = ahead_streams.errors;
  ahead_errors.insert(ahead_errors.end(), ahead_graph.errors.begin(), ahead_graph.errors.end());
  print_targets(workload_errors, workload_rhos, error, rho, per_vertex(all), static_cast<double>(all.invalid),
                per_vertex(ahead_streams), per_vertex(ahead_graph),
                ahead_errors.empty() ? nan : median_of(ahead_errors),
                static_cast<double>(ahead_streams.invalid + ahead_graph.invalid + graph_failures));
  return all.invalid == 0 ? 0 : 1;
}
