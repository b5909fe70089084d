// Kernighan's breakpoint DP: the known small answers of docs/algorithms.md, the DP against brute
// force over every breakpoint set on small random graphs, and the coarse graph it yields (a DAG,
// whose placements expand to valid schedules of the original).
#include <gantry/fusion/kernighan.hpp>
#include <gantry/workloads/random_dag.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <set>
#include <vector>

using namespace gantry;

namespace {

graph path(std::size_t n) {
  graph g;
  for (std::size_t v = 0; v < n; ++v) g.add_vertex("p" + std::to_string(v), 1.0);
  for (vertex_id v = 0; v + 1 < n; ++v) g.add_edge(v, v + 1);
  return g;
}

kernighan_breakpoints unit_costs(const graph& g, const std::vector<vertex_id>& order, std::size_t window) {
  return kernighan(
      g, std::span<const vertex_id>(order), [](edge_id) { return 1.0; }, [](vertex_id) { return byte_count{0}; },
      {.window = window});
}

std::vector<vertex_id> identity(std::size_t n) {
  std::vector<vertex_id> order(n);
  for (vertex_id v = 0; v < n; ++v) order[v] = v;
  return order;
}

}  // namespace

TEST_CASE("a 5-vertex path: window 2 costs 2 with breakpoints [0,1,3,5], window 3 costs 1 with [0,2,5]") {
  const graph g = path(5);
  const auto two = unit_costs(g, identity(5), 2);
  CHECK(two.cost == 2);
  CHECK(two.breakpoints == std::vector<std::size_t>{0, 1, 3, 5});
  CHECK(two.cluster_of == std::vector<vertex_id>{0, 1, 1, 2, 2});
  CHECK(two.cluster_count() == 3);
  const auto three = unit_costs(g, identity(5), 3);
  CHECK(three.cost == 1);
  CHECK(three.breakpoints == std::vector<std::size_t>{0, 2, 5});
  // A window as long as the path: one cluster, nothing cut.
  const auto all = unit_costs(g, identity(5), 5);
  CHECK(all.cost == 0);
  CHECK(all.breakpoints == std::vector<std::size_t>{0, 5});
}

TEST_CASE("two chains 0->2->4 and 1->3->5, window 3: cost 2 in order 0..5, cost 0 in order 0,2,4,1,3,5") {
  graph g;
  for (int v = 0; v < 6; ++v) g.add_vertex("c" + std::to_string(v), 1.0);
  g.add_edge(0, 2);
  g.add_edge(2, 4);
  g.add_edge(1, 3);
  g.add_edge(3, 5);
  const auto interleaved = unit_costs(g, identity(6), 3);
  CHECK(interleaved.cost == 2);
  const auto chains = unit_costs(g, {0, 2, 4, 1, 3, 5}, 3);
  CHECK(chains.cost == 0);
  CHECK(chains.breakpoints == std::vector<std::size_t>{0, 3, 6});
  CHECK(chains.cluster_of == std::vector<vertex_id>{0, 1, 0, 1, 0, 1});
}

TEST_CASE("the memory cap splits segments; a vertex heavier than the cap is a segment of its own") {
  const graph g = path(5);
  const std::vector<byte_count> bytes{4, 4, 9, 4, 4};
  const auto run = [&](byte_count cap) {
    const auto order = identity(5);
    return kernighan(
        g, std::span<const vertex_id>(order), [](edge_id) { return 1.0; }, [&](vertex_id v) { return bytes[v]; },
        {.window = 5, .cluster_memory = cap});
  };
  CHECK(run(unlimited_memory).breakpoints == std::vector<std::size_t>{0, 5});
  // Cap 8: 2 is alone (9 > 8), its neighbours pair up: [0,2) [2,3) [3,5), cost 2.
  const auto capped = run(8);
  CHECK(capped.breakpoints == std::vector<std::size_t>{0, 2, 3, 5});
  CHECK(capped.cost == 2);
  // Cap 13: 0+1 = 8, 1+2 = 13, 2+3 = 13; best cuts two edges, the first such set by the smallest-i rule.
  const auto wider = run(13);
  CHECK(wider.cost == 2);
  CHECK(wider.breakpoints == std::vector<std::size_t>{0, 1, 3, 5});
}

TEST_CASE("the DP finds the least cost over every breakpoint set, on small random graphs, with groups or not") {
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(1 + rng() % 11);
    const graph g = random_layered_dag({.vertices = n, .layers = 1 + rng() % 5, .mean_out_degree = 1.5, .seed = seed});
    // A random topological order: Kahn with a random pick among the ready vertices.
    std::vector<vertex_id> order;
    {
      std::vector<std::size_t> indegree(n, 0);
      for (edge_id e = 0; e < g.edge_count(); ++e) ++indegree[g.target(e)];
      std::vector<vertex_id> ready;
      for (vertex_id v = 0; v < n; ++v)
        if (indegree[v] == 0) ready.push_back(v);
      while (!ready.empty()) {
        const std::size_t pick = rng() % ready.size();
        const vertex_id v = ready[pick];
        ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
        order.push_back(v);
        g.for_each_out_edge(v, [&](edge_id e) {
          if (--indegree[g.target(e)] == 0) ready.push_back(g.target(e));
        });
      }
    }
    std::vector<double> cost(g.edge_count());
    for (auto& c : cost) c = static_cast<double>(rng() % 5);  // whole numbers: sums are exact
    std::vector<byte_count> bytes(n);
    for (auto& b : bytes) b = rng() % 10;
    const std::size_t window = 1 + rng() % n;
    const byte_count cap = rng() % 3 == 0 ? unlimited_memory : 5 + rng() % 20;
    // Odd seeds: groups 0..2 on about half the vertices; a segment may hold one group of several.
    std::vector<std::uint32_t> group;
    if (seed % 2 == 1)
      for (vertex_id v = 0; v < n; ++v)
        group.push_back(rng() % 2 == 0 ? std::numeric_limits<std::uint32_t>::max()
                                       : static_cast<std::uint32_t>(rng() % 3));
    std::vector<std::size_t> members(3, 0);
    for (const auto id : group)
      if (id < 3) ++members[id];
    const auto dp = kernighan(
        g, std::span<const vertex_id>(order), [&](edge_id e) { return cost[e]; }, [&](vertex_id v) { return bytes[v]; },
        {.window = window, .cluster_memory = cap, .group = group});

    std::vector<std::size_t> position(n);
    for (std::size_t k = 0; k < n; ++k) position[order[k]] = k;
    // The cost of a set of segments, or infinity when one breaks the window or the cap.
    const auto evaluate = [&](const std::vector<std::size_t>& breaks) {
      std::vector<std::size_t> segment(n);
      for (std::size_t s = 0; s + 1 < breaks.size(); ++s) {
        const std::size_t length = breaks[s + 1] - breaks[s];
        byte_count sum = 0;
        for (std::size_t p = breaks[s]; p < breaks[s + 1]; ++p) {
          segment[p] = s;
          sum += bytes[order[p]];
        }
        if (length > window || (length > 1 && sum > cap)) return std::numeric_limits<double>::infinity();
        std::set<std::uint32_t> groups;
        for (std::size_t p = breaks[s]; p < breaks[s + 1]; ++p)
          if (!group.empty() && group[order[p]] < 3 && members[group[order[p]]] > 1) groups.insert(group[order[p]]);
        if (groups.size() > 1) return std::numeric_limits<double>::infinity();
      }
      double total = 0;
      for (edge_id e = 0; e < g.edge_count(); ++e)
        if (segment[position[g.source(e)]] != segment[position[g.target(e)]]) total += cost[e];
      return total;
    };
    double least = std::numeric_limits<double>::infinity();
    for (std::uint32_t mask = 0; mask < (1u << (n - 1)); ++mask) {
      std::vector<std::size_t> breaks{0};
      for (std::size_t p = 1; p < n; ++p)
        if (mask & (1u << (p - 1))) breaks.push_back(p);
      breaks.push_back(n);
      least = std::min(least, evaluate(breaks));
    }
    CHECK(dp.cost == least);
    CHECK(evaluate(dp.breakpoints) == dp.cost);  // the breakpoints it returns cost what it says
    REQUIRE(dp.breakpoints.front() == 0);
    REQUIRE(dp.breakpoints.back() == n);
  }
}

TEST_CASE("Kernighan fusion gives a DAG whose placements expand to valid schedules of the original") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const graph g = random_layered_dag({.vertices = 20 + seed * 5,
                                        .layers = 3 + seed % 9,
                                        .mean_out_degree = 2.0,
                                        .max_persistent = 1 << 16,
                                        .max_temporary = 1 << 14,
                                        .seed = seed});
    const cluster devices = cluster::uniform(1 + seed % 4, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
    const graph_model model(g, devices);
    const std::size_t window = 1 + seed % 12;
    const auto fused = fuse_kernighan(g, model, devices, {.window = window, .cluster_memory = 1 << 18});
    const graph& coarse = fused.coarsening.coarse;
    CHECK(coarse.vertex_count() == fused.segments.cluster_count());
    CHECK(coarse.vertex_count() <= g.vertex_count());
    CHECK(coarse.vertex_count() * window >= g.vertex_count());
    // Segments follow the order, so every coarse edge goes forward: a DAG by construction.
    for (edge_id e = 0; e < coarse.edge_count(); ++e) CHECK(coarse.source(e) < coarse.target(e));
    CHECK_NOTHROW((void)snapshot_dag(coarse));
    seconds total = 0, coarse_total = 0;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) total += g[v].compute;
    for (vertex_id c = 0; c < coarse.vertex_count(); ++c) coarse_total += coarse[c].compute;
    CHECK(coarse_total == doctest::Approx(total));

    const graph_model coarse_model(coarse, devices);
    const auto placed = etf(coarse, coarse_model, devices);
    REQUIRE(placed.ok());
    const placement p = expand(fused.coarsening, placed.placement);
    REQUIRE(p.ok());
    const auto run = simulate(g, model, devices, std::span<const device_id>(p.device), {.priority = p.order});
    REQUIRE(run.ok());
    const auto report = validate(run.schedule, g, model, devices);
    CHECK_MESSAGE(report.ok(), report.to_string());
  }
}

TEST_CASE("Kernighan refuses an order that is not topological, a repeated vertex and a zero window") {
  const graph g = path(3);
  const auto bad = [&](std::vector<vertex_id> order, std::size_t window) { return unit_costs(g, order, window); };
  CHECK_THROWS_WITH_AS(bad({0, 2, 1}, 2), doctest::Contains("goes backwards"), invalid_input);
  CHECK_THROWS_WITH_AS(bad({0, 1, 1}, 2), doctest::Contains("twice"), invalid_input);
  CHECK_THROWS_WITH_AS(bad({0, 1}, 2), doctest::Contains("2 entries for 3 vertices"), invalid_input);
  CHECK_THROWS_WITH_AS(bad({0, 1, 7}, 2), doctest::Contains("is not a vertex"), invalid_input);
  CHECK_THROWS_WITH_AS(bad({0, 1, 2}, 0), doctest::Contains("window"), invalid_input);
  const std::vector<vertex_id> order{0, 1, 2};
  CHECK_THROWS_AS(
      (void)kernighan(
          g, std::span<const vertex_id>(order), [](edge_id) { return -1.0; }, [](vertex_id) { return byte_count{0}; }),
      invalid_input);
  // An empty graph has one breakpoint and no cluster.
  const auto none = unit_costs(graph{}, {}, 3);
  CHECK(none.breakpoints == std::vector<std::size_t>{0});
  CHECK(none.cluster_count() == 0);
}

TEST_CASE("fusing vertices whose times overflow a double is refused, naming the cluster") {
  graph g;
  g.add_vertex("a", 1e308);
  g.add_vertex("b", 1e308);
  g.add_edge(0, 1, 8);
  const cluster devices = cluster::uniform(2);
  const graph_model model(g, devices);
  CHECK_THROWS_WITH_AS((void)fuse_kernighan(g, model, devices, {.window = 2}),
                       doctest::Contains("cluster 'a+1' (2 vertices) is not finite"), invalid_input);
}
