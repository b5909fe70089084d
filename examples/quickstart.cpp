// The README's ten lines as a program: read a training graph, place it on 4 devices with m-TOPO,
// simulate the placement and check the schedule.
//
//   examples/graphs/tiny.json, one training step of a two-layer network (skip edges omitted):
//
//     input -> fc1 -> relu1 -> fc2 -> loss
//                                       |
//     sgd_fc1 <- fc1_grad <- relu1_grad <- fc2_grad <- loss_grad
//                                             |
//                                          sgd_fc2
#include <gantry/gantry.hpp>

#include <iostream>
#include <stdexcept>

int main(int argc, char** argv) try {
  const char* path = argc > 1 ? argv[1] : GANTRY_EXAMPLES_DIR "/graphs/tiny.json";
  gantry::graph g = gantry::read_graph(path);
  auto devices = gantry::cluster::uniform(4, 8ull << 30, {.latency = 1e-5, .bandwidth = 12e9});
  gantry::graph_model model(g, devices);
  gantry::placement p = gantry::m_topo(g, model, devices);
  if (!p) throw std::runtime_error(p.outcome.message);
  auto run = gantry::simulate(g, model, devices, p.device, {.priority = p.order});
  auto report = gantry::validate(run.schedule, g, model, devices);
  std::cout << path << ": " << g.vertex_count() << " vertices on " << devices.device_count() << " devices\n"
            << "makespan " << gantry::format_seconds(run.schedule.makespan) << ", "
            << gantry::format_bytes(run.schedule.bytes_moved) << " moved, valid: " << (report.ok() ? "yes" : "no")
            << "\n";
  for (gantry::device_id d = 0; d < devices.device_count(); ++d)
    std::cout << "  " << devices[d].name << ": " << run.schedule.order[d].size() << " vertices, peak memory "
              << gantry::format_bytes(run.schedule.peak_memory[d]) << "\n";
  return report.ok() ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "quickstart: " << e.what() << "\n";
  return 2;
}
