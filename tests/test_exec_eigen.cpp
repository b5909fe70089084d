// Real work on the CPU backend (exec/eigen_operations.hpp with cpu_kernel::work): DOPPLER workloads
// run as Eigen products and element-wise passes on 2 device threads, every vertex once, and every
// measured schedule passes validate(); profiling times every shaped vertex and keeps a timed
// vertex's time; a work function that throws ends the run with its exception and leaves the
// backend ready for the next. No assertion depends on how long anything took, only on order,
// counts and validity.
#include "support.hpp"

#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/eigen_operations.hpp>
#include <gantry/exec/executor.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/workloads/doppler.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

using namespace gantry;

TEST_CASE("DOPPLER workloads run their real operations on two device threads and validate") {
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e9}, comm_mode::duplex);
  for (const graph& raw : {chain_mm({.dimension = 24}), ffnn({.batch = 32, .features = 8, .hidden = 16, .classes = 4}),
                           llama_block({.sequence = 8, .hidden = 16, .heads = 4, .ffn_hidden = 24, .shards = 2})}) {
    eigen_operations ops(operations_of(raw), 2);
    const graph g = with_profiled_times(raw, profile_operations(ops, raw, {.runs = 1}));
    const graph_model model(g, devices);
    const auto placed = m_etf(g, model, devices);
    REQUIRE(placed.ok());
    std::vector<std::atomic<int>> calls(g.vertex_count());
    cpu_backend backend({.kernel = cpu_kernel::work, .work = [&](const vertex_launch& v) {
                           calls[v.vertex].fetch_add(1);
                           ops(v);
                         }});
    const auto r = execute(g, model, devices, std::span<const device_id>(placed.placement.device), backend);
    REQUIRE(r.ok());
    const auto report = validate(r.schedule, g, model, devices, {.exact_durations = false, .tolerance = 1e-9});
    INFO(report.to_string());
    REQUIRE(report.ok());
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
      CHECK(calls[v].load() == 1);
      CHECK(r.schedule.device[v] == placed.placement.device[v]);
    }
  }
}

TEST_CASE("profiling times every shaped vertex and keeps a timed vertex's compute time") {
  graph g;
  const auto a = g.add_vertex({.name = "a", .output = 64 * 64 * 4, .op = "input"});
  const auto b = g.add_vertex({.name = "b", .output = 64 * 64 * 4, .op = "input"});
  const auto big = g.add_vertex({.name = "big", .output = 64 * 64 * 4, .op = "matmul", .flops = 2.0 * 64 * 64 * 64});
  const auto small = g.add_vertex({.name = "small", .output = 4 * 4 * 4, .op = "matmul", .flops = 2.0 * 4 * 4 * 4});
  const auto conv = g.add_vertex({.name = "conv", .compute = 3e-3, .output = 4, .op = "Conv2D"});
  g.add_edge(a, big, 64 * 64 * 4);
  g.add_edge(b, big, 64 * 64 * 4);
  g.add_edge(a, small, 4 * 4 * 4);
  g.add_edge(b, small, 4 * 4 * 4);
  g.add_edge(big, conv, 4);
  eigen_operations ops(operations_of(g), 1);
  const auto times = profile_operations(ops, g, {.runs = 3});
  REQUIRE(times.size() == 5);
  CHECK(times[a] == 0);
  CHECK(times[conv] == 3e-3);
  CHECK(times[small] > 0);
  CHECK(times[big] > 0);
  const graph profiled = with_profiled_times(g, times);
  CHECK(profiled[big].compute == times[big]);
  CHECK(profiled[conv].compute == 3e-3);
  CHECK_THROWS_AS((void)profile_operations(ops, g, {.runs = 0}), invalid_input);
  CHECK_THROWS_WITH_AS((void)profile_operations(ops, g, {.runs = 1, .co_runners = 1}),
                       doctest::Contains("1 co-runners need 2 devices' buffers"), invalid_input);
  // Beside a device that runs the graph's operations in a loop: every shaped vertex timed again.
  eigen_operations two(operations_of(g), 2);
  const auto beside = profile_operations(two, g, {.runs = 1, .co_runners = 1});
  CHECK(beside[conv] == 3e-3);
  CHECK(beside[small] > 0);
  CHECK(beside[big] > 0);
  CHECK_THROWS_AS((void)with_profiled_times(g, std::vector<seconds>(2)), invalid_input);
  CHECK_THROWS_WITH_AS((ops({.vertex = 9, .device = 0})), doctest::Contains("vertex 9"), invalid_input);
  CHECK_THROWS_WITH_AS((ops({.vertex = big, .device = 1})), doctest::Contains("device 1 of 1"), invalid_input);
  CHECK_THROWS_AS(eigen_operations(operations_of(g), 0), invalid_input);
}

TEST_CASE("a work function that throws ends the run with its exception; the backend runs the next") {
  graph g;
  const auto x = g.add_vertex("x", 1e-4);
  const auto y = g.add_vertex("y", 1e-4);
  const auto z = g.add_vertex("z", 1e-4);
  g.add_edge(x, z, 8);
  g.add_edge(y, z, 8);
  const cluster devices = cluster::uniform(2);
  const graph_model model(g, devices);
  const std::vector<device_id> p{0, 1, 0};
  bool fail = true;
  cpu_backend backend({.kernel = cpu_kernel::work, .work = [&](const vertex_launch& v) {
                         if (fail && v.vertex == y) throw std::runtime_error("vertex y failed");
                       }});
  CHECK_THROWS_WITH_AS((void)execute(g, model, devices, std::span<const device_id>(p), backend), "vertex y failed",
                       std::runtime_error);
  fail = false;
  const auto r = execute(g, model, devices, std::span<const device_id>(p), backend);
  REQUIRE(r.ok());
  CHECK(r.schedule.start[z] >= r.schedule.finish[y]);
  CHECK_THROWS_WITH_AS(cpu_backend({.kernel = cpu_kernel::work}), doctest::Contains("needs a work function"),
                       invalid_input);
}
