// The executor with the CPU backend: hand-made graphs on 2 devices (a chain across devices, a
// cached tensor, a fork that must wait for memory), every measured schedule checked by validate();
// per-device orders equal to the simulator's where the rules leave no choice to timing; strict
// order; out of memory as an outcome with its fields; bad input as exceptions; and seeded random
// DAGs with memory limits in every communication mode. No assertion depends on how long anything
// took: only on order, counts, bytes and validity.
#include "support.hpp"

#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/executor.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/event_loop.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace gantry;

namespace {

using placement_t = std::vector<device_id>;

// Measured runs last as long as they last: validate() checks everything but durations.
void require_valid(const execution_result& r, const graph& g, const graph_model& model, const cluster& c) {
  REQUIRE(r.ok());
  const auto report = validate(r.schedule, g, model, c, {.exact_durations = false, .tolerance = 1e-9});
  INFO(report.to_string());
  REQUIRE(report.ok());
}

// 2 ms per vertex, 1 ms + bytes / (1 MB/s) per transfer.
cluster two_devices(comm_mode comm = comm_mode::parallel, byte_count capacity = unlimited_memory) {
  return cluster::uniform(2, capacity, {.latency = 1e-3, .bandwidth = 1e6}, comm);
}

}  // namespace

TEST_CASE("a chain across two devices runs in order with one transfer per hop") {
  graph g;
  const auto a = g.add_vertex("a", 2e-3);
  const auto b = g.add_vertex("b", 2e-3);
  const auto c = g.add_vertex("c", 2e-3);
  g.add_edge(a, b, 1000);
  g.add_edge(b, c, 1000);
  const cluster devices = two_devices();
  const graph_model model(g, devices);
  const placement_t p{0, 1, 0};
  cpu_backend backend;
  const auto r = execute(g, model, devices, std::span<const device_id>(p), backend);
  require_valid(r, g, model, devices);
  const auto& s = r.schedule;
  REQUIRE(s.transfers.size() == 2);
  CHECK(s.transfers[0].tensor == a);
  CHECK(s.transfers[0].from == 0);
  CHECK(s.transfers[0].to == 1);
  CHECK(s.transfers[1].tensor == b);
  CHECK(s.bytes_moved == 2000);
  CHECK(s.start[b] >= s.transfers[0].finish);
  CHECK(s.start[c] >= s.transfers[1].finish);
  CHECK(s.order[0] == std::vector<vertex_id>{a, c});
  CHECK(s.order[1] == std::vector<vertex_id>{b});
  // A copy is paced to the link model: it lasts at least latency + bytes / bandwidth = 2 ms.
  CHECK(s.transfers[0].finish - s.transfers[0].start >= 2e-3);
  CHECK(s.makespan == s.finish[c]);
}

TEST_CASE("a tensor is sent once to a device and serves every consumer there") {
  graph g;
  const auto a = g.add_vertex("a", 1e-3);
  const auto b = g.add_vertex("b", 1e-3);
  const auto c = g.add_vertex("c", 1e-3);
  g.add_edge(a, b, 500);
  g.add_edge(a, c, 500);
  const cluster devices = two_devices();
  const graph_model model(g, devices);
  const placement_t p{0, 1, 1};
  cpu_backend backend;
  auto r = execute(g, model, devices, std::span<const device_id>(p), backend);
  require_valid(r, g, model, devices);
  CHECK(r.schedule.transfers.size() == 1);
  CHECK(r.schedule.bytes_moved == 500);
  r = execute(g, model, devices, std::span<const device_id>(p), backend, {.cache_transfers = false});
  require_valid(r, g, model, devices);
  CHECK(r.schedule.transfers.size() == 2);
  CHECK(r.schedule.bytes_moved == 1000);
}

TEST_CASE("a start that does not fit waits for memory, as in the simulator") {
  // Device 0 holds 100 bytes. x and y (60-byte outputs) both feed z: while x's output is held, y
  // cannot start, so the run must be x, then sink-x frees it, then y. The simulator decides the
  // same order; the measured peak never exceeds the capacity.
  graph g;
  const auto x = g.add_vertex({.name = "x", .compute = 1e-3, .output = 60});
  const auto y = g.add_vertex({.name = "y", .compute = 1e-3, .output = 60});
  const auto sx = g.add_vertex({.name = "sx", .compute = 1e-3, .output = 10});
  const auto sy = g.add_vertex({.name = "sy", .compute = 1e-3, .output = 10});
  const auto z = g.add_vertex({.name = "z", .compute = 1e-3});
  g.add_edge(x, sx, 60);
  g.add_edge(y, sy, 60);
  g.add_edge(sx, z, 10);
  g.add_edge(sy, z, 10);
  const cluster devices = two_devices(comm_mode::parallel, 100);
  const graph_model model(g, devices);
  const placement_t p{0, 0, 0, 0, 0};
  const auto simulated = simulate(g, model, devices, std::span<const device_id>(p));
  REQUIRE(simulated.ok());
  cpu_backend backend;
  const auto r = execute(g, model, devices, std::span<const device_id>(p), backend);
  require_valid(r, g, model, devices);
  CHECK(r.schedule.order[0] == simulated.schedule.order[0]);
  CHECK(r.schedule.order[0] == std::vector<vertex_id>{x, sx, y, sy, z});
  CHECK(r.schedule.peak_memory[0] <= 100);
  CHECK(r.schedule.peak_memory[0] == simulated.schedule.peak_memory[0]);
}

TEST_CASE("strict order runs each device's vertices exactly in the priority order") {
  graph g;
  const auto a = g.add_vertex("a", 1e-3);
  const auto b = g.add_vertex("b", 1e-3);
  const auto c = g.add_vertex("c", 1e-3);
  const auto d = g.add_vertex("d", 1e-3);
  g.add_edge(a, c, 100);
  g.add_edge(b, d, 100);
  const cluster devices = two_devices(comm_mode::sequential);
  const graph_model model(g, devices);
  const placement_t p{0, 0, 1, 1};
  const std::vector<vertex_id> priority{b, a, d, c};
  cpu_backend backend;
  const auto r = execute(g, model, devices, std::span<const device_id>(p), backend,
                         {.policy = ready_policy::strict_order, .priority = priority});
  require_valid(r, g, model, devices);
  CHECK(r.schedule.order[0] == std::vector<vertex_id>{b, a});
  CHECK(r.schedule.order[1] == std::vector<vertex_id>{d, c});
}

TEST_CASE("running out of memory is an outcome naming the vertex, device and bytes") {
  graph g;
  const auto a = g.add_vertex({.name = "a", .compute = 1e-3, .output = 10});
  const auto big = g.add_vertex({.name = "big", .compute = 1e-3, .temporary = 500});
  g.add_edge(a, big, 10);
  const cluster devices = two_devices(comm_mode::parallel, 200);
  const graph_model model(g, devices);
  const placement_t p{0, 1};
  for (const bool wait : {true, false}) {
    CAPTURE(wait);
    cpu_backend backend;
    const auto r = execute(g, model, devices, std::span<const device_id>(p), backend, {.wait_for_memory = wait});
    REQUIRE_FALSE(r.ok());
    CHECK(r.outcome.code == status::out_of_memory);
    CHECK(r.outcome.vertex == big);
    CHECK(r.outcome.device == 1);
    CHECK(r.outcome.needed == (wait ? 500u : 500u));
    // The received copy of a's 10 bytes is still held on device 1 (until big runs).
    CHECK(r.outcome.available == 190);
    CHECK(r.outcome.time.has_value());
    CHECK(r.schedule.finish[a] > 0);  // what ran before the failure is recorded
  }
}

TEST_CASE("bad input throws and names what was wrong") {
  graph g;
  const auto a = g.add_vertex("a", 1e-3);
  const auto b = g.add_vertex("b", 1e-3);
  g.add_edge(a, b, 10);
  const cluster devices = two_devices();
  const graph_model model(g, devices);
  cpu_backend backend;
  const placement_t short_placement{0};
  CHECK_THROWS_AS(execute(g, model, devices, std::span<const device_id>(short_placement), backend), invalid_input);
  const placement_t out_of_range{0, 2};
  CHECK_THROWS_WITH_AS(execute(g, model, devices, std::span<const device_id>(out_of_range), backend),
                       doctest::Contains("device 2"), invalid_input);
  const placement_t p{0, 1};
  const std::vector<vertex_id> twice{a, a};
  CHECK_THROWS_AS(execute(g, model, devices, std::span<const device_id>(p), backend, {.priority = twice}),
                  invalid_input);
  const std::vector<vertex_id> backwards{b, a};
  const placement_t same{0, 0};
  CHECK_THROWS_WITH_AS(execute(g, model, devices, std::span<const device_id>(same), backend,
                               {.policy = ready_policy::strict_order, .priority = backwards}),
                       doctest::Contains("before one of its inputs"), invalid_input);
  graph cyclic;
  const auto u = cyclic.add_vertex("u", 1e-3);
  const auto v = cyclic.add_vertex("v", 1e-3);
  cyclic.add_edge(u, v);
  cyclic.add_edge(v, u);
  const graph_model cyclic_model(cyclic, devices);
  CHECK_THROWS_AS(execute(cyclic, cyclic_model, devices, std::span<const device_id>(p), backend), not_a_dag);
  // A transfer time found to be NaN mid-run: refused once a is done, after the launched work ends.
  const auto broken =
      model_from([](vertex_id, device_id) { return 1e-3; }, [](edge_id, device_id, device_id) { return std::nan(""); });
  CHECK_THROWS_WITH_AS(execute(g, broken, devices, std::span<const device_id>(p), backend),
                       doctest::Contains("a run needs a finite time"), invalid_input);
  // The backend is still usable after a refused run.
  const auto r = execute(g, model, devices, std::span<const device_id>(p), backend);
  require_valid(r, g, model, devices);
}

TEST_CASE("every kernel of the CPU backend runs a graph; a busy loop needs its rate") {
  graph g;
  const auto a = g.add_vertex("a", 1e-3);
  const auto b = g.add_vertex("b", 1e-3);
  const auto c = g.add_vertex("c", 0.0);  // no work: a launch and a completion still happen
  g.add_edge(a, c, 64);
  g.add_edge(b, c, 64);
  const cluster devices = two_devices(comm_mode::duplex);
  const graph_model model(g, devices);
  const placement_t p{0, 1, 0};
  for (const cpu_kernel kernel : {cpu_kernel::busy_loop, cpu_kernel::spin, cpu_kernel::sleep}) {
    CAPTURE(to_string(kernel));
    cpu_backend backend({.kernel = kernel, .loop_rate = calibrate_busy_loop(0.005)});
    const auto r = execute(g, model, devices, std::span<const device_id>(p), backend);
    require_valid(r, g, model, devices);
    CHECK(r.schedule.transfers.size() == 1);
    CHECK(r.schedule.order[0].back() == c);
  }
  CHECK_THROWS_AS(cpu_backend({.kernel = cpu_kernel::busy_loop}), invalid_input);
}

TEST_CASE("seeded random DAGs with memory limits run and validate in every communication mode") {
  // Device threads and the executor that sleep at once, and ones that poll before sleeping (the
  // default where every thread has a core): the same runs, valid either way.
  std::size_t ran = 0, out_of_memory = 0;
  for (const bool polling : {false, true})
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      cpu_backend backend({.spin_wait = polling ? 50e-6 : 0.0});
      CAPTURE(polling);
      for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
        CAPTURE(seed);
        CAPTURE(to_string(comm));
        auto test_case = test::make_random_case(seed, comm, seed % 2 == 0, {.max_vertices = 16});
        // Scale times down so the whole suite stays short under sanitizers.
        for (vertex_id v = 0; v < test_case.g.vertex_count(); ++v) test_case.g[v].compute *= 0.1;
        const graph& g = test_case.g;
        const cluster& c = test_case.devices;
        const graph_model model(g, c);
        placement_t p(g.vertex_count());
        for (vertex_id v = 0; v < p.size(); ++v) p[v] = static_cast<device_id>((v * 7 + seed) % c.device_count());
        const auto simulated = simulate(g, model, c, std::span<const device_id>(p));
        const auto r = execute(g, model, c, std::span<const device_id>(p), backend);
        if (!r.ok()) {
          CHECK(r.outcome.code == status::out_of_memory);
          CHECK(r.outcome.device < c.device_count());
          CHECK(r.outcome.vertex < g.vertex_count());
          ++out_of_memory;
          continue;
        }
        require_valid(r, g, model, c);
        ++ran;
        for (device_id d = 0; d < c.device_count(); ++d)
          CHECK(r.schedule.order[d].size() == static_cast<std::size_t>(std::count(p.begin(), p.end(), d)));
        if (simulated.ok()) CHECK(r.schedule.transfers.size() == simulated.schedule.transfers.size());
      }
    }
  CHECK(ran >= 48);
  MESSAGE(ran << " runs, " << out_of_memory << " out of memory");
}

TEST_CASE("over a virtual clock the executor is the simulator, field for field") {
  // One event loop: the simulator is the executor's loop over virtual_clock. Every policy, cache
  // setting and memory rule, with limited memory (some runs fail) and zero-length vertices.
  const ready_policy policies[] = {ready_policy::placement_order, ready_policy::strict_order, ready_policy::fifo,
                                   ready_policy::bottom_level};
  std::size_t failed = 0, compared = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      const auto c = test::make_random_case(seed, comm, seed % 2 == 0);
      const graph_model model(c.g, c.devices);
      placement_t p(c.g.vertex_count());
      for (vertex_id v = 0; v < p.size(); ++v) p[v] = static_cast<device_id>((v * 7 + seed) % c.devices.device_count());
      CAPTURE(seed);
      const simulate_options options{
          .policy = policies[seed % 4], .cache_transfers = seed % 3 != 0, .wait_for_memory = seed % 5 != 1};
      const auto simulated = simulate(c.g, model, c.devices, p, options);
      virtual_clock clock;
      const auto executed =
          execute(c.g, model, c.devices, std::span<const device_id>(p), clock, execute_options_from(options));
      ++compared;
      if (!simulated.ok()) ++failed;
      CHECK(executed.outcome.code == simulated.outcome.code);
      CHECK(executed.outcome.vertex == simulated.outcome.vertex);
      CHECK(executed.outcome.device == simulated.outcome.device);
      CHECK(executed.outcome.time == simulated.outcome.time);
      CHECK(executed.outcome.needed == simulated.outcome.needed);
      CHECK(executed.outcome.available == simulated.outcome.available);
      const auto& a = executed.schedule;
      const auto& b = simulated.schedule;
      CHECK(a.start == b.start);
      CHECK(a.finish == b.finish);
      CHECK(a.order == b.order);
      CHECK(a.transfers.size() == b.transfers.size());
      for (std::size_t k = 0; k < std::min(a.transfers.size(), b.transfers.size()); ++k) {
        CHECK(a.transfers[k].start == b.transfers[k].start);
        CHECK(a.transfers[k].finish == b.transfers[k].finish);
      }
      CHECK(a.makespan == b.makespan);
      CHECK(a.busy == b.busy);
      CHECK(a.peak_memory == b.peak_memory);
      CHECK(a.bytes_moved == b.bytes_moved);
      if (simulated.ok()) CHECK(validate(a, c.g, model, c.devices).ok());
    }
  }
  CHECK(compared == 180);
  CHECK(failed > 0);  // the limits bite sometimes
}
