// gantry::graph, the CSR snapshot and cycle reporting.
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace gantry;

namespace {
std::vector<vertex_id> to_vector(std::span<const vertex_id> s) { return {s.begin(), s.end()}; }
std::vector<edge_id> edges_of(std::span<const edge_id> s) { return {s.begin(), s.end()}; }

// "a" -> "b" -> "c" -> "a" plus a tail "c" -> "d": one cycle of three.
graph three_cycle_with_tail() {
  graph g;
  const auto a = g.add_vertex("a"), b = g.add_vertex("b"), c = g.add_vertex("c"), d = g.add_vertex("d");
  g.add_edge(a, b);
  g.add_edge(b, c);
  g.add_edge(c, a);
  g.add_edge(c, d);
  return g;
}
}  // namespace

TEST_CASE("graph stores vertices, edges, per-kind times and forward links") {
  graph g;
  const auto x = g.add_vertex({.name = "x",
                               .compute = 2.0,
                               .persistent = 10,
                               .output = 20,
                               .temporary = 5,
                               .group = "g",
                               .op = "MatMul",
                               .flops = 1e6});
  const auto y = g.add_vertex("y", 1.5);
  const auto e0 = g.add_edge(x, y, 64);
  const auto e1 = g.add_edge(x, y, 32);  // a second tensor between the same pair
  CHECK(g.vertex_count() == 2);
  CHECK(g.edge_count() == 2);
  CHECK(g[x].name == "x");
  CHECK(g[x].persistent == 10);
  CHECK(g[x].group == "g");
  CHECK(g.source(e1) == x);
  CHECK(g.target(e1) == y);
  CHECK(g.bytes(e0) == 64);
  g.set_bytes(e0, 128);
  CHECK(g.bytes(e0) == 128);

  std::vector<edge_id> out, in;
  g.for_each_out_edge(x, [&](edge_id e) { out.push_back(e); });
  g.for_each_in_edge(y, [&](edge_id e) { in.push_back(e); });
  CHECK(out == std::vector<edge_id>{e0, e1});
  CHECK(in == std::vector<edge_id>{e0, e1});

  CHECK(g.compute_on(x, "gpu") == 2.0);  // no per-kind time: the device-independent one
  g.set_compute(x, "gpu", 0.5);
  CHECK(g.compute_on(x, "gpu") == 0.5);
  CHECK(g.compute_on(x, "cpu") == 2.0);
  CHECK(g.compute_on(y, "gpu") == 1.5);
  REQUIRE(g.kind_times(x).size() == 1);
  CHECK(g.kind_times(x)[0].first == "gpu");

  CHECK(g.forward_of(y) == no_vertex);
  g.set_forward(y, x);
  CHECK(g.forward_of(y) == x);
}

TEST_CASE("graph rejects invalid numbers and ids, naming what was wrong") {
  graph g;
  const auto a = g.add_vertex("a", 1.0);
  CHECK_THROWS_WITH_AS(g.add_vertex("neg", -1.0), doctest::Contains("'neg'"), invalid_input);
  CHECK_THROWS_AS(g.add_vertex("nan", std::nan("")), invalid_input);
  CHECK_THROWS_AS(g.add_vertex("inf", std::numeric_limits<double>::infinity()), invalid_input);
  CHECK_THROWS_WITH_AS(g.add_edge(a, 7), doctest::Contains("7"), invalid_input);
  CHECK_THROWS_AS(g.add_edge(9, a), invalid_input);
  CHECK_THROWS_AS(g.set_forward(a, 3), invalid_input);
  CHECK_THROWS_AS(g.set_compute(5, "gpu", 1.0), invalid_input);
  CHECK_THROWS_WITH_AS(g.set_compute(a, "gpu", -2.0), doctest::Contains("'a'"), invalid_input);
  CHECK(g.vertex_count() == 1);  // nothing was added by the failed calls
  CHECK(g.edge_count() == 0);
}

TEST_CASE("snapshot keeps edge ids and the adaptor's edge order in both directions") {
  graph g;
  for (int i = 0; i < 4; ++i) g.add_vertex("v" + std::to_string(i));
  g.add_edge(2, 3);  // e0
  g.add_edge(0, 2);  // e1
  g.add_edge(0, 1);  // e2
  g.add_edge(1, 3);  // e3
  g.add_edge(0, 3);  // e4
  const csr_graph s = snapshot(g);
  CHECK(s.vertex_count() == 4);
  CHECK(s.edge_count() == 5);
  CHECK(to_vector(s.successors(0)) == std::vector<vertex_id>{2, 1, 3});
  CHECK(edges_of(s.out_edges(0)) == std::vector<edge_id>{1, 2, 4});
  CHECK(to_vector(s.predecessors(3)) == std::vector<vertex_id>{2, 1, 0});
  CHECK(edges_of(s.in_edges(3)) == std::vector<edge_id>{0, 3, 4});
  CHECK(s.out_degree(3) == 0);
  CHECK(s.in_degree(0) == 0);
  CHECK(s.in_degree(3) == 3);
  for (edge_id e = 0; e < 5; ++e) {
    CHECK(s.source(e) == g.source(e));
    CHECK(s.target(e) == g.target(e));
  }
  CHECK(s.find_cycle().empty());
  CHECK_NOTHROW((void)snapshot_dag(g));

  // A snapshot is itself a graph gantry reads, and snapshotting it again changes nothing.
  const csr_graph again = snapshot(s);
  CHECK(to_vector(again.successors(0)) == to_vector(s.successors(0)));
  CHECK(edges_of(again.in_edges(3)) == edges_of(s.in_edges(3)));
}

TEST_CASE("csr_graph rejects mismatched or out-of-range edge lists") {
  CHECK_THROWS_AS(csr_graph(3, {0, 1}, {1}), invalid_input);
  CHECK_THROWS_WITH_AS(csr_graph(3, {0, 1}, {1, 3}), doctest::Contains("edge 1"), invalid_input);
  const csr_graph empty(0, {}, {});
  CHECK(empty.vertex_count() == 0);
  CHECK(empty.find_cycle().empty());
}

TEST_CASE("find_cycle returns the vertices of one cycle in edge order") {
  const graph g = three_cycle_with_tail();
  const auto cycle = snapshot(g).find_cycle();
  REQUIRE(cycle.size() == 3);
  // Rotate so that vertex 0 ("a") comes first, then the order must follow the edges.
  std::vector<vertex_id> rotated = cycle;
  while (rotated.front() != 0) std::rotate(rotated.begin(), rotated.begin() + 1, rotated.end());
  CHECK(rotated == std::vector<vertex_id>{0, 1, 2});

  graph self;
  const auto s = self.add_vertex("loop");
  self.add_edge(s, s);
  CHECK(snapshot(self).find_cycle() == std::vector<vertex_id>{0});
}

TEST_CASE("snapshot_dag names the vertices of a cycle") {
  const graph g = three_cycle_with_tail();
  try {
    (void)snapshot_dag(g);
    FAIL("snapshot_dag accepted a cycle");
  } catch (const not_a_dag& e) {
    const std::string what = e.what();
    CHECK(what.find("a") != std::string::npos);
    CHECK(what.find("b") != std::string::npos);
    CHECK(what.find("c") != std::string::npos);
    CHECK(what.find("d") == std::string::npos);  // the tail is not on the cycle
  }
  // not_a_dag is an invalid_input, so callers catching bad input catch it too.
  CHECK_THROWS_AS((void)snapshot_dag(g), invalid_input);
}

TEST_CASE("unnamed vertices are named by id in messages") {
  graph g;
  g.add_vertex("");
  g.add_vertex("");
  g.add_edge(0, 1);
  g.add_edge(1, 0);
  CHECK(vertex_name(g, 1) == "#1");
  CHECK_THROWS_WITH_AS((void)snapshot_dag(g), doctest::Contains("#0"), not_a_dag);
}

TEST_CASE("per-kind compute times stay apart with more than 65,536 kinds") {
  // A key that packed the kind into 16 bits made kind 65,536 of vertex 0 the kind 0 of vertex 1.
  graph g;
  const auto a = g.add_vertex("a", 1.0);
  const auto b = g.add_vertex("b", 2.0);
  constexpr int kinds = 70'000;
  for (int k = 0; k < kinds; ++k) g.set_compute(a, "k" + std::to_string(k), 0.5);
  g.set_compute(b, "k1", 0.25);
  CHECK(g.kind_count() == kinds);
  CHECK(g.kind_times(a).size() == kinds);
  CHECK(g.kind_times(a).front().first == "k0");
  CHECK(g.kind_times(a).back().first == "k69999");
  REQUIRE(g.kind_times(b).size() == 1);
  CHECK(g.kind_times(b)[0] == std::pair<std::string, seconds>{"k1", 0.25});
  CHECK(g.compute_on(b, "k0") == 2.0);
  CHECK(g.compute_on(b, "k65536") == 2.0);
  CHECK(g.compute_on(a, "k65536") == 0.5);
  g.set_compute(a, "k3", 0.125);  // replacing keeps one entry
  CHECK(g.kind_times(a).size() == kinds);
  CHECK(g.compute_on(a, "k3") == 0.125);
}
