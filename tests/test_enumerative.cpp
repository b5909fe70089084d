// DOPPLER's EnumerativeOptimizer (place/enumerative.hpp) and the meta-op labels of the DOPPLER
// generators (workloads/doppler.hpp).
#include <gantry/place/enumerative.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <doctest/doctest.h>

#include <array>
#include <span>
#include <string>
#include <vector>

using namespace gantry;

TEST_CASE("meta-op labels come from the generators' names; sums are reduce ops") {
  const graph g = chain_mm({.dimension = 100, .blocks_per_side = 2, .inner_split = 2});
  const auto labels = doppler_meta_ops(g);
  REQUIRE(labels.meta_op.size() == g.vertex_count());
  // A..E (inputs), AB/DE/CDE .matmul and .sum, out.add.
  CHECK(labels.names.size() == 5 + 6 + 1);
  std::size_t reduce = 0;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    CHECK(labels.names[labels.meta_op[v]] == g[v].name.substr(0, g[v].name.find('[')));
    if (labels.role[v] == meta_op_role::reduce) {
      ++reduce;
      CHECK(g[v].op == "sum");
    }
  }
  CHECK(reduce == 3 * 4);
}

TEST_CASE("enumerative: shards follow their inputs, reductions go where the inputs are cheapest to gather") {
  //   X[0]  X[1]        inputs, 1 MB each
  //     \  /  \  /
  //  Y[0] <- X[1], Y[1] <- X[0]   (2 s and 1 s)
  //      \   /
  //      S (sum)
  graph g;
  const auto x0 = g.add_vertex(vertex_properties{.name = "X[0]", .output = 1000000, .op = "input"});
  const auto x1 = g.add_vertex(vertex_properties{.name = "X[1]", .output = 1000000, .op = "input"});
  const auto y0 = g.add_vertex(vertex_properties{.name = "Y[0]", .compute = 2.0, .output = 1000, .op = "matmul"});
  const auto y1 = g.add_vertex(vertex_properties{.name = "Y[1]", .compute = 1.0, .output = 1000, .op = "matmul"});
  const auto s = g.add_vertex(vertex_properties{.name = "S", .compute = 0.1, .output = 1000, .op = "sum"});
  g.add_edge(x1, y0, 1000000);
  g.add_edge(x0, y1, 1000000);
  g.add_edge(y0, s, 1000);
  g.add_edge(y1, s, 1000);
  const auto two = cluster::uniform(2, unlimited_memory, {.latency = 0, .bandwidth = 1e6});
  const graph_model model(g, two);
  const auto p = enumerative_optimizer(g, model, two, doppler_meta_ops(g));
  // Inputs: no cost anywhere, one per device (X[0] on 0, X[1] on 1). Y's shards each go where
  // their input is (cost 0, the other way 2 s). S: both ways move one 1 KB tensor; the tie goes to
  // the device whose busiest load stays lower: d0 (1 s) + 0.1 beats d1 (2 s) + 0.1.
  CHECK(p.device == std::vector<device_id>{0, 1, 1, 0, 0});
  const auto sim = simulate(g, model, two, std::span<const device_id>(p.device), {.priority = p.order});
  REQUIRE(sim.ok());
  CHECK(sim.schedule.makespan == doctest::Approx(2.0 + 0.001 + 0.1));
  CHECK(validate(sim.schedule, g, model, two).ok());
  // Without balancing ties the first assignment found wins: S on device 0 as well (0 < 1).
  CHECK(enumerative_optimizer(g, model, two, doppler_meta_ops(g), {.balance_ties = false}).device[s] == 0);
}

TEST_CASE("enumerative: eight shards on four devices, two each, and bad labels are errors") {
  const graph g = chain_mm({.dimension = 400, .blocks_per_side = 2, .inner_split = 2});
  const auto gpus = cluster::uniform(4, unlimited_memory, {.latency = 5e-6, .bandwidth = 1e9});
  const graph_model model(g, gpus);
  const auto labels = doppler_meta_ops(g);
  // The spread itself (on this small product one device is faster: see the fallback below).
  const auto p = enumerative_optimizer(g, model, gpus, labels, {.max_nodes = 50, .single_device_fallback = false});
  REQUIRE(p.device.size() == g.vertex_count());
  for (std::uint32_t k = 0; k < labels.names.size(); ++k) {
    std::vector<int> per_device(4, 0);
    int members = 0;
    for (vertex_id v = 0; v < g.vertex_count(); ++v)
      if (labels.meta_op[v] == k) ++per_device[p.device[v]], ++members;
    for (const int c : per_device) CHECK(c <= (members + 3) / 4);
  }
  const auto sim = simulate(g, model, gpus, std::span<const device_id>(p.device), {.priority = p.order});
  REQUIRE(sim.ok());
  CHECK(validate(sim.schedule, g, model, gpus).ok());
  const auto kept = enumerative_optimizer(g, model, gpus, labels, {.max_nodes = 50});
  const auto kept_sim = simulate(g, model, gpus, std::span<const device_id>(kept.device), {.priority = kept.order});
  REQUIRE(kept_sim.ok());
  CHECK(kept_sim.schedule.makespan <= sim.schedule.makespan);
  CHECK(kept.outcome.message.rfind("placed every vertex on d0 instead: ", 0) == 0);
  meta_op_labels short_labels = labels;
  short_labels.role.pop_back();
  CHECK_THROWS_AS((void)enumerative_optimizer(g, model, gpus, short_labels), invalid_input);
}

TEST_CASE("enumerative is never worse than the fastest single device: Topcuoglu et al.'s example") {
  // Ten vertices, none sharded (each its own meta-op), on three processors with per-kind costs. The
  // greedy costs transfers only: n1 goes to p3, where it runs fastest, and every later vertex follows
  // it at no transfer cost, 143 s in all; p1 alone runs the graph in 127 s.
  graph g;
  std::vector<device> d(3);
  for (int i = 0; i < 3; ++i) d[i] = {.name = "p" + std::to_string(i + 1), .kind = "p" + std::to_string(i + 1)};
  const cluster devices(std::move(d), link_model{.latency = 0, .bandwidth = 1});
  const std::array<std::array<double, 3>, 10> cost{{{14, 16, 9},
                                                    {13, 19, 18},
                                                    {11, 13, 19},
                                                    {13, 8, 17},
                                                    {12, 13, 10},
                                                    {13, 16, 9},
                                                    {7, 15, 11},
                                                    {5, 11, 14},
                                                    {18, 12, 20},
                                                    {21, 7, 16}}};
  for (int v = 0; v < 10; ++v) {
    const auto id = g.add_vertex("n" + std::to_string(v + 1), cost[v][0]);
    for (int p = 0; p < 3; ++p) g.set_compute(id, "p" + std::to_string(p + 1), cost[v][p]);
  }
  const std::array<std::array<int, 3>, 15> edges{{{1, 2, 18},
                                                  {1, 3, 12},
                                                  {1, 4, 9},
                                                  {1, 5, 11},
                                                  {1, 6, 14},
                                                  {2, 8, 19},
                                                  {2, 9, 16},
                                                  {3, 7, 23},
                                                  {4, 8, 27},
                                                  {4, 9, 23},
                                                  {5, 9, 13},
                                                  {6, 8, 15},
                                                  {7, 10, 17},
                                                  {8, 10, 11},
                                                  {9, 10, 13}}};
  for (const auto& [u, v, bytes] : edges)
    g.add_edge(static_cast<vertex_id>(u - 1), static_cast<vertex_id>(v - 1), static_cast<byte_count>(bytes));
  const graph_model model(g, devices);
  const auto run = [&](const placement& p) {
    const auto sim = simulate(g, model, devices, std::span<const device_id>(p.device), {.priority = p.order});
    REQUIRE(sim.ok());
    CHECK(validate(sim.schedule, g, model, devices).ok());
    return sim.schedule.makespan;
  };
  const auto greedy = enumerative_optimizer(g, model, devices, doppler_meta_ops(g), {.single_device_fallback = false});
  CHECK(greedy.device == std::vector<device_id>(10, 2));
  CHECK(run(greedy) == doctest::Approx(143));
  CHECK(greedy.outcome.message.empty());
  const auto p = enumerative_optimizer(g, model, devices, doppler_meta_ops(g));
  REQUIRE(p.ok());
  CHECK(p.device == std::vector<device_id>(10, 0));
  CHECK(run(p) == doctest::Approx(127));
  CHECK(p.outcome.message == "placed every vertex on p1 instead: 127 s, shorter than the meta-op placement's 143 s");
}
