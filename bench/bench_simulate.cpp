// Snapshot + simulate on seeded random layered DAGs of 10k, 100k and 1M vertices placed on 4
// devices by m-TOPO. Baseline, measured in the same run on the same graph: boost::topological_sort
// on an adjacency_list<vecS, vecS, directedS> copy. Memory is the peak of live heap bytes (counted
// by a replaced operator new) while the graph, its snapshot and the simulation all exist, divided
// by vertices + edges. Then the 100k graph again with its 4 devices in one memory-bandwidth domain
// (sim/shared_bandwidth.hpp) that binds: its bandwidth is the median vertex's demand, so
// most vertices run slowed while others run; baseline: the same simulation without the domain.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/sim/shared_bandwidth.hpp>
#include <gantry/sim/simulator.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "bench_support.hpp"

namespace {
std::atomic<std::size_t> live_bytes{0}, peak_bytes{0};

void note_allocation(std::size_t bytes) {
  const std::size_t now = live_bytes.fetch_add(bytes) + bytes;
  std::size_t peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
}
}  // namespace

// Each block carries its size in a 16-byte header so that delete can subtract it.
void* operator new(std::size_t bytes) {
  auto* block = static_cast<std::size_t*>(std::malloc(bytes + 16));
  if (block == nullptr) throw std::bad_alloc();
  *block = bytes;
  note_allocation(bytes);
  return reinterpret_cast<char*>(block) + 16;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  auto* block = reinterpret_cast<std::size_t*>(static_cast<char*>(p) - 16);
  live_bytes.fetch_sub(*block);
  std::free(block);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace {
struct measurement {
  double simulate_seconds = 0;
  double topo_seconds = 0;
  double bytes_per_element = 0;
};

measurement measure(std::size_t n, int repeats) {
  const auto g = gantry::random_layered_dag({.vertices = n,
                                             .layers = std::max<std::size_t>(10, n / 100),
                                             .mean_out_degree = 2.0,
                                             .names = false,
                                             .seed = 42});
  const auto devices = gantry::cluster::uniform(4, gantry::unlimited_memory, {1e-5, 12e9});
  const gantry::graph_model model(g, devices);
  const auto placed = gantry::m_topo(g, model, devices);
  if (!placed) {
    std::printf("m-TOPO failed: %s\n", placed.outcome.message.c_str());
    std::exit(1);
  }

  measurement out;
  {
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> bg(g.vertex_count());
    for (gantry::edge_id e = 0; e < g.edge_count(); ++e) add_edge(g.source(e), g.target(e), bg);
    std::vector<std::size_t> order;
    order.reserve(n);
    out.topo_seconds = bench::median_seconds(repeats, [&] {
      order.clear();
      boost::topological_sort(bg, std::back_inserter(order));
    });
  }

  double makespan = 0;
  const std::size_t before = live_bytes.load();
  peak_bytes.store(before);
  out.simulate_seconds = bench::median_seconds(repeats, [&] {
    const auto snapshot = gantry::snapshot(g);
    gantry::simulator sim(snapshot, model, devices, placed.device, {.priority = placed.order});
    makespan = sim.run().schedule.makespan;
  });
  // The graph itself was allocated before `before`; count it too.
  const std::size_t graph_bytes = before;
  const double elements = static_cast<double>(g.vertex_count() + g.edge_count());
  out.bytes_per_element = static_cast<double>(peak_bytes.load() - before + graph_bytes) / elements;

  std::printf(
      "%8zu vertices %8zu edges: snapshot+simulate %9.3f ms, boost::topological_sort %8.3f ms, "
      "ratio %6.2fx, peak heap %7.1f B/(vertex+edge), makespan %.3f s, peak RSS %ld MiB\n",
      g.vertex_count(), g.edge_count(), out.simulate_seconds * 1e3, out.topo_seconds * 1e3,
      out.simulate_seconds / out.topo_seconds, out.bytes_per_element, makespan, bench::peak_rss_kib() / 1024);
  return out;
}

// Simulate with and without one shared domain over the 4 devices; returns the time ratio.
double measure_shared(std::size_t n, int repeats) {
  const auto g = gantry::random_layered_dag({.vertices = n,
                                             .layers = std::max<std::size_t>(10, n / 100),
                                             .mean_out_degree = 2.0,
                                             .names = false,
                                             .seed = 42});
  const auto independent = gantry::cluster::uniform(4, gantry::unlimited_memory, {1e-5, 12e9});
  const gantry::graph_model model(g, independent);
  const auto placed = gantry::m_topo(g, model, independent);
  if (!placed) std::exit(1);
  const auto snapshot = gantry::snapshot(g);
  std::vector<double> demand;
  for (gantry::vertex_id v = 0; v < g.vertex_count(); ++v)
    if (g[v].compute > 0)
      demand.push_back(static_cast<double>(gantry::detail::traffic_bytes(model, snapshot, v)) / g[v].compute);
  std::nth_element(demand.begin(), demand.begin() + static_cast<std::ptrdiff_t>(demand.size() / 2), demand.end());
  auto shared = independent;
  shared.add_domain({.name = "memory", .devices = {0, 1, 2, 3}, .bandwidth = demand[demand.size() / 2]});
  const gantry::graph_model shared_model(g, shared);
  gantry::schedule alone, together;
  const double independent_seconds = bench::median_seconds(repeats, [&] {
    gantry::simulator sim(snapshot, model, independent, placed.device, {.priority = placed.order});
    alone = sim.run().schedule;
  });
  const double shared_seconds = bench::median_seconds(repeats, [&] {
    gantry::simulator sim(snapshot, shared_model, shared, placed.device, {.priority = placed.order});
    together = sim.run().schedule;
  });
  std::size_t stretched = 0;
  for (gantry::vertex_id v = 0; v < g.vertex_count(); ++v)
    stretched += together.finish[v] - together.start[v] > g[v].compute * (1 + 1e-9) ? 1 : 0;
  std::printf(
      "%8zu vertices, 4 devices sharing %.3g GB/s: simulate %9.3f ms vs %9.3f ms independent (%.2fx); "
      "%zu vertices slowed, makespan %.3f s vs %.3f s\n",
      g.vertex_count(), shared.domains()[0].bandwidth / 1e9, shared_seconds * 1e3, independent_seconds * 1e3,
      shared_seconds / independent_seconds, stretched, together.makespan, alone.makespan);
  return shared_seconds / independent_seconds;
}

}  // namespace

int main() {
  std::printf("bench_simulate: snapshot + simulate of an m-TOPO placement on 4 devices (median of repeats)\n");
  measure(10'000, 11);
  const auto mid = measure(100'000, 7);
  const auto big = measure(1'000'000, 3);
  const double shared_ratio = measure_shared(100'000, 7);
  bench::print_target("simulate_100k_seconds", mid.simulate_seconds, 0.050);
  bench::print_target("simulate_100k_over_topological_sort", mid.simulate_seconds / mid.topo_seconds, 2);
  bench::print_target("simulate_1m_over_topological_sort", big.simulate_seconds / big.topo_seconds, 2);
  bench::print_target("simulate_1m_bytes_per_vertex_plus_edge", big.bytes_per_element, 200);
  bench::print_target("simulate_100k_shared_domain_over_independent", shared_ratio, 3);
  return 0;
}
