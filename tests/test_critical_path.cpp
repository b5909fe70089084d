// Critical Path list scheduling (DOPPLER's baseline) on worked examples and random DAGs.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/schedule/validate.hpp>

#include <doctest/doctest.h>

using namespace gantry;

TEST_CASE("Critical Path takes the largest bottom level first, not the first ready vertex") {
  // y (1.5 s) alone; x1 -> x2 -> x3 (1 s each), on one device. Bottom levels: x1 3, x2 2, y 1.5,
  // x3 1, so y runs between x2 and x3; FIFO order (the published code's) and ETF with Baechi's
  // tie-break (Kahn order) both start with y.
  graph g;
  const auto y = g.add_vertex("y", 1.5), x1 = g.add_vertex("x1", 1), x2 = g.add_vertex("x2", 1),
             x3 = g.add_vertex("x3", 1);
  g.add_edge(x1, x2);
  g.add_edge(x2, x3);
  const auto one = cluster::uniform(1);
  const graph_model model(g, one);
  const auto bottom = bottom_level(g, model, one);
  CHECK(bottom[x1] == 3);
  CHECK(bottom[y] == 1.5);
  const auto r = critical_path_schedule(g, model, one);
  REQUIRE(r.ok());
  CHECK(r.placement.order == std::vector<vertex_id>{x1, x2, y, x3});
  CHECK(etf(g, model, one, {}, etf_tie_break::kahn_order).placement.order == std::vector<vertex_id>{y, x1, x2, x3});
  CHECK(validate(r.schedule, g, model, one).ok());
}

TEST_CASE("Critical Path puts the vertex on the device where it can start earliest") {
  // a (1 s) -> b (1 s) and a -> c (3 s), c has the larger bottom level. Transfers take 0.5 s.
  // a on d0 [0,1]; c next: d0 at 1, d1 at 1.5 -> d0 [1,4]; b: d0 at 4, d1 at 1.5 -> d1 [1.5,2.5].
  graph g;
  const auto a = g.add_vertex("a", 1), b = g.add_vertex("b", 1), c = g.add_vertex("c", 3);
  g.add_edge(a, b);
  g.add_edge(a, c);
  const auto devices = cluster::uniform(2, unlimited_memory, link_model{.latency = 0.5});
  const graph_model model(g, devices);
  const auto r = critical_path_schedule(g, model, devices);
  REQUIRE(r.ok());
  CHECK(r.placement.device == std::vector<device_id>{0, 1, 0});
  CHECK(r.schedule.start == std::vector<seconds>{0, 1.5, 1});
  CHECK(r.schedule.makespan == 4);
  CHECK(validate(r.schedule, g, model, devices).ok());
}

TEST_CASE("Critical Path with memory: devices that cannot hold the vertex are skipped, failure is a status") {
  graph g;
  const auto a = g.add_vertex(vertex_properties{.name = "a", .compute = 1, .persistent = 8});
  const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 1, .persistent = 8});
  g.add_edge(a, b);
  const auto roomy = cluster::uniform(2, 10);
  const graph_model model(g, roomy);
  const auto r = critical_path_schedule(g, model, roomy, {.respect_memory = true});
  REQUIRE(r.ok());
  CHECK(r.placement.device == std::vector<device_id>{0, 1});
  CHECK(validate(r.schedule, g, model, roomy).ok());
  const auto tight = cluster::uniform(2, 7);
  const graph_model tight_model(g, tight);
  const auto failed = critical_path_schedule(g, tight_model, tight, {.respect_memory = true});
  CHECK(failed.placement.outcome.code == status::out_of_memory);
  CHECK(failed.placement.outcome.message.find("Critical Path: no device can hold vertex 'a'") != std::string::npos);
}

TEST_CASE("Critical Path on random DAGs with heterogeneous speeds: valid and deterministic") {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const auto g = random_layered_dag({.vertices = 60, .layers = 6, .seed = seed});
    const cluster devices({{.name = "slow", .speed = 0.5}, {.name = "fast", .speed = 2}, {.name = "mid"}},
                          link_model{.latency = 1e-3, .bandwidth = 1e9},
                          seed % 2 ? comm_mode::parallel : comm_mode::duplex);
    const graph_model model(g, devices);
    const auto r = critical_path_schedule(g, model, devices);
    REQUIRE(r.ok());
    const auto report = validate(r.schedule, g, model, devices);
    CHECK_MESSAGE(report.ok(), report.to_string());
    CHECK(critical_path_schedule(g, model, devices).schedule.start == r.schedule.start);
  }
}
