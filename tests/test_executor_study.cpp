// Simulated against measured: the statistics with hand-worked numbers (median, Pearson, Spearman
// with ties, start-time errors), seeded perturbations, the candidate placements of a graph, and a
// comparison of one placement whose measured runs all pass validate(). No timed assertions.
#include <gantry/exec/accuracy.hpp>
#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/study.hpp>
#include <gantry/graph/graph.hpp>

#include <doctest/doctest.h>

#include <set>
#include <vector>

using namespace gantry;

TEST_CASE("median, Pearson and Spearman on hand-worked series") {
  CHECK(median_of({3, 1, 2, 10}) == doctest::Approx(2.5));
  CHECK(median_of({3, 1, 2}) == doctest::Approx(2));
  CHECK(median_of({}) == 0);
  const std::vector<double> x{1, 2, 3}, doubled{2, 4, 6}, swapped{1, 3, 2}, constant{5, 5, 5};
  CHECK(pearson(x, doubled) == doctest::Approx(1));
  // dx = (-1, 0, 1), dy = (-1, 1, 0): sxy = 1, sxx = syy = 2, r = 1 / 2.
  CHECK(pearson(x, swapped) == doctest::Approx(0.5));
  CHECK(pearson(x, constant) == 0);
  CHECK(spearman(x, swapped) == doctest::Approx(0.5));
  // Ranks of (5, 1, 5) are (2.5, 1, 2.5): ties share the mean of their ranks.
  const std::vector<double> tied{5, 1, 5};
  CHECK(ranks_of(tied) == std::vector<double>{2.5, 1, 2.5});
  // A monotone but non-linear relation: Spearman 1, Pearson below 1.
  const std::vector<double> a{1, 2, 3, 4}, cubes{1, 8, 27, 64};
  CHECK(spearman(a, cubes) == doctest::Approx(1));
  CHECK(pearson(a, cubes) < 0.99);
  const std::vector<double> shorter{1, 2};
  CHECK_THROWS_AS((void)pearson(x, shorter), invalid_input);
  CHECK(relative_error(2.0, 2.5) == doctest::Approx(0.25));
}

TEST_CASE("start-time errors name the worst vertex") {
  schedule simulated, measured;
  simulated.start = {0, 1, 2};
  measured.start = {0.5, 1, 4};
  const auto e = compare_start_times(simulated, measured);
  CHECK(e.mean == doctest::Approx(2.5 / 3));
  CHECK(e.median == doctest::Approx(0.5));
  CHECK(e.max == doctest::Approx(2));
  CHECK(e.worst == 2);
  measured.start.pop_back();
  CHECK_THROWS_AS((void)compare_start_times(simulated, measured), invalid_input);
}

TEST_CASE("a perturbation moves the drawn vertices to other devices, the same way for a seed") {
  const std::vector<device_id> base(40, 0);
  const auto one = perturbed_placement(base, 3, 1, 7);
  CHECK(std::count(one.begin(), one.end(), 0u) == 39);
  CHECK(perturbed_placement(base, 3, 5, 7) == perturbed_placement(base, 3, 5, 7));
  CHECK(perturbed_placement(base, 1, 5, 7) == base);  // one device: nowhere to move
}

TEST_CASE("candidates and a comparison on a fork-join graph") {
  // a -> b, c, d -> e
  graph g;
  const auto a = g.add_vertex("a", 1e-3);
  const auto e = g.add_vertex("e", 1e-3);
  for (const char* name : {"b", "c", "d"}) {
    const auto v = g.add_vertex(name, 2e-3);
    g.add_edge(a, v, 1000);
    g.add_edge(v, e, 1000);
  }
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
  const graph_model model(g, devices);
  const auto candidates = placement_candidates(g, model, devices, {.count = 12, .seed = 3});
  REQUIRE(candidates.size() >= 12);
  std::set<std::vector<device_id>> distinct;
  for (const auto& c : candidates) {
    CHECK(c.device.size() == g.vertex_count());
    CHECK(c.order.size() == g.vertex_count());
    distinct.insert(c.device);
  }
  CHECK(distinct.size() == candidates.size());
  CHECK(candidates.front().name == "single-device");

  cpu_backend backend({.kernel = cpu_kernel::sleep});
  const auto r = compare_run(g, model, model, devices, candidates[1], backend, {.runs = 3});
  REQUIRE(r.ok());
  CHECK(r.valid);
  CHECK(r.simulated > 0);
  CHECK(r.measured_min <= r.measured);
  CHECK(r.measured <= r.measured_max);
  CHECK(r.median_run.schedule.makespan == r.measured);
  CHECK(r.median_run.schedule.transfers.size() == r.simulation.schedule.transfers.size());

  const std::vector<placement_candidate> three(candidates.begin(), candidates.begin() + 3);
  const auto study = study_placements(g, model, model, devices, three, backend, {.runs = 1});
  CHECK(study.rows.size() == 3);
  CHECK(study.compared == 3);
  CHECK(study.spearman >= -1.0);
  CHECK(study.spearman <= 1.0);
}

TEST_CASE("calibration measures a rate, an overhead and a link, and refuses too few devices") {
  const auto c = calibrate_cpu(
      {.devices = 2, .loop_time = 0.005, .overhead_vertices = 50, .copy_sizes = {4096, 65536}, .repeats = 1});
  CHECK(c.loop_rate > 0);
  CHECK(c.launch_overhead > 0);
  CHECK(c.link.link.bandwidth > 0);
  CHECK(c.link.link.latency >= 0);
  CHECK(c.samples.size() == 2);
  const cluster cpus = calibrated_cluster(c, 3, 1 << 20, comm_mode::duplex);
  CHECK(cpus.device_count() == 3);
  CHECK(cpus[2].name == "cpu2");
  CHECK(cpus[2].kind == "cpu");
  CHECK(cpus.capacity(1) == 1u << 20);
  CHECK(cpus.comm() == comm_mode::duplex);
  CHECK(cpus.default_link() == c.link.link);
  CHECK_THROWS_AS((void)calibrate_cpu({.devices = 1}), invalid_input);
  // The same measurement on any backend: here a CPU backend of 3 devices, copies paced to nothing.
  cpu_backend backend({.kernel = cpu_kernel::spin, .pace_copies = false});
  const auto b =
      calibrate_backend(backend, {.devices = 3, .overhead_vertices = 20, .copy_sizes = {1024, 1 << 20}, .repeats = 3});
  CHECK(b.launch_overhead > 0);
  REQUIRE(b.samples.size() == 2);
  CHECK(b.samples[0].bytes == 1024);
  CHECK(b.samples[1].time > 0);
  CHECK(b.link.link.bandwidth > 0);
  CHECK_THROWS_AS((void)calibrate_backend(backend, {.devices = 2, .copy_sizes = {4096}}), invalid_input);
}
