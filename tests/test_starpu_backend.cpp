// The StarPU backend (exec/starpu_backend.hpp), built only where StarPU is installed: placements
// run as StarPU tasks, decided by the executor or submitted ahead as a whole plan, give measured
// schedules that validate() accepts, in the order the simulation fixed; StarPU's own scheduler
// runs a graph it places itself; and bad options or launches are refused by name.
#include <gantry/exec/starpu_backend.hpp>
#include <gantry/exec/study.hpp>
#include <gantry/schedule/validate.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <stdexcept>

using namespace gantry;

namespace {
using placement_t = std::vector<device_id>;

// A seeded random DAG on 2 devices joined by a sequential link (one copy at a time, which the one
// copy engine runs as the simulation does), its times scaled down to run in a few milliseconds.
test::random_case small_case(std::uint64_t seed) {
  test::random_case c;
  do {
    c = test::make_random_case(seed, comm_mode::sequential, false, {.max_vertices = 24});
    ++seed;
  } while (c.devices.device_count() != 2);
  c.g = with_compute_times(c.g, 0.25, 0);
  return c;
}

placement_t spread(const graph& g, std::uint64_t seed) {
  placement_t p(g.vertex_count());
  for (vertex_id v = 0; v < p.size(); ++v) p[v] = static_cast<device_id>((v * 5 + seed) % 2);
  return p;
}

// Each device's vertices, in the order they started.
std::vector<std::vector<vertex_id>> orders(const schedule& s) { return s.order; }
}  // namespace

TEST_CASE("a placement replayed ahead on StarPU validates and keeps the simulation's order per device") {
  starpu_backend backend({.devices = 2});
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    const auto c = small_case(seed);
    const graph_model model(c.g, c.devices);
    const auto p = spread(c.g, seed);
    const auto simulated = simulate(c.g, model, c.devices, p, {.policy = ready_policy::strict_order});
    REQUIRE(simulated.ok());
    const auto measured = replay_ahead(c.g, model, c.devices, simulated.schedule, backend);
    REQUIRE(measured.ok());
    const auto report = validate(measured.schedule, c.g, model, c.devices, {.exact_durations = false});
    CHECK_MESSAGE(report.ok(), report.to_string());
    CHECK(measured.schedule.transfers.size() == simulated.schedule.transfers.size());
    if (seed % 5 != 0) CHECK(orders(measured.schedule) == orders(simulated.schedule));  // else zero-time ties
    // Every vertex and copy lasts at least its modelled time, so the run is never shorter.
    CHECK(measured.schedule.makespan >= simulated.schedule.makespan * (1 - 1e-9));
    CHECK(measured.host_seconds > 0);
  }
}

TEST_CASE("the executor's decisions run on StarPU as pinned tasks and validate") {
  starpu_backend backend({.devices = 2});
  for (std::uint64_t seed = 11; seed <= 16; ++seed) {
    CAPTURE(seed);
    const auto c = small_case(seed);
    const graph_model model(c.g, c.devices);
    const auto p = spread(c.g, seed);
    const auto run = execute(c.g, model, c.devices, p, backend);
    REQUIRE(run.ok());
    const auto report = validate(run.schedule, c.g, model, c.devices, {.exact_durations = false});
    CHECK_MESSAGE(report.ok(), report.to_string());
    for (vertex_id v = 0; v < c.g.vertex_count(); ++v) CHECK(run.schedule.device[v] == p[v]);
  }
}

TEST_CASE("a vertex with more inputs than a StarPU task has fixed buffers replays ahead") {
  graph g;
  std::vector<vertex_id> sources;
  for (int i = 0; i < 12; ++i)
    sources.push_back(g.add_vertex({.name = "in" + std::to_string(i), .compute = 1e-4, .output = 1024}));
  const auto sink = g.add_vertex("sink", 1e-4);
  for (const auto s : sources) g.add_edge(s, sink, 1024);
  const cluster devices =
      cluster::uniform(2, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e9}, comm_mode::sequential);
  const graph_model model(g, devices);
  placement_t p(g.vertex_count(), 0);
  p[sink] = 1;
  const auto simulated = simulate(g, model, devices, p, {.policy = ready_policy::strict_order});
  REQUIRE(simulated.ok());
  REQUIRE(simulated.schedule.transfers.size() == 12);
  starpu_backend backend({.devices = 2});
  const auto measured = replay_ahead(g, model, devices, simulated.schedule, backend);
  const auto report = validate(measured.schedule, g, model, devices, {.exact_durations = false});
  CHECK_MESSAGE(report.ok(), report.to_string());
}

TEST_CASE("StarPU's own scheduler places and runs a graph on the device workers") {
  const auto c = small_case(21);
  const graph_model model(c.g, c.devices);
  starpu_backend backend({.devices = 2});
  const auto run = run_with_starpu_scheduler(c.g, model, backend);
  REQUIRE(run.device.size() == c.g.vertex_count());
  for (vertex_id v = 0; v < c.g.vertex_count(); ++v) {
    CHECK(run.device[v] < 2);
    CHECK(run.finish[v] >= run.start[v]);
  }
  for (edge_id e = 0; e < c.g.edge_count(); ++e) CHECK(run.start[c.g.target(e)] >= run.finish[c.g.source(e)]);
  CHECK(run.makespan > 0);
}

TEST_CASE("the StarPU backend refuses what it cannot run, by name") {
  CHECK_THROWS_WITH_AS(starpu_backend({.devices = 0}), doctest::Contains("devices must be at least 1"), invalid_input);
  CHECK_THROWS_WITH_AS(starpu_backend({.devices = 6}),
                       doctest::Contains("6 devices need 6 CPU workers; this StarPU is built for at most"),
                       invalid_input);
  CHECK_THROWS_WITH_AS(starpu_backend({.copy_engines = 0}), doctest::Contains("copy_engines must be at least 1"),
                       invalid_input);
  CHECK_THROWS_WITH_AS(starpu_backend({.kernels = {.kernel = cpu_kernel::busy_loop}}),
                       doctest::Contains("busy_loop kernel needs loop_rate"), invalid_input);
  CHECK_THROWS_WITH_AS(starpu_backend({.kernels = {.kernel = cpu_kernel::work}}),
                       doctest::Contains("starpu_backend: the work kernel needs a work function"), invalid_input);
  CHECK_THROWS_WITH_AS(starpu_backend({.kernels = {.sleep_margin = -1e-6}}),
                       doctest::Contains("starpu_backend: sleep_margin must be >= 0"), invalid_input);
  CHECK_THROWS_WITH_AS(starpu_backend({.scheduler = "heft-ish"}),
                       doctest::Contains("StarPU has no scheduling policy 'heft-ish' ("), invalid_input);
  starpu_backend backend({.devices = 2});
  CHECK_THROWS_WITH_AS(starpu_backend({.devices = 1}), doctest::Contains("StarPU already runs in this process"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(backend.begin(3), doctest::Contains("a run on 3 devices; StarPU was started with 2"),
                       invalid_input);
  backend.begin(2);
  CHECK_THROWS_WITH_AS(backend.launch_vertex({.vertex = 0, .device = 2}),
                       doctest::Contains("vertex 0 on device 2 of 2"), invalid_input);
}

TEST_CASE("a StarPU session holds the process's StarPU and gives it back on every path out") {
  using detail::starpu_session;
  const auto start_plain = [](starpu_conf& conf) { return starpu_init(&conf); };
  const auto stop_plain = [] { starpu_shutdown(); };
  {
    starpu_session session("first");
    CHECK_THROWS_WITH_AS(starpu_session("second"), doctest::Contains("second: StarPU already runs in this process"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(starpu_backend({.devices = 1}), doctest::Contains("StarPU already runs in this process"),
                         std::runtime_error);
    // A start that fails leaves StarPU down, and the claim to the session's end.
    CHECK_THROWS_WITH_AS(session.start(
                             1, "eager", "fake_init", [](starpu_conf&) { return -ENODEV; }, stop_plain),
                         doctest::Contains("first: fake_init failed (No such device)"), std::runtime_error);
  }
  {
    // StarPU starts one worker where two were asked for: shut down again before the error.
    starpu_session session("short");
    CHECK_THROWS_WITH_AS(session.start(
                             2, "eager", "starpu_init",
                             [](starpu_conf& conf) {
                               conf.ncpus = 1;
                               return starpu_init(&conf);
                             },
                             stop_plain),
                         doctest::Contains("short: StarPU started 1 CPU workers of 2"), std::runtime_error);
  }
  {
    starpu_session session("whole");
    session.start(2, "eager", "starpu_init", start_plain, stop_plain);
    CHECK(session.workers().size() == 2);
    CHECK(session.workers()[0] != session.workers()[1]);
    CHECK_THROWS_WITH_AS(session.start(2, "eager", "starpu_init", start_plain, stop_plain),
                         doctest::Contains("whole: StarPU is started once per session"), std::logic_error);
  }
  // Every session above ended: a backend starts StarPU again.
  starpu_backend backend({.devices = 2});
  CHECK(backend.device_worker(0) != backend.device_worker(1));
}

TEST_CASE("what a vertex's work throws on StarPU ends the run and reaches the caller") {
  graph g;
  const auto a = g.add_vertex("a", 1e-4);
  const auto b = g.add_vertex("b", 1e-4);
  g.add_edge(a, b, 64);
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e9});
  const graph_model model(g, devices);
  starpu_backend_options o{.devices = 2};
  o.kernels.kernel = cpu_kernel::work;
  o.kernels.work = [](const vertex_launch& v) {
    if (v.vertex == 1) throw std::runtime_error("vertex b broke");
  };
  starpu_backend backend(o);
  const placement_t p{0, 1};
  CHECK_THROWS_WITH_AS((void)execute(g, model, devices, p, backend), "vertex b broke", std::runtime_error);
  const auto simulated = simulate(g, model, devices, p);
  CHECK_THROWS_WITH_AS((void)replay_ahead(g, model, devices, simulated.schedule, backend), "vertex b broke",
                       std::runtime_error);
}

TEST_CASE("a study replays every candidate ahead on StarPU and checks each measured run") {
  const auto c = small_case(31);
  const graph_model model(c.g, c.devices);
  starpu_backend backend({.devices = 2});
  const std::vector<placement_candidate> candidates{{"spread", spread(c.g, 31), {}},
                                                    {"one", placement_t(c.g.vertex_count(), 1), {}}};
  const auto study = study_placements(c.g, model, model, c.devices, candidates, backend, {.runs = 2, .ahead = true});
  REQUIRE(study.rows.size() == 2);
  CHECK(study.compared == 2);
  for (const auto& row : study.rows) {
    CAPTURE(row.name);
    CHECK(row.result.ok());
    CHECK(row.result.valid);
    CHECK(row.result.invalid_runs == 0);
    CHECK(row.result.measured >= row.result.simulated * (1 - 1e-9));
  }
}
