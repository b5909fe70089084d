// coarsen() and expand() on hand cases: what a coarse vertex and edge carry, and refusals.
#include <gantry/fusion/coarsen.hpp>

#include <doctest/doctest.h>

#include <vector>

using namespace gantry;

TEST_CASE("coarsen sums times and persistent bytes, keeps leaving outputs and one edge per cluster pair") {
  // a -> b -> c, a -> c; clusters {a, b}, {c}.
  graph g;
  g.add_vertex(vertex_properties{.name = "a", .compute = 1, .persistent = 1, .output = 10, .temporary = 5});
  g.add_vertex(vertex_properties{.name = "b", .compute = 2, .persistent = 2, .output = 20, .temporary = 7});
  g.add_vertex(vertex_properties{.name = "c", .compute = 4, .output = 40});
  g.add_edge(0, 1, 10);
  g.add_edge(1, 2, 20);
  g.add_edge(0, 2, 10);
  const std::vector<vertex_id> clusters{0, 0, 1};
  const coarsening c = coarsen(g, clusters);
  REQUIRE(c.coarse.vertex_count() == 2);
  CHECK(c.coarse[0].name == "a+1");
  CHECK(c.coarse[0].compute == 3);
  CHECK(c.coarse[0].persistent == 3);
  CHECK(c.coarse[0].temporary == 7);
  CHECK(c.coarse[0].output == 30);  // both a's and b's outputs leave the cluster
  REQUIRE(c.coarse.edge_count() == 1);
  CHECK(c.coarse.bytes(0) == 30);
  CHECK(c.members[0] == std::vector<vertex_id>{0, 1});
  placement coarse_placement;
  coarse_placement.device = {1, 0};
  coarse_placement.order = {0, 1};
  const placement p = expand(c, coarse_placement);
  CHECK(p.device == std::vector<device_id>{1, 1, 0});
  CHECK(p.order == std::vector<vertex_id>{0, 1, 2});
}

TEST_CASE("a coarse vertex's temporary bytes count the outputs read only inside it while they live") {
  // a -> b -> c -> d; clusters {a, b, c}, {d}. Running a, b, c in turn, the cluster holds a's output
  // (10) while a and b run, b's (20) while b and c run, and each member's temporary: at most
  // 10 + 20 + b's 7 = 37 besides c's output (40), which leaves the cluster and is its output.
  graph g;
  g.add_vertex(vertex_properties{.name = "a", .compute = 1, .output = 10, .temporary = 5});
  g.add_vertex(vertex_properties{.name = "b", .compute = 1, .output = 20, .temporary = 7});
  g.add_vertex(vertex_properties{.name = "c", .compute = 1, .output = 40, .temporary = 1});
  g.add_vertex(vertex_properties{.name = "d", .compute = 1});
  g.add_edge(0, 1, 10);
  g.add_edge(1, 2, 20);
  g.add_edge(2, 3, 40);
  const std::vector<vertex_id> clusters{0, 0, 0, 1};
  const coarsening c = coarsen(g, clusters);
  CHECK(c.coarse[0].temporary == 37);
  CHECK(c.coarse[0].output == 40);
  CHECK(c.coarse[1].temporary == 0);
  // A cluster of one vertex keeps its own numbers; a sink's output is held while it runs.
  const std::vector<vertex_id> alone{0, 1, 2, 3};
  CHECK(coarsen(g, alone).coarse[1].temporary == 7);
  const std::vector<vertex_id> tail{0, 1, 1, 1};  // b, c, d: b's 20 and c's 40 live while c runs
  CHECK(coarsen(g, tail).coarse[1].temporary == 61);
}

TEST_CASE("coarsen refuses clusters that make a cycle, gaps in ids and wrong sizes") {
  // a -> b -> c with {a, c} fused: the coarse graph would be {a,c} -> b -> {a,c}.
  graph g;
  for (const char* name : {"a", "b", "c"}) g.add_vertex(name, 1.0);
  g.add_edge(0, 1);
  g.add_edge(1, 2);
  CHECK_THROWS_AS((void)coarsen(g, std::vector<vertex_id>{0, 1, 0}), invalid_input);
  CHECK_THROWS_AS((void)coarsen(g, std::vector<vertex_id>{0, 2, 0}), invalid_input);
  CHECK_THROWS_AS((void)coarsen(g, std::vector<vertex_id>{0, 1}), invalid_input);
  placement wrong;
  wrong.device = {0};
  CHECK_THROWS_AS((void)expand(coarsen(g, std::vector<vertex_id>{0, 0, 1}), wrong), invalid_input);
}
