// makespan_lower_bound(): the critical-path and work bounds on hand-worked graphs, and no placer's
// schedule (its own or the simulator's) ever beats them on seeded random DAGs.
#include <gantry/order/lower_bound.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

using namespace gantry;

TEST_CASE("a chain is bound by its path on the fastest device") {
  // a(1) -> b(2) -> c(3) on devices of speed 1 and 2: the path takes 6 / 2 = 3 on the fast one;
  // the work 6 spread over a total speed of 3 takes 2.
  graph g;
  g.add_vertex("a", 1);
  g.add_vertex("b", 2);
  g.add_vertex("c", 3);
  g.add_edge(0, 1, 1000);
  g.add_edge(1, 2, 1000);
  const cluster c({{.name = "slow", .speed = 1}, {.name = "fast", .speed = 2}}, {.latency = 1});
  const graph_model model(g, c);
  const auto bound = makespan_lower_bound(g, model, c);
  CHECK(bound.critical_path == doctest::Approx(3.0));
  CHECK(bound.work == doctest::Approx(2.0));
  CHECK(bound.value == doctest::Approx(3.0));
  CHECK(bound.path == std::vector<vertex_id>{0, 1, 2});
  CHECK(std::string(bound.binding()) == "critical path");
}

TEST_CASE("independent vertices are bound by their work over the total speed") {
  // Four vertices of 1 s on devices of speed 1 and 3: the path is 1/3, the work 4 / (1 + 3) = 1.
  graph g;
  for (int i = 0; i < 4; ++i) g.add_vertex("v" + std::to_string(i), 1);
  const cluster c({{.name = "slow", .speed = 1}, {.name = "fast", .speed = 3}});
  const graph_model model(g, c);
  const auto bound = makespan_lower_bound(g, model, c);
  CHECK(bound.critical_path == doctest::Approx(1.0 / 3));
  CHECK(bound.work == doctest::Approx(1.0));
  CHECK(bound.value == doctest::Approx(1.0));
  CHECK(std::string(bound.binding()) == "work");
  CHECK(bound.path.size() == 1);
}

TEST_CASE("devices of different kinds: each vertex counts at its cheapest device") {
  // x takes 4 s on a cpu and 1 s on a gpu; y the reverse. Equal weights give (1 + 1) / 2 = 1.
  graph g;
  g.add_vertex("x", 4);
  g.add_vertex("y", 1);
  g.set_compute(0, "gpu", 1);
  g.set_compute(1, "gpu", 4);
  const cluster c({{.name = "cpu", .kind = "default"}, {.name = "gpu", .kind = "gpu"}});
  const graph_model model(g, c);
  const auto bound = makespan_lower_bound(g, model, c);
  CHECK(bound.critical_path == doctest::Approx(1.0));
  CHECK(bound.work == doctest::Approx(1.0));
  // Both on their cheap device run in 1 s: the bound is met.
  const std::vector<device_id> best{1, 0};
  const auto run = simulate(g, model, c, best);
  REQUIRE(run.ok());
  CHECK(run.schedule.makespan == doctest::Approx(bound.value));
}

TEST_CASE("bad input: no devices, a cycle") {
  graph g;
  g.add_vertex("a", 1);
  g.add_vertex("b", 1);
  g.add_edge(0, 1);
  const cluster none;
  const graph_model empty_model(g, none);
  CHECK_THROWS_AS((void)makespan_lower_bound(g, empty_model, none), invalid_input);
  g.add_edge(1, 0);
  const auto c = cluster::uniform(2);
  const graph_model model(g, c);
  CHECK_THROWS_AS((void)makespan_lower_bound(g, model, c), not_a_dag);
  const graph nothing;
  const graph_model nothing_model(nothing, c);
  CHECK(makespan_lower_bound(nothing, nothing_model, c).value == 0);
}

TEST_CASE("no placer beats the bound, in any communication mode, with or without memory limits") {
  std::size_t checked = 0, met = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed)
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex})
      for (const bool limited : {false, true}) {
        const auto c = test::make_random_case(seed, comm, limited, {.seed_factor = 104729, .max_vertices = 40});
        const graph_model model(c.g, c.devices);
        const auto bound = makespan_lower_bound(c.g, model, c.devices);
        CAPTURE(seed);
        CAPTURE(to_string(comm));
        CAPTURE(limited);
        CHECK(bound.value >= bound.critical_path);
        CHECK(bound.value >= bound.work);
        for (const auto& entry : placers()) {
          CAPTURE(entry.name);
          const auto r = entry.place({c.g, model, c.devices});
          if (!r.placement.ok()) continue;
          if (r.own_schedule) CHECK(r.own_schedule->makespan >= bound.value * (1 - 1e-12));
          const auto sim = simulate(c.g, model, c.devices, std::span<const device_id>(r.placement.device),
                                    {.priority = r.placement.order});
          if (!sim.ok()) continue;
          const auto report = validate(sim.schedule, c.g, model, c.devices);
          CHECK_MESSAGE(report.ok(), report.to_string());
          CHECK(sim.schedule.makespan >= bound.value * (1 - 1e-12));
          ++checked;
          if (sim.schedule.makespan <= bound.value * (1 + 1e-9)) ++met;
        }
      }
  MESSAGE(checked << " placements checked, " << met << " meet the bound exactly");
  CHECK(checked > 1000);
  CHECK(met > 0);  // single-vertex and single-device cases meet it
}
