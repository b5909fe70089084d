// DOPPLER's EnumerativeOptimizer (place/enumerative.hpp) and the meta-op labels of the DOPPLER
// generators (workloads/doppler.hpp).
#include <gantry/place/enumerative.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <doctest/doctest.h>

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
  const auto p = enumerative_optimizer(g, model, gpus, labels, {.max_nodes = 50});
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
  meta_op_labels short_labels = labels;
  short_labels.role.pop_back();
  CHECK_THROWS_AS((void)enumerative_optimizer(g, model, gpus, short_labels), invalid_input);
}
