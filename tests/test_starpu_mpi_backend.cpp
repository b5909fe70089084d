// The StarPU-MPI backend (exec/starpu_mpi_backend.hpp), built only where StarPU-MPI is installed
// and run by ctest under mpiexec (2 ranks, and 4 oversubscribed): every rank runs every case, in
// the same order, since each run is collective. Placements replayed across ranks give the same
// measured schedule on every rank, which validate() accepts, in the simulation's order per device;
// plans that differ between ranks, too many devices and a failing vertex are refused on every rank.
#include <gantry/exec/starpu_mpi_backend.hpp>
#include <gantry/exec/study.hpp>
#include <gantry/schedule/validate.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <stdexcept>

using namespace gantry;

namespace {
using placement_t = std::vector<device_id>;

// One backend for the whole program: MPI starts once per process. ctest runs the 4-rank test with
// GANTRY_TEST_CLOCKS_BY_MESSAGES set, so the ping-pongs that tie clocks between machines run too.
starpu_mpi_backend& shared_backend() {
  static starpu_mpi_backend backend([] {
    starpu_mpi_backend_options o;
    o.clocks_by_messages = std::getenv("GANTRY_TEST_CLOCKS_BY_MESSAGES") != nullptr;
    return o;
  }());
  return backend;
}

// A seeded random DAG on `devices` devices (at most the ranks), its times scaled down.
test::random_case small_case(std::uint64_t seed, std::size_t devices, comm_mode comm) {
  test::random_case c;
  do {
    c = test::make_random_case(seed, comm, false, {.max_vertices = 20});
    ++seed;
  } while (c.devices.device_count() != devices);
  c.g = with_compute_times(c.g, 0.25, 0);
  return c;
}

placement_t spread(const graph& g, std::size_t devices, std::uint64_t seed) {
  placement_t p(g.vertex_count());
  for (vertex_id v = 0; v < p.size(); ++v) p[v] = static_cast<device_id>((v * 5 + seed) % devices);
  return p;
}

// True on every rank when every rank holds the same value.
bool same_on_every_rank(double x) {
  double low = x, high = x;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}
}  // namespace

TEST_CASE("placements replayed across MPI ranks validate, keep each device's order and agree on every rank") {
  auto& backend = shared_backend();
  const auto devices = static_cast<std::size_t>(std::min(backend.ranks(), 4));
  REQUIRE(devices >= 2);
  CHECK(backend.clock_uncertainty() >= 0);
  for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const std::string mode = to_string(comm);
      CAPTURE(mode);
      CAPTURE(seed);
      const auto c = small_case(seed * 7, devices, comm);
      const graph_model model(c.g, c.devices);
      const auto p = spread(c.g, devices, seed);
      const auto simulated = simulate(c.g, model, c.devices, p, {.policy = ready_policy::strict_order});
      REQUIRE(simulated.ok());
      const auto measured = replay_ahead(c.g, model, c.devices, simulated.schedule, backend);
      REQUIRE(measured.ok());
      const auto report = validate(measured.schedule, c.g, model, c.devices, {.exact_durations = false});
      CHECK_MESSAGE(report.ok(), report.to_string());
      // A copy's start moves only where another rank's clock, as tied, contradicts a token: by
      // no more than the two ranks' ties can be off.
      CHECK(backend.clock_correction() >= 0);
      CHECK_MESSAGE(backend.clock_correction() <= 2 * backend.clock_uncertainty() + 1e-6, "moved ",
                    backend.clock_correction(), " s; the tie's bound ", backend.clock_uncertainty(), " s");
      CHECK(measured.schedule.transfers.size() == simulated.schedule.transfers.size());
      CHECK(measured.schedule.order == simulated.schedule.order);
      // Every vertex and copy lasts at least its modelled time (up to the clocks' tie).
      CHECK(measured.schedule.makespan >= simulated.schedule.makespan - 2 * backend.clock_uncertainty() - 1e-6);
      CHECK(same_on_every_rank(measured.schedule.makespan));
      CHECK(same_on_every_rank(measured.schedule.start.empty() ? 0 : measured.schedule.start.back()));
    }
  }
}

TEST_CASE("a copy lasts its modelled time when paced, and what MPI takes when not") {
  auto& backend = shared_backend();
  graph g;
  g.add_vertex("a", 1e-3);
  g.add_vertex("b", 1e-3);
  g.add_edge(0, 1, 1 << 20);
  const cluster c = cluster::uniform(2, unlimited_memory, {.latency = 0, .bandwidth = 1e7});  // 105 ms
  const graph_model model(g, c);
  const auto simulated = simulate(g, model, c, placement_t{0, 1});
  REQUIRE(simulated.ok());
  REQUIRE(simulated.schedule.transfers.size() == 1);
  const auto plan = make_ahead_plan(g, model, c, simulated.schedule);
  const seconds modelled = plan.copies.at(0).duration;
  for (const bool paced : {true, false}) {
    CAPTURE(paced);
    backend.pace_copies(paced);
    std::vector<completion> done;
    backend.run_ahead(plan, done);
    REQUIRE(done.size() == 3);
    for (const auto& x : done) {
      CHECK(x.finish >= x.start - 2 * backend.clock_uncertainty());
      if (!x.is_copy) continue;
      // The 64 KiB that move take MPI far less than the 105 ms modelled.
      if (paced) CHECK(x.finish - x.start >= modelled - 2 * backend.clock_uncertainty() - 1e-6);
      else CHECK(x.finish - x.start < modelled / 2);
    }
  }
  backend.pace_copies(true);
}

TEST_CASE("a run the ranks disagree on, or that needs more ranks, is refused on every rank") {
  auto& backend = shared_backend();
  const auto c = small_case(3, 2, comm_mode::parallel);
  const graph_model model(c.g, c.devices);
  const auto simulated = simulate(c.g, model, c.devices, spread(c.g, 2, 1));
  REQUIRE(simulated.ok());
  auto plan = make_ahead_plan(c.g, model, c.devices, simulated.schedule);
  if (backend.rank() == 1) plan.vertices[0].duration += 1e-3;
  std::vector<completion> done;
  CHECK_THROWS_WITH_AS(backend.run_ahead(plan, done), doctest::Contains("different plans"), invalid_input);

  // What a copy lasts, and whether links are shared, are part of the plan too.
  plan = make_ahead_plan(c.g, model, c.devices, simulated.schedule);
  REQUIRE(!plan.copies.empty());
  if (backend.rank() == 0) plan.copies[0].duration *= 2;
  CHECK_THROWS_WITH_AS(backend.run_ahead(plan, done), doctest::Contains("different plans"), invalid_input);
  plan = make_ahead_plan(c.g, model, c.devices, simulated.schedule);
  if (backend.rank() == 1) plan.shared_links = !plan.shared_links;
  CHECK_THROWS_WITH_AS(backend.run_ahead(plan, done), doctest::Contains("different plans"), invalid_input);

  plan = make_ahead_plan(c.g, model, c.devices, simulated.schedule);
  plan.devices = static_cast<std::size_t>(backend.ranks()) + 1;
  CHECK_THROWS_WITH_AS(backend.run_ahead(plan, done), doctest::Contains("MPI ranks"), invalid_input);
}

TEST_CASE("a vertex that fails on one rank fails the run on every rank, and the next run goes on") {
  auto& backend = shared_backend();
  const auto c = small_case(4, 2, comm_mode::parallel);
  const graph_model model(c.g, c.devices);
  const auto p = spread(c.g, 2, 1);
  const auto simulated = simulate(c.g, model, c.devices, p);
  REQUIRE(simulated.ok());
  const auto plan = make_ahead_plan(c.g, model, c.devices, simulated.schedule);
  const vertex_id bad = 0;
  REQUIRE(p[bad] == 1);  // rank 1 runs it
  const auto before = backend.options().kernels;
  auto failing = before;
  failing.kernel = cpu_kernel::work;
  failing.work = [bad](const vertex_launch& v) {
    if (v.vertex == bad) throw std::runtime_error("vertex 0 broke");
  };
  backend.copy_kernels(failing);
  std::vector<completion> done;
  if (backend.rank() == 1) CHECK_THROWS_WITH_AS(backend.run_ahead(plan, done), "vertex 0 broke", std::runtime_error);
  else CHECK_THROWS_WITH_AS(backend.run_ahead(plan, done), doctest::Contains("failed on rank 1"), std::runtime_error);
  backend.copy_kernels(before);
  done.clear();
  backend.run_ahead(plan, done);
  CHECK(done.size() == plan.activities.size());
}

TEST_CASE("a study compares placements replayed across ranks; decided launches are refused") {
  auto& backend = shared_backend();
  const auto c = small_case(5, 2, comm_mode::parallel);
  const graph_model model(c.g, c.devices);
  const placement_candidate candidate{"spread", spread(c.g, 2, 3), {}};
  const auto r = compare_run(c.g, model, model, c.devices, candidate, backend, {.runs = 3, .ahead = true});
  REQUIRE(r.ok());
  CHECK(r.valid);
  CHECK(r.measured > 0);
  CHECK(same_on_every_rank(r.measured));
  CHECK_THROWS_AS((void)compare_run(c.g, model, model, c.devices, candidate, backend, {.runs = 1}), invalid_input);
}

TEST_CASE("the MPI link between two ranks is measured the same on every rank") {
  auto& backend = shared_backend();
  const auto before = backend.options().kernels;
  const auto measured = measure_mpi_link(backend, {8, 64 << 10, 1 << 20}, 3);
  REQUIRE(measured.samples.size() == 3);
  const link_model link = measured.link.link;
  CHECK(link.latency >= 0);
  CHECK(link.bandwidth > 0);
  CHECK(same_on_every_rank(link.latency));
  CHECK(same_on_every_rank(std::isfinite(link.bandwidth) ? link.bandwidth : -1));
  // The backend's own copy rules are back.
  CHECK(backend.options().kernels.pace_copies == before.pace_copies);
  CHECK(backend.options().kernels.max_copy_bytes == before.max_copy_bytes);
}
