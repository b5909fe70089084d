// Uses the installed headers: place a small graph with m-TOPO and simulate it.
#include <gantry/gantry.hpp>

#include <iostream>

int main() {
  gantry::graph g;
  const auto a = g.add_vertex("a", 1.0), b = g.add_vertex("b", 2.0), c = g.add_vertex("c", 2.0),
             d = g.add_vertex("d", 1.0);
  g.add_edge(a, b, 100);
  g.add_edge(a, c, 100);
  g.add_edge(b, d, 100);
  g.add_edge(c, d, 100);
  const auto devices = gantry::cluster::uniform(2);
  const gantry::graph_model model(g, devices);
  const auto placed = gantry::m_topo(g, model, devices);
  const auto run = gantry::simulate(g, model, devices, placed.device);
  if (!placed || !run || !gantry::validate(run.schedule, g, model, devices)) return 1;
  std::cout << "consumer: makespan " << run.schedule.makespan << " s\n";
  return 0;
}
