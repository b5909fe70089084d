// Strict replay enqueued ahead (exec/replay_ahead.hpp): the plan made from a simulated schedule,
// run on the model's clock (ahead_clock), gives back the simulation where links are shared
// (sequential, duplex), and a schedule validate() accepts with exact durations everywhere.
#include <gantry/exec/replay_ahead.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace gantry;

namespace {
using placement_t = std::vector<device_id>;

bool same_times(const schedule& a, const schedule& b) {
  const auto close = [](double x, double y) { return std::abs(x - y) <= 1e-12 * std::max(1.0, std::abs(y)); };
  if (a.start.size() != b.start.size() || a.transfers.size() != b.transfers.size()) return false;
  for (std::size_t v = 0; v < a.start.size(); ++v)
    if (!close(a.start[v], b.start[v]) || !close(a.finish[v], b.finish[v])) return false;
  for (std::size_t k = 0; k < a.transfers.size(); ++k)
    if (!close(a.transfers[k].start, b.transfers[k].start) || !close(a.transfers[k].finish, b.transfers[k].finish))
      return false;
  return true;
}
}  // namespace

TEST_CASE("a plan lists every activity after what it waits for, with cross-stream waits only") {
  graph g;
  const auto a = g.add_vertex("a", 1e-3);
  const auto b = g.add_vertex("b", 2e-3);
  const auto c = g.add_vertex("c", 1e-3);
  g.add_edge(a, b, 1000);
  g.add_edge(a, c, 1000);
  g.add_edge(b, c, 1000);
  const cluster devices =
      cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e9}, comm_mode::sequential);
  const graph_model model(g, devices);
  const placement_t p{0, 1, 0};
  const auto simulated = simulate(g, model, devices, p, {.policy = ready_policy::strict_order});
  REQUIRE(simulated.ok());
  const auto plan = make_ahead_plan(g, model, devices, simulated.schedule);
  REQUIRE(plan.activities.size() == 3 + simulated.schedule.transfers.size());
  CHECK(simulated.schedule.transfers.size() == 2);  // a to device 1, b back to device 0
  std::vector<bool> seen(plan.activities.size(), false);
  for (std::size_t i = 0; i < plan.activities.size(); ++i) {
    for (const auto j : plan.activities[i].after) CHECK(j < i);
    seen[i] = true;
  }
  // c waits for b's copy (another stream) but not for a (its own device's stream before it).
  const auto at = [&](bool copy, std::uint32_t id) {
    for (std::uint32_t i = 0; i < plan.activities.size(); ++i)
      if (plan.activities[i].is_copy == copy && plan.activities[i].id == id) return i;
    return std::uint32_t{0xffffffff};
  };
  CHECK(plan.activities[at(false, c)].after.size() == 1);
  CHECK(plan.activities[at(false, a)].after.empty());
  ahead_clock clock;
  const auto replayed = replay_ahead(g, model, devices, simulated.schedule, clock);
  CHECK(same_times(replayed.schedule, simulated.schedule));
  CHECK(validate(replayed.schedule, g, model, devices).ok());
}

TEST_CASE("on the model's clock a plan replays the strict simulation of seeded random DAGs") {
  std::size_t equal = 0, cases = 0;
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      const auto c = test::make_random_case(seed, comm, false);
      const graph_model model(c.g, c.devices);
      placement_t p(c.g.vertex_count());
      for (vertex_id v = 0; v < p.size(); ++v) p[v] = static_cast<device_id>((v * 5 + seed) % c.devices.device_count());
      CAPTURE(seed);
      CAPTURE(static_cast<int>(comm));
      const auto simulated =
          simulate(c.g, model, c.devices, p, {.policy = ready_policy::strict_order, .cache_transfers = seed % 3 != 0});
      REQUIRE(simulated.ok());
      ahead_clock clock;
      const auto replayed = replay_ahead(c.g, model, c.devices, simulated.schedule, clock);
      ++cases;
      const auto report = validate(replayed.schedule, c.g, model, c.devices);
      CHECK_MESSAGE(report.ok(), report.to_string());
      if (seed % 5 != 0)  // else zero-time vertices tie, and summarize() orders ties by id
        CHECK(replayed.schedule.order == simulated.schedule.order);
      if (comm != comm_mode::parallel) {
        CHECK(same_times(replayed.schedule, simulated.schedule));
        CHECK(replayed.schedule.makespan == doctest::Approx(simulated.schedule.makespan).epsilon(1e-12));
      } else {
        // Copies of one device pair queue on one stream: never earlier than simulated.
        CHECK(replayed.schedule.makespan >= simulated.schedule.makespan * (1 - 1e-12));
      }
      equal += same_times(replayed.schedule, simulated.schedule) ? 1 : 0;
    }
  }
  CHECK(cases == 360);
  CHECK(equal >= 240);
}

TEST_CASE("a plan refuses a schedule of another graph or a cross-device edge without a transfer") {
  graph g;
  const auto a = g.add_vertex("a", 1e-3);
  const auto b = g.add_vertex("b", 1e-3);
  g.add_edge(a, b, 100);
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e9});
  const graph_model model(g, devices);
  const placement_t p{0, 1};
  auto s = simulate(g, model, devices, p).schedule;
  s.transfers.clear();
  CHECK_THROWS_WITH_AS(make_ahead_plan(g, model, devices, s),
                       doctest::Contains("edge 0 -> 1 crosses device 0 -> 1 but no transfer carries it"),
                       invalid_input);
  auto short_schedule = simulate(g, model, devices, p).schedule;
  short_schedule.device.pop_back();
  CHECK_THROWS_AS(make_ahead_plan(g, model, devices, short_schedule), invalid_input);
  short_schedule = simulate(g, model, devices, p).schedule;
  short_schedule.device[1] = 7;
  CHECK_THROWS_WITH_AS(make_ahead_plan(g, model, devices, short_schedule),
                       doctest::Contains("vertex 1 is on device 7 of 2"), invalid_input);
}
