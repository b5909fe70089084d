// Simulated against measured: the statistics with hand-worked numbers (median, Pearson, Spearman
// with ties, start-time errors), seeded perturbations, the candidate placements of a graph (and
// those whose simulated makespans keep a gap), a comparison of one placement whose measured runs
// all pass validate(), the repeatability of a study's runs, and a reference run that cancels a
// drifting machine's speed. No timed assertions.
#include <gantry/exec/accuracy.hpp>
#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/study.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/sim/virtual_clock.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
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

namespace {
// Three layers of four vertices, each joined to every vertex of the next, with uneven times: many
// placements on two devices, with many different makespans.
graph layered_graph() {
  graph g;
  std::vector<vertex_id> previous;
  for (int layer = 0; layer < 3; ++layer) {
    std::vector<vertex_id> current;
    for (int i = 0; i < 4; ++i) {
      const auto v = g.add_vertex("v" + std::to_string(layer) + std::to_string(i), 1e-3 * (1 + i + 2 * layer));
      for (const auto u : previous) g.add_edge(u, v, 20000);
      current.push_back(v);
    }
    previous = current;
  }
  return g;
}

// Seed 5, `count` candidates at least `gap` apart (options built field by field: GCC 12 misreads
// designated initialisers of option structs as maybe-uninitialised).
candidate_options apart(std::size_t count, double gap) {
  candidate_options out;
  out.count = count;
  out.seed = 5;
  out.min_gap = gap;
  return out;
}
}  // namespace

TEST_CASE("candidates with a gap: every two kept ones simulate farther apart than the gap") {
  const graph g = layered_graph();
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
  const graph_model model(g, devices);
  const auto all = placement_candidates(g, model, devices, {.count = 20, .seed = 5});
  CHECK(all.size() == 20);
  const auto kept = placement_candidates(g, model, devices, apart(12, 0.03));
  REQUIRE(kept.size() >= 4);
  CHECK(kept.size() <= 12);
  std::vector<seconds> makespans;
  std::set<std::string> names;
  for (const auto& c : kept) {
    const auto r = simulate(g, model, devices, std::span<const device_id>(c.device), {.priority = c.order});
    REQUIRE(r.ok());
    makespans.push_back(r.schedule.makespan);
    names.insert(c.name);
  }
  CHECK(names.size() == kept.size());
  for (std::size_t i = 0; i < makespans.size(); ++i)
    for (std::size_t j = i + 1; j < makespans.size(); ++j)
      CHECK(std::abs(makespans[i] - makespans[j]) > 0.03 * std::max(makespans[i], makespans[j]));
  // The first placer is always kept; a zero gap is the default behaviour.
  CHECK(kept.front().name == all.front().name);
  const auto same = placement_candidates(g, model, devices, apart(20, 0));
  REQUIRE(same.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(same[i].name == all[i].name);
    CHECK(same[i].device == all[i].device);
  }
  for (const double bad : {-0.1, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    CHECK_THROWS_WITH_AS((void)placement_candidates(g, model, devices, apart(20, bad)),
                         doctest::Contains("min_gap must be a finite fraction"), invalid_input);
  }
}

TEST_CASE("a study's repeatability is the rank agreement of its runs: 1 where every run is the same") {
  const graph g = layered_graph();
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
  const graph_model model(g, devices);
  const auto candidates = placement_candidates(g, model, devices, apart(6, 0.03));
  REQUIRE(candidates.size() >= 3);
  virtual_clock clock;  // every run is the simulation itself
  const auto twice = study_placements(g, model, model, devices, candidates, clock, {.runs = 2});
  REQUIRE(twice.compared == candidates.size());
  for (const auto& row : twice.rows) {
    REQUIRE(row.result.measured_runs.size() == 2);
    CHECK(row.result.measured_runs[0] == row.result.measured_runs[1]);
    CHECK(row.result.error == doctest::Approx(0).epsilon(1e-9));
  }
  REQUIRE(twice.repeatability.has_value());
  CHECK(*twice.repeatability == doctest::Approx(1));
  REQUIRE(twice.run_spread.has_value());
  CHECK(*twice.run_spread == 0);
  CHECK(twice.spearman == doctest::Approx(1));
  const auto once = study_placements(g, model, model, devices, candidates, clock, {.runs = 1});
  CHECK_FALSE(once.repeatability.has_value());
  CHECK_FALSE(once.run_spread.has_value());
  CHECK(once.rows.front().result.measured_runs.size() == 1);
}

namespace {

// The virtual clock on a machine whose speed changes from run to run: run k (counting every run
// it is given, a reference's or a candidate's) takes factor(k) times as long as modelled, as when
// other tenants come and go between a profile and the runs it predicts.
class drifting_clock {
 public:
  explicit drifting_clock(std::function<double(std::size_t)> factor) : factor_of_(std::move(factor)) {}
  void begin(std::size_t devices) {
    factor_ = factor_of_(runs_++);
    clock_.begin(devices);
  }
  void launch_vertex(vertex_launch v) {
    v.duration *= factor_;
    clock_.launch_vertex(v);
  }
  void launch_copy(copy_launch c) {
    c.duration *= factor_;
    clock_.launch_copy(c);
  }
  void wait(std::vector<completion>& out) { clock_.wait(out); }
  [[nodiscard]] seconds now() const noexcept { return clock_.now(); }

 private:
  virtual_clock clock_;
  std::function<double(std::size_t)> factor_of_;
  double factor_ = 1;
  std::size_t runs_ = 0;
};

}  // namespace

TEST_CASE("reference runs around each measured run cancel the machine's drift, which the plain error keeps") {
  const graph g = layered_graph();
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
  const graph_model model(g, devices);
  const auto candidates = placement_candidates(g, model, devices, apart(6, 0.03));
  REQUIRE(candidates.size() >= 3);
  const placement_candidate one_device{"one device", std::vector<device_id>(g.vertex_count(), 0), {}};
  compare_options options;
  options.runs = 2;
  options.reference = one_device;
  // Every run 10% slower than the first, cumulatively: a drift the references around a run cancel
  // exactly, being linear.
  const auto drift = [](std::size_t k) { return 1 + 0.1 * static_cast<double>(k); };
  drifting_clock clock(drift);
  const auto study = study_placements(g, model, model, devices, candidates, clock, options);
  REQUIRE(study.compared == candidates.size());
  for (std::size_t i = 0; i < study.rows.size(); ++i) {
    const auto& r = study.rows[i].result;
    CAPTURE(study.rows[i].name);
    REQUIRE(r.valid);
    // Candidate i's runs are the clock's runs 5i to 5i + 4: reference, candidate, reference,
    // candidate, reference.
    REQUIRE(r.reference_runs.size() == 3);
    for (std::size_t j = 0; j < 3; ++j)
      CHECK(r.reference_runs[j] == doctest::Approx(drift(5 * i + 2 * j) * r.reference_simulated));
    CHECK(r.measured_runs[1] == doctest::Approx(drift(5 * i + 3) * r.simulated));
    REQUIRE(r.referenced_error.has_value());
    CHECK(*r.referenced_error == doctest::Approx(0).epsilon(1e-9));
    REQUIRE(r.referenced_measured.has_value());
    CHECK(*r.referenced_measured == doctest::Approx(r.simulated));
  }
  // The first candidate's references differ by 20% around each run (more than the tolerance): both
  // runs are counted as unsteady, and the linear drift still cancels.
  CHECK(study.rows.front().result.unsteady_runs == 2);
  CHECK(study.compared_runs == 2 * candidates.size());
  CHECK(study.unsteady_runs >= 2);
  seconds work = 0;  // one device, no copies: the reference simulates to the sum of the compute times
  for (const auto& v : g.vertices()) work += v.compute;
  CHECK(study.rows.front().result.reference_simulated == doctest::Approx(work));
  CHECK(study.median_abs_error > 0.1);  // the drift, all of it
  REQUIRE(study.median_abs_referenced_error.has_value());
  CHECK(*study.median_abs_referenced_error == doctest::Approx(0).epsilon(1e-9));
  // The drift reorders the plain measurements (each candidate runs slower than the one before)
  // but not the referenced ones.
  REQUIRE(study.referenced_spearman.has_value());
  CHECK(*study.referenced_spearman == doctest::Approx(1));
  CHECK(study.spearman < *study.referenced_spearman);
  REQUIRE(study.reference_range.has_value());
  CHECK(study.reference_range->first == doctest::Approx(1));
  CHECK(study.reference_range->second == doctest::Approx(drift(5 * candidates.size() - 1)));

  // Rows whose placement is the reference's say nothing about the model: left out of the median.
  const auto itself = study_placements(g, model, model, devices, {one_device}, clock, options);
  REQUIRE(itself.compared == 1);
  CHECK(itself.rows.front().result.referenced_error.has_value());
  CHECK_FALSE(itself.median_abs_referenced_error.has_value());
  CHECK(itself.reference_range.has_value());

  // Without a reference nothing is referenced, and each candidate runs alone.
  drifting_clock plain(drift);
  const auto unreferenced = study_placements(g, model, model, devices, candidates, plain, {.runs = 2});
  CHECK_FALSE(unreferenced.median_abs_referenced_error.has_value());
  CHECK_FALSE(unreferenced.reference_range.has_value());
  CHECK_FALSE(unreferenced.referenced_spearman.has_value());
  CHECK(unreferenced.unsteady_runs == 0);
  CHECK(unreferenced.rows.front().result.reference_runs.empty());
  CHECK_FALSE(unreferenced.rows.front().result.referenced_error.has_value());
  // Candidate 1's runs are the plain clock's runs 2 and 3.
  CHECK(unreferenced.rows[1].result.measured_runs[0] ==
        doctest::Approx(drift(2) * unreferenced.rows[1].result.simulated));

  // A bad tolerance is refused by name.
  compare_options loose = options;
  loose.reference_tolerance = -0.1;
  CHECK_THROWS_WITH_AS((void)compare_run(g, model, model, devices, candidates.front(), clock, loose),
                       doctest::Contains("reference_tolerance must be a finite fraction >= 0"), invalid_input);
  loose.reference_tolerance = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS((void)compare_run(g, model, model, devices, candidates.front(), clock, loose), invalid_input);

  options.reference->device.pop_back();
  CHECK_THROWS_WITH_AS((void)compare_run(g, model, model, devices, candidates.front(), clock, options),
                       doctest::Contains("the reference placement has 11 entries for 12 vertices"), invalid_input);
}

TEST_CASE("a run during which the machine changed speed is counted, and its two references halve the change") {
  const graph g = layered_graph();
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
  const graph_model model(g, devices);
  const auto candidates = placement_candidates(g, model, devices, apart(3, 0.03));
  REQUIRE_FALSE(candidates.empty());
  compare_options options;
  options.runs = 2;
  options.reference = placement_candidate{"one device", std::vector<device_id>(g.vertex_count(), 0), {}};
  // Runs: reference, candidate, reference, candidate, reference. The machine slows 1.6x at once
  // between the second reference and the second candidate run, and stays slow.
  const auto step = [](std::size_t k) { return k >= 3 ? 1.6 : 1.0; };
  drifting_clock clock(step);
  const auto r = compare_run(g, model, model, devices, candidates.front(), clock, options);
  REQUIRE(r.ok());
  REQUIRE(r.reference_runs.size() == 3);
  // Paired with the reference just before it alone, the second run would look 60% slow (and the
  // median of the two runs 30%); beside the mean of its two references it is 1.6 / 1.3, 23% slow.
  CHECK(r.measured_runs[1] / r.reference_runs[1] == doctest::Approx(1.6 * r.simulated / r.reference_simulated));
  REQUIRE(r.referenced_error.has_value());
  CHECK(*r.referenced_error == doctest::Approx((1 + 1.6 / 1.3) / 2 - 1));
  // Its references differ by 60%: counted as unsteady; the first run's are alike.
  CHECK(r.unsteady_runs == 1);

  // A tolerance above the change counts nothing and changes no figure.
  options.reference_tolerance = 1;
  drifting_clock again(step);
  const auto tolerant = compare_run(g, model, model, devices, candidates.front(), again, options);
  CHECK(tolerant.unsteady_runs == 0);
  REQUIRE(tolerant.referenced_error.has_value());
  CHECK(*tolerant.referenced_error == doctest::Approx(*r.referenced_error));
}

TEST_CASE("a measured run whose kernels return early fails validation; a run the clock cannot time is refused") {
  const graph g = layered_graph();
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
  const graph_model model(g, devices);
  const placement_candidate one_device{"one device", std::vector<device_id>(g.vertex_count(), 0), {}};
  // Kernels that run 40% of their time (a deadline that overflowed ran them for none): every
  // vertex lasts less than half of what the model says.
  drifting_clock early([](std::size_t) { return 0.4; });
  const auto cut = compare_run(g, model, model, devices, one_device, early, {.runs = 1});
  REQUIRE(cut.ok());
  CHECK(!cut.valid);
  CHECK(cut.violations.find("less than 0.5 of the") != std::string::npos);
  // 80% of their time passes, as does a run with the check off.
  drifting_clock short_of([](std::size_t) { return 0.8; });
  CHECK(compare_run(g, model, model, devices, one_device, short_of, {.runs = 1}).valid);
  drifting_clock unchecked([](std::size_t) { return 0.4; });
  CHECK(compare_run(g, model, model, devices, one_device, unchecked, {.runs = 1, .min_duration_share = 0}).valid);

  // Longer than 2^63 ns, or not finite: refused before anything runs.
  for (const seconds compute : {1e10, 1e308}) {
    CAPTURE(compute);
    graph long_one;
    long_one.add_vertex("a", compute);
    long_one.add_vertex("b", compute);
    long_one.add_edge(0, 1, 8);
    const graph_model long_model(long_one, devices);
    drifting_clock clock([](std::size_t) { return 1.0; });
    const placement_candidate both{"one device", {0, 0}, {}};
    CHECK_THROWS_AS((void)compare_run(long_one, long_model, long_model, devices, both, clock, {.runs = 1}),
                    invalid_input);
  }
}
