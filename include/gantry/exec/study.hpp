// Simulated against measured: runs placements both ways and reports how well the simulator
// predicts the executor. compare_run() does one placement (simulate, execute N times, validate
// each measured schedule); study_placements() does many and adds the median absolute error and
// the Pearson and Spearman correlations, beside the Spearman correlation of two measured runs of
// the same placements (what the machine's own noise leaves for any simulator to reach), and with a
// reference placement run before and after every measured run, each error relative to it (what is
// left of the error once the machine's speed drifting between profile and run cancels);
// placement_candidates() gathers many placements of one graph: every placer of the registry that
// succeeds, then seeded random perturbations of them, optionally only placements whose simulated
// makespans differ by a given margin (so that a rank correlation judges the simulator's claims,
// not run-to-run noise among placements it calls equal).
#pragma once

#include <gantry/core/random.hpp>
#include <gantry/exec/accuracy.hpp>
#include <gantry/exec/executor.hpp>
#include <gantry/exec/replay_ahead.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

// A copy of g whose compute times (device-independent and per kind) are `scale` times longer plus
// `add` seconds: short profiled graphs run long enough to measure, and a simulation charges the
// executor's round trip per vertex, which the executor pays but does not run.
[[nodiscard]] inline graph with_compute_times(const graph& g, double scale, seconds add) {
  graph out = g;
  for (vertex_id v = 0; v < out.vertex_count(); ++v) {
    out[v].compute = out[v].compute * scale + add;
    for (const auto& [kind, time] : g.kind_times(v)) out.set_compute(v, kind, time * scale + add);
  }
  return out;
}

struct placement_candidate {
  std::string name;               // the placer, or "<placer>~<k>" for its k-th perturbation
  std::vector<device_id> device;  // per vertex
  std::vector<vertex_id> order;   // the priority order (the placer's)
};

struct compare_options {
  std::size_t runs = 5;           // measured runs; their median is compared
  simulate_options simulation{};  // the rules both follow (its priority is the candidate's order)
  // false: the executor decides every launch as the simulator does (exec/executor.hpp); true: the
  // simulated schedule's orders go to the backend at once (exec/replay_ahead.hpp; the backend must
  // be an ahead_backend), and the backend alone orders the run.
  bool ahead = false;
  // A yardstick run before and after each measured run (say, the whole graph on one device, which
  // shares nothing and copies nothing; runs+1 of them, each run between two): the candidate's
  // makespan is then also judged relative to the mean of the two around it, the measured ratio
  // against the simulated ratio (comparison::referenced_error). A change in the machine's speed over
  // seconds to minutes (other tenants' memory traffic, clocks) moves the three runs alike, or
  // linearly, and cancels there; what sets the candidate apart from the reference (its copies, the
  // devices it keeps busy together) does not. Doubles the measuring time.
  std::optional<placement_candidate> reference{};
  // A measured run whose two references differ by more than this fraction (the larger over the
  // smaller, minus 1) ran while the machine changed speed: comparison::unsteady_runs counts it, a
  // sign of how far to trust the referenced figure. The run still counts in that figure (leaving
  // such runs out did not make it better, measured with 3 runs a placement, docs/executors.md).
  double reference_tolerance = 0.1;
  // Every vertex of a measured run must last at least this share of exec_model's time
  // (validate_options::min_duration_share): a kernel that returned early, or a deadline that
  // overflowed, fails validation. 0 for kernels that run real work, which takes what it takes.
  double min_duration_share = 0.5;
};

// The longest run an executor's clock holds: 2^63 - 1 nanoseconds (std::chrono's steady clock and
// the backends' deadlines), about 292 years.
inline constexpr seconds executor_clock_limit = 9.223372036854775807e9;

struct comparison {
  gantry::outcome outcome;  // ok, or why the simulation or a run failed
  seconds simulated = 0;    // simulated makespan
  seconds measured = 0;     // median measured makespan
  seconds measured_min = 0, measured_max = 0;
  std::vector<seconds> measured_runs;  // every run's makespan, in the order they ran
  double error = 0;                    // measured / simulated - 1
  start_time_error starts;             // of the median run against the simulation
  bool valid = true;                   // every measured schedule passed validate()
  std::size_t invalid_runs = 0;        // measured schedules validate() refused
  std::string violations;              // the first failing run's, when not valid
  // With compare_options::reference: its simulated makespan, its measured makespan in each of its
  // runs (runs + 1 of them: reference_runs[i] and [i + 1] just before and after measured_runs[i]),
  // the candidate's measured makespan at the reference's simulated speed (the median over runs of
  // measured / the mean of its two references, times the reference's simulated makespan), the error
  // of that against the simulation, and how many runs had references further apart than
  // compare_options::reference_tolerance.
  seconds reference_simulated = 0;
  std::vector<seconds> reference_runs;
  std::optional<seconds> referenced_measured;
  std::optional<double> referenced_error;
  std::size_t unsteady_runs = 0;
  simulation_result simulation;
  execution_result median_run;

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
};

// Simulates `placement` with sim_model and executes it `runs` times with exec_model (the two may
// differ: a simulation can add the measured launch overhead to every vertex, which the executor
// must not run). Every measured schedule is checked by validate() without exact durations, each
// vertex lasting at least compare_options::min_duration_share of its time. Throws invalid_input
// when the simulated makespan is not finite or beyond executor_clock_limit.
template <placement_model SimModel, placement_model ExecModel, class B>
requires execution_backend<B> || ahead_backend<B>
[[nodiscard]] comparison compare_run(const graph& g, const SimModel& sim_model, const ExecModel& exec_model,
                                     const cluster& devices, const placement_candidate& candidate, B& backend,
                                     const compare_options& options = {}) {
  comparison out;
  simulate_options sim = options.simulation;
  sim.priority = candidate.order;
  out.simulation = simulate(g, sim_model, devices, std::span<const device_id>(candidate.device), sim);
  if (!out.simulation.ok()) {
    out.outcome = out.simulation.outcome;
    return out;
  }
  out.simulated = out.simulation.schedule.makespan;
  // A run the clock cannot time: its deadlines would overflow, and it would end at once.
  if (!std::isfinite(out.simulated) || out.simulated > executor_clock_limit)
    throw invalid_input("compare_run: the simulated makespan is " + std::to_string(out.simulated) +
                        " s; an executor's clock times at most 2^63 ns (" + std::to_string(executor_clock_limit) +
                        " s)");
  const placement_candidate* reference = options.reference ? &*options.reference : nullptr;
  simulation_result reference_simulation;
  if (reference) {
    if (!(options.reference_tolerance >= 0) || !std::isfinite(options.reference_tolerance))
      throw invalid_input("compare_run: reference_tolerance must be a finite fraction >= 0, not " +
                          std::to_string(options.reference_tolerance));
    if (reference->device.size() != g.vertex_count())
      throw invalid_input("compare_run: the reference placement has " + std::to_string(reference->device.size()) +
                          " entries for " + std::to_string(g.vertex_count()) + " vertices");
    simulate_options rules = options.simulation;
    rules.priority = reference->order;
    reference_simulation = simulate(g, sim_model, devices, std::span<const device_id>(reference->device), rules);
    if (!reference_simulation.ok()) {
      out.outcome = reference_simulation.outcome;
      out.outcome.message = "the reference placement: " + out.outcome.message;
      return out;
    }
    out.reference_simulated = reference_simulation.schedule.makespan;
  }
  // One measured run of `p` (whose simulation is `s`), validated; false when it failed.
  const auto measure = [&](const placement_candidate& p, const simulation_result& s, const char* label,
                           execution_result& r) {
    simulate_options rules = options.simulation;
    rules.priority = p.order;
    if (options.ahead) {
      if constexpr (ahead_backend<B>) r = replay_ahead(g, exec_model, devices, s.schedule, backend);
      else throw invalid_input("compare_run: ahead replay asked of a backend that only runs launches one by one");
    } else {
      if constexpr (execution_backend<B>)
        r = execute(g, exec_model, devices, std::span<const device_id>(p.device), backend, execute_options_from(rules));
      else
        throw invalid_input(
            "compare_run: this backend only replays whole schedules ahead (set compare_options::ahead)");
    }
    if (!r.ok()) {
      out.outcome = r.outcome;
      out.outcome.message = label + out.outcome.message;
      return false;
    }
    const auto report = validate(r.schedule, g, exec_model, devices,
                                 {.exact_durations = false, .min_duration_share = options.min_duration_share});
    if (!report.ok()) {
      if (out.valid) out.violations = label + report.to_string();
      out.valid = false;
      ++out.invalid_runs;
    }
    return true;
  };
  const auto measure_reference = [&] {
    execution_result r;
    if (!measure(*reference, reference_simulation, "the reference placement: ", r)) return false;
    out.reference_runs.push_back(r.schedule.makespan);
    return true;
  };
  std::vector<execution_result> runs;
  for (std::size_t i = 0; i < std::max<std::size_t>(options.runs, 1); ++i) {
    if (reference && !measure_reference()) return out;
    execution_result r;
    if (!measure(candidate, out.simulation, "", r)) return out;
    out.measured_runs.push_back(r.schedule.makespan);
    runs.push_back(std::move(r));
  }
  if (reference && !measure_reference()) return out;
  std::sort(runs.begin(), runs.end(), [](const execution_result& a, const execution_result& b) {
    return a.schedule.makespan < b.schedule.makespan;
  });
  out.measured_min = runs.front().schedule.makespan;
  out.measured_max = runs.back().schedule.makespan;
  out.median_run = std::move(runs[(runs.size() - 1) / 2]);  // the lower median is a real run
  out.measured = out.median_run.schedule.makespan;
  out.error = relative_error(out.simulated, out.measured);
  out.starts = compare_start_times(out.simulation.schedule, out.median_run.schedule);
  if (reference && out.reference_simulated > 0 && out.simulated > 0) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < out.measured_runs.size(); ++i) {
      const seconds before = out.reference_runs[i], after = out.reference_runs[i + 1];
      if (before <= 0 || after <= 0) continue;
      ratios.push_back(out.measured_runs[i] / ((before + after) / 2));
      if (std::max(before, after) / std::min(before, after) - 1 > options.reference_tolerance) ++out.unsteady_runs;
    }
    if (!ratios.empty()) {
      out.referenced_measured = median_of(ratios) * out.reference_simulated;
      out.referenced_error = relative_error(out.simulated, *out.referenced_measured);
    }
  }
  return out;
}

struct study_row {
  std::string name;
  comparison result;
};

struct study_result {
  std::vector<study_row> rows;       // every candidate, in the order given
  std::size_t compared = 0;          // rows that ran (simulated and measured)
  double median_abs_error = 0;       // median over compared rows of |measured / simulated - 1|
  double pearson = 0, spearman = 0;  // between simulated and measured makespans
  // Spearman between the compared rows' first and last measured runs (empty with fewer than 2 runs
  // each): the rank agreement this machine's noise allows a perfect simulator on these placements.
  // Each placement's runs follow one another, so slow spells of the machine touch both alike: it
  // is a ceiling, not a floor.
  std::optional<double> repeatability;
  // The median over compared rows of |last run / first run - 1| (empty with fewer than 2 runs each):
  // how far two runs of one placement differ here, the floor under median_abs_error.
  std::optional<double> run_spread;
  // With compare_options::reference: the median over compared rows of |referenced_error|, leaving
  // out rows whose placement is the reference's (a placement against itself says nothing of the
  // model), the Spearman between simulated and referenced measured makespans over every compared
  // row, and the smallest and largest reference measured / reference simulated over every run of
  // the study: how far the machine's speed moved while it ran. `unsteady_runs` over `compared_runs`:
  // the compared rows' measured runs whose two references disagreed (comparison::unsteady_runs).
  std::optional<double> median_abs_referenced_error;
  std::optional<double> referenced_spearman;
  std::optional<std::pair<double, double>> reference_range;
  std::size_t unsteady_runs = 0, compared_runs = 0;
};

// `progress(done, total, name)` is told before each candidate runs (for a progress line).
template <placement_model SimModel, placement_model ExecModel, class B>
requires execution_backend<B> || ahead_backend<B>
[[nodiscard]] study_result study_placements(
    const graph& g, const SimModel& sim_model, const ExecModel& exec_model, const cluster& devices,
    const std::vector<placement_candidate>& candidates, B& backend, const compare_options& options = {},
    const std::function<void(std::size_t, std::size_t, const std::string&)>& progress = {}) {
  study_result out;
  std::vector<double> simulated, measured, errors, first_runs, last_runs, spreads, referenced, referenced_simulated,
      referenced_measured;
  for (const auto& candidate : candidates) {
    if (progress) progress(out.rows.size(), candidates.size(), candidate.name);
    out.rows.push_back({candidate.name, compare_run(g, sim_model, exec_model, devices, candidate, backend, options)});
    const auto& r = out.rows.back().result;
    if (!r.ok()) continue;
    simulated.push_back(r.simulated);
    measured.push_back(r.measured);
    errors.push_back(std::abs(r.error));
    first_runs.push_back(r.measured_runs.front());
    last_runs.push_back(r.measured_runs.back());
    spreads.push_back(std::abs(relative_error(r.measured_runs.front(), r.measured_runs.back())));
    out.compared_runs += r.measured_runs.size();
    out.unsteady_runs += r.unsteady_runs;
    if (options.reference && r.reference_simulated > 0) {
      for (const seconds run : r.reference_runs) {
        const double ratio = run / r.reference_simulated;
        if (!out.reference_range) out.reference_range.emplace(ratio, ratio);
        out.reference_range->first = std::min(out.reference_range->first, ratio);
        out.reference_range->second = std::max(out.reference_range->second, ratio);
      }
      if (r.referenced_error && candidate.device != options.reference->device)
        referenced.push_back(std::abs(*r.referenced_error));
      if (r.referenced_measured) {
        referenced_simulated.push_back(r.simulated);
        referenced_measured.push_back(*r.referenced_measured);
      }
    }
  }
  out.compared = errors.size();
  if (!referenced.empty()) out.median_abs_referenced_error = median_of(referenced);
  if (!referenced_measured.empty()) out.referenced_spearman = spearman(referenced_simulated, referenced_measured);
  out.median_abs_error = median_of(errors);
  out.pearson = pearson(simulated, measured);
  out.spearman = spearman(simulated, measured);
  if (std::max<std::size_t>(options.runs, 1) >= 2) {
    out.repeatability = spearman(first_runs, last_runs);
    out.run_spread = median_of(spreads);
  }
  return out;
}

// A copy of `base` with `moves` vertices (drawn with `seed`) moved to another device.
[[nodiscard]] inline std::vector<device_id> perturbed_placement(const std::vector<device_id>& base, std::size_t devices,
                                                                std::size_t moves, std::uint64_t seed) {
  std::vector<device_id> out = base;
  if (devices < 2 || out.empty()) return out;
  detail::portable_random rng(seed);
  for (std::size_t i = 0; i < moves; ++i) {
    const auto v = rng.integer(0, out.size() - 1);
    const auto shift = static_cast<device_id>(rng.integer(1, devices - 1));
    out[v] = static_cast<device_id>((out[v] + shift) % devices);
  }
  return out;
}

struct candidate_options {
  std::size_t count = 20;        // at least this many candidates, when the placers give any
  double moved_fraction = 0.15;  // of the vertices, moved by each perturbation (at least one)
  std::uint64_t seed = 1;
  std::vector<std::string> skip = {"exact"};  // placers not run (the exact one takes long)
  // > 0: a candidate whose simulated makespan is within this fraction of a kept candidate's is
  // dropped (as is one that does not simulate), so that the kept ones differ by more than the
  // simulator claims to resolve; fewer than `count` may come back where the makespans crowd.
  double min_gap = 0;
  simulate_options simulation{};  // how candidates are simulated for min_gap (priority: each one's order)
};

// Every registry placer that places g (honouring memory or not), then perturbations of them in
// turn until there are `count`. Placements identical to an earlier one are dropped, and with
// options.min_gap those whose simulated makespans crowd a kept one's.
[[nodiscard]] inline std::vector<placement_candidate> placement_candidates(const graph& g, const graph_model& model,
                                                                           const cluster& devices,
                                                                           const candidate_options& options = {}) {
  if (!(options.min_gap >= 0) || !std::isfinite(options.min_gap))
    throw invalid_input("placement_candidates: min_gap must be a finite fraction >= 0, not " +
                        std::to_string(options.min_gap));
  std::vector<placement_candidate> out;
  std::vector<seconds> makespans;  // of the kept candidates, with min_gap
  // Keeps `c` unless it repeats a kept placement or (with min_gap) crowds a kept makespan.
  const auto keep = [&](placement_candidate c) {
    if (std::any_of(out.begin(), out.end(), [&](const placement_candidate& k) { return k.device == c.device; }))
      return false;
    if (options.min_gap > 0) {
      simulate_options sim = options.simulation;
      sim.priority = c.order;
      const auto r = simulate(g, model, devices, std::span<const device_id>(c.device), sim);
      if (!r.ok()) return false;
      const seconds m = r.schedule.makespan;
      if (std::any_of(makespans.begin(), makespans.end(),
                      [&](seconds k) { return std::abs(m - k) <= options.min_gap * std::max(m, k); }))
        return false;
      makespans.push_back(m);
    }
    out.push_back(std::move(c));
    return true;
  };
  for (const auto& entry : placers()) {
    if (std::find(options.skip.begin(), options.skip.end(), entry.name) != options.skip.end()) continue;
    auto result = entry.place({g, model, devices});
    if (!result.placement.ok()) continue;
    (void)keep({entry.name, std::move(result.placement.device), std::move(result.placement.order)});
  }
  const std::size_t bases = out.size();
  if (bases == 0) return out;
  const std::size_t moves = std::max<std::size_t>(
      1, static_cast<std::size_t>(options.moved_fraction * static_cast<double>(g.vertex_count())));
  for (std::size_t k = 0, tries = 0; out.size() < options.count && tries < 20 * options.count; ++tries) {
    const auto& base = out[tries % bases];
    auto device = perturbed_placement(base.device, devices.device_count(), moves, options.seed + tries);
    if (keep({base.name + "~" + std::to_string(k + 1), std::move(device), base.order})) ++k;
  }
  return out;
}

}  // namespace gantry
