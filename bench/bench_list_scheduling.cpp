// The list schedulers on one engine (ETF, m-ETF, Critical Path, HEFT, CPOP, PEFT) on a seeded random
// layered DAG of 100k vertices and 8 devices, each timed (median of 5 runs) against
// boost::topological_sort on the same graph, with peak RSS.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/peft.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <vector>

#include "bench_support.hpp"

int main() {
  using namespace gantry;
  const std::size_t n = 100'000, m = 8;
  const graph g = random_layered_dag({.vertices = n,
                                      .layers = 200,
                                      .mean_out_degree = 2.0,
                                      .max_persistent = 1 << 20,
                                      .max_temporary = 1 << 18,
                                      .names = false,
                                      .seed = 42});
  // Capacity: three fair shares, since the static rule also keeps every received tensor.
  byte_count total = 0;
  for (vertex_id v = 0; v < n; ++v) total += g[v].persistent + g[v].output + g[v].temporary;
  const auto devices = cluster::uniform(m, 3 * (total / m), link_model{.latency = 1e-4, .bandwidth = 1e10});
  const graph_model model(g, devices);
  std::printf("graph: %zu vertices, %zu edges, %zu devices\n", g.vertex_count(), g.edge_count(), m);

  using boost_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  boost_graph bg(n);
  for (edge_id e = 0; e < g.edge_count(); ++e) boost::add_edge(g.source(e), g.target(e), bg);
  std::vector<boost_graph::vertex_descriptor> topo;
  const double baseline = bench::median_seconds(5, [&] {
    topo.clear();
    boost::topological_sort(bg, std::back_inserter(topo));
  });
  std::printf("boost::topological_sort: %.4f s\n", baseline);

  struct run {
    const char* name;
    double limit;  // seconds; 0: reported, no target
    std::function<list_schedule_result()> place;
  };
  const run runs[] = {
      {"etf_100k_8dev_seconds", 0, [&] { return etf(g, model, devices); }},
      {"m_etf_100k_8dev_seconds", 0.3, [&] { return m_etf(g, model, devices); }},
      {"critical_path_100k_8dev_seconds", 0.3, [&] { return critical_path_schedule(g, model, devices); }},
      {"heft_100k_8dev_seconds", 0.5, [&] { return heft(g, model, devices); }},
      {"cpop_100k_8dev_seconds", 0, [&] { return cpop(g, model, devices); }},
      {"peft_100k_8dev_seconds", 0, [&] { return peft(g, model, devices); }},
  };
  std::vector<double> measured;
  for (const auto& r : runs) {
    list_schedule_result result;
    const double seconds_taken = bench::median_seconds(5, [&] { result = r.place(); });
    measured.push_back(seconds_taken);
    std::printf("%-34s %.4f s  (%.1fx topological sort)  makespan %.4f s  %s  peak RSS %.1f MiB\n", r.name,
                seconds_taken, seconds_taken / baseline, result.schedule.makespan,
                to_string(result.placement.outcome.code), static_cast<double>(bench::peak_rss_kib()) / 1024.0);
  }
  for (std::size_t i = 0; i < measured.size(); ++i)
    if (runs[i].limit > 0) bench::print_target(runs[i].name, measured[i], runs[i].limit);
  bench::print_target("m_etf_100k_8dev_over_topological_sort", measured[1] / baseline, 20);
  return 0;
}
