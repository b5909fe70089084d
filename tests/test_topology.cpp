// The machine's topology (model/topology.hpp): which resources a transfer occupies, asked by the
// engine, the simulator and validate() alike. Hand cases for each mode and for nodes whose devices
// share a network port.
#include <gantry/io/json_cluster.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <vector>

using namespace gantry;

namespace {
std::vector<resource_id> resources(const route& r) { return {r.begin(), r.end()}; }
}  // namespace

TEST_CASE("routes per communication mode") {
  CHECK(topology(comm_mode::parallel, 3).resource_count() == 0);
  CHECK(resources(topology(comm_mode::parallel, 3).route_of(0, 2)).empty());
  const topology seq(comm_mode::sequential, 3);
  CHECK(seq.resource_count() == 3);
  CHECK(resources(seq.route_of(2, 0)) == std::vector<resource_id>{0, 2});
  CHECK(seq.resource_name(2) == "channel of device 2");
  const topology dup(comm_mode::duplex, 3);
  CHECK(dup.resource_count() == 6);
  CHECK(resources(dup.route_of(2, 0)) == std::vector<resource_id>{1, 4});  // 0's receive, 2's send
  CHECK(dup.resource_name(1) == "receive channel of device 0");
  CHECK(dup.resource_name(4) == "send channel of device 2");
  CHECK_THROWS_AS(topology(comm_mode::parallel, 3, std::vector<std::uint32_t>{0, 1}), invalid_input);
}

TEST_CASE("nodes: a transfer between nodes also takes both nodes' ports; one inside a node does not") {
  // Devices 0, 1 in node 7; 2, 3 in node 9; device 4 in none. Parallel links otherwise.
  const topology t(comm_mode::parallel, 5, std::vector<std::uint32_t>{7, 7, 9, 9, no_node});
  CHECK(t.node_count() == 2);
  CHECK(t.resource_count() == 4);
  CHECK(resources(t.route_of(0, 1)).empty());
  CHECK(resources(t.route_of(0, 2)) == std::vector<resource_id>{0, 3});  // node 7 out, node 9 in
  CHECK(resources(t.route_of(3, 1)) == std::vector<resource_id>{1, 2});
  CHECK(resources(t.route_of(4, 0)) == std::vector<resource_id>{1});  // only node 7's incoming port
  CHECK(t.resource_name(0) == "outgoing port of node 7");
  CHECK(t.resource_name(3) == "incoming port of node 9");
  // With duplex channels too: four resources.
  const topology both(comm_mode::duplex, 4, std::vector<std::uint32_t>{0, 0, 1, 1});
  CHECK(resources(both.route_of(1, 2)) == std::vector<resource_id>{2, 5, 8, 11});
}

TEST_CASE("nodes serialize cross-node transfers in the simulator, the engine and validate() alike") {
  // a on d0 and b on d1 (node 0) each send 10 B to c on d2 and e on d3 (node 1) over 10 B/s links:
  //   a, b: [0, 1]; transfers a->c [1, 2] and b->e [2, 3] (one port each way); c [2, 3], e [3, 4].
  // Without nodes both transfers run at [1, 2] and the makespan is 3.
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 1), c = g.add_vertex("c", 1), e = g.add_vertex("e", 1);
  g.add_edge(a, c, 10);
  g.add_edge(b, e, 10);
  cluster free_links = cluster::uniform(4, unlimited_memory, {0, 10});
  cluster nodes = free_links;
  nodes.set_nodes({0, 0, 1, 1});
  const std::vector<device_id> where{0, 1, 2, 3};

  const auto flat = simulate(g, graph_model(g, free_links), free_links, where);
  REQUIRE(flat.ok());
  CHECK(flat.schedule.makespan == doctest::Approx(3));
  const auto run = simulate(g, graph_model(g, nodes), nodes, where);
  REQUIRE(run.ok());
  CHECK(run.schedule.makespan == doctest::Approx(4));
  CHECK(validate(run.schedule, g, graph_model(g, nodes), nodes).ok());

  // The schedule made without nodes breaks the node's outgoing port.
  const auto report = validate(flat.schedule, g, graph_model(g, nodes), nodes);
  REQUIRE(report.violations.size() == 2);  // node 0's outgoing and node 1's incoming port
  CHECK(report.violations[0].kind == violation_kind::channel_overlap);

  // The engine books the same ports: vertices fixed where the simulation put them.
  list_options fixed;
  fixed.fixed_device = where;
  const auto cp = critical_path_schedule(g, graph_model(g, nodes), nodes, fixed);
  REQUIRE(cp.ok());
  CHECK(cp.schedule.makespan == doctest::Approx(4));
  CHECK(validate(cp.schedule, g, graph_model(g, nodes), nodes).ok());
}

TEST_CASE("a cluster file's nodes: read, written back, and refused when not a whole number") {
  const char* text = R"({"format": "gantry.cluster", "version": 1, "communication": "duplex",
    "devices": [{"name": "a", "node": 3}, {"name": "b", "node": 3}, {"name": "c"}]})";
  const cluster c = read_cluster_json(text);
  REQUIRE(c.nodes().size() == 3);
  CHECK(c.nodes()[0] == 3);
  CHECK(c.nodes()[2] == no_node);
  CHECK(c.topology().resource_count() == 6 + 2);
  const cluster again = read_cluster_json(cluster_to_json_text(c));
  CHECK(again.nodes() == c.nodes());
  CHECK_THROWS_WITH_AS(read_cluster_json(R"({"format": "gantry.cluster", "version": 1,
    "devices": [{"name": "a", "node": -1}]})"),
                       doctest::Contains("/devices/0/node"), parse_error);
  CHECK_THROWS_WITH_AS(read_cluster_json(R"({"format": "gantry.cluster", "version": 1,
    "devices": [{"name": "a", "node": "rack"}]})"),
                       doctest::Contains("/devices/0/node"), parse_error);
}
