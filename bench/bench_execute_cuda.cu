// How well the simulator predicts real runs of the CUDA backend on 4 virtual devices (SM partitions
// of GPU 0 made with green contexts): ChainMM, FFNN and a Llama block run their real work (cuBLAS
// products and element-wise kernels), their compute times profiled on the GPU a moment before;
// Inception-V3 (a profiled training graph) runs spin kernels of its profiled durations, scaled so
// the mean vertex takes 100 us. Each is placed by every registry placer and by seeded random
// perturbations (20 placements), simulated, then executed 3 times (median). The link and the
// executor's round trip per vertex are calibrated on the GPU first (calibrate_backend), and the
// simulation adds that round trip to every vertex.
// Reports per workload and pooled: the median absolute error of the simulated makespan (the
// baseline: each placement's simulation, measured in the same run), Spearman and Pearson, and the
// executor's host time per vertex. Built with -DGANTRY_BUILD_BENCHMARKS=ON where nvcc is found;
// without a GPU it says so and prints every target as not measured (FAIL).
#include "bench_support.hpp"

#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cuda_backend.cuh>
#include <gantry/exec/study.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/workloads/doppler.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace gantry;

namespace {

constexpr std::size_t devices = 4;

void print_targets(double error, double rho, double host_us) {
  bench::print_target("gpu_median_abs_error", error, 0.05);
  bench::print_target_at_least("gpu_spearman_at_least", rho, 0.95);
  bench::print_target("gpu_executor_host_us_per_vertex", host_us, 10);
}

}  // namespace

int main(int argc, char**) {
  const bool details = argc > 1;
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("no CUDA GPU here: the GPU targets were not measured\n");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    print_targets(nan, nan, nan);
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("GPU 0: %s, %d SMs, %zu partitions as devices\n", prop.name, prop.multiProcessorCount, devices);

  backend_calibration calibration;
  {
    cuda_backend plain;  // no operations: a vertex of no work is an empty spin kernel
    calibration = calibrate_backend(plain, {.devices = devices, .copy_sizes = {std::uint64_t{4} << 10, std::uint64_t{1} << 20,
                                                                             std::uint64_t{16} << 20, std::uint64_t{128} << 20}});
  }
  std::printf("calibration: round trip %.2f us per vertex, copies between partitions %.2f us + bytes / %.1f GB/s\n",
              1e6 * calibration.launch_overhead, 1e6 * calibration.link.link.latency, calibration.link.link.bandwidth / 1e9);
  const cluster c = cluster::uniform(devices, unlimited_memory, calibration.link.link, comm_mode::parallel);

  struct workload {
    std::string name;
    graph g;
    bool real;
  };
  std::vector<workload> workloads;
  workloads.push_back({"chainmm", chain_mm({.dimension = 8192, .blocks_per_side = 4, .inner_split = 2}), true});
  workloads.push_back({"ffnn", ffnn({.batch = 1 << 15, .hidden = 1 << 16}), true});
  workloads.push_back({"llama-block", llama_block({.sequence = 4096, .hidden = 4096, .heads = 32, .ffn_hidden = 11008}), true});
  workloads.push_back({"inception-v3", read_graph(std::string(GANTRY_BENCH_GRAPH_DIR) + "/inception_v3.json.gz"), false});

  std::vector<double> all_simulated, all_measured, all_errors;
  double host_seconds = 0;
  std::size_t host_vertices = 0;
  bool all_valid = true;
  for (const auto& w : workloads) {
    graph run_graph;
    std::unique_ptr<cuda_backend> backend;
    // Every copy moves its whole tensor (the backend does not pace copies to the model).
    std::size_t largest = std::size_t{1} << 20;
    for (edge_id e = 0; e < w.g.edge_count(); ++e) largest = std::max<std::size_t>(largest, w.g.bytes(e));
    if (w.real) {
      backend = std::make_unique<cuda_backend>(cuda_backend_options{.max_copy_bytes = largest, .operations = operations_of(w.g)});
      run_graph = with_profiled_times(w.g, backend->profile(w.g, devices));
    } else {
      backend = std::make_unique<cuda_backend>(cuda_backend_options{.max_copy_bytes = largest});
      seconds work = 0;
      std::size_t working = 0;
      for (const auto& v : w.g.vertices()) work += v.compute, working += v.compute > 0 ? 1 : 0;
      run_graph = with_compute_times(w.g, 100e-6 * static_cast<double>(working) / work, 0);
    }
    const graph sim_graph = with_compute_times(run_graph, 1, calibration.launch_overhead);
    const graph_model run_model(run_graph, c), sim_model(sim_graph, c);
    const auto candidates = placement_candidates(sim_graph, sim_model, c, {.count = 20, .seed = 1});
    (void)compare_run(sim_graph, sim_model, run_model, c, candidates.front(), *backend, {.runs = 1});  // warm-up
    const auto study = study_placements(sim_graph, sim_model, run_model, c, candidates, *backend, {.runs = 3});
    std::size_t compared = 0;
    for (const auto& row : study.rows) {
      const auto& r = row.result;
      if (details)
        std::printf("    %-22s simulated %9.3f ms  measured %9.3f ms  (%+.1f%%)\n", row.name.c_str(), 1e3 * r.simulated,
                    1e3 * r.measured, 100 * r.error);
      if (!r.ok()) continue;
      ++compared;
      all_valid = all_valid && r.valid;
      all_simulated.push_back(r.simulated);
      all_measured.push_back(r.measured);
      all_errors.push_back(std::abs(r.error));
      host_seconds += r.median_run.host_seconds;
      host_vertices += run_graph.vertex_count();
    }
    std::printf("%-13s %5zu vertices, %2zu placements: median |error| %.1f%%, Spearman %.3f, Pearson %.3f\n", w.name.c_str(),
                run_graph.vertex_count(), compared, 100 * study.median_abs_error, study.spearman, study.pearson);
  }
  const double error = median_of(all_errors), rho = spearman(all_simulated, all_measured);
  const double host_us = host_vertices > 0 ? 1e6 * host_seconds / static_cast<double>(host_vertices) : 0;
  std::printf("pooled: %zu placements, median |error| %.2f%%, Spearman %.3f, Pearson %.3f, every measured schedule valid: %s\n",
              all_errors.size(), 100 * error, rho, pearson(all_simulated, all_measured), all_valid ? "yes" : "NO");
  std::printf("executor: %.2f us of host time per vertex\n", host_us);
  print_targets(error, rho, host_us);
  return all_valid ? 0 : 1;
}
