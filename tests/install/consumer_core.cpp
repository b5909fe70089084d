// Uses the installed headers with only gantry::core (no JSON, no zlib): the light umbrella header,
// m-ETF and the lower bound. Also built with pkg-config flags alone (scripts/test.sh).
#include <gantry/algorithms.hpp>

#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "gantry/algorithms.hpp must not include nlohmann-json"
#endif
#ifdef ZLIB_VERSION
#error "gantry/algorithms.hpp must not include zlib"
#endif

#include <iostream>

int main() {
  gantry::graph g;
  const auto a = g.add_vertex("a", 1.0), b = g.add_vertex("b", 2.0), c = g.add_vertex("c", 2.0);
  g.add_edge(a, b, 100);
  g.add_edge(a, c, 100);
  const auto devices = gantry::cluster::uniform(2);
  const gantry::graph_model model(g, devices);
  const auto placed = gantry::m_etf(g, model, devices);
  const auto bound = gantry::makespan_lower_bound(g, model, devices);
  if (!placed.placement || placed.schedule.makespan < bound.value) return 1;
  std::cout << "consumer_core: makespan " << placed.schedule.makespan << " s, lower bound " << bound.value << " s\n";
  return 0;
}
