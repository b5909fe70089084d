// ETF and m-ETF on hand-worked examples, one per option, and Graham's bound against a brute-force
// optimum on tiny graphs.
#include <gantry/place/etf.hpp>
#include <gantry/schedule/validate.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace gantry;

namespace {
// a -> b, a -> c, b -> d, c -> d; every vertex takes 1 s and holds `bytes` persistent bytes.
graph diamond(byte_count bytes = 0) {
  graph g;
  for (const char* name : {"a", "b", "c", "d"})
    g.add_vertex(vertex_properties{.name = name, .compute = 1, .persistent = bytes});
  g.add_edge(0, 1);
  g.add_edge(0, 2);
  g.add_edge(1, 3);
  g.add_edge(2, 3);
  return g;
}

cluster two_devices(byte_count first, byte_count second, comm_mode comm = comm_mode::parallel) {
  return cluster({{.name = "gpu0", .capacity = first}, {.name = "gpu1", .capacity = second}},
                 link_model{.latency = 0.5}, comm);
}

void require_valid(const list_schedule_result& r, const graph& g, const graph_model& model, const cluster& c) {
  REQUIRE_MESSAGE(r.ok(), r.placement.outcome.message);
  const auto report = validate(r.schedule, g, model, c);
  CHECK_MESSAGE(report.ok(), report.to_string());
}
}  // namespace

TEST_CASE("ETF on a diamond, worked by hand") {
  // a on gpu0 [0,1]. b and c could start at 1 on gpu0 or at 1.5 on gpu1: b (first in Kahn order)
  // takes gpu0 [1,2]; then c starts at 2 on gpu0 or 1.5 on gpu1 [1.5,2.5]. d: inputs on gpu0 at
  // max(2, 2.5+0.5) = 3, on gpu1 at max(2.5, 2+0.5) = 2.5, so gpu1 [2.5,3.5].
  const auto g = diamond();
  const auto c = two_devices(unlimited_memory, unlimited_memory);
  const graph_model model(g, c);
  const auto r = etf(g, model, c);
  require_valid(r, g, model, c);
  CHECK(r.placement.device == std::vector<device_id>{0, 0, 1, 1});
  CHECK(r.schedule.start == std::vector<seconds>{0, 1, 1.5, 2.5});
  CHECK(r.schedule.makespan == 3.5);
  CHECK(r.placement.order == std::vector<vertex_id>{0, 1, 2, 3});
  REQUIRE(r.schedule.transfers.size() == 2);
  CHECK(r.schedule.transfers[0].tensor == 0);
  CHECK(r.schedule.transfers[0].start == 1);
  CHECK(r.schedule.transfers[1].tensor == 1);
  CHECK(r.schedule.transfers[1].finish == 2.5);
}

TEST_CASE("m-ETF skips a device whose free memory cannot hold the vertex") {
  // gpu0 holds 15 bytes: after a (10 bytes) nothing else fits, so b, c and d go to gpu1.
  const auto g = diamond(10);
  const auto c = two_devices(15, 100);
  const graph_model model(g, c);
  const auto plain = etf(g, model, c);
  CHECK(plain.placement.device == std::vector<device_id>{0, 0, 1, 1});
  CHECK_FALSE(validate(plain.schedule, g, model, c).ok());  // 20 bytes on gpu0
  const auto r = m_etf(g, model, c);
  require_valid(r, g, model, c);
  CHECK(r.placement.device == std::vector<device_id>{0, 1, 1, 1});
  CHECK(r.schedule.start == std::vector<seconds>{0, 1.5, 2.5, 3.5});
  CHECK(r.schedule.peak_memory[0] == 10);
  CHECK(r.schedule.peak_memory[1] == 30);
}

TEST_CASE("m-ETF failure is an answer naming the vertex, its need and each device's free memory") {
  const auto g = diamond(10);
  const auto c = two_devices(12, 15);
  const graph_model model(g, c);
  const auto r = m_etf(g, model, c);
  CHECK(r.placement.outcome.code == status::out_of_memory);
  CHECK_FALSE(r.ok());
  const auto& text = r.placement.outcome.message;
  INFO(text);
  // a on gpu0 (2 left), b on gpu1 (5 left): c fits nowhere.
  CHECK(text.find("m-ETF") != std::string::npos);
  CHECK(text.find("vertex 'c'") != std::string::npos);
  CHECK(text.find("needs 10 B") != std::string::npos);
  CHECK(text.find("gpu0 needs 10 B, has 2 B") != std::string::npos);
  CHECK(text.find("gpu1 needs 10 B, has 5 B") != std::string::npos);
  CHECK(text.find("closed") == std::string::npos);  // m-ETF closes no device
  CHECK(r.placement.device == std::vector<device_id>{0, 1, no_device, no_device});
  CHECK(r.schedule.start.empty());
  // Same input, same output.
  CHECK(m_etf(g, model, c).placement.outcome.message == text);
}

TEST_CASE("colocation: the first placed member takes its group; devices that cannot hold it are skipped") {
  SUBCASE("a and d share a device") {
    const auto g = diamond();
    const auto c = two_devices(unlimited_memory, unlimited_memory);
    const graph_model model(g, c);
    const auto r = etf(g, model, c, {.group = {7, no_group, no_group, 7}});
    require_valid(r, g, model, c);
    // d must follow a to gpu0: inputs there at max(2, 2.5 + 0.5) = 3.
    CHECK(r.placement.device == std::vector<device_id>{0, 0, 1, 0});
    CHECK(r.schedule.start[3] == 3);
  }
  SUBCASE("a group too big for the earliest device goes to the next") {
    const auto g = diamond(10);
    const auto c = two_devices(25, 100);
    const graph_model model(g, c);
    // b and c together need 20 bytes; gpu0 has 15 left after a.
    const auto r = m_etf(g, model, c, {.group = {no_group, 1, 1, no_group}});
    require_valid(r, g, model, c);
    CHECK(r.placement.device[1] == 1);
    CHECK(r.placement.device[2] == 1);
    CHECK(r.schedule.start[1] == 1.5);
    CHECK(r.schedule.start[2] == 2.5);
  }
  SUBCASE("groups from a gantry::graph") {
    auto g = diamond();
    g[0].group = "weights";
    g[3].group = "weights";
    const auto groups = colocation_groups(g);
    CHECK(groups == std::vector<std::uint32_t>{0, no_group, no_group, 0});
    const auto c = two_devices(unlimited_memory, unlimited_memory);
    const graph_model model(g, c);
    CHECK(etf(g, model, c, {.group = groups}).placement.device == std::vector<device_id>{0, 0, 1, 0});
  }
}

TEST_CASE("co-placement: a vertex whose output has one consumer joins it (Baechi Fig. 3)") {
  // op_in -> transpose <- perm; transpose -> reshape <- shape; reshape -> out_a, out_b.
  // perm and shape are cheap, their transfers dear: without co-placement ETF spreads them.
  graph g;
  const auto op_in = g.add_vertex("op_in", 1), perm = g.add_vertex("perm", 0.01), shape = g.add_vertex("shape", 0.01);
  const auto transpose = g.add_vertex("transpose", 1), reshape = g.add_vertex("reshape", 1);
  g.add_edge(op_in, transpose);
  g.add_edge(perm, transpose);
  g.add_edge(transpose, reshape);
  g.add_edge(shape, reshape);
  const auto c = cluster::uniform(3, unlimited_memory, link_model{.latency = 2});
  const graph_model model(g, c);
  const auto spread = etf(g, model, c);
  CHECK(spread.placement.device[op_in] != spread.placement.device[perm]);
  const auto groups = co_placement_groups(g, {.single_consumer = true});
  CHECK(std::all_of(groups.begin(), groups.end(), [&](auto x) { return x == groups[0]; }));
  const auto r = etf(g, model, c, {.co_place_single_consumer = true});
  require_valid(r, g, model, c);
  for (vertex_id v = 0; v < g.vertex_count(); ++v) CHECK(r.placement.device[v] == r.placement.device[op_in]);
  CHECK(r.schedule.makespan < spread.schedule.makespan);
  CHECK(r.schedule.transfers.empty());
}

namespace {
// Two forward chains f1 -> f2 -> loss and g1 -> g2 -> loss, then backward b2 -> b1 and c2 -> c1.
struct training_graph {
  graph g;
  vertex_id f1, f2, g1, g2, loss, b2, b1, c2, c1;
  training_graph() {
    f1 = g.add_vertex(vertex_properties{.name = "f1", .compute = 1, .persistent = 10});
    f2 = g.add_vertex(vertex_properties{.name = "f2", .compute = 1, .persistent = 10});
    g1 = g.add_vertex(vertex_properties{.name = "g1", .compute = 1, .persistent = 10});
    g2 = g.add_vertex(vertex_properties{.name = "g2", .compute = 1, .persistent = 10});
    loss = g.add_vertex(vertex_properties{.name = "loss", .compute = 1, .persistent = 10});
    b2 = g.add_vertex(vertex_properties{.name = "b2", .compute = 2, .persistent = 10});
    b1 = g.add_vertex(vertex_properties{.name = "b1", .compute = 2, .persistent = 10});
    c2 = g.add_vertex(vertex_properties{.name = "c2", .compute = 2, .persistent = 10});
    c1 = g.add_vertex(vertex_properties{.name = "c1", .compute = 2, .persistent = 10});
    for (const auto& [u, v] : {std::pair{f1, f2},
                               {f2, loss},
                               {g1, g2},
                               {g2, loss},
                               {loss, b2},
                               {b2, b1},
                               {loss, c2},
                               {c2, c1},
                               {f1, b1},
                               {g1, c1}})
      g.add_edge(u, v);
    g.set_forward(b2, f2);
    g.set_forward(b1, f1);
    g.set_forward(c2, g2);
    g.set_forward(c1, g1);
  }
};
}  // namespace

TEST_CASE("forward/backward pairs share a device; forward-only placement falls back when memory is short") {
  const training_graph t;
  const auto forward = forward_pairs(t.g);
  CHECK(forward[t.b1] == t.f1);
  CHECK(forward[t.f1] == no_vertex);
  const auto c = cluster::uniform(2, unlimited_memory, link_model{.latency = 0.25});
  const graph_model model(t.g, c);
  const auto pairs_on_their_forward = [&](const list_schedule_result& r) {
    for (const auto& [b, f] : {std::pair{t.b1, t.f1}, {t.b2, t.f2}, {t.c1, t.g1}, {t.c2, t.g2}})
      CHECK(r.placement.device[b] == r.placement.device[f]);
  };

  SUBCASE("co-placed pairs") {
    const auto r = etf(t.g, model, c, {.forward_of = forward, .co_place_forward_backward = true});
    require_valid(r, t.g, model, c);
    pairs_on_their_forward(r);
    CHECK_FALSE(r.forward_only);
  }
  SUBCASE("forward-only: the two forward chains go to the two devices, backward vertices follow") {
    const auto r = etf(t.g, model, c, {.forward_of = forward, .forward_only = true});
    require_valid(r, t.g, model, c);
    CHECK(r.forward_only);
    pairs_on_their_forward(r);
    CHECK(r.placement.device[t.f1] != r.placement.device[t.g1]);
    // Every forward vertex is placed before any backward vertex.
    list_scheduler s(t.g, model, c, etf_policy{}, {.forward_of = forward, .forward_only = true});
    std::size_t forward_seen = 0;
    while (s.step()) {
      if (forward[s.last_placed()] == no_vertex) ++forward_seen;
      else CHECK(forward_seen == 5);
    }
  }
  SUBCASE("memory short: no device holds the graph, so every vertex is placed with pairs co-placed") {
    const auto small = cluster::uniform(2, 60, link_model{.latency = 0.25});
    const graph_model small_model(t.g, small);
    const auto r = m_etf(t.g, small_model, small, {.forward_of = forward, .forward_only = true});
    require_valid(r, t.g, small_model, small);
    CHECK_FALSE(r.forward_only);
    pairs_on_their_forward(r);
    const auto roomy = cluster::uniform(2, 90, link_model{.latency = 0.25});
    const graph_model roomy_model(t.g, roomy);
    CHECK(m_etf(t.g, roomy_model, roomy, {.forward_of = forward, .forward_only = true}).forward_only);
  }
}

TEST_CASE("sequential communication: transfers queue per device and the wait delays the start (Baechi §3.4)") {
  // x on gpu0 and y on gpu1 (1 s each), then z on gpu2 needs both; every transfer takes 1 s.
  graph g;
  const auto x = g.add_vertex("x", 1), y = g.add_vertex("y", 1), z = g.add_vertex("z", 1);
  g.add_edge(x, z);
  g.add_edge(y, z);
  const std::vector<device_id> fixed{0, 1, 2};
  for (const auto& [comm, expected] :
       {std::pair{comm_mode::parallel, 2.0}, {comm_mode::sequential, 3.0}, {comm_mode::duplex, 3.0}}) {
    const auto c = cluster::uniform(3, unlimited_memory, link_model{.latency = 1}, comm);
    const graph_model model(g, c);
    const auto r = etf(g, model, c, {.fixed_device = fixed});
    require_valid(r, g, model, c);
    CHECK(r.schedule.start[z] == expected);
  }
  // Duplex lets gpu0 send while it receives: a on gpu0 feeds c on gpu1, b on gpu1 feeds d on gpu0.
  graph h;
  const auto a = h.add_vertex("a", 1), b = h.add_vertex("b", 1), cc = h.add_vertex("c", 1), d = h.add_vertex("d", 1);
  h.add_edge(a, cc);
  h.add_edge(b, d);
  for (const auto& [comm, expected] : {std::pair{comm_mode::sequential, 4.0}, {comm_mode::duplex, 3.0}}) {
    const auto c = cluster::uniform(2, unlimited_memory, link_model{.latency = 1}, comm);
    const graph_model model(h, c);
    const auto r = etf(h, model, c, {.fixed_device = {0, 1, 1, 0}});
    require_valid(r, h, model, c);
    CHECK(r.schedule.makespan == expected);
  }
  // The cluster's mode is the only one: the engine, the simulator and validate() all read it.
  const auto c = cluster::uniform(3, unlimited_memory, link_model{.latency = 1}, comm_mode::sequential);
  const graph_model model(g, c);
  CHECK(etf(g, model, c, {.fixed_device = fixed}).schedule.start[z] == 3);
}

TEST_CASE("received tensors are cached per device") {
  // a on gpu0 feeds b and c on gpu1: one transfer with caching, two without.
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 1), c = g.add_vertex("c", 1);
  g.add_edge(a, b, 100);
  g.add_edge(a, c, 100);
  const auto devices = cluster::uniform(2, unlimited_memory, link_model{.latency = 1}, comm_mode::sequential);
  const graph_model model(g, devices);
  const std::vector<device_id> fixed{0, 1, 1};
  const auto cached = etf(g, model, devices, {.fixed_device = fixed});
  require_valid(cached, g, model, devices);
  CHECK(cached.schedule.transfers.size() == 1);
  CHECK(cached.schedule.makespan == 4);  // a [0,1], transfer [1,2], b [2,3], c [3,4]
  const auto uncached = etf(g, model, devices, {.cache_transfers = false, .fixed_device = fixed});
  require_valid(uncached, g, model, devices);
  CHECK(uncached.schedule.transfers.size() == 2);
  CHECK(uncached.schedule.bytes_moved == 200);
}

namespace {
// The optimal makespan without communication, by brute force: every device assignment, and for
// each every topological order scheduled serially (start = max(device free, inputs done)), which
// reaches every active schedule and hence an optimal one.
seconds brute_force_optimum(const csr_graph& g, const std::vector<seconds>& time, std::size_t m) {
  const std::size_t n = g.vertex_count();
  std::vector<vertex_id> order(n);
  std::iota(order.begin(), order.end(), vertex_id{0});
  std::vector<std::size_t> position(n);
  std::vector<std::vector<vertex_id>> topo_orders;
  do {
    for (std::size_t i = 0; i < n; ++i) position[order[i]] = i;
    bool ok = true;
    for (edge_id e = 0; e < g.edge_count() && ok; ++e) ok = position[g.source(e)] < position[g.target(e)];
    if (ok) topo_orders.push_back(order);
  } while (std::next_permutation(order.begin(), order.end()));
  seconds best = std::numeric_limits<seconds>::infinity();
  std::vector<device_id> assign(n, 0);
  std::vector<seconds> finish(n), free(m);
  for (;;) {
    for (const auto& topo : topo_orders) {
      std::fill(free.begin(), free.end(), 0.0);
      seconds makespan = 0;
      for (const vertex_id v : topo) {
        seconds start = free[assign[v]];
        for (const vertex_id u : g.predecessors(v)) start = std::max(start, finish[u]);
        finish[v] = start + time[v];
        free[assign[v]] = finish[v];
        makespan = std::max(makespan, finish[v]);
      }
      best = std::min(best, makespan);
    }
    std::size_t i = 0;
    while (i < n && ++assign[i] == m) assign[i++] = 0;
    if (i == n) break;
  }
  return best;
}
}  // namespace

TEST_CASE("without communication ETF stays within Graham's (2 - 1/m) bound of the optimum") {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = 3 + rng() % 4, m = 2 + rng() % 2;
    graph g;
    std::vector<seconds> time;
    for (std::size_t v = 0; v < n; ++v) {
      time.push_back(static_cast<seconds>(1 + rng() % 9));
      g.add_vertex("v" + std::to_string(v), time.back());
    }
    for (vertex_id u = 0; u < n; ++u)
      for (vertex_id v = u + 1; v < n; ++v)
        if (rng() % 3 == 0) g.add_edge(u, v);
    const auto c = cluster::uniform(m);
    const graph_model model(g, c);
    const auto r = etf(g, model, c);
    require_valid(r, g, model, c);
    const seconds optimum = brute_force_optimum(snapshot(g), time, m);
    CAPTURE(trial);
    CHECK(r.schedule.makespan >= optimum);
    CHECK(r.schedule.makespan <= (2.0 - 1.0 / static_cast<double>(m)) * optimum + 1e-9);
  }
}
