// The list-scheduling engine's policy hook: hand-worked cases for per-edge transfers, ETF's
// tie-break and its lazy keys with channels, CPOP and PEFT on known examples, and a policy written
// outside the library.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <array>
#include <limits>
#include <span>
#include <tuple>

using namespace gantry;

namespace {

// ETF written the slow, obvious way: every step, every ready vertex on every device.
struct naive_etf {
  std::vector<seconds> level;  // static level, as etf_policy computes it
  template <class View>
  void start(const View& view) {
    const auto& g = view.graph();
    std::vector<vertex_id> order(view.vertex_count());
    for (vertex_id v = 0; v < order.size(); ++v) order[view.kahn_rank(v)] = v;
    level.assign(order.size(), 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      seconds tail = 0;
      for (const vertex_id s : g.successors(*it)) tail = std::max(tail, level[s]);
      level[*it] = mean_compute_time(view.model(), *it, view.device_count()) + tail;
    }
  }
  template <class View>
  std::optional<list_choice> choose(const View& view) {
    std::optional<std::tuple<seconds, seconds, std::uint32_t, device_id, vertex_id>> best;
    for (const vertex_id v : view.ready())
      for (device_id d = 0; d < view.device_count(); ++d) {
        if (!view.allowed(v, d) || !view.fits(v, d)) continue;
        const auto key = std::tuple(view.earliest_start(v, d), -level[v], view.kahn_rank(v), d, v);
        if (!best || key < *best) best = key;
      }
    if (!best) return std::nullopt;
    return list_choice{std::get<4>(*best), std::get<3>(*best)};
  }
};

// A policy as a user would write one: vertices in Kahn order, device = vertex id modulo m.
struct round_robin {
  [[nodiscard]] std::string_view name() const { return "round robin"; }
  template <class View>
  std::optional<list_choice> choose(const View& view) {
    const auto ready = view.ready();
    if (ready.empty()) return std::nullopt;
    const vertex_id v = *std::min_element(
        ready.begin(), ready.end(), [&](vertex_id a, vertex_id b) { return view.kahn_rank(a) < view.kahn_rank(b); });
    return list_choice{v, static_cast<device_id>(v % view.device_count())};
  }
};

template <class Result, class Model>
void require_valid(const Result& r, const graph& g, const Model& model, const cluster& c) {
  REQUIRE_MESSAGE(r.ok(), r.placement.outcome.message);
  const auto report = validate(r.schedule, g, model, c);
  REQUIRE_MESSAGE(report.ok(), report.to_string());
}

}  // namespace

TEST_CASE("each copy takes its own edge's time: 8 bytes do not wait for 80") {
  // u (1 s) on d0 sends 8 B to a and 80 B to b, both fixed to d1; links move 8 B/s.
  graph g;
  const auto u = g.add_vertex("u", 1), a = g.add_vertex("a", 1), b = g.add_vertex("b", 1);
  g.add_edge(u, a, 8);
  g.add_edge(u, b, 80);
  const auto c = cluster::uniform(2, unlimited_memory, link_model{.latency = 0, .bandwidth = 8});
  const graph_model model(g, c);
  const auto r = etf(g, model, c, {.fixed_device = {0, 1, 1}});
  require_valid(r, g, model, c);
  CHECK(r.schedule.start[a] == 2);   // 1 s of u, 1 s for 8 B
  CHECK(r.schedule.start[b] == 11);  // 1 s of u, 10 s for 80 B
  CHECK(r.schedule.bytes_moved == 88);
  REQUIRE(r.schedule.transfers.size() == 2);
  // The simulator replays the same copies at the same times.
  const auto sim = simulate(g, model, c, std::span<const device_id>(r.placement.device),
                            {.policy = ready_policy::strict_order, .priority = r.placement.order});
  REQUIRE(sim.ok());
  CHECK(sim.schedule.start == r.schedule.start);
  CHECK(sim.schedule.bytes_moved == 88);
  // Edges of one size carry one tensor: a second 8 B consumer on d1 uses a's copy.
  const auto a2 = g.add_vertex("a2", 1);
  g.add_edge(u, a2, 8);
  const graph_model model2(g, c);
  const auto r2 = etf(g, model2, c, {.fixed_device = {0, 1, 1, 1}});
  require_valid(r2, g, model2, c);
  CHECK(r2.schedule.transfers.size() == 2);
  CHECK(r2.schedule.bytes_moved == 88);
}

TEST_CASE("ETF = a naive ETF that recomputes every start time, in every communication mode") {
  std::size_t cases = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    const comm_mode comm = std::array{comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}[seed % 3];
    auto g = random_layered_dag({.vertices = 12 + seed % 20,
                                 .layers = 4 + seed % 4,
                                 .mean_out_degree = 2.0,
                                 .min_compute = 1,
                                 .max_compute = 4,
                                 .min_bytes = 1,
                                 .max_bytes = 4,
                                 .seed = seed});
    // Integer times keep ties real, so the tie-break is tested too.
    for (vertex_id v = 0; v < g.vertex_count(); ++v) g[v].compute = std::round(g[v].compute);
    const auto c = cluster::uniform(2 + seed % 3, unlimited_memory, link_model{.latency = 1, .bandwidth = 1}, comm);
    const graph_model model(g, c);
    const std::string mode = to_string(comm);
    CAPTURE(seed);
    CAPTURE(mode);
    for (const bool cache : {true, false}) {
      const auto fast = etf(g, model, c, {.cache_transfers = cache});
      const auto slow = list_schedule(g, model, c, naive_etf{}, {.cache_transfers = cache});
      require_valid(fast, g, model, c);
      require_valid(slow, g, model, c);
      CHECK(fast.schedule.start == slow.schedule.start);
      CHECK(fast.placement.device == slow.placement.device);
      ++cases;
    }
  }
  CHECK(cases == 300);
}

TEST_CASE("duplex channels: ETF takes the truly earliest pair, not one behind a stale key") {
  // Nine vertices on three devices with one send and one receive channel each; a transfer of b
  // bytes takes 1 + b s. The last vertex, v7, needs v0, v1, v3, v4 and v5 (v5's 2-byte tensor on
  // three edges). Its keys were computed before the channels got busy; an engine that trusts them
  // puts v7 on d0 at 14 (makespan 16), while d2 can start it at 13: makespan 15.
  graph g;
  const std::array<seconds, 9> compute{3, 4, 2, 2, 4, 1, 3, 2, 2};
  for (vertex_id v = 0; v < 9; ++v) g.add_vertex("v" + std::to_string(v), compute[v]);
  const std::array<std::array<int, 3>, 17> edges{{{0, 4, 1},
                                                  {0, 7, 1},
                                                  {0, 6, 1},
                                                  {1, 4, 1},
                                                  {1, 7, 1},
                                                  {1, 8, 1},
                                                  {2, 3, 1},
                                                  {2, 6, 1},
                                                  {3, 7, 3},
                                                  {3, 8, 3},
                                                  {4, 6, 1},
                                                  {4, 6, 1},
                                                  {4, 7, 1},
                                                  {5, 7, 2},
                                                  {5, 7, 2},
                                                  {5, 7, 2},
                                                  {0, 5, 1}}};
  for (const auto& [u, v, bytes] : edges)
    g.add_edge(static_cast<vertex_id>(u), static_cast<vertex_id>(v), static_cast<byte_count>(bytes));
  const auto c = cluster::uniform(3, unlimited_memory, link_model{.latency = 1, .bandwidth = 1}, comm_mode::duplex);
  const graph_model model(g, c);
  const auto r = etf(g, model, c, {}, etf_tie_break::kahn_order);
  require_valid(r, g, model, c);
  CHECK(r.placement.device[7] == 2);
  CHECK(r.schedule.start[7] == 13);
  CHECK(r.schedule.makespan == 15);
  // The default tie-break (static level) agrees with the naive ETF here too.
  CHECK(etf(g, model, c).schedule.start == list_schedule(g, model, c, naive_etf{}).schedule.start);
}

TEST_CASE("ETF's tie-break: equal start times go to the larger static level") {
  // a and b can both start at 0 on the one device; b heads a 10 s chain, a is alone.
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 1), tail = g.add_vertex("tail", 10);
  g.add_edge(b, tail);
  const auto c = cluster::uniform(1);
  const graph_model model(g, c);
  const auto by_level = etf(g, model, c);
  CHECK(by_level.schedule.start[b] == 0);
  CHECK(by_level.schedule.start[tail] == 1);  // ready at 1 with a, and its level 10 beats a's 1
  CHECK(by_level.schedule.start[a] == 11);
  const auto by_kahn = etf(g, model, c, {}, etf_tie_break::kahn_order);
  CHECK(by_kahn.schedule.start[a] == 0);
  CHECK(by_kahn.schedule.start[b] == 1);
}

namespace {
// A worked example of the papers: 10 tasks, a cost per task on each of 3 processors p1..p2..p3
// (device kinds, so costs differ per device) and edges whose bytes are their transfer times (one
// byte per second, no latency). Vertices n1..n10 are ids 0..9.
struct paper_example {
  graph g;
  cluster devices;
  paper_example(const std::array<std::array<double, 3>, 10>& cost, std::span<const std::array<int, 3>> edges) {
    std::vector<device> d(3);
    for (int i = 0; i < 3; ++i) d[i] = {.name = "p" + std::to_string(i + 1), .kind = "p" + std::to_string(i + 1)};
    devices = cluster(std::move(d), link_model{.latency = 0, .bandwidth = 1});
    for (int v = 0; v < 10; ++v) {
      const auto id = g.add_vertex("n" + std::to_string(v + 1), cost[v][0]);
      for (int p = 0; p < 3; ++p) g.set_compute(id, "p" + std::to_string(p + 1), cost[v][p]);
    }
    for (const auto& [u, v, bytes] : edges)
      g.add_edge(static_cast<vertex_id>(u - 1), static_cast<vertex_id>(v - 1), static_cast<byte_count>(bytes));
  }
};

// Topcuoglu, Hariri & Wu (IEEE TPDS 2002, Fig. 2), as shipped in examples/graphs/topcuoglu.json.
struct topcuoglu : paper_example {
  static constexpr std::array<std::array<double, 3>, 10> cost{{{14, 16, 9},
                                                               {13, 19, 18},
                                                               {11, 13, 19},
                                                               {13, 8, 17},
                                                               {12, 13, 10},
                                                               {13, 16, 9},
                                                               {7, 15, 11},
                                                               {5, 11, 14},
                                                               {18, 12, 20},
                                                               {21, 7, 16}}};
  static constexpr std::array<std::array<int, 3>, 15> edges{{{1, 2, 18},
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
  topcuoglu() : paper_example(cost, edges) {}
};

// Arabnejad & Barbosa (IEEE TPDS 2014, the example DAG of §4 with its computation costs).
struct arabnejad : paper_example {
  static constexpr std::array<std::array<double, 3>, 10> cost{{{22, 21, 36},
                                                               {22, 18, 18},
                                                               {32, 27, 43},
                                                               {7, 10, 4},
                                                               {29, 27, 35},
                                                               {26, 17, 24},
                                                               {14, 25, 30},
                                                               {29, 23, 36},
                                                               {15, 21, 8},
                                                               {13, 16, 33}}};
  static constexpr std::array<std::array<int, 3>, 15> edges{{{1, 2, 17},
                                                             {1, 3, 31},
                                                             {1, 4, 29},
                                                             {1, 5, 13},
                                                             {1, 6, 7},
                                                             {2, 8, 3},
                                                             {2, 9, 30},
                                                             {3, 7, 16},
                                                             {4, 8, 11},
                                                             {4, 9, 7},
                                                             {5, 9, 57},
                                                             {6, 8, 5},
                                                             {7, 10, 9},
                                                             {8, 10, 42},
                                                             {9, 10, 7}}};
  arabnejad() : paper_example(cost, edges) {}
};
}  // namespace

TEST_CASE("CPOP on Topcuoglu et al.'s example: critical path n1-n2-n9-n10 on p2, makespan 86") {
  const topcuoglu ex;
  const graph_model model(ex.g, ex.devices);
  list_scheduler s(ex.g, model, ex.devices, cpop_policy{});
  const auto r = s.run();
  require_valid(r, ex.g, model, ex.devices);
  const auto& policy = s.policy();
  std::vector<vertex_id> path;
  for (vertex_id v = 0; v < 10; ++v)
    if (policy.rule().on_critical_path(v)) path.push_back(v);
  CHECK(path == std::vector<vertex_id>{0, 1, 8, 9});
  CHECK(policy.rule().path_device == 1);  // p2: 16 + 19 + 12 + 7 = 54, the least
  CHECK(policy.priority(0) == doctest::Approx(108));
  for (const vertex_id v : path) CHECK(r.placement.device[v] == 1);
  CHECK(r.schedule.makespan == doctest::Approx(86));
  // HEFT on the same files: the paper's 80.
  const auto h = heft(ex.g, model, ex.devices);
  CHECK(h.schedule.makespan == doctest::Approx(80));
}

TEST_CASE("CPOP's critical path is one path: parallel critical paths do not share a device") {
  // entry -> a (5 s), b (5 s) -> exit on two identical devices: every vertex has the largest
  // priority, but only entry, a and exit are the critical path; b goes where it finishes first.
  graph g;
  const auto entry = g.add_vertex("entry", 0), a = g.add_vertex("a", 5), b = g.add_vertex("b", 5),
             exit = g.add_vertex("exit", 0);
  g.add_edge(entry, a);
  g.add_edge(entry, b);
  g.add_edge(a, exit);
  g.add_edge(b, exit);
  const auto c = cluster::uniform(2);
  const graph_model model(g, c);
  list_scheduler s(g, model, c, cpop_policy{});
  const auto r = s.run();
  require_valid(r, g, model, c);
  CHECK(s.policy().rule().on_critical_path(a));
  CHECK_FALSE(s.policy().rule().on_critical_path(b));
  CHECK(r.placement.device[a] != r.placement.device[b]);
  CHECK(r.schedule.makespan == 5);
}

TEST_CASE("CPOP walks the critical path along edges of a longest path") {
  // Entries a (1 s), b (10 s), z (0 s); a -> x (10 s) <- z; a -> s (1 s) <- b. Paths a-x and b-s
  // take 11 s, so a, b, x and s all have the largest priority, and s comes before x in Kahn order;
  // but the edge a -> s lies on no longest path (s starts at 10, not 1): the path is a, x.
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 10), z = g.add_vertex("z", 0), x = g.add_vertex("x", 10),
             s = g.add_vertex("s", 1);
  g.add_edge(a, x);
  g.add_edge(z, x);
  g.add_edge(a, s);
  g.add_edge(b, s);
  const auto c = cluster::uniform(2);
  const graph_model model(g, c);
  list_scheduler run(g, model, c, cpop_policy{});
  const auto r = run.run();
  require_valid(r, g, model, c);
  CHECK(run.kahn_rank(s) < run.kahn_rank(x));
  const auto& rule = run.policy().rule();
  for (const vertex_id v : {a, b, x, s}) CHECK(run.policy().priority(v) == 11);
  CHECK(rule.on_critical_path(a));
  CHECK(rule.on_critical_path(x));
  CHECK_FALSE(rule.on_critical_path(s));
  CHECK_FALSE(rule.on_critical_path(b));
  CHECK(r.placement.device[x] == rule.path_device);
}

TEST_CASE("PEFT's optimistic cost table, worked by hand") {
  // a -> b; b takes 1 s on d0 and 3 s on d1 (d1 is a third as fast); the edge takes 2 s across.
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 1);
  g.add_edge(a, b, 2);
  std::vector<device> d(2);
  d[0].name = "d0";
  d[1].name = "d1";
  d[1].speed = 1.0 / 3.0;
  const cluster c(std::move(d), link_model{.latency = 0, .bandwidth = 1});
  const graph_model model(g, c);
  const std::vector<vertex_id> order{a, b};
  const auto oct = optimistic_cost_table(snapshot(g), order, model, 2);
  // OCT(b, *) = 0 (an exit). OCT(a, d0) = min(0 + 1 + 0, 0 + 3 + 2) = 1; OCT(a, d1) = min(0 + 1 + 2, 0 + 3 + 0) = 3.
  CHECK(oct[b * 2 + 0] == 0);
  CHECK(oct[b * 2 + 1] == 0);
  CHECK(oct[a * 2 + 0] == doctest::Approx(1));
  CHECK(oct[a * 2 + 1] == doctest::Approx(3));
  list_scheduler s(g, model, c, peft_policy{});
  const auto r = s.run();
  require_valid(r, g, model, c);
  CHECK(s.policy().priority(a) == doctest::Approx(2));
  // a: eft + OCT is 1 + 1 on d0 and 3 + 3 on d1; b follows on d0.
  CHECK(r.placement.device == std::vector<device_id>{0, 0});
  CHECK(r.schedule.makespan == doctest::Approx(2));

  const topcuoglu ex;
  const graph_model tm(ex.g, ex.devices);
  const auto p = peft(ex.g, tm, ex.devices);
  require_valid(p, ex.g, tm, ex.devices);
  CHECK(p.schedule.makespan <= 86);
}

TEST_CASE("PEFT on Arabnejad & Barbosa's example: their optimistic cost table and makespan 122") {
  const arabnejad ex;
  const graph_model model(ex.g, ex.devices);
  std::vector<vertex_id> order(10);
  for (vertex_id v = 0; v < 10; ++v) order[v] = v;  // ids are a topological order
  const auto oct = optimistic_cost_table(snapshot(ex.g), order, model, 3);
  // The paper's OCT table, one row per task, one column per processor.
  const std::array<std::array<double, 3>, 10> expected{{{64, 68, 86},
                                                        {42, 39, 42},
                                                        {27, 41, 43},
                                                        {42, 39, 50},
                                                        {28, 37, 28},
                                                        {42, 39, 44},
                                                        {13, 16, 22},
                                                        {13, 16, 33},
                                                        {13, 16, 20},
                                                        {0, 0, 0}}};
  for (vertex_id v = 0; v < 10; ++v)
    for (device_id d = 0; d < 3; ++d) {
      CAPTURE(v);
      CAPTURE(d);
      CHECK(oct[v * 3 + d] == doctest::Approx(expected[v][d]));
    }
  list_scheduler s(ex.g, model, ex.devices, peft_policy{});
  const auto r = s.run();
  require_valid(r, ex.g, model, ex.devices);
  CHECK(s.policy().priority(0) == doctest::Approx((64.0 + 68 + 86) / 3));  // rank_oct, the mean of the row
  // The paper's schedule: n1 n4 n2 n3 n7 on p1, n6 n8 n10 on p2, n5 n9 on p3; 122 in all.
  CHECK(r.placement.device == std::vector<device_id>{0, 0, 0, 0, 2, 1, 0, 1, 2, 1});
  CHECK(r.schedule.start == std::vector<seconds>{0, 29, 51, 22, 35, 29, 83, 54, 81, 106});
  CHECK(r.schedule.makespan == doctest::Approx(122));
}

TEST_CASE("a policy written outside the library runs on the engine") {
  const auto g = random_layered_dag({.vertices = 40, .layers = 6, .seed = 11});
  const auto c = cluster::uniform(3, unlimited_memory, link_model{.latency = 1e-4, .bandwidth = 1e9});
  const graph_model model(g, c);
  list_scheduler s(g, model, c, round_robin{});
  CHECK(s.name() == "round robin");
  const auto r = s.run();
  require_valid(r, g, model, c);
  for (vertex_id v = 0; v < g.vertex_count(); ++v) CHECK(r.placement.device[v] == v % 3);
  // The engine's own schedule is what the simulator replays in parallel mode.
  const auto sim = simulate(g, model, c, std::span<const device_id>(r.placement.device),
                            {.policy = ready_policy::strict_order, .priority = r.placement.order});
  REQUIRE(sim.ok());
  CHECK(sim.schedule.start == r.schedule.start);
}

TEST_CASE("excluded devices take no new vertices; best effort places what fits nowhere and says so") {
  // a -> b -> c, 10 persistent bytes each, on two devices of 15 bytes.
  graph g;
  for (const char* name : {"a", "b", "c"})
    g.add_vertex(vertex_properties{.name = name, .compute = 1, .persistent = 10});
  g.add_edge(0, 1, 1);
  g.add_edge(1, 2, 1);
  const auto c = cluster::uniform(2, 15);
  const graph_model model(g, c);
  const auto failed = m_etf(g, model, c);
  CHECK(failed.placement.outcome.code == status::out_of_memory);
  CHECK(failed.placement.outcome.vertex == 2);   // c: 10 bytes, 5 free on either device
  CHECK(failed.placement.outcome.needed == 11);  // with b's 1-byte tensor when it crosses
  CHECK(failed.placement.outcome.available == 5);

  list_scheduler s(g, model, c, etf_policy("m-ETF"), {.respect_memory = true, .best_effort = true});
  const auto r = s.run();
  CHECK(r.placement.outcome.code == status::over_capacity);
  CHECK(s.failed_vertex() == 2);
  CHECK(r.placement.outcome.vertex == 2);
  CHECK(r.placement.outcome.device != no_device);  // where it went
  CHECK(r.placement.outcome.message.find("placed best effort") != std::string::npos);
  REQUIRE(r.schedule.start.size() == 3);  // complete, so the overflow can be seen
  const auto report = validate(r.schedule, g, model, c);
  CHECK(report.count(violation_kind::memory) == 1);
  CHECK(report.violations.size() == 1);

  list_scheduler x(g, model, c, etf_policy{});
  x.exclude(0);
  CHECK(x.excluded(0));
  CHECK_FALSE(x.allowed(0, 0));
  CHECK_THROWS_AS(x.exclude(5), invalid_input);
  const auto placed = x.run();
  REQUIRE(placed.ok());
  for (const device_id d : placed.placement.device) CHECK(d == 1);
}

TEST_CASE("a colocation group is placed as a unit: a layer's weight does not drag the layer away") {
  // x1 -> x2 -> x3 -> x4, 10 ms each, 100 MB between them; each x_i is grouped with its 4 KiB weight
  // w_i -> x_i (no compute). On 4 devices (134 us + 5.7 GB/s) each weight, ready at 0, used to bind
  // its group to an idle device: 93.0 ms with Critical Path, 57.7 ms with ETF, where one device
  // takes 40.0 ms. Now each weight waits until its layer's other input is placed, and its group
  // goes where the group can run.
  graph g;
  for (int i = 1; i <= 4; ++i) {
    const std::string layer = "L" + std::to_string(i);
    g.add_vertex(vertex_properties{
        .name = "w" + std::to_string(i), .compute = 0, .persistent = 4096, .output = 4096, .group = layer});
    g.add_vertex(
        vertex_properties{.name = "x" + std::to_string(i), .compute = 0.010, .output = 100'000'000, .group = layer});
    const auto x = static_cast<vertex_id>(2 * i - 1);
    g.add_edge(x - 1, x, 4096);
    if (i > 1) g.add_edge(x - 2, x, 100'000'000);
  }
  for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential}) {
    const auto c = cluster::uniform(4, 1'000'000'000, link_model{.latency = 134e-6, .bandwidth = 5.7e9}, comm);
    const graph_model model(g, c);
    const auto groups = colocation_groups(g);
    for (const bool memory : {false, true}) {
      const list_options o{.respect_memory = memory, .group = groups};
      for (const auto& r : {etf(g, model, c, o), critical_path_schedule(g, model, c, o), heft(g, model, c, o),
                            cpop(g, model, c, o), peft(g, model, c, o)}) {
        require_valid(r, g, model, c);
        CHECK(r.schedule.makespan == doctest::Approx(0.040));
        CHECK(r.schedule.bytes_moved == 0);
      }
    }
  }
}

TEST_CASE("dynamic memory reserves a group's members from its first member on") {
  // Group {a, b}: a (output 6) feeds b (output 6, temporary 4) and c (output 8), which feeds e.
  // Devices of 16 bytes; links take 100 s, so everything would rather stay on d0. At time 1 both b
  // and c are ready there and c's path is longer, so ETF alone would run c first (6 + 8 = 14 bytes);
  // but a's group holds 6 + 10 bytes from a's start, so c waits for b: b runs at 1, c at 2.
  graph g;
  const auto a = g.add_vertex(vertex_properties{.name = "a", .compute = 1, .output = 6, .group = "ab"});
  const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 1, .output = 6, .temporary = 4, .group = "ab"});
  const auto cc = g.add_vertex(vertex_properties{.name = "c", .compute = 1, .output = 8});
  const auto e = g.add_vertex(vertex_properties{.name = "e", .compute = 5});
  g.add_edge(a, b, 6);
  g.add_edge(a, cc, 6);
  g.add_edge(cc, e, 8);
  const auto c = cluster::uniform(2, 16, link_model{.latency = 100});
  const graph_model model(g, c);
  const auto r = m_etf(g, model, c, {.group = colocation_groups(g)});
  require_valid(r, g, model, c);
  CHECK(r.placement.device == std::vector<device_id>{0, 0, 0, 0});
  CHECK(r.schedule.start[b] == 1);
  CHECK(r.schedule.start[cc] == 2);
  CHECK(r.schedule.makespan == 8);
}

TEST_CASE("a zero-length vertex holds nothing for itself: engine, simulator and rules agree") {
  // u (1 s, output 8 B) -> v (0 s, output 4 B) -> w (1 s), one device of 8 B. By the rules u's
  // output is freed when v finishes, at 1, before v's output is taken at 1: 8 B at most. The
  // simulator used to take v's output first (12 B) and run out of memory.
  graph g;
  const auto u = g.add_vertex(vertex_properties{.name = "u", .compute = 1, .output = 8});
  const auto v = g.add_vertex(vertex_properties{.name = "v", .compute = 0, .output = 4});
  const auto w = g.add_vertex(vertex_properties{.name = "w", .compute = 1});
  g.add_edge(u, v, 8);
  g.add_edge(v, w, 4);
  const auto c = cluster::uniform(1, 8);
  const graph_model model(g, c);
  const auto r = m_etf(g, model, c);
  require_valid(r, g, model, c);
  CHECK(r.schedule.peak_memory[0] == 8);
  const auto sim =
      simulate(g, model, c, std::span<const device_id>(r.placement.device), {.priority = r.placement.order});
  REQUIRE_MESSAGE(sim.ok(), sim.outcome.message);
  CHECK(sim.schedule.peak_memory[0] == 8);
  CHECK(sim.schedule.start == r.schedule.start);
}

namespace hook_names {
// Policies as a user might write them: hooks spelt right, a misspelt one, one with a wrong
// signature, and a data member named like a hook.
struct spelt_right {
  template <class View>
  void start(const View&) {}
  template <class View>
  void on_ready(const View&, vertex_id) {}
  template <class View>
  void on_placed(const View&, vertex_id, device_id) {}
  template <class View>
  std::optional<list_choice> choose(const View&) {
    return std::nullopt;
  }
};
struct misspelt : spelt_right {
  template <class View>
  void on_place(const View&, vertex_id, device_id) {}
};
struct wrong_arity {
  template <class View>
  void on_placed(const View&, vertex_id) {}
  template <class View>
  std::optional<list_choice> choose(const View&) {
    return std::nullopt;
  }
};
struct start_is_a_time {
 private:
  seconds start = 0;  // a private data member named like the hook: not a hook

 public:
  template <class View>
  std::optional<list_choice> choose(const View&) {
    return std::nullopt;
  }
};
// Counts the calls of on_placed; places every ready vertex on device 0.
struct counting : spelt_right {
  int placed = 0;
  template <class View>
  void on_placed(const View&, vertex_id, device_id) {
    ++placed;
  }
  template <class View>
  std::optional<list_choice> choose(const View& view) {
    for (vertex_id v = 0; v < view.vertex_count(); ++v)
      if (view.is_ready(v)) return list_choice{v, 0};
    return std::nullopt;
  }
};
using engine = list_scheduler<graph, graph_model, cluster, spelt_right>;
template <class P>
concept on_placed_callable = requires(P& p, const engine& view, vertex_id v, device_id d) {
  p.on_placed(view, v, d);
};
}  // namespace hook_names

TEST_CASE("optional hooks are checked by name: a misspelt or miscalled hook is found at compile time") {
  using namespace hook_names;
  // Members are found whatever their kind: function templates, overload sets, data members.
  static_assert(detail::has_member_on_placed<spelt_right>() && detail::has_member_on_ready<spelt_right>());
  static_assert(!detail::has_member_on_place<spelt_right>() && !detail::has_member_on_place<start_is_a_time>());
  static_assert(detail::has_member_on_place<misspelt>());
  // What the engine asserts when it is instantiated with each policy.
  static_assert(detail::check_policy_hooks<spelt_right, engine>());
  static_assert(detail::check_policy_hooks<start_is_a_time, engine>());  // a time, not a hook
  // wrong_arity has on_placed but not callable as the hook: check_policy_hooks would fail on it
  // (tests/compile_fail/ checks the message).
  static_assert(detail::has_member_on_placed<wrong_arity>() && !on_placed_callable<wrong_arity>);
  // The right ones run: on a 2-vertex chain the engine calls on_placed once per vertex.
  graph g;
  g.add_edge(g.add_vertex("a", 1.0), g.add_vertex("b", 1.0));
  const auto c = cluster::uniform(1);
  const graph_model model(g, c);
  list_scheduler<graph, graph_model, cluster, counting> run(g, model, c, counting{});
  const auto r = run.run();
  REQUIRE(r.ok());
  CHECK(run.policy().placed == 2);
}
