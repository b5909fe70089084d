// Runs a placement for real on CPU threads and compares it with its simulation.
//
//        load
//       /    \    (1 MiB to each side)
//   left      right      (20 ms each, on different devices)
//       \    /
//        join
//
// The executor follows the simulator's rules; the CPU backend runs each vertex for its modelled
// time and copies tensors with memcpy paced to the link. The measured schedule passes validate().
#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/executor.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <cstdio>

int main() {
  gantry::graph g;
  const auto load = g.add_vertex("load", 5e-3);
  const auto left = g.add_vertex("left", 20e-3);
  const auto right = g.add_vertex("right", 20e-3);
  const auto join = g.add_vertex("join", 5e-3);
  g.add_edge(load, left, 1 << 20);
  g.add_edge(load, right, 1 << 20);
  g.add_edge(left, join, 1 << 20);
  g.add_edge(right, join, 1 << 20);
  // 2 devices, 1 MiB in 50 us + 20 us.
  const auto devices = gantry::cluster::uniform(2, gantry::unlimited_memory, {.latency = 20e-6, .bandwidth = 20e9});
  const gantry::graph_model model(g, devices);

  const auto placed = gantry::m_etf(g, model, devices);
  const auto& p = placed.placement;
  const auto simulated = gantry::simulate(g, model, devices, p.device, {.priority = p.order});
  // Sleep kernels free the cores while a vertex runs, so both devices run in parallel even on a
  // machine of 2 cores.
  gantry::cpu_backend backend({.kernel = gantry::cpu_kernel::sleep});
  // The first run starts the threads and grows the copy buffers: a warm-up, not a measurement.
  (void)gantry::execute(g, model, devices, p.device, backend, {.priority = p.order});
  const auto measured = gantry::execute(g, model, devices, p.device, backend, {.priority = p.order});
  if (!simulated.ok() || !measured.ok()) return 1;
  const auto report = gantry::validate(measured.schedule, g, model, devices, {.exact_durations = false});

  std::printf("vertex  device  simulated start  measured start\n");
  for (gantry::vertex_id v = 0; v < g.vertex_count(); ++v)
    std::printf("%-7s %6u  %12.3f ms  %11.3f ms\n", g[v].name.c_str(), p.device[v], 1e3 * simulated.schedule.start[v],
                1e3 * measured.schedule.start[v]);
  std::printf("makespan: simulated %.3f ms, measured %.3f ms; measured schedule %s\n",
              1e3 * simulated.schedule.makespan, 1e3 * measured.schedule.makespan, report.ok() ? "valid" : "INVALID");
  return report.ok() ? 0 : 1;
}
