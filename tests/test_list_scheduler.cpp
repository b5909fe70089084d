// The list-scheduling engine on seeded random DAGs: every algorithm's schedule is valid, memory-aware
// runs stay within capacity, m-ETF with unlimited memory is ETF, and the simulator reproduces each
// schedule exactly when it runs the placement in placement order.
#include <gantry/core/random.hpp>
#include <gantry/workloads/random_dag.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/schedule/idle_gaps.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <map>

#include "support.hpp"

using namespace gantry;

namespace {
using test::make_random_case;
using test::random_case;

random_case make_case(std::uint64_t seed, comm_mode comm, bool limited) {
  return make_random_case(seed, comm, limited);
}

void check_valid(const list_schedule_result& r, const random_case& c, const graph_model& model, const char* what) {
  INFO(what);
  REQUIRE(r.placement.device.size() == c.g.vertex_count());
  REQUIRE(r.placement.order.size() == c.g.vertex_count());
  const auto report = validate(r.schedule, c.g, model, c.devices);
  CHECK_MESSAGE(report.ok(), report.to_string());
  for (vertex_id v = 0; v < c.g.vertex_count(); ++v) CHECK(r.placement.device[v] == r.schedule.device[v]);
}

// Runs the placement in the simulator in placement order and compares every start and finish.
void check_reproduced(const list_schedule_result& r, const random_case& c, const graph_model& model, const char* what) {
  INFO(what);
  const auto sim = simulate(c.g, model, c.devices, std::span<const device_id>(r.placement.device),
                            {.policy = ready_policy::strict_order, .priority = r.placement.order});
  REQUIRE(sim.ok());
  for (vertex_id v = 0; v < c.g.vertex_count(); ++v) {
    CHECK(sim.schedule.start[v] == r.schedule.start[v]);
    CHECK(sim.schedule.finish[v] == r.schedule.finish[v]);
  }
  CHECK(sim.schedule.makespan == r.schedule.makespan);
}

bool same_schedule(const list_schedule_result& a, const list_schedule_result& b) {
  return a.placement.device == b.placement.device && a.placement.order == b.placement.order &&
         a.schedule.start == b.schedule.start && a.schedule.finish == b.schedule.finish;
}
}  // namespace

TEST_CASE("1000 random DAGs: valid schedules, memory within capacity, m-ETF = ETF with unlimited memory") {
  std::size_t memory_failures = 0, memory_runs = 0, sequential_reproduced = 0, sequential_runs = 0;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    const comm_mode comm = seed % 3 == 0   ? comm_mode::sequential
                           : seed % 3 == 1 ? comm_mode::parallel
                                           : comm_mode::duplex;
    const bool limited = seed % 2 == 0;
    const auto c = make_case(seed, comm, limited);
    const graph_model model(c.g, c.devices);
    CAPTURE(seed);
    const std::string mode = to_string(comm);
    CAPTURE(mode);
    CAPTURE(limited);

    const auto plain = etf(c.g, model, c.devices);
    REQUIRE(plain.ok());
    const auto cp = critical_path_schedule(c.g, model, c.devices);
    REQUIRE(cp.ok());
    const auto h = heft(c.g, model, c.devices);
    REQUIRE(h.ok());
    const auto m = m_etf(c.g, model, c.devices);
    if (!limited) {
      REQUIRE(m.ok());
      CHECK(same_schedule(m, plain));
    }
    // With memory limits validate() also checks the capacity; without, it cannot fail on memory.
    if (!limited) {
      check_valid(plain, c, model, "ETF");
      check_valid(cp, c, model, "Critical Path");
      check_valid(h, c, model, "HEFT");
    } else {
      for (const auto* r : {&plain, &cp, &h}) {
        const auto report = validate(r->schedule, c.g, model, c.devices);
        CHECK_MESSAGE(report.count(violation_kind::memory) == report.violations.size(), report.to_string());
      }
      ++memory_runs;
      if (!m.ok()) {
        ++memory_failures;
        CHECK(m.placement.outcome.code == status::out_of_memory);
        CHECK(m.placement.outcome.message.find("no device can hold vertex") != std::string::npos);
        CHECK(m.schedule.start.empty());
      } else {
        check_valid(m, c, model, "m-ETF");
        for (device_id d = 0; d < c.devices.device_count(); ++d)
          CHECK(m.schedule.peak_memory[d] <= c.devices.capacity(d));
        const auto cpm = critical_path_schedule(c.g, model, c.devices, {.respect_memory = true});
        if (cpm.ok()) check_valid(cpm, c, model, "Critical Path, memory-aware");
        const auto hm = heft(c.g, model, c.devices, {.respect_memory = true});
        if (hm.ok()) check_valid(hm, c, model, "HEFT, memory-aware");
      }
    }

    // Only m-ETF is bound to fit limited devices, so only its placement is run on them.
    const list_schedule_result* runnable[] = {&plain, &cp, &h, &m};
    const char* names[] = {"ETF", "Critical Path", "HEFT", "m-ETF"};
    for (std::size_t i = limited ? 3 : 0; i < 4; ++i) {
      if (!runnable[i]->ok()) continue;
      if (comm == comm_mode::parallel) {
        check_reproduced(*runnable[i], c, model, names[i]);
        continue;
      }
      // Sequential channels: the simulator orders transfers by readiness, the engine by placement
      // (see list_scheduler.hpp); both are valid, and often the same.
      const auto sim = simulate(c.g, model, c.devices, std::span<const device_id>(runnable[i]->placement.device),
                                {.policy = ready_policy::strict_order, .priority = runnable[i]->placement.order});
      REQUIRE(sim.ok());
      ++sequential_runs;
      sequential_reproduced += sim.schedule.start == runnable[i]->schedule.start ? 1 : 0;
    }

    // Same input, same output.
    CHECK(same_schedule(etf(c.g, model, c.devices), plain));
  }
  MESSAGE("m-ETF ran out of memory on " << memory_failures << " of " << memory_runs << " limited cases");
  MESSAGE("sequential/duplex schedules reproduced exactly by the simulator: " << sequential_reproduced << " of "
                                                                              << sequential_runs);
  CHECK(memory_failures < memory_runs);
}

TEST_CASE("list_scheduler steps one vertex at a time and answers queries") {
  // a -> b, a -> c, b -> d, c -> d; every vertex takes 1 s, every transfer 0.5 s.
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 1), c = g.add_vertex("c", 1), d = g.add_vertex("d", 1);
  g.add_edge(a, b);
  g.add_edge(a, c);
  g.add_edge(b, d);
  g.add_edge(c, d);
  const auto devices = cluster::uniform(2, unlimited_memory, link_model{.latency = 0.5});
  const graph_model model(g, devices);
  list_scheduler scheduler(g, model, devices, etf_policy{});
  std::vector<vertex_id> steps;
  while (scheduler.step()) {
    steps.push_back(scheduler.last_placed());
    CHECK(scheduler.placed_count() == steps.size());
  }
  CHECK(steps == std::vector<vertex_id>{a, b, c, d});
  CHECK(scheduler.done());
  CHECK(scheduler.status() == status::ok);
  CHECK(scheduler.device_of(c) == 1);
  CHECK(scheduler.start_of(c) == 1.5);
  CHECK(scheduler.available_at(0) == 2);
  CHECK(scheduler.available_at(1) == 3.5);
  CHECK(scheduler.transfers().size() == 2);
  const auto r = scheduler.result();
  CHECK(r.ok());
  CHECK(r.schedule.makespan == 3.5);
  // init() starts over and the run is the same.
  scheduler.init();
  CHECK(scheduler.placed_count() == 0);
  CHECK(scheduler.run().placement.device == r.placement.device);
}

TEST_CASE("bad input throws with what and where; an empty graph is an empty schedule") {
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 1);
  g.add_edge(a, b);
  const auto devices = cluster::uniform(2);
  const graph_model model(g, devices);
  CHECK_THROWS_AS((void)etf(g, model, devices, {.group = {0}}), invalid_input);
  CHECK_THROWS_AS((void)etf(g, model, devices, {.fixed_device = {0, 7}}), invalid_input);
  CHECK_THROWS_AS((void)etf(g, model, devices, {.group = {0, 0}, .fixed_device = {0, 1}}), invalid_input);
  // place() takes only a ready vertex and a device its group may use.
  list_scheduler s(g, model, devices, etf_policy{}, {.group = {0, 0}});
  CHECK_THROWS_AS(s.place(b, 0), invalid_input);  // not ready
  CHECK_THROWS_AS(s.place(a, 2), invalid_input);  // no such device
  s.place(a, 1);
  CHECK_THROWS_AS(s.place(a, 1), invalid_input);  // placed already
  CHECK_THROWS_AS(s.place(b, 0), invalid_input);  // its group is on device 1
  s.place(b, 1);
  CHECK(s.done());
  const cluster none;
  const graph_model no_devices(g, none);
  CHECK_THROWS_AS((void)etf(g, no_devices, none), invalid_input);

  g.add_edge(b, a);
  try {
    (void)heft(g, model, devices);
    FAIL("a cycle must throw");
  } catch (const not_a_dag& e) {
    CHECK(std::string(e.what()).find("a -> b") != std::string::npos);
  }
  CHECK_THROWS_AS((void)etf(g, model, devices), not_a_dag);

  const graph empty;
  const graph_model empty_model(empty, devices);
  const auto r = m_etf(empty, empty_model, devices);
  CHECK(r.ok());
  CHECK(r.schedule.makespan == 0);
}

TEST_CASE("any adapted graph: a CSR snapshot with an array model") {
  const auto g = random_layered_dag({.vertices = 50, .layers = 5, .seed = 3});
  const csr_graph csr = snapshot(g);
  const auto devices = cluster::uniform(3, unlimited_memory, link_model{.latency = 1e-3, .bandwidth = 1e9});
  std::vector<seconds> compute;
  std::vector<byte_count> bytes;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) compute.push_back(g[v].compute);
  for (edge_id e = 0; e < g.edge_count(); ++e) bytes.push_back(g.bytes(e));
  const array_model model(devices, compute, bytes);
  const auto r = etf(csr, model, devices);
  REQUIRE(r.ok());
  CHECK(validate(r.schedule, csr, model, devices).ok());
  const graph_model same(g, devices);
  CHECK(r.schedule.start == etf(g, same, devices).schedule.start);
}

TEST_CASE("idle_gaps: earliest starts equal a walk over every gap, on hand and random cases") {
  detail::idle_gaps gaps;
  CHECK(gaps.earliest_start(3, 2) == 3);  // [0, ∞) idle
  gaps.occupy(2, 5);                      // idle: [0, 2) [5, ∞)
  gaps.occupy(6, 9);                      // idle: [0, 2) [5, 6) [9, ∞)
  CHECK(gaps.size() == 3);
  CHECK(gaps.earliest_start(0, 2) == 0);
  CHECK(gaps.earliest_start(0.5, 2) == 9);  // [0.5, 2.5) overlaps [2, 5); [5, 6) is too short
  CHECK(gaps.earliest_start(1, 1) == 1);
  CHECK(gaps.earliest_start(1.5, 1) == 5);
  CHECK(gaps.earliest_start(5.5, 0.5) == 5.5);
  CHECK(gaps.earliest_start(3, 0) == 5);  // a zero-length vertex waits for idle time too
  gaps.occupy(0, 2);                      // the first gap is gone
  CHECK(gaps.size() == 2);
  CHECK(gaps.earliest_start(0, 1) == 5);

  // Against a map of gaps walked in order, the engine's former rule, over random occupations.
  detail::portable_random random(12345);
  for (int round = 0; round < 50; ++round) {
    detail::idle_gaps tree;
    std::map<seconds, seconds> walk{{0.0, std::numeric_limits<seconds>::infinity()}};
    for (int step = 0; step < 300; ++step) {
      const seconds ready = std::floor(random.uniform(0, 200)) / 4, length = std::floor(random.uniform(0, 12)) / 8;
      seconds expected = -1;
      auto it = walk.upper_bound(ready);
      if (it != walk.begin()) --it;
      for (; it != walk.end(); ++it)
        if (std::max(it->first, ready) + length <= it->second) {
          expected = std::max(it->first, ready);
          break;
        }
      const seconds found = tree.earliest_start(ready, length);
      REQUIRE(found == expected);
      tree.occupy(found, found + length);
      auto hold = std::prev(walk.upper_bound(found));
      const auto [gap_begin, gap_end] = *hold;
      walk.erase(hold);
      if (gap_begin < found) walk.emplace(gap_begin, found);
      if (found + length < gap_end) walk.emplace(found + length, gap_end);
      REQUIRE(tree.size() == walk.size());
    }
  }
}
