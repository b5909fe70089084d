// Runs a small graph on 4 virtual devices of one GPU (SM partitions made with green contexts) with
// the CUDA backend, and compares it with its simulation. Built when nvcc is found
// (GANTRY_BUILD_CUDA); without a GPU it says so and exits 0. Not yet run on hardware.
//
//   a0   a1   a2   a3      (1 ms each, one per partition)
//     \   |    |   /
//          sum             (0.2 ms)
#include <gantry/exec/cuda_backend.cuh>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <cstdio>
#include <string>

int main() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("no CUDA GPU here: nothing to run\n");
    return 0;
  }
  gantry::graph g;
  const auto sum = g.add_vertex("sum", 0.2e-3);
  for (int i = 0; i < 4; ++i) g.add_edge(g.add_vertex("a" + std::to_string(i), 1e-3), sum, 1 << 20);
  // 4 partitions; device-to-device copies inside one GPU (the issue's probe: 1.5 TB/s, 5.5 us).
  const auto devices = gantry::cluster::uniform(4, gantry::unlimited_memory, {.latency = 5.5e-6, .bandwidth = 1.4e12});
  const gantry::graph_model model(g, devices);
  const std::vector<gantry::device_id> placement{0, 0, 1, 2, 3};
  const auto simulated = gantry::simulate(g, model, devices, placement);
  gantry::cuda_backend backend;
  const auto measured = gantry::execute(g, model, devices, placement, backend);
  if (!simulated.ok() || !measured.ok()) return 1;
  const auto report = gantry::validate(measured.schedule, g, model, devices, {.exact_durations = false});
  std::printf("makespan: simulated %.3f ms, measured %.3f ms; measured schedule %s\n",
              1e3 * simulated.schedule.makespan, 1e3 * measured.schedule.makespan, report.ok() ? "valid" : "INVALID");
  return report.ok() ? 0 : 1;
}
