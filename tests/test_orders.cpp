// Topological orders (Kahn, DFS-TOPO, CPD-TOPO) and levels: validity on many seeded random DAGs,
// agreement with plain reference implementations of the tie rules, and small hand-worked cases.
#include <gantry/core/random.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/order/topological.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

using namespace gantry;

namespace {

using order_t = std::vector<vertex_id>;

// A DAG whose ids are a random permutation of a topological order (so id order is not a valid
// order), with random density, parallel edges now and then, and per-vertex and per-edge times.
struct random_case {
  graph g;
  std::vector<seconds> compute;   // per vertex
  std::vector<seconds> transfer;  // per edge
};

random_case make_random_case(std::uint64_t seed) {
  detail::portable_random rng(seed);
  random_case c;
  const auto n = static_cast<std::size_t>(rng.integer(1, 40));
  std::vector<vertex_id> rank_to_id(n);
  std::iota(rank_to_id.begin(), rank_to_id.end(), 0);
  for (std::size_t i = n; i > 1; --i) std::swap(rank_to_id[i - 1], rank_to_id[rng.integer(0, i - 1)]);
  for (std::size_t v = 0; v < n; ++v) {
    c.g.add_vertex("v" + std::to_string(v));
    c.compute.push_back(static_cast<double>(rng.integer(0, 9)));  // small integers: many ties
  }
  const auto density = rng.integer(2, 30);  // percent
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (rng.integer(0, 99) < density) {
        const std::uint64_t copies = rng.integer(0, 9) == 0 ? 2 : 1;
        for (std::uint64_t k = 0; k < copies; ++k) {
          c.g.add_edge(rank_to_id[i], rank_to_id[j], 1);
          c.transfer.push_back(static_cast<double>(rng.integer(0, 4)));
        }
      }
  return c;
}

auto model_of(const random_case& c) {
  return model_from([&c](vertex_id v, device_id) { return c.compute[v]; },
                    [&c](edge_id e, device_id, device_id) { return c.transfer[e]; });
}

// Every vertex exactly once and every edge forward.
void check_topological(const graph& g, const order_t& order, const char* which) {
  INFO(which);
  REQUIRE(order.size() == g.vertex_count());
  std::vector<std::size_t> position(g.vertex_count(), g.vertex_count());
  for (std::size_t i = 0; i < order.size(); ++i) {
    REQUIRE(order[i] < g.vertex_count());
    REQUIRE(position[order[i]] == g.vertex_count());  // not seen before
    position[order[i]] = i;
  }
  for (edge_id e = 0; e < g.edge_count(); ++e) CHECK(position[g.source(e)] < position[g.target(e)]);
}

// Reference implementations, written the plain way from the rules in words.
std::vector<std::size_t> indegrees(const graph& g) {
  std::vector<std::size_t> in(g.vertex_count(), 0);
  for (edge_id e = 0; e < g.edge_count(); ++e) ++in[g.target(e)];
  return in;
}
// Children of v that become ready when v is done, each once, in edge order.
std::vector<vertex_id> release(const graph& g, vertex_id v, std::vector<std::size_t>& in) {
  std::vector<vertex_id> ready;
  g.for_each_out_edge(v, [&](edge_id e) {
    if (--in[g.target(e)] == 0) ready.push_back(g.target(e));
  });
  return ready;
}

order_t reference_kahn(const graph& g) {
  auto in = indegrees(g);
  std::deque<vertex_id> queue;
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (in[v] == 0) queue.push_back(v);
  order_t order;
  while (!queue.empty()) {
    const auto v = queue.front();
    queue.pop_front();
    order.push_back(v);
    auto ready = release(g, v, in);
    std::sort(ready.begin(), ready.end());  // ready together: by id, at the tail
    queue.insert(queue.end(), ready.begin(), ready.end());
  }
  return order;
}

order_t reference_dfs(const graph& g) {
  auto in = indegrees(g);
  std::deque<vertex_id> queue;
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (in[v] == 0) queue.push_back(v);
  order_t order;
  while (!queue.empty()) {
    const auto v = queue.front();
    queue.pop_front();
    order.push_back(v);
    auto ready = release(g, v, in);
    std::sort(ready.begin(), ready.end());  // at the head, smallest id first
    queue.insert(queue.begin(), ready.begin(), ready.end());
  }
  return order;
}

// cpath by the definitions in words: t-level from the sources, b-level from the sinks.
std::vector<seconds> reference_cpath(const graph& g, const std::vector<seconds>& p, const std::vector<seconds>& c) {
  const std::size_t n = g.vertex_count();
  std::vector<seconds> top(n, -1), bottom(n, -1);
  std::function<seconds(vertex_id)> t = [&](vertex_id v) {
    if (top[v] >= 0) return top[v];
    seconds best = 0;
    g.for_each_in_edge(v, [&](edge_id e) { best = std::max(best, t(g.source(e)) + p[g.source(e)] + c[e]); });
    return top[v] = best;
  };
  std::function<seconds(vertex_id)> b = [&](vertex_id v) {
    if (bottom[v] >= 0) return bottom[v];
    seconds best = 0;
    g.for_each_out_edge(v, [&](edge_id e) { best = std::max(best, c[e] + b(g.target(e))); });
    return bottom[v] = p[v] + best;
  };
  std::vector<seconds> cpath(n);
  for (vertex_id v = 0; v < n; ++v) cpath[v] = t(v) + b(v);
  return cpath;
}

order_t reference_cpd(const graph& g, const std::vector<seconds>& cpath) {
  auto in = indegrees(g);
  // "first" = larger cpath, then smaller id.
  const auto first = [&](vertex_id a, vertex_id b) { return cpath[a] != cpath[b] ? cpath[a] > cpath[b] : a < b; };
  std::deque<vertex_id> queue;
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (in[v] == 0) queue.push_back(v);
  std::sort(queue.begin(), queue.end(), first);
  order_t order;
  while (!queue.empty()) {
    const auto v = queue.front();
    queue.pop_front();
    order.push_back(v);
    auto ready = release(g, v, in);
    std::sort(ready.begin(), ready.end(), first);
    queue.insert(queue.begin(), ready.begin(), ready.end());
  }
  return order;
}

}  // namespace

TEST_CASE("orders are valid topological orders on 1000 seeded random DAGs and follow their tie rules") {
  const cluster devices = cluster::uniform(2);
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    CAPTURE(seed);
    const random_case c = make_random_case(seed);
    const auto model = model_of(c);
    const auto kahn = kahn_order(c.g);
    const auto dfs = dfs_topo_order(c.g);
    const auto cpd = cpd_topo_order(c.g, model, devices);
    check_topological(c.g, kahn, "kahn");
    check_topological(c.g, dfs, "dfs-topo");
    check_topological(c.g, cpd, "cpd-topo");
    CHECK(kahn == reference_kahn(c.g));
    CHECK(dfs == reference_dfs(c.g));
    const auto cpath = reference_cpath(c.g, c.compute, c.transfer);
    CHECK(cpd == reference_cpd(c.g, cpath));
    const levels lv = compute_levels(c.g, model, devices);
    for (vertex_id v = 0; v < c.g.vertex_count(); ++v) CHECK(lv.path_through(v) == doctest::Approx(cpath[v]));
    CHECK(lv.critical_path == doctest::Approx(*std::max_element(cpath.begin(), cpath.end())));
  }
}

// Edges 0->5, 0->3, 1->2; vertex 4 is isolated.
//   0 ---> 5      1 ---> 2      4
//    \--> 3
graph tie_graph() {
  graph g;
  for (int i = 0; i < 6; ++i) g.add_vertex("v" + std::to_string(i));
  g.add_edge(0, 5);
  g.add_edge(0, 3);
  g.add_edge(1, 2);
  return g;
}

TEST_CASE("Kahn: FIFO queue, vertices ready together queued by id") {
  // Queue [0 1 4]; popping 0 readies 5 and 3 together, queued by id as 3, 5: [1 4 3 5];
  // popping 1 readies 2: [4 3 5 2]. (Plain BFS in edge order would give 0 1 4 5 3 2.)
  CHECK(kahn_order(tie_graph()) == order_t{0, 1, 4, 3, 5, 2});
  // A chain 2 -> 1 -> 0 runs against the ids.
  graph chain;
  for (int i = 0; i < 3; ++i) chain.add_vertex("c" + std::to_string(i));
  chain.add_edge(2, 1);
  chain.add_edge(1, 0);
  CHECK(kahn_order(chain) == order_t{2, 1, 0});
}

TEST_CASE("DFS-TOPO: ready children go to the head, the smallest id first") {
  // Queue [0 1 4]; popping 0 readies 5 and 3, pushed at the head: [3 5 1 4]; 3 and 5 have no
  // children; popping 1 readies 2 at the head: [2 4].
  CHECK(dfs_topo_order(tie_graph()) == order_t{0, 3, 5, 1, 2, 4});
  // A child that is not yet ready waits: 0 -> 1, 0 -> 2, 2 -> 1. Popping 0 readies only 2.
  graph g;
  for (int i = 0; i < 3; ++i) g.add_vertex("w" + std::to_string(i));
  g.add_edge(0, 1);
  g.add_edge(0, 2);
  g.add_edge(2, 1);
  CHECK(dfs_topo_order(g) == order_t{0, 2, 1});
}

TEST_CASE("CPD-TOPO: sources by cpath descending, the ready child with the largest cpath next, ties by id") {
  //   0 (p=1) --0--> 2 (p=1)
  //   1 (p=2) --0--> 3 (p=4)
  //   1       --2--> 4 (p=3)          5 (p=2) isolated
  // t-level: 0:0 1:0 2:1 3:2 4:2+2=4 5:0
  // b-level: 2:1 3:4 4:3 0:1+1=2 1:2+max(0+4, 2+3)=7 5:2
  // cpath:   0:2 1:7 2:2 3:6 4:7 5:2
  // Sources by cpath: 1 (7), then 0 and 5 tie at 2 -> 0 first: [1 0 5]. Popping 1 readies 3 and 4;
  // 4 (cpath 7) goes first: [4 3 0 5]. Popping 0 readies 2 at the head: [2 5].
  // Without the 2 s transfer on 1->4, cpath(4) would be 5 < 6 and 3 would go first.
  graph g;
  const std::vector<seconds> p{1, 2, 1, 4, 3, 2};
  for (std::size_t v = 0; v < p.size(); ++v) g.add_vertex("v" + std::to_string(v), p[v]);
  g.add_edge(0, 2);
  g.add_edge(1, 3);
  g.add_edge(1, 4);
  const std::vector<seconds> c{0, 0, 2};
  const auto model =
      model_from([&](vertex_id v, device_id) { return p[v]; }, [&](edge_id e, device_id, device_id) { return c[e]; });
  const cluster devices = cluster::uniform(2);
  CHECK(cpd_topo_order(g, model, devices) == order_t{1, 4, 3, 0, 2, 5});
  const levels lv = compute_levels(g, model, devices);
  CHECK(lv.top == std::vector<seconds>{0, 0, 1, 2, 4, 0});
  CHECK(lv.bottom == std::vector<seconds>{2, 7, 1, 4, 3, 2});
  CHECK(lv.critical_path == 7);

  const auto no_transfer =
      model_from([&](vertex_id v, device_id) { return p[v]; }, [](edge_id, device_id, device_id) { return 0.0; });
  CHECK(cpd_topo_order(g, no_transfer, devices) == order_t{1, 3, 4, 0, 2, 5});

  // Children with equal cpath: smallest id first.
  graph fan;
  for (int i = 0; i < 4; ++i) fan.add_vertex("f" + std::to_string(i), 1.0);
  fan.add_edge(0, 3);
  fan.add_edge(0, 1);
  fan.add_edge(0, 2);
  const cluster one = cluster::uniform(1);
  CHECK(cpd_topo_order(fan, graph_model(fan, one), one) == order_t{0, 1, 2, 3});
}

TEST_CASE("levels and critical path by hand on a diamond, with and without communication") {
  //        a (1)
  //   100 /     \ 100
  //    b (2)    c (3)
  //   100 \     / 100
  //        d (1)
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 2), c = g.add_vertex("c", 3), d = g.add_vertex("d", 1);
  g.add_edge(a, b, 100);
  g.add_edge(a, c, 100);
  g.add_edge(b, d, 100);
  g.add_edge(c, d, 100);

  // Two devices, link 0.5 s + 100 B / (100 B/s): every edge costs 1.5 s.
  // top: a 0, b 0+1+1.5 = 2.5, c 2.5, d max(2.5+2, 2.5+3) + 1.5 = 7
  // bottom: d 1, b 2+1.5+1 = 4.5, c 3+1.5+1 = 5.5, a 1 + max(1.5+4.5, 1.5+5.5) = 8
  const cluster two = cluster::uniform(2, unlimited_memory, {.latency = 0.5, .bandwidth = 100});
  const graph_model model2(g, two);
  const levels lv = compute_levels(g, model2, two);
  CHECK(lv.top[a] == doctest::Approx(0));
  CHECK(lv.top[b] == doctest::Approx(2.5));
  CHECK(lv.top[c] == doctest::Approx(2.5));
  CHECK(lv.top[d] == doctest::Approx(7));
  CHECK(lv.bottom[a] == doctest::Approx(8));
  CHECK(lv.bottom[b] == doctest::Approx(4.5));
  CHECK(lv.bottom[c] == doctest::Approx(5.5));
  CHECK(lv.bottom[d] == doctest::Approx(1));
  CHECK(lv.critical_path == doctest::Approx(8));
  CHECK(lv.path_through(b) == doctest::Approx(7));
  CHECK(critical_path(g, model2, two) == doctest::Approx(8));
  CHECK(bottom_level(g, model2, two) == lv.bottom);
  CHECK(top_level(g, model2, two) == lv.top);

  // One device: nothing moves. top a0 b1 c1 d4; bottom d1 b3 c4 a5; critical path 1+3+1 = 5.
  const cluster one = cluster::uniform(1, unlimited_memory, {.latency = 0.5, .bandwidth = 100});
  const graph_model model1(g, one);
  const levels lv1 = compute_levels(g, model1, one);
  CHECK(lv1.top == std::vector<seconds>{0, 1, 1, 4});
  CHECK(lv1.bottom == std::vector<seconds>{5, 3, 4, 1});
  CHECK(lv1.critical_path == 5);

  // A device twice as fast halves its compute; levels use the mean over devices:
  // mean p = (p + p/2) / 2 = 0.75 p, so with one device at speed 1 and one at speed 2 and free
  // links the critical path a-c-d is 0.75 * 5 = 3.75.
  const cluster mixed({{.name = "slow"}, {.name = "fast", .speed = 2}});
  CHECK(critical_path(g, graph_model(g, mixed), mixed) == doctest::Approx(3.75));
}

TEST_CASE("orders and levels report a cycle with the names of its vertices") {
  graph g;
  const auto in = g.add_vertex("input"), x = g.add_vertex("x"), y = g.add_vertex("y");
  g.add_edge(in, x);
  g.add_edge(x, y);
  g.add_edge(y, x);
  const cluster devices = cluster::uniform(2);
  const graph_model model(g, devices);
  const auto names_cycle = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const not_a_dag& e) {
      const std::string what = e.what();
      CHECK(what.find("x") != std::string::npos);
      CHECK(what.find("y") != std::string::npos);
      CHECK(what.find("input") == std::string::npos);
      return true;
    }
    return false;
  };
  CHECK(names_cycle([&] { (void)kahn_order(g); }));
  CHECK(names_cycle([&] { (void)dfs_topo_order(g); }));
  CHECK(names_cycle([&] { (void)cpd_topo_order(g, model, devices); }));
  CHECK(names_cycle([&] { (void)compute_levels(g, model, devices); }));
}

TEST_CASE("empty graph and single vertex") {
  const graph empty;
  CHECK(kahn_order(empty).empty());
  CHECK(dfs_topo_order(empty).empty());
  const cluster devices = cluster::uniform(1);
  CHECK(cpd_topo_order(empty, graph_model(empty, devices), devices).empty());
  CHECK(compute_levels(empty, graph_model(empty, devices), devices).critical_path == 0);
  graph one;
  one.add_vertex("only", 2.5);
  CHECK(kahn_order(one) == order_t{0});
  CHECK(critical_path(one, graph_model(one, devices), devices) == 2.5);
}
