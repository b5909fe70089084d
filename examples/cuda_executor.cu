// Runs DOPPLER's ChainMM for real on 4 virtual devices of one GPU (SM partitions made with green
// contexts) with the CUDA backend: every block product a cuBLAS SGEMM of its shape, every sum an
// element-wise kernel. The compute times are profiled on the GPU first, so that m-ETF and the
// simulator see this GPU; then the placement is simulated, executed 5 times, and compared; last,
// its strict replay is enqueued ahead (one host call per activity, no round trip) and compared with
// the strict simulation. Built when nvcc is found (GANTRY_BUILD_CUDA); without a GPU it says so
// and exits 0 (docs/executors.md has what it measured on an H200).
#include <gantry/exec/cuda_backend.cuh>
#include <gantry/exec/replay_ahead.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("no CUDA GPU here: nothing to run\n");
    return 0;
  }
  // 8192 x 8192 matrices in 4 x 4 blocks of 2048, each product split in 2: 96 block products.
  const gantry::graph raw = gantry::chain_mm({.dimension = 8192, .blocks_per_side = 4, .inner_split = 2});
  gantry::cuda_backend backend({.operations = gantry::operations_of(raw)});
  const gantry::graph g = gantry::with_profiled_times(raw, backend.profile(raw, 4));
  std::printf("devices: %s\n", backend.description().c_str());
  // Copies between partitions are device-to-device copies inside one GPU (1.5 TB/s, 5.5 us probed).
  const auto devices = gantry::cluster::uniform(4, gantry::unlimited_memory, {.latency = 5.5e-6, .bandwidth = 1.4e12});
  const gantry::graph_model model(g, devices);
  const auto placed = gantry::m_etf(g, model, devices);
  const auto& p = placed.placement;
  const auto simulated = gantry::simulate(g, model, devices, p.device, {.priority = p.order});
  (void)gantry::execute(g, model, devices, p.device, backend, {.priority = p.order});  // warm-up
  std::vector<double> makespans;
  bool valid = simulated.ok();
  for (int run = 0; run < 5 && valid; ++run) {
    const auto measured = gantry::execute(g, model, devices, p.device, backend, {.priority = p.order});
    valid = measured.ok() && gantry::validate(measured.schedule, g, model, devices, {.exact_durations = false}).ok();
    makespans.push_back(measured.schedule.makespan);
  }
  if (!valid) {
    std::printf("a run failed or its measured schedule is not valid\n");
    return 1;
  }
  std::sort(makespans.begin(), makespans.end());
  const double median = makespans[makespans.size() / 2];
  std::printf("ChainMM 8192 on 4 partitions: simulated %.3f ms, measured %.3f ms (median of 5, %+.1f%%)\n",
              1e3 * simulated.schedule.makespan, 1e3 * median, 100 * (median / simulated.schedule.makespan - 1));

  // The same placement replayed strictly, every device's order enqueued at once.
  const auto strict = gantry::simulate(g, model, devices, p.device,
                                       {.policy = gantry::ready_policy::strict_order, .priority = p.order});
  (void)gantry::replay_ahead(g, model, devices, strict.schedule, backend);  // warm-up
  const auto ahead = gantry::replay_ahead(g, model, devices, strict.schedule, backend);
  if (!gantry::validate(ahead.schedule, g, model, devices, {.exact_durations = false}).ok()) {
    std::printf("the replay enqueued ahead is not valid\n");
    return 1;
  }
  std::printf("strict replay enqueued ahead: simulated %.3f ms, measured %.3f ms (%+.1f%%), host %.2f us per vertex\n",
              1e3 * strict.schedule.makespan, 1e3 * ahead.schedule.makespan,
              100 * (ahead.schedule.makespan / strict.schedule.makespan - 1),
              1e6 * ahead.host_seconds / static_cast<double>(g.vertex_count()));
  return 0;
}
