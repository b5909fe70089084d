// Runs DOPPLER's ChainMM, (A x B) + (C x (D x E)), for real on 2 CPU devices: every block product
// is an Eigen GEMM of its own shape, every sum an element-wise pass. The compute times are profiled
// here first, so the placer and the simulator see this machine; then m-ETF places the graph, the
// simulator predicts the run, and the executor measures it (exec/eigen_operations.hpp).
#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/eigen_operations.hpp>
#include <gantry/exec/executor.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <cstdio>

int main() {
  // 512 x 512 matrices in 2 x 2 blocks: 24 block products of 256^3 multiply-adds each.
  const gantry::graph raw = gantry::chain_mm({.dimension = 512});
  gantry::eigen_operations ops(gantry::operations_of(raw), 2);
  const gantry::graph g = gantry::with_profiled_times(raw, gantry::profile_operations(ops, raw));

  // The link is this machine's memcpy, measured; duplex: one copy each way at a time.
  const auto calibration = gantry::calibrate_cpu({.devices = 2});
  const auto devices = gantry::calibrated_cluster(calibration, 2, gantry::unlimited_memory, gantry::comm_mode::duplex);
  const gantry::graph_model model(g, devices);
  const auto placed = gantry::m_etf(g, model, devices);
  const auto& p = placed.placement;
  const auto simulated = gantry::simulate(g, model, devices, p.device, {.priority = p.order});

  gantry::cpu_backend backend(
      {.kernel = gantry::cpu_kernel::work, .work = [&ops](const gantry::vertex_launch& v) { ops(v); }});
  (void)gantry::execute(g, model, devices, p.device, backend, {.priority = p.order});  // warm-up
  const auto measured = gantry::execute(g, model, devices, p.device, backend, {.priority = p.order});
  if (!simulated.ok() || !measured.ok()) return 1;
  const auto report = gantry::validate(measured.schedule, g, model, devices, {.exact_durations = false});

  gantry::seconds work = 0;
  for (const auto& v : g.vertices()) work += v.compute;
  std::printf("ChainMM 512: %zu vertices, %.2f ms of profiled compute; %u hardware threads\n", g.vertex_count(),
              1e3 * work, calibration.hardware_threads);
  std::printf("makespan: simulated %.2f ms, measured %.2f ms (%+.1f%%); measured schedule %s\n",
              1e3 * simulated.schedule.makespan, 1e3 * measured.schedule.makespan,
              100 * (measured.schedule.makespan / simulated.schedule.makespan - 1), report.ok() ? "valid" : "INVALID");
  return report.ok() ? 0 : 1;
}
