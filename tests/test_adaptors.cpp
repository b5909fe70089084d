// The adaptor layer: algorithms compile and agree on gantry::graph, gantry::csr_graph, a Boost
// adjacency_list<vecS, vecS>, a Boost adjacency_list<listS, listS> seen through an index map, and
// a user's own type adapted with a few lines of graph_adaptor. Same orders, same m-TOPO placement,
// same simulated schedule for the same graph.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/graph/adaptor.hpp>
#include <gantry/graph/boost.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

// A user's own graph type: layers and the wires between them.
struct layer {
  std::string name;
  double seconds = 0;
  std::uint64_t weights = 0, activations = 0, scratch = 0;
};
struct user_net {
  std::vector<layer> layers;
  std::vector<std::pair<int, int>> wires;
};

// A user's type that numbers its edges itself and lists them in reverse.
struct numbered_net {
  std::size_t vertices = 0;
  std::vector<std::pair<int, int>> wires;
};

template <>
struct gantry::graph_adaptor<user_net> {
  static std::size_t vertex_count(const user_net& g) { return g.layers.size(); }
  template <class F>
  static void for_each_edge(const user_net& g, F&& f) {
    for (const auto& [from, to] : g.wires) f(static_cast<std::size_t>(from), static_cast<std::size_t>(to));
  }
  static std::string vertex_name(const user_net& g, std::size_t v) { return g.layers[v].name; }
};

// An adaptor that breaks the edge-id contract in one of three ways.
struct broken_ids {
  int mode = 0;  // 0: an id twice, 1: fewer edges than edge_count, 2: an id out of range
};

template <>
struct gantry::graph_adaptor<broken_ids> {
  static std::size_t vertex_count(const broken_ids&) { return 3; }
  static std::size_t edge_count(const broken_ids&) { return 2; }
  template <class F>
  static void for_each_edge(const broken_ids& g, F&& f) {
    f(std::size_t{0}, std::size_t{1}, std::size_t{g.mode == 2 ? 5u : 0u});
    if (g.mode == 0) f(std::size_t{1}, std::size_t{2}, std::size_t{0});
  }
};

template <>
struct gantry::graph_adaptor<numbered_net> {
  static std::size_t vertex_count(const numbered_net& g) { return g.vertices; }
  static std::size_t edge_count(const numbered_net& g) { return g.wires.size(); }
  template <class F>
  static void for_each_edge(const numbered_net& g, F&& f) {
    for (std::size_t i = g.wires.size(); i-- > 0;)
      f(static_cast<std::size_t>(g.wires[i].first), static_cast<std::size_t>(g.wires[i].second), i);
  }
};

using namespace gantry;

namespace {

struct node {
  std::string name;
  double compute = 0;
  byte_count persistent = 0, output = 0, temporary = 0;
  std::size_t index = 0;  // for the listS graph's index map
};
struct wire {
  byte_count bytes = 0;
};
using vec_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, node, wire>;
using list_graph = boost::adjacency_list<boost::listS, boost::listS, boost::directedS, node, wire>;

static_assert(adapted_graph<graph>);
static_assert(adapted_graph<csr_graph>);
static_assert(adapted_graph<vec_graph>);
static_assert(adapted_graph<user_net>);
static_assert(adapted_graph_with_edge_ids<numbered_net>);
static_assert(!adapted_graph_with_edge_ids<user_net>);
using list_indexed =
    decltype(indexed(std::declval<const list_graph&>(), get(&node::index, std::declval<list_graph&>())));
static_assert(adapted_graph<list_indexed>);

// The same DAG in every representation, with edges grouped by source so that every
// representation numbers them alike (Boost lists edges by source vertex).
struct representations {
  graph own;
  csr_graph csr;
  vec_graph boost_vec;
  list_graph boost_list;
  user_net user;

  explicit representations(std::uint64_t seed) {
    const graph base = random_layered_dag({.vertices = 40,
                                           .layers = 8,
                                           .min_bytes = 100,
                                           .max_bytes = 100'000,
                                           .max_persistent = 50'000,
                                           .max_temporary = 10'000,
                                           .seed = seed});
    std::vector<edge_id> edges(base.edge_count());
    for (edge_id e = 0; e < edges.size(); ++e) edges[e] = e;
    std::stable_sort(edges.begin(), edges.end(), [&](edge_id a, edge_id b) { return base.source(a) < base.source(b); });
    std::vector<list_graph::vertex_descriptor> list_vertices;
    for (vertex_id v = 0; v < base.vertex_count(); ++v) {
      const auto& p = base[v];
      own.add_vertex(p);
      const node n{p.name, p.compute, p.persistent, p.output, p.temporary, v};
      boost::add_vertex(n, boost_vec);
      list_vertices.push_back(boost::add_vertex(n, boost_list));
      user.layers.push_back({p.name, p.compute, p.persistent, p.output, p.temporary});
    }
    for (const edge_id e : edges) {
      const auto u = base.source(e), v = base.target(e);
      own.add_edge(u, v, base.bytes(e));
      boost::add_edge(u, v, wire{base.bytes(e)}, boost_vec);
      boost::add_edge(list_vertices[u], list_vertices[v], wire{base.bytes(e)}, boost_list);
      user.wires.emplace_back(static_cast<int>(u), static_cast<int>(v));
    }
    csr = snapshot(own);
  }
};

// The bridge a Boost user writes: property maps into an array_model.
template <class G, class IndexMap>
array_model boost_model(const G& g, const IndexMap& index, const cluster& c) {
  return array_model(c, vertex_values(g, index, get(&node::compute, g)), edge_values(g, get(&wire::bytes, g)),
                     vertex_values(g, index, get(&node::persistent, g)), vertex_values(g, index, get(&node::output, g)),
                     vertex_values(g, index, get(&node::temporary, g)));
}

array_model user_model(const user_net& net, const std::vector<byte_count>& edge_bytes, const cluster& c) {
  std::vector<seconds> compute;
  std::vector<byte_count> persistent, output, temporary;
  for (const auto& l : net.layers) {
    compute.push_back(l.seconds);
    persistent.push_back(l.weights);
    output.push_back(l.activations);
    temporary.push_back(l.scratch);
  }
  return array_model(c, compute, edge_bytes, persistent, output, temporary);
}

struct run_outcome {
  std::vector<vertex_id> kahn, dfs, cpd;
  levels lv;
  placement topo;
  schedule run;
};

template <class G, class M>
run_outcome run_all(const G& g, const M& model, const cluster& c) {
  run_outcome o;
  o.kahn = kahn_order(g);
  o.dfs = dfs_topo_order(g);
  o.cpd = cpd_topo_order(g, model, c);
  o.lv = compute_levels(g, model, c);
  o.topo = m_topo(g, model, c);
  REQUIRE_MESSAGE(o.topo.ok(), o.topo.outcome.message);
  auto r = simulate(g, model, c, o.topo.device, {.priority = o.topo.order});
  REQUIRE_MESSAGE(r.ok(), r.outcome.message);
  const auto report = validate(r.schedule, g, model, c);
  CHECK_MESSAGE(report.ok(), report.to_string());
  o.run = std::move(r.schedule);
  return o;
}

void check_same(const run_outcome& a, const run_outcome& b) {
  CHECK(a.kahn == b.kahn);
  CHECK(a.dfs == b.dfs);
  CHECK(a.cpd == b.cpd);
  // graph_model averages links before timing an edge, array_model averages the edge's times:
  // equal in exact arithmetic, not always to the last bit.
  REQUIRE(a.lv.top.size() == b.lv.top.size());
  for (std::size_t v = 0; v < a.lv.top.size(); ++v) {
    CHECK(a.lv.top[v] == doctest::Approx(b.lv.top[v]));
    CHECK(a.lv.bottom[v] == doctest::Approx(b.lv.bottom[v]));
  }
  CHECK(a.topo.device == b.topo.device);
  CHECK(a.run.makespan == b.run.makespan);
  CHECK(a.run.start == b.run.start);
  CHECK(a.run.peak_memory == b.run.peak_memory);
}

}  // namespace

TEST_CASE("every graph representation gives the same orders, placement and simulated schedule") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    const representations r(seed);
    for (const auto comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      const std::string mode = to_string(comm);
      CAPTURE(mode);
      const cluster c = cluster::uniform(4, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e8}, comm);
      const run_outcome own = run_all(r.own, graph_model(r.own, c), c);
      // A csr_graph is read in place; the model still comes from the gantry::graph (same ids).
      check_same(own, run_all(r.csr, graph_model(r.own, c), c));
      check_same(own, run_all(r.boost_vec, boost_model(r.boost_vec, get(boost::vertex_index, r.boost_vec), c), c));
      const auto list_index = get(&node::index, r.boost_list);
      check_same(own, run_all(indexed(r.boost_list, list_index), boost_model(r.boost_list, list_index, c), c));
      std::vector<byte_count> user_bytes;
      for (edge_id e = 0; e < r.own.edge_count(); ++e) user_bytes.push_back(r.own.bytes(e));
      check_same(own, run_all(r.user, user_model(r.user, user_bytes, c), c));
    }
  }
}

TEST_CASE("vertex_values and edge_values read Boost property maps in gantry's numbering") {
  const representations r(4);
  const csr_graph s = snapshot(r.boost_vec);
  const auto bytes = edge_values(r.boost_vec, get(&wire::bytes, r.boost_vec));
  REQUIRE(bytes.size() == s.edge_count());
  for (edge_id e = 0; e < s.edge_count(); ++e) {
    CHECK(s.source(e) == r.own.source(e));
    CHECK(s.target(e) == r.own.target(e));
    CHECK(bytes[e] == r.own.bytes(e));
  }
  const auto names = vertex_values(r.boost_vec, get(&node::name, r.boost_vec));
  for (vertex_id v = 0; v < names.size(); ++v) CHECK(names[v] == r.own[v].name);
  // Boost vertices are named in messages by their bundled `name`.
  CHECK(vertex_name(r.boost_vec, 3) == r.own[3].name);
  CHECK(vertex_name(r.boost_list, 3) == r.own[3].name);
}

TEST_CASE("a Boost graph with listS vertices and no index map works in iteration order") {
  static_assert(adapted_graph<list_graph>);
  const representations r(6);
  const csr_graph s = snapshot(r.boost_list);
  REQUIRE(s.vertex_count() == r.own.vertex_count());
  REQUIRE(s.edge_count() == r.own.edge_count());
  for (edge_id e = 0; e < s.edge_count(); ++e) {
    CHECK(s.source(e) == r.own.source(e));
    CHECK(s.target(e) == r.own.target(e));
  }
  const auto compute = vertex_values(r.boost_list, get(&node::compute, r.boost_list));
  for (vertex_id v = 0; v < compute.size(); ++v) CHECK(compute[v] == r.own[v].compute);
  // A cycle is reported with the vertices' names.
  list_graph cyclic;
  const auto a = add_vertex(node{.name = "attention"}, cyclic);
  const auto b = add_vertex(node{.name = "softmax"}, cyclic);
  add_edge(a, b, wire{}, cyclic);
  add_edge(b, a, wire{}, cyclic);
  CHECK_THROWS_WITH_AS((void)snapshot_dag(cyclic), doctest::Contains("softmax -> attention"), not_a_dag);
  // Without names, vertices are numbered.
  boost::adjacency_list<boost::setS, boost::listS, boost::directedS> plain(3);
  CHECK(vertex_name(plain, 2) == "#2");
  CHECK(snapshot(plain).vertex_count() == 3);
}

TEST_CASE("an adaptor with its own edge ids: the snapshot numbers edges by those ids") {
  const numbered_net net{4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}};
  const csr_graph s = snapshot(net);
  for (edge_id e = 0; e < 4; ++e) {
    CHECK(s.source(e) == static_cast<vertex_id>(net.wires[e].first));
    CHECK(s.target(e) == static_cast<vertex_id>(net.wires[e].second));
  }
  // Listed in reverse, yet out- and in-lists follow the ids.
  CHECK(std::vector<edge_id>(s.out_edges(0).begin(), s.out_edges(0).end()) == std::vector<edge_id>{0, 1});
  CHECK(std::vector<edge_id>(s.in_edges(3).begin(), s.in_edges(3).end()) == std::vector<edge_id>{2, 3});
  CHECK(kahn_order(net) == std::vector<vertex_id>{0, 1, 2, 3});
  CHECK(vertex_name(net, 2) == "#2");  // no names: "#id"
}

TEST_CASE("adaptors that break their contract are rejected with what was wrong") {
  SUBCASE("a vertex index out of range") {
    const user_net bad{{{"a"}, {"b"}}, {{0, 1}, {1, 5}}};
    CHECK_THROWS_WITH_AS((void)snapshot(bad), doctest::Contains("1 -> 5"), invalid_input);
    CHECK_THROWS_AS((void)kahn_order(bad), invalid_input);
  }
  SUBCASE("an edge id used twice") {
    CHECK_THROWS_WITH_AS((void)snapshot(broken_ids{0}), doctest::Contains("edge id 0"), invalid_input);
  }
  SUBCASE("fewer edges than edge_count() says") {
    CHECK_THROWS_WITH_AS((void)snapshot(broken_ids{1}), doctest::Contains("fewer edges"), invalid_input);
  }
  SUBCASE("an edge id out of range") {
    CHECK_THROWS_WITH_AS((void)snapshot(broken_ids{2}), doctest::Contains("edge id 5"), invalid_input);
  }
}

TEST_CASE("a cycle in a user's type is reported with the user's names everywhere") {
  const user_net net{{{"embed", 1}, {"attn", 1}, {"mlp", 1}, {"head", 1}}, {{0, 1}, {1, 2}, {2, 1}, {2, 3}}};
  const cluster c = cluster::uniform(2);
  const array_model model(c, {1, 1, 1, 1}, {0, 0, 0, 0});
  const auto names_loop = [](const std::string& what) {
    return what.find("attn") != std::string::npos && what.find("mlp") != std::string::npos &&
           what.find("embed") == std::string::npos;
  };
  try {
    (void)snapshot_dag(net);
    FAIL("snapshot_dag accepted a cycle");
  } catch (const not_a_dag& e) {
    CHECK(names_loop(e.what()));
  }
  try {
    (void)cpd_topo_order(net, model, c);
    FAIL("cpd_topo_order accepted a cycle");
  } catch (const not_a_dag& e) {
    CHECK(names_loop(e.what()));
  }
  try {
    (void)m_topo(net, model, c);
    FAIL("m_topo accepted a cycle");
  } catch (const not_a_dag& e) {
    CHECK(names_loop(e.what()));
  }
  try {
    (void)simulate(net, model, c, std::vector<device_id>{0, 0, 1, 1});
    FAIL("simulate accepted a cycle");
  } catch (const not_a_dag& e) {
    CHECK(names_loop(e.what()));
  }

  // The same cycle in a Boost graph names vertices by index.
  vec_graph g(4);
  boost::add_edge(0, 1, g);
  boost::add_edge(1, 2, g);
  boost::add_edge(2, 1, g);
  CHECK_THROWS_WITH_AS((void)kahn_order(g), doctest::Contains("#1"), not_a_dag);
}
