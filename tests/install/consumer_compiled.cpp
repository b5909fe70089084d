// Uses the installed gantry::compiled: the graph file's reader and writer, the placer registry and
// the default instances come from the static library, so this unit only declares them.
#include <gantry/gantry.hpp>
#include <gantry/place/placers.hpp>

#include <iostream>

#if !defined(GANTRY_SEPARATE_COMPILATION)
#error "gantry::compiled did not carry GANTRY_SEPARATE_COMPILATION to its consumer"
#endif

int main() {
  // A fork of three branches joined again, written and read back as a graph file.
  gantry::graph g;
  const auto source = g.add_vertex("source", 1.0);
  const auto sink = g.add_vertex("sink", 1.0);
  for (const char* name : {"x", "y", "z"}) {
    const auto branch = g.add_vertex(name, 2.0);
    g.add_edge(source, branch, 1000);
    g.add_edge(branch, sink, 1000);
  }
  const gantry::graph again = gantry::read_graph_json(gantry::graph_to_json_text(g));
  const auto devices = gantry::cluster::uniform(2);
  const gantry::graph_model model(again, devices);
  const auto* entry = gantry::find_placer("m-etf");
  if (entry == nullptr) return 1;
  const auto placed = entry->place({again, model, devices});
  const auto run = gantry::simulate(again, model, devices, placed.placement.device);
  if (!placed.placement || !run || !gantry::validate(run.schedule, again, model, devices)) return 1;
  std::cout << "consumer_compiled: " << gantry::placers().size() << " placers, m-etf makespan "
            << run.schedule.makespan << " s\n";
  return 0;
}
