// The work-conserving simulator: hand-computed makespans and memory peaks on a chain, a fork-join
// and a diamond in parallel, sequential and duplex modes with and without transfer caching;
// out-of-memory; every ready policy; strict replay; seeded stochastic runs; and validate() on every
// schedule, including a few hundred seeded random DAGs with random placements and memory limits.
#include <gantry/core/random.hpp>
#include <gantry/workloads/random_dag.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

using namespace gantry;

namespace {

using placement_t = std::vector<device_id>;

// Every link: 1 s + bytes / (100 B/s), so a 100-byte tensor takes 2 s.
cluster devices(std::size_t m, comm_mode comm, byte_count capacity = unlimited_memory) {
  return cluster::uniform(m, capacity, {.latency = 1, .bandwidth = 100}, comm);
}

// Simulates, requires success, and checks the schedule with validate(): the peaks the simulator
// tracked while running must equal the ones validate() recomputes from the finished schedule.
template <class G, class M>
schedule run_ok(const G& g, const M& model, const cluster& c, const placement_t& p, simulate_options options = {}) {
  const auto result = simulate(g, model, c, p, options);
  REQUIRE_MESSAGE(result.ok(), result.outcome.message);
  const auto report = validate(result.schedule, g, model, c, {.exact_durations = options.cv == 0});
  CHECK_MESSAGE(report.ok(), report.to_string());
  CHECK(result.schedule.peak_memory == report.peak_memory);
  return result.schedule;
}

vertex_id add(graph& g, const char* name, seconds compute, byte_count output = 100, byte_count persistent = 0,
              byte_count temporary = 0) {
  return g.add_vertex(vertex_properties{
      .name = name, .compute = compute, .persistent = persistent, .output = output, .temporary = temporary});
}

// a (1 s) -> b (2 s) -> c (3 s), 100-byte tensors; a holds 50 persistent and 10 temporary bytes,
// b 20 temporary, c 30 temporary and no output.
graph chain() {
  graph g;
  add(g, "a", 1, 100, 50, 10);
  add(g, "b", 2, 100, 0, 20);
  add(g, "c", 3, 0, 0, 30);
  g.add_edge(0, 1, 100);
  g.add_edge(1, 2, 100);
  return g;
}

//        s (1 s)
//      /   |   \          s and t on d0; x, y, z on d1
//   x (2) y (2) z (2)     every tensor 100 bytes
//      \   |   /
//        t (1 s)
graph fork_join() {
  graph g;
  add(g, "s", 1);
  add(g, "x", 2);
  add(g, "y", 2);
  add(g, "z", 2);
  add(g, "t", 1);
  for (vertex_id v = 1; v <= 3; ++v) g.add_edge(0, v, 100);
  for (vertex_id v = 1; v <= 3; ++v) g.add_edge(v, 4, 100);
  return g;
}

//       a (1 s, d0)
//      /          \            every tensor 100 bytes
//   b (2 s, d1)   c (3 s, d2)
//      \          /
//       d (1 s, d0)
graph diamond() {
  graph g;
  add(g, "a", 1);
  add(g, "b", 2);
  add(g, "c", 3);
  add(g, "d", 1);
  g.add_edge(0, 1, 100);
  g.add_edge(0, 2, 100);
  g.add_edge(1, 3, 100);
  g.add_edge(2, 3, 100);
  return g;
}

}  // namespace

TEST_CASE("chain: makespan and memory by hand, the same in every mode") {
  // a on d0, b on d1, c on d0:
  //   a [0, 1) on d0; a's output d0 -> d1 [1, 3); b [3, 5) on d1; b's output d1 -> d0 [5, 7);
  //   c [7, 10) on d0. Makespan 10. One transfer at a time, so the modes and caching agree.
  // Memory on d0: a's weights 50 always; a's scratch 10 over [0, 1); a's output 100 over [0, 3)
  //   (until the transfer out ends); b's copy 100 over [5, 10); c's scratch 30 over [7, 10).
  //   At 0: 50 + 10 + 100 = 160; at 7: 50 + 100 + 30 = 180. Peak 180 at 7.
  // Memory on d1: a's copy 100 over [1, 5); b's scratch 20 over [3, 5); b's output 100 over [3, 7).
  //   Peak 220 at 3.
  const graph g = chain();
  for (const auto comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex})
    for (const bool cache : {true, false}) {
      const std::string mode = to_string(comm);
      CAPTURE(mode);
      CAPTURE(cache);
      const cluster c = devices(2, comm);
      const auto s = run_ok(g, graph_model(g, c), c, {0, 1, 0}, {.cache_transfers = cache});
      CHECK(s.start == std::vector<seconds>{0, 3, 7});
      CHECK(s.finish == std::vector<seconds>{1, 5, 10});
      CHECK(s.makespan == 10);
      CHECK(s.transfers.size() == 2);
      CHECK(s.bytes_moved == 200);
      CHECK(s.busy == std::vector<seconds>{4, 2});
      CHECK(s.peak_memory == std::vector<byte_count>{180, 220});
      CHECK(s.peak_memory_time == std::vector<seconds>{7, 3});
    }
}

TEST_CASE("fork-join: caching sends s's output once; sequential links serialise the copies") {
  const graph g = fork_join();
  const placement_t p{0, 1, 1, 1, 0};
  SUBCASE("parallel, cached") {
    // s [0, 1); one copy of s's output d0 -> d1 [1, 3) serves x, y and z; d1 runs x [3, 5),
    // y [5, 7), z [7, 9); their outputs go back over [5, 7), [7, 9), [9, 11); t [11, 12).
    // d1: the copy over [1, 9), x's output [3, 7), y's [5, 9), z's [7, 11): 300 from 5 on.
    // d0: s's output [0, 3); copies of x, y, z from 5, 7, 9 to 12; t's output [11, 12): 400 at 11.
    const cluster c = devices(2, comm_mode::parallel);
    const auto s = run_ok(g, graph_model(g, c), c, p);
    CHECK(s.start == std::vector<seconds>{0, 3, 5, 7, 11});
    CHECK(s.makespan == 12);
    CHECK(s.transfers.size() == 4);
    CHECK(s.bytes_moved == 400);
    CHECK(s.peak_memory == std::vector<byte_count>{400, 300});
    CHECK(s.peak_memory_time == std::vector<seconds>{11, 5});
  }
  SUBCASE("parallel, not cached") {
    // Three copies d0 -> d1, all over [1, 3): the same times, but d1 holds copies for x, y, z
    // until each finishes ([1, 5), [1, 7), [1, 9)); at 3, x's output joins them: 400.
    const cluster c = devices(2, comm_mode::parallel);
    const auto s = run_ok(g, graph_model(g, c), c, p, {.cache_transfers = false});
    CHECK(s.start == std::vector<seconds>{0, 3, 5, 7, 11});
    CHECK(s.makespan == 12);
    CHECK(s.transfers.size() == 6);
    CHECK(s.bytes_moved == 600);
    CHECK(s.peak_memory == std::vector<byte_count>{400, 400});
    CHECK(s.peak_memory_time == std::vector<seconds>{11, 3});
  }
  SUBCASE("sequential, cached") {
    // One copy [1, 3); x [3, 5); x back [5, 7); y [5, 7); y back [7, 9); z [7, 9); z back [9, 11);
    // t [11, 12). Transfers never overlap here, so the numbers are those of parallel mode.
    const cluster c = devices(2, comm_mode::sequential);
    const auto s = run_ok(g, graph_model(g, c), c, p);
    CHECK(s.makespan == 12);
    CHECK(s.peak_memory == std::vector<byte_count>{400, 300});
  }
  SUBCASE("sequential, not cached") {
    // Copies for x, y, z take turns on the channels: [1, 3), [3, 5), [5, 7). x [3, 5), y [5, 7),
    // z [7, 9). x's output back waits for the third copy (queued earlier): [7, 9); y's [9, 11);
    // z's [11, 13); t [13, 14). Makespan 14.
    // d1: copies [1, 5), [3, 7), [5, 9); x's output [3, 9), y's [5, 11), z's [7, 13): 400 at 5.
    // d0: s's output [0, 7); copies back from 7, 9, 11 to 14; t's output [13, 14): 400 at 13.
    const cluster c = devices(2, comm_mode::sequential);
    const auto s = run_ok(g, graph_model(g, c), c, p, {.cache_transfers = false});
    CHECK(s.start == std::vector<seconds>{0, 3, 5, 7, 13});
    CHECK(s.makespan == 14);
    CHECK(s.bytes_moved == 600);
    CHECK(s.peak_memory == std::vector<byte_count>{400, 400});
    CHECK(s.peak_memory_time == std::vector<seconds>{13, 5});
  }
}

TEST_CASE("a strict replay without the cache serves the copies its transfer order does not list by readiness") {
  // The order of the cached sequential run lists one copy of s's output to d1; replayed without
  // the cache there are three. The first takes the listed place, the other two are not listed and
  // go when the channels are free: the numbers of "sequential, not cached" above. (Every copy used
  // to claim the one listed place, so the replay stalled or read past the order.)
  const graph g = fork_join();
  const placement_t p{0, 1, 1, 1, 0};
  const cluster c = devices(2, comm_mode::sequential);
  const graph_model model(g, c);
  const auto cached = run_ok(g, model, c, p);
  REQUIRE(cached.transfers.size() == 4);
  const std::vector<vertex_id> by_start{0, 1, 2, 3, 4};
  const auto replay = run_ok(g, model, c, p,
                             {.policy = ready_policy::strict_order,
                              .priority = by_start,
                              .cache_transfers = false,
                              .transfer_order = cached.transfers});
  CHECK(replay.start == std::vector<seconds>{0, 3, 5, 7, 13});
  CHECK(replay.makespan == 14);
  CHECK(replay.transfers.size() == 6);
  CHECK(replay.transfers[1].start == 3);
  CHECK(replay.transfers[2].start == 5);
}

TEST_CASE("diamond on three devices: sequential and duplex links delay the second send") {
  const graph g = diamond();
  const placement_t p{0, 1, 2, 0};
  for (const bool cache : {true, false}) {  // the consumers are on different devices: caching is moot
    CAPTURE(cache);
    {
      // Parallel: a [0, 1); a's output to d1 and d2 over [1, 3); b [3, 5); c [3, 6);
      // b's output back [5, 7); c's [6, 8); d [8, 9). Makespan 9.
      // d0: a's output [0, 3); b's copy [7, 9); c's copy and d's output [8, 9): 300 at 8.
      // d1: copy [1, 5) + b's output [3, 7): 200 at 3. d2: copy [1, 6) + c's output [3, 8): 200 at 3.
      const cluster c = devices(3, comm_mode::parallel);
      const auto s = run_ok(g, graph_model(g, c), c, p, {.cache_transfers = cache});
      CHECK(s.start == std::vector<seconds>{0, 3, 3, 8});
      CHECK(s.makespan == 9);
      CHECK(s.peak_memory == std::vector<byte_count>{300, 200, 200});
      CHECK(s.peak_memory_time == std::vector<seconds>{8, 3, 3});
    }
    for (const auto comm : {comm_mode::sequential, comm_mode::duplex}) {
      // d0 sends to d1 [1, 3), then to d2 [3, 5) (one channel, or one send channel, per device);
      // b [3, 5); c [5, 8); b's output back [5, 7); c's [8, 10); d [10, 11). Makespan 11.
      // d0: a's output [0, 5); copies from 7 and 8; d's output [10, 11): 300 at 10.
      // d1: 200 at 3 as before. d2: copy [3, 8) + c's output [5, 10): 200 at 5.
      const std::string mode = to_string(comm);
      CAPTURE(mode);
      const cluster c = devices(3, comm);
      const auto s = run_ok(g, graph_model(g, c), c, p, {.cache_transfers = cache});
      CHECK(s.start == std::vector<seconds>{0, 3, 5, 10});
      CHECK(s.makespan == 11);
      CHECK(s.peak_memory == std::vector<byte_count>{300, 200, 200});
      CHECK(s.peak_memory_time == std::vector<seconds>{10, 3, 5});
    }
  }
}

TEST_CASE("duplex lets a device send and receive at once; sequential does not") {
  // p (d0) -> q (d1) and r (d1) -> w (d0): both tensors are ready at 1 and move in opposite
  // directions. Duplex: both over [1, 3), q and w at 3, makespan 4. Sequential: the second waits,
  // [3, 5), makespan 6.
  graph g;
  add(g, "p", 1);
  add(g, "q", 1);
  add(g, "r", 1);
  add(g, "w", 1);
  g.add_edge(0, 1, 100);
  g.add_edge(2, 3, 100);
  const placement_t p{0, 1, 1, 0};
  const cluster duplex = devices(2, comm_mode::duplex);
  CHECK(run_ok(g, graph_model(g, duplex), duplex, p).makespan == 4);
  const cluster sequential = devices(2, comm_mode::sequential);
  CHECK(run_ok(g, graph_model(g, sequential), sequential, p).makespan == 6);
}

TEST_CASE("out of memory is a status naming the device, the time and the vertex") {
  // The chain of the first test with d1 holding 150 bytes: at 3 b allocates its 20 scratch bytes
  // (120 in use) and then cannot allocate its 100 output bytes.
  const graph g = chain();
  const cluster c({{.name = "d0"}, {.name = "d1", .capacity = 150}}, {.latency = 1, .bandwidth = 100});
  const auto r = simulate(g, graph_model(g, c), c, placement_t{0, 1, 0});
  CHECK(r.outcome.code == status::out_of_memory);
  CHECK_FALSE(r.ok());
  CHECK(r.outcome.device == 1);
  CHECK(r.outcome.vertex == 1);
  CHECK(r.outcome.time == 3);
  CHECK(r.outcome.needed == 120);    // b's 20 scratch and 100 output bytes, asked for together
  CHECK(r.outcome.available == 50);  // 150 less the 100 received from a
  CHECK(r.outcome.message.find("'b'") != std::string::npos);

  // Persistent bytes that do not fit fail at time 0.
  const cluster tiny({{.name = "d0", .capacity = 40}, {.name = "d1"}}, {.latency = 1, .bandwidth = 100});
  const auto r0 = simulate(g, graph_model(g, tiny), tiny, placement_t{0, 1, 0});
  CHECK(r0.outcome.code == status::out_of_memory);
  CHECK(r0.outcome.vertex == 0);
  CHECK(r0.outcome.time == 0);
  CHECK(r0.outcome.device == 0);
  CHECK(r0.outcome.message.find("persistent") != std::string::npos);

  // A source whose scratch does not fit fails when it would start, at time 0.
  graph one;
  add(one, "big", 1, 0, 10, 100);
  const cluster small = cluster::uniform(1, 50);
  const auto r1 = simulate(one, graph_model(one, small), small, placement_t{0});
  CHECK(r1.outcome.code == status::out_of_memory);
  CHECK(r1.outcome.vertex == 0);
  CHECK(r1.outcome.needed == 100);    // its scratch bytes
  CHECK(r1.outcome.available == 40);  // 50 less its 10 persistent bytes
}

namespace {
// All on one device: x0 (1 s) -> x2 (1 s) and x1 (1 s) -> x3 (4 s); no bytes.
// Bottom levels: x0 2, x1 5, x2 1, x3 4.
graph two_chains() {
  graph g;
  add(g, "x0", 1, 0);
  add(g, "x1", 1, 0);
  add(g, "x2", 1, 0);
  add(g, "x3", 4, 0);
  g.add_edge(0, 2);
  g.add_edge(1, 3);
  return g;
}
std::vector<vertex_id> run_order(const schedule& s) { return s.order[0]; }
}  // namespace

TEST_CASE("every ready policy picks as documented") {
  const graph g = two_chains();
  const cluster c = cluster::uniform(1);
  const graph_model model(g, c);
  const placement_t p(4, 0);
  const std::vector<vertex_id> priority{0, 2, 1, 3};  // a DFS order
  // placement order: at 0 {x0, x1} -> x0; at 1 {x1, x2} -> x2 (earlier in the priority); then x1, x3.
  CHECK(run_order(run_ok(g, model, c, p, {.policy = ready_policy::placement_order, .priority = priority})) ==
        std::vector<vertex_id>{0, 2, 1, 3});
  // Without a priority, Kahn order 0 1 2 3 ranks them: x0, x1, x2, x3.
  CHECK(run_order(run_ok(g, model, c, p)) == std::vector<vertex_id>{0, 1, 2, 3});
  // fifo: at 1, x1 (ready since 0) goes before x2 (ready since 1) whatever the priority says.
  CHECK(run_order(run_ok(g, model, c, p, {.policy = ready_policy::fifo, .priority = priority})) ==
        std::vector<vertex_id>{0, 1, 2, 3});
  // bottom level: x1 (5), then x3 (4) over x0 (2), then x0, x2.
  CHECK(run_order(run_ok(g, model, c, p, {.policy = ready_policy::bottom_level, .priority = priority})) ==
        std::vector<vertex_id>{1, 3, 0, 2});
  // strict: exactly the priority order.
  CHECK(run_order(run_ok(g, model, c, p, {.policy = ready_policy::strict_order, .priority = priority})) ==
        std::vector<vertex_id>{0, 2, 1, 3});
  for (const auto policy :
       {ready_policy::placement_order, ready_policy::strict_order, ready_policy::fifo, ready_policy::bottom_level})
    CHECK(run_ok(g, model, c, p, {.policy = policy, .priority = priority}).makespan == 7);
  CHECK(std::string(to_string(ready_policy::bottom_level)) == "bottom-level");
}

TEST_CASE("strict order waits for the next vertex in the order; placement order does not") {
  // u (3 s) on d1 feeds v (1 s) on d0; w (1 s) on d0 is independent; free links.
  // Priority u, v, w. strict: d0 waits for v: v [3, 4), w [4, 5), makespan 5.
  // placement order: d0 runs w [0, 1) while waiting; v [3, 4), makespan 4.
  graph g;
  add(g, "u", 3, 0);
  add(g, "v", 1, 0);
  add(g, "w", 1, 0);
  g.add_edge(0, 1);
  const cluster c = cluster::uniform(2);
  const graph_model model(g, c);
  const placement_t p{1, 0, 0};
  const std::vector<vertex_id> priority{0, 1, 2};
  const auto strict = run_ok(g, model, c, p, {.policy = ready_policy::strict_order, .priority = priority});
  CHECK(strict.start == std::vector<seconds>{0, 3, 4});
  CHECK(strict.makespan == 5);
  const auto eager = run_ok(g, model, c, p, {.policy = ready_policy::placement_order, .priority = priority});
  CHECK(eager.start == std::vector<seconds>{0, 3, 0});
  CHECK(eager.makespan == 4);

  // An order that runs a consumer before its producer on one device cannot be replayed.
  const placement_t same(3, 0);
  const std::vector<vertex_id> backwards{1, 0, 2};
  CHECK_THROWS_WITH_AS((void)simulate(g, model, c, same, {.policy = ready_policy::strict_order, .priority = backwards}),
                       doctest::Contains("'v' on device 0"), invalid_input);
}

TEST_CASE("strict order replays the per-device order of a finished run exactly") {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    const graph g = random_layered_dag({.vertices = 40, .layers = 8, .seed = seed});
    const cluster c = cluster::uniform(3, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e9}, comm_mode::sequential);
    const graph_model model(g, c);
    detail::portable_random rng(seed);
    placement_t p(g.vertex_count());
    for (auto& d : p) d = static_cast<device_id>(rng.integer(0, 2));
    const auto first = run_ok(g, model, c, p, {.policy = ready_policy::bottom_level});
    // The global order by start time, which lists each device's vertices in the order they ran.
    std::vector<vertex_id> by_start(g.vertex_count());
    std::iota(by_start.begin(), by_start.end(), 0);
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](vertex_id a, vertex_id b) { return first.start[a] < first.start[b]; });
    const auto replay = run_ok(g, model, c, p, {.policy = ready_policy::strict_order, .priority = by_start});
    CHECK(replay.order == first.order);
    CHECK(replay.makespan <= first.makespan * (1 + 1e-12));
  }
}

TEST_CASE("stochastic durations: deterministic per seed, mean near the model's makespan, p50 <= p95") {
  const graph g = random_layered_dag({.vertices = 60, .layers = 10, .seed = 11});
  const cluster c = cluster::uniform(3, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e9});
  const graph_model model(g, c);
  placement_t p(g.vertex_count());
  for (vertex_id v = 0; v < p.size(); ++v) p[v] = v % 3;
  const seconds deterministic = run_ok(g, model, c, p).makespan;

  const auto a = run_ok(g, model, c, p, {.cv = 0.3, .seed = 5});
  const auto b = run_ok(g, model, c, p, {.cv = 0.3, .seed = 5});
  const auto other = run_ok(g, model, c, p, {.cv = 0.3, .seed = 6});
  CHECK(a.start == b.start);
  CHECK(a.finish == b.finish);
  CHECK(a.makespan == b.makespan);
  CHECK(a.makespan != other.makespan);
  CHECK(a.makespan != deterministic);
  // Drawn durations break exact_durations, and nothing else.
  CHECK(validate(a, g, model, c).count(violation_kind::duration) > 0);

  const auto runs = simulate_runs(g, model, c, p, 200, {.cv = 0.05, .seed = 1});
  CHECK(runs.runs == 200);
  CHECK(runs.failed == 0);
  CHECK(runs.makespans.size() == 200);
  CHECK(runs.mean == doctest::Approx(deterministic).epsilon(0.03));
  CHECK(runs.min <= runs.p50);
  CHECK(runs.p50 <= runs.p95);
  CHECK(runs.p95 <= runs.max);
  CHECK(runs.stddev > 0);
  CHECK(runs.stddev < 0.1 * deterministic);
  const auto again = simulate_runs(g, model, c, p, 200, {.cv = 0.05, .seed = 1});
  CHECK(again.makespans == runs.makespans);

  // cv = 0 gives the model's makespan every time.
  const auto exact = simulate_runs(g, model, c, p, 3);
  CHECK(exact.min == deterministic);
  CHECK(exact.max == deterministic);
  CHECK(exact.stddev == 0);
}

TEST_CASE("simulated schedules pass validate() on seeded random DAGs, placements, modes and memory limits") {
  std::size_t ran = 0, out_of_memory = 0;
  const ready_policy policies[] = {ready_policy::placement_order, ready_policy::fifo, ready_policy::bottom_level};
  const comm_mode modes[] = {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex};
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    detail::portable_random rng(seed * 7919);
    const auto n = static_cast<std::size_t>(rng.integer(1, 50));
    const graph g = random_layered_dag({.vertices = n,
                                        .layers = static_cast<std::size_t>(rng.integer(1, 8)),
                                        .mean_out_degree = 1.0 + static_cast<double>(rng.integer(0, 20)) / 10,
                                        .min_bytes = 1,
                                        .max_bytes = 1000,
                                        .max_persistent = 500,
                                        .max_temporary = 300,
                                        .seed = seed});
    const auto m = static_cast<std::size_t>(rng.integer(1, 4));
    const comm_mode comm = modes[seed % 3];
    // Capacity from "hardly anything fits" to "everything fits".
    byte_count total = 0;
    const cluster probe = cluster::uniform(m);
    for (vertex_id v = 0; v < n; ++v) total += total_bytes(graph_model(g, probe), v);
    const byte_count capacity = rng.integer(0, 3) == 0 ? unlimited_memory : total / m + rng.integer(0, total + 1);
    const cluster c = cluster::uniform(m, capacity, {.latency = 1e-4, .bandwidth = 1e6}, comm);
    const graph_model model(g, c);
    placement_t p(n);
    for (auto& d : p) d = static_cast<device_id>(rng.integer(0, m - 1));
    const simulate_options options{.policy = policies[rng.integer(0, 2)],
                                   .cache_transfers = rng.integer(0, 1) == 0,
                                   .cv = rng.integer(0, 4) == 0 ? 0.2 : 0.0,
                                   .seed = seed};
    const auto r = simulate(g, model, c, p, options);
    if (!r.ok()) {
      REQUIRE(r.outcome.code == status::out_of_memory);
      ++out_of_memory;
      CHECK(r.outcome.device < m);
      CHECK(r.outcome.vertex < n);
      CHECK(r.outcome.needed > r.outcome.available);
      CHECK(r.outcome.message.find("'" + g[r.outcome.vertex].name + "'") != std::string::npos);
      continue;
    }
    ++ran;
    const auto report = validate(r.schedule, g, model, c, {.exact_durations = options.cv == 0});
    CHECK_MESSAGE(report.ok(), report.to_string());
    CHECK(r.schedule.peak_memory == report.peak_memory);
    for (device_id d = 0; d < m; ++d) CHECK(r.schedule.peak_memory[d] <= capacity);
  }
  // Both outcomes were exercised.
  CHECK(ran > 100);
  CHECK(out_of_memory > 10);
}

TEST_CASE("the simulator class steps through a run and ends where simulate() does") {
  const graph g = fork_join();
  const cluster c = devices(2, comm_mode::sequential);
  const graph_model model(g, c);
  const placement_t p{0, 1, 1, 1, 0};
  const csr_graph s = snapshot(g);
  simulator<graph_model, cluster> sim(s, model, c, p, {.cache_transfers = false});
  std::vector<seconds> times;
  while (sim.step()) times.push_back(sim.now());
  CHECK(sim.done());
  CHECK(sim.finished_count() == 5);
  CHECK(std::is_sorted(times.begin(), times.end()));
  CHECK(sim.result().schedule.makespan == 14);
  CHECK(sim.result().schedule.start == simulate(g, model, c, p, {.cache_transfers = false}).schedule.start);
  sim.init();  // back to time 0
  CHECK(sim.now() == 0);
  CHECK(sim.run().schedule.makespan == 14);
}

TEST_CASE("zero-length vertices and tensors are simulated and validated") {
  graph g;
  add(g, "src", 0, 100);
  add(g, "mid", 1, 0);
  add(g, "sink", 0, 50);
  g.add_edge(0, 1, 0);
  g.add_edge(1, 2, 0);
  const cluster c = cluster::uniform(2);  // free links
  const auto s = run_ok(g, graph_model(g, c), c, {0, 1, 0});
  CHECK(s.makespan == 1);
  // src's output lives on d0 over [0, 0): nothing; the empty tensor moves nothing; sink's output
  // lives over [1, 1): nothing.
  CHECK(s.peak_memory == std::vector<byte_count>{0, 0});
}

TEST_CASE("bad arguments throw; a cycle is reported with the names of its vertices") {
  const graph g = chain();
  const cluster c = devices(2, comm_mode::parallel);
  const graph_model model(g, c);
  CHECK_THROWS_WITH_AS((void)simulate(g, model, c, placement_t{0, 1}), doctest::Contains("2 entries for 3"),
                       invalid_input);
  CHECK_THROWS_WITH_AS((void)simulate(g, model, c, placement_t{0, 5, 0}), doctest::Contains("'b'"), invalid_input);
  const std::vector<vertex_id> twice{0, 0, 1};
  CHECK_THROWS_WITH_AS((void)simulate(g, model, c, placement_t{0, 1, 0}, {.priority = twice}),
                       doctest::Contains("twice"), invalid_input);
  CHECK_THROWS_AS((void)simulate(g, model, c, placement_t{0, 1, 0}, {.cv = -1}), invalid_input);

  graph cyclic;
  add(cyclic, "first", 1);
  add(cyclic, "loop_a", 1);
  add(cyclic, "loop_b", 1);
  cyclic.add_edge(0, 1);
  cyclic.add_edge(1, 2);
  cyclic.add_edge(2, 1);
  const graph_model cyclic_model(cyclic, c);
  try {
    (void)simulate(cyclic, cyclic_model, c, placement_t{0, 0, 1});
    FAIL("simulate accepted a cycle");
  } catch (const not_a_dag& e) {
    const std::string what = e.what();
    CHECK(what.find("loop_a") != std::string::npos);
    CHECK(what.find("loop_b") != std::string::npos);
    CHECK(what.find("first") == std::string::npos);
  }
  CHECK_THROWS_WITH_AS((void)simulate_runs(cyclic, cyclic_model, c, placement_t{0, 0, 1}, 2),
                       doctest::Contains("loop_a"), not_a_dag);
}

TEST_CASE("large runs: the simulator's tracked peaks equal the memory profile's (radix-sorted events)") {
  // Thousands of events per device take the memory profile's radix-sort path.
  const auto g = random_layered_dag(
      {.vertices = 6000, .layers = 60, .max_persistent = 1 << 12, .max_temporary = 1 << 16, .seed = 77});
  for (const auto comm : {comm_mode::parallel, comm_mode::sequential}) {
    const auto c = cluster::uniform(2, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e9}, comm);
    const graph_model model(g, c);
    std::vector<device_id> placement(g.vertex_count());
    for (vertex_id v = 0; v < g.vertex_count(); ++v) placement[v] = (v / 7) % 2;
    const auto run = simulate(g, model, c, placement);
    REQUIRE(run.ok());
    const auto report = validate(run.schedule, g, model, c);
    CHECK_MESSAGE(report.ok(), report.to_string());
    CHECK(report.peak_memory == run.schedule.peak_memory);
  }
}

TEST_CASE("memory events sort by key on both the short and the radix path") {
  detail::portable_random rng(5);
  std::vector<detail::memory_event> scratch;
  for (const std::size_t n : {std::size_t{10}, std::size_t{5000}}) {
    std::vector<detail::memory_event> events(n);
    for (std::size_t i = 0; i < n; ++i)
      events[i] = {detail::memory_event_key(rng.uniform(0, 100), rng.integer(0, 1) == 1), i};
    auto expected = events;
    std::stable_sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    detail::sort_memory_events(events.data(), events.size(), scratch);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(events[i].key == expected[i].key);
      if (n > 1024) CHECK(events[i].bytes == expected[i].bytes);  // the radix path is stable
    }
  }
}

TEST_CASE("a transfer that does not fit waits for memory; without waiting the run fails there") {
  // d1 (100 B) runs c (5 s, 60 B scratch) from 0; a on d0 finishes at 1 and sends its 60 B to b on
  // d1, which cannot hold them until c is done: the copy runs [5, 6] and b [6, 7].
  graph g;
  const auto a = g.add_vertex(vertex_properties{.name = "a", .compute = 1, .output = 60});
  const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 1});
  g.add_vertex(vertex_properties{.name = "c", .compute = 5, .temporary = 60});
  g.add_edge(a, b, 60);
  const cluster c({{.name = "d0"}, {.name = "d1", .capacity = 100}}, {.latency = 0, .bandwidth = 60});
  const graph_model model(g, c);
  const placement_t where{0, 1, 1};
  const auto waited = simulate(g, model, c, where);
  REQUIRE_MESSAGE(waited.ok(), waited.outcome.message);
  REQUIRE(waited.schedule.transfers.size() == 1);
  CHECK(waited.schedule.transfers[0].start == 5);
  CHECK(waited.schedule.start[b] == 6);
  CHECK(waited.schedule.makespan == 7);
  CHECK(waited.schedule.peak_memory[1] == 60);
  CHECK(validate(waited.schedule, g, model, c).ok());

  const auto eager = simulate(g, model, c, where, {.wait_for_memory = false});
  CHECK(eager.outcome.code == status::out_of_memory);
  CHECK(eager.outcome.device == 1);
  CHECK(eager.outcome.vertex == a);  // the tensor of a
  CHECK(eager.outcome.time == 1);
  CHECK(eager.outcome.needed == 60);
  CHECK(eager.outcome.available == 40);
}

TEST_CASE("admission: a start that fits is held back when the priority order would have no room left") {
  // a (2 s) on d1 sends 10 B to b on d0; c on d0 has no inputs; e on d0 reads b and c. d0 holds
  // 100 B; every copy takes 1 s. Priority a, b, c, e.
  //   b: 1 s, 50 B scratch, 10 B output; c: 1 s, 60 B output; e: 1 s, nothing.
  // Running ahead, c would start at 0 (b is not ready) and hold its 60 B until e. a's copy lands
  // [2, 3], and then b needs 60 B with 70 of 100 in use: nothing can go on (the loop got stuck
  // there before the admission rule; without waiting the run fails there too).
  // The priority order one vertex at a time needs at most 70 B on d0 (b: the copy, its scratch and
  // output; c: b's and c's outputs), so c's 60 B held from 0 until its turn would need 130: held
  // back. a [0, 2), copy [2, 3), b [3, 4), c [4, 5), e [5, 6): the strict replay's times.
  graph g;
  const auto a = g.add_vertex(vertex_properties{.name = "a", .compute = 2, .output = 10});
  const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 1, .output = 10, .temporary = 50});
  const auto c = g.add_vertex(vertex_properties{.name = "c", .compute = 1, .output = 60});
  const auto e = g.add_vertex(vertex_properties{.name = "e", .compute = 1});
  g.add_edge(a, b, 10);
  g.add_edge(b, e, 10);
  g.add_edge(c, e, 60);
  const link_model one_second{.latency = 1, .bandwidth = std::numeric_limits<double>::infinity()};
  const cluster tight({{.name = "d0", .capacity = 100}, {.name = "d1"}}, one_second);
  const graph_model model(g, tight);
  const placement_t where{1, 0, 0, 0};
  const std::vector<vertex_id> priority{a, b, c, e};
  for (const auto policy : {ready_policy::placement_order, ready_policy::fifo, ready_policy::bottom_level}) {
    CAPTURE(to_string(policy));
    const auto s = run_ok(g, model, tight, where, {.policy = policy, .priority = priority});
    CHECK(s.start == std::vector<seconds>{0, 3, 4, 5});
    CHECK(s.makespan == 6);
    CHECK(s.peak_memory[0] == 70);
  }
  const auto strict = run_ok(g, model, tight, where, {.policy = ready_policy::strict_order, .priority = priority});
  CHECK(strict.start == std::vector<seconds>{0, 3, 4, 5});
  const auto eager = simulate(g, model, tight, where, {.priority = priority, .wait_for_memory = false});
  CHECK(eager.outcome.code == status::out_of_memory);
  CHECK(eager.outcome.vertex == b);
  CHECK(eager.outcome.time == 3);
  CHECK(eager.outcome.needed == 50);  // b's scratch, asked for first
  CHECK(eager.outcome.available == 30);

  // With 130 B d0 can hold everything it ever holds at once: no rule, c runs ahead at 0.
  const cluster roomy({{.name = "d0", .capacity = 130}, {.name = "d1"}}, one_second);
  const auto ahead = run_ok(g, graph_model(g, roomy), roomy, where, {.priority = priority});
  CHECK(ahead.start == std::vector<seconds>{0, 3, 0, 4});
  CHECK(ahead.makespan == 5);
  CHECK(ahead.peak_memory[0] == 130);
}

TEST_CASE("admission: a copy that fits is held back until the priority order has room for it") {
  // On d1: p (1 s) sends 40 B to q on d0, then a (2 s) sends 10 B to b on d0. On d0 (100 B): b
  // (1 s, 60 B scratch, 10 B output), then q (1 s), which reads p and b. Copies take 1 s. Priority
  // p, a, b, q.
  // Running ahead, p's copy lands [1, 2) and a's [3, 4); b then needs 70 B with 50 of 100 in use,
  // and q needs b: stuck. In the priority order p's copy is needed only at q's turn, and holding its
  // 40 B over b's turn would need 120: held back until b has started, then it waits for b's scratch
  // to go: p [0, 1), a [1, 3), a's copy [3, 4), b [4, 5), p's copy [5, 6), q [6, 7).
  graph g;
  const auto p = g.add_vertex(vertex_properties{.name = "p", .compute = 1, .output = 40});
  const auto a = g.add_vertex(vertex_properties{.name = "a", .compute = 2, .output = 10});
  const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 1, .output = 10, .temporary = 60});
  const auto q = g.add_vertex(vertex_properties{.name = "q", .compute = 1});
  g.add_edge(p, q, 40);
  g.add_edge(a, b, 10);
  g.add_edge(b, q, 10);
  const cluster c({{.name = "d0", .capacity = 100}, {.name = "d1"}},
                  {.latency = 1, .bandwidth = std::numeric_limits<double>::infinity()});
  const graph_model model(g, c);
  const placement_t where{1, 1, 0, 0};
  const std::vector<vertex_id> priority{p, a, b, q};
  const auto s = run_ok(g, model, c, where, {.priority = priority});
  CHECK(s.start == std::vector<seconds>{0, 1, 4, 6});
  REQUIRE(s.transfers.size() == 2);
  CHECK(s.transfers[0].tensor == p);
  CHECK(s.transfers[0].start == 5);
  CHECK(s.transfers[1].tensor == a);
  CHECK(s.transfers[1].start == 3);
  CHECK(s.makespan == 7);
  CHECK(s.peak_memory[0] == 80);

  const auto eager = simulate(g, model, c, where, {.priority = priority, .wait_for_memory = false});
  CHECK(eager.outcome.code == status::out_of_memory);
  CHECK(eager.outcome.vertex == b);
  CHECK(eager.outcome.time == 4);
}

TEST_CASE("without waiting for memory, a device is judged at the end of each instant, as validate() counts it") {
  // One device of 100 bytes runs x (1 s, 60 bytes out), then at time 1 the zero-length a (50 bytes
  // out), b reading a, and z reading x. By the rules a's output is held over an empty interval and
  // x's is freed at 1, before allocations: 60 bytes at most. Run one after another, a's output is
  // taken while x's is still held (110), and freed a moment later.
  graph g;
  const auto x = g.add_vertex({.name = "x", .compute = 1, .output = 60});
  const auto z = g.add_vertex({.name = "z", .compute = 0});
  const auto a = g.add_vertex({.name = "a", .compute = 0, .output = 50});
  const auto b = g.add_vertex({.name = "b", .compute = 0});
  g.add_edge(x, z, 60);
  g.add_edge(a, b, 50);
  const cluster c = devices(1, comm_mode::parallel, 100);
  const graph_model model(g, c);
  const std::vector<device_id> one(4, 0);
  const std::vector<vertex_id> order{x, a, b, z};
  const auto r =
      simulate(g, model, c, one, {.policy = ready_policy::strict_order, .priority = order, .wait_for_memory = false});
  REQUIRE_MESSAGE(r.ok(), r.outcome.message);
  CHECK(r.schedule.start == std::vector<seconds>{0, 1, 1, 1});
  CHECK(r.schedule.peak_memory[0] == 60);
  CHECK(validate(r.schedule, g, model, c).ok());

  // With b taking a second, z runs at 2 and x's output is still held at 1: 110 bytes, a real
  // overflow, reported with the numbers of the allocation that went over.
  graph h = g;
  h[b].compute = 1;
  const graph_model h_model(h, c);
  const auto over =
      simulate(h, h_model, c, one, {.policy = ready_policy::strict_order, .priority = order, .wait_for_memory = false});
  REQUIRE(over.outcome.code == status::out_of_memory);
  CHECK(over.outcome.vertex == a);
  CHECK(over.outcome.needed == 50);
  CHECK(over.outcome.available == 40);
  CHECK(over.outcome.time == 1.0);
  CHECK(over.outcome.message ==
        "device 0 runs out of memory at time 1 s: 'a' needs 50 B (output) with 60 B of 100 B in use");
}
