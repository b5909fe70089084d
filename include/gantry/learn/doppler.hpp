// DOPPLER's three training stages (DOPPLER §6) for the dual policy (learn/dual_policy.hpp):
//   I   imitation: cross-entropy of SEL and PLC against Critical Path's (vertex, device) choices,
//       teacher-forced (or against a given placement's, doppler_options::teacher);
//   II  REINFORCE: sampled episodes, reward = -makespan of the placement in the work-conserving
//       simulator (sim/simulator.hpp), baseline = mean makespan of the earlier episodes, entropy bonus;
//   III the same loop with the makespan from a callback (a real run); by default the simulator with
//       lognormal-drawn durations, a fresh draw per episode.
// The best placement seen (judged by the simulator, with the model's durations or the mean over
// fixed draws) is kept, and greedy decoding is tried every few episodes. A given teacher's placement
// is judged before the first episode and counts toward the best seen, so training never returns a
// placement worse than its teacher's, whatever the stages and the time limit; the result says
// whether the policy beat it (doppler_result::from_policy, policy_makespan). With drawn durations the
// best of many noisy judgements is biased low (the winner's curse), so finish() judges the few
// best placements again on fresh draws and returns the best by that mean. doppler_trainer runs
// stage by stage or episode by episode; doppler() is the one-call form. Everything is seeded: the
// same seed gives the same weights and placement. An episode costs one list-scheduling run,
// O(steps · (ready + m) · parameters), and one simulation.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/learn/dual_policy.hpp>
#include <gantry/learn/features.hpp>
#include <gantry/learn/learning_curve.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace gantry::learn {

// learn_stage and learning_point: learn/learning_curve.hpp.

// The makespan a stage-III episode measured for a placement (nullopt: the run failed).
using measure_function = std::function<std::optional<seconds>(const placement&, std::size_t episode)>;

struct doppler_options {
  std::size_t hidden = 32;      // width of SEL's and PLC's hidden layer
  unsigned encoder_rounds = 2;  // message-passing hops each way
  std::size_t imitation_episodes = 20;
  std::size_t reinforce_episodes = 200;
  std::size_t measured_episodes = 0;
  double imitation_rate = 1e-2;  // Adam step sizes
  double reinforce_rate = 1e-3;
  double entropy_bonus = 1e-2;  // DOPPLER §7: 1e-2, at the first REINFORCE episode
  // The bonus halves every this many REINFORCE episodes (0: constant) *(beyond)*. A constant 1e-2
  // outweighs the advantages once they shrink: on DOPPLER's chainmm on 4 devices the mean episode
  // makespan climbed from 167 ms to 210 ms over 3,000 episodes, toward random placements.
  double entropy_half_life = 100;
  // After this many REINFORCE episodes without a better placement, the bonus schedule starts over
  // at entropy_bonus (0: never) *(beyond)*: once the bonus has decayed, sampling repeats the best
  // placement, and the rest of a time budget finds nothing.
  std::size_t restart_after = 500;
  // The features' teacher flags follow the best placement seen so far (the teacher's until training
  // beats it) *(beyond)*: sampling then explores around the incumbent, not around a placement
  // training has left behind. Teacher-forced episodes (stage I) still follow the teacher.
  bool flags_follow_best = true;
  double temperature = 1.0;       // sampled decoding
  std::size_t greedy_every = 10;  // also decode greedily every this many RL episodes (0: never)
  // Stage I's teacher: empty is Critical Path (DOPPLER §6); a placement of the graph (e.g. another
  // placer's) is imitated instead: its first-placed ready vertex, on its device. The policy's
  // features flag the teacher's choices beside Critical Path's (DOPPLER's flags, its teacher's),
  // in every episode, so sampling explores around the teacher. The teacher's placement, and every
  // teacher-forced episode's, counts toward the best seen but never as the policy's own
  // (doppler_result::policy_makespan).
  std::optional<placement> teacher{};
  // The teacher's makespan under this judge when the caller has it already (doppler_judge() with
  // these options): saves judging it again, a simulation on every device, when training starts.
  std::optional<seconds> teacher_makespan{};
  double measured_cv = 0.1;  // stage III default: lognormal duration noise of the simulator
  // How "best seen" is judged: the mean makespan of judge_draws simulations with durations drawn
  // with judge_cv (seeds judge_seed, judge_seed + 1, ...: the same draws for every placement);
  // judge_cv = 0 simulates the model's durations once.
  double judge_cv = 0;
  std::size_t judge_draws = 1;
  std::uint64_t judge_seed = 0x5EED;
  // finish() (and doppler()) judge the recheck_candidates best distinct placements again on
  // recheck_draws fresh draws (seeds judge_seed + judge_draws, ...) and return the best by that
  // mean; only when judge_cv > 0 (otherwise the judgement is exact). 1 re-judges only the best.
  // The teacher's placement, when given, is always re-judged with them, and another replaces it
  // only when faster by more than twice the standard error of their paired per-draw differences.
  std::size_t recheck_candidates = 4;
  std::size_t recheck_draws = 40;
  // REINFORCE baseline: 0 is the mean of all earlier episodes' makespans (DOPPLER §6); a decay in
  // (0, 1) is an exponential moving average that follows an improving policy sooner.
  double baseline_decay = 0;
  std::uint64_t seed = 1;
  // Seconds of training over all stages, the final greedy decode and finish() included: no episode
  // starts when the longest so far, one more decode and the rechecks could end past the limit.
  double time_limit = std::numeric_limits<double>::infinity();
  list_options list{};            // the engine's options (memory, groups, ...)
  simulate_options simulation{};  // how a placement is judged; priority is set per placement
  measure_function measure{};     // stage III's makespan; empty: the simulator with drawn durations
  std::function<void(const learning_point&)> on_episode{};  // progress
};

struct doppler_result {
  gantry::outcome outcome;      // ok, or why no placement was found (the engine's outcome)
  gantry::placement placement;  // the best placement seen
  seconds makespan = std::numeric_limits<seconds>::infinity();  // its simulated makespan (the recheck
                                                                // mean when `rechecked`)
  // Whether that placement was decoded by the policy (sampled or greedy) rather than teacher-forced
  // or the given teacher's own; the best the policy decoded, and the given teacher's makespan, both
  // as judged during training (infinity: none).
  bool from_policy = false;
  seconds policy_makespan = std::numeric_limits<seconds>::infinity();
  seconds teacher_makespan = std::numeric_limits<seconds>::infinity();
  bool rechecked = false;  // chosen among the best candidates on fresh draws (judge_cv > 0)
  dual_policy weights;     // after the last episode
  std::vector<learning_point> curve;
  double agreement = 0;  // of the last imitation episode (0 when none ran)
  std::size_t episodes = 0;
  std::size_t restarts = 0;  // how often a stall restarted the entropy bonus (restart_after)
  double training_seconds = 0;
  bool stopped_by_time_limit = false;  // the options' time_limit ended training before its episode counts

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
};

// How the trainer judges a placement: the simulator (options.simulation) running p.device with
// p.order as the priority; the mean makespan over `draws` runs with durations drawn with
// options.judge_cv and seeds first_seed, first_seed + 1, ... (one run when judge_cv = 0). nullopt
// when a run fails (memory). `ran`, when given, gets the number of simulations run. A caller
// choosing a teacher judges the candidates with this, as doppler_trainer will.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] std::optional<seconds> doppler_judge(const G& graph, const M& model, const D& devices, const placement& p,
                                                   const doppler_options& options, std::uint64_t first_seed,
                                                   std::size_t draws, std::size_t* ran = nullptr) {
  simulate_options o = options.simulation;
  o.priority = p.order;
  if (options.judge_cv == 0) draws = 1;
  o.cv = options.judge_cv;
  seconds sum = 0;
  std::size_t i = 0;
  for (; i < draws; ++i) {
    o.seed = first_seed + i;
    const auto sim = simulate(graph, model, devices, std::span<const device_id>(p.device), o);
    if (ran != nullptr) ++*ran;
    if (!sim.ok()) return std::nullopt;
    sum += sim.schedule.makespan;
  }
  return sum / static_cast<double>(draws);
}
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] std::optional<seconds> doppler_judge(const G& graph, const M& model, const D& devices, const placement& p,
                                                   const doppler_options& options) {
  return doppler_judge(graph, model, devices, p, options, options.judge_seed, options.judge_draws);
}

// The trainer as a class: init() then imitate()/reinforce()/measured(), or episode_*() one at a
// time; best() is the best placement seen. Holds references to its arguments.
template <adapted_graph G, placement_model M, device_set D>
class doppler_trainer {
 public:
  doppler_trainer(const G& graph, const M& model, const D& devices, doppler_options options = {},
                  std::optional<dual_policy> weights = std::nullopt)
      : graph_(graph), view_(graph), model_(model), devices_(devices), options_(std::move(options)),
        random_(options_.seed) {
    if (options_.hidden == 0) throw invalid_input("doppler: hidden must be > 0");
    if (options_.encoder_rounds > 8) throw invalid_input("doppler: encoder_rounds must be at most 8");
    if (!(options_.temperature > 0)) throw invalid_input("doppler: temperature must be > 0");
    if (!(options_.entropy_bonus >= 0)) throw invalid_input("doppler: entropy_bonus must be >= 0");
    if (!(options_.entropy_half_life >= 0)) throw invalid_input("doppler: entropy_half_life must be >= 0");
    if (!(options_.imitation_rate > 0) || !(options_.reinforce_rate > 0))
      throw invalid_input("doppler: learning rates must be > 0");
    if (!(options_.measured_cv >= 0) || !std::isfinite(options_.measured_cv))
      throw invalid_input("doppler: measured_cv must be finite and >= 0");
    if (!(options_.judge_cv >= 0) || !std::isfinite(options_.judge_cv) || options_.judge_draws == 0)
      throw invalid_input("doppler: judge_cv must be finite and >= 0 and judge_draws > 0");
    if (options_.teacher && !options_.teacher->ok())
      throw invalid_input("doppler: the teacher placement failed: " + options_.teacher->outcome.message);
    if (options_.recheck_candidates == 0 || options_.recheck_draws == 0)
      throw invalid_input("doppler: recheck_candidates and recheck_draws must be > 0");
    if (!(options_.baseline_decay >= 0 && options_.baseline_decay < 1))
      throw invalid_input("doppler: baseline_decay must be in [0, 1)");
    if (weights) {
      weights_ = std::move(*weights);
    } else {
      weights_ = dual_policy(options_.hidden, options_.encoder_rounds);
      weights_.initialize(options_.seed);
    }
    encoding_ = encode_graph(*view_, model_, devices_.device_count(), weights_.rounds);
    select_optimizer_ = adam(weights_.select.size(), options_.imitation_rate);
    place_optimizer_ = adam(weights_.place.size(), options_.imitation_rate);
    started_ = std::chrono::steady_clock::now();
    if (options_.teacher) {
      const auto& t = *options_.teacher;
      if (t.device.size() != view_->vertex_count() || t.order.size() != view_->vertex_count())
        throw invalid_input("doppler: the teacher placement has " + std::to_string(t.device.size()) + " devices and " +
                            std::to_string(t.order.size()) + " order entries, the graph " +
                            std::to_string(view_->vertex_count()) + " vertices");
      if (const auto m = consider(*options_.teacher, /*from_policy=*/false, options_.teacher_makespan))
        teacher_makespan_ = *m;
    }
  }

  // Stage I: one teacher-forced episode and one Adam step on the mean cross-entropy.
  learning_point episode_imitation() {
    episode_trace trace;
    const double began = elapsed();
    const auto run = run_episode(decoding::teacher, &trace);
    if (interrupted_) return record(learn_stage::imitation, run, std::numeric_limits<seconds>::infinity(), 0);
    const double placing = elapsed() - began;
    weights_.select.zero_gradient();
    weights_.place.zero_gradient();
    const double scale = trace.steps.empty() ? 0.0 : 1.0 / static_cast<double>(trace.steps.size());
    if (!accumulate_all(trace, scale, 0.0, placing))
      return record(learn_stage::imitation, run, std::numeric_limits<seconds>::infinity(), 0);
    step_optimizers(options_.imitation_rate);
    // The teacher's own placement counts toward the best seen: training never returns worse.
    const auto judged = consider(run, /*from_policy=*/false);
    learning_point point = record(learn_stage::imitation, run,
                                  judged ? *judged : std::numeric_limits<seconds>::infinity(), trace.agreement());
    last_agreement_ = trace.agreement();
    return point;
  }

  // Stage II (measured = false) or III (true): one sampled episode and one REINFORCE step.
  learning_point episode_reinforce(bool measured = false) {
    episode_trace trace;
    const double began = elapsed();
    const auto run = run_episode(decoding::sampled, &trace);
    const auto stage = measured ? learn_stage::measured : learn_stage::reinforce;
    if (interrupted_) return record(stage, run, std::numeric_limits<seconds>::infinity(), 0);
    const double placing = elapsed() - began;
    std::optional<seconds> makespan;
    if (run.ok()) makespan = measured ? measure(run.placement) : judge(run.placement);
    const seconds best_before = best_makespan_;
    consider(run, /*from_policy=*/true);
    // A failed run (memory) costs twice the baseline.
    const seconds reward_makespan =
        makespan ? *makespan : (reinforced_ > 0 ? 2 * baseline_ : 2 * encoding_.scale * devices_.device_count());
    const seconds baseline = reinforced_ > 0 ? baseline_ : reward_makespan;
    const double advantage = (baseline - reward_makespan) / (baseline > 0 ? baseline : 1.0);
    weights_.select.zero_gradient();
    weights_.place.zero_gradient();
    const double scale = trace.steps.empty() ? 0.0 : 1.0 / static_cast<double>(trace.steps.size());
    if (options_.restart_after != 0 && reinforced_ - improved_at_ >= options_.restart_after) {
      entropy_origin_ = reinforced_;  // a stall: the bonus schedule starts over
      improved_at_ = reinforced_;
      ++restarts_;
    }
    const double entropy =
        options_.entropy_bonus *
        (options_.entropy_half_life > 0
             ? std::exp2(-static_cast<double>(reinforced_ - entropy_origin_) / options_.entropy_half_life)
             : 1.0);
    if (!accumulate_all(trace, advantage * scale, entropy * scale, placing))
      return record(stage, run, std::numeric_limits<seconds>::infinity(), 0);
    step_optimizers(options_.reinforce_rate);
    ++reinforced_;
    if (options_.baseline_decay == 0 || reinforced_ == 1)
      baseline_ += (reward_makespan - baseline_) / static_cast<double>(reinforced_);  // mean of all so far
    else baseline_ = options_.baseline_decay * baseline_ + (1 - options_.baseline_decay) * reward_makespan;
    if (options_.greedy_every != 0 && reinforced_ % options_.greedy_every == 0)
      consider(run_episode(decoding::greedy, nullptr), /*from_policy=*/true);
    if (best_makespan_ < best_before) improved_at_ = reinforced_;
    return record(stage, run, reward_makespan, 0);
  }

  // Runs a stage for `episodes` episodes or until the time limit (see out_of_time()).
  void imitate(std::size_t episodes) {
    run_stage(episodes, [&] { episode_imitation(); });
  }
  void reinforce(std::size_t episodes) {
    run_stage(episodes, [&] { episode_reinforce(false); });
  }
  void measured(std::size_t episodes) {
    run_stage(episodes, [&] { episode_reinforce(true); });
  }
  // Whether the time limit ended a stage before its episode count.
  [[nodiscard]] bool stopped_by_time_limit() const noexcept { return stopped_by_time_limit_ || interrupted_; }

  // Places with the current weights, greedily (counts toward the best seen).
  list_schedule_result decode_greedy() {
    auto run = run_episode(decoding::greedy, nullptr);
    consider(run, /*from_policy=*/true);
    return run;
  }
  // Places with `samples` sampled episodes, keeping the best (counts toward the best seen).
  void decode_sampled(std::size_t samples) {
    for (std::size_t i = 0; i < samples; ++i) consider(run_episode(decoding::sampled, nullptr), /*from_policy=*/true);
  }

  // --- queries ---
  [[nodiscard]] const dual_policy& weights() const noexcept { return weights_; }
  [[nodiscard]] dual_policy& weights() noexcept { return weights_; }
  [[nodiscard]] const graph_encoding& encoding() const noexcept { return encoding_; }
  [[nodiscard]] const std::vector<learning_point>& curve() const noexcept { return curve_; }
  [[nodiscard]] seconds best_makespan() const noexcept { return best_makespan_; }
  // The best makespan of a placement the policy decoded itself, and the given teacher's (infinity: none).
  [[nodiscard]] seconds policy_makespan() const noexcept { return policy_makespan_; }
  [[nodiscard]] seconds teacher_makespan() const noexcept { return teacher_makespan_; }
  [[nodiscard]] const std::optional<placement>& best() const noexcept { return best_; }
  [[nodiscard]] const gantry::outcome& last_outcome() const noexcept { return last_outcome_; }
  [[nodiscard]] seconds baseline() const noexcept { return baseline_; }
  [[nodiscard]] double agreement() const noexcept { return last_agreement_; }
  [[nodiscard]] std::size_t episodes() const noexcept { return episodes_; }
  // How often a stall restarted the entropy bonus (doppler_options::restart_after).
  [[nodiscard]] std::size_t restarts() const noexcept { return restarts_; }
  // The placement whose choices the features flag in sampled and greedy episodes: the best seen
  // (doppler_options::flags_follow_best), else the given teacher; null: Critical Path's choices.
  [[nodiscard]] const placement* flagged() const noexcept {
    if (options_.flags_follow_best && best_) return &*best_;
    return options_.teacher ? &*options_.teacher : nullptr;
  }
  [[nodiscard]] double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  // Whether another episode could take training past the time limit: the longest episode so far,
  // one more for the final greedy decode, and finish()'s rechecks at the mean time of a judged draw.
  [[nodiscard]] bool out_of_time() const {
    double reserve = 2 * longest_episode_;
    if (options_.judge_cv != 0 && judged_draws_ != 0)
      reserve +=
          static_cast<double>((options_.recheck_candidates + (options_.teacher ? 1 : 0)) * options_.recheck_draws) *
          judge_seconds_ / static_cast<double>(judged_draws_);
    return interrupted_ || elapsed() + reserve >= options_.time_limit;
  }

  // Simulated makespan of a placement (the judge of "best", doppler_judge()): nullopt when the run fails.
  [[nodiscard]] std::optional<seconds> judge(const placement& p) const {
    return judge(p, options_.judge_seed, options_.judge_draws);
  }
  // The mean over `draws` draws with seeds first_seed, first_seed + 1, ... (one run when judge_cv = 0).
  [[nodiscard]] std::optional<seconds> judge(const placement& p, std::uint64_t first_seed, std::size_t draws) const {
    const double began = elapsed();
    std::size_t ran = 0;
    auto out = doppler_judge(graph_, model_, devices_, p, options_, first_seed, draws, &ran);
    judge_seconds_ += elapsed() - began;
    judged_draws_ += ran;
    return out;
  }

  // The greedy placement's agreement with the teacher, teacher-forced (for reports and tests).
  [[nodiscard]] double measure_agreement() {
    episode_trace trace;
    (void)run_episode(decoding::teacher, &trace, /*count=*/false);
    return trace.agreement();
  }

  // Judges the best candidates again on fresh draws (see doppler_options::recheck_candidates) and
  // makes the best of them the result; returns its makespan (infinity when none was found).
  // Training on afterwards is allowed: a better placement found later replaces the choice.
  seconds finish() {
    if (candidates_.empty()) return best_makespan_;
    if (options_.judge_cv == 0) {
      chosen_ = 0;
      chosen_makespan_ = candidates_.front().makespan;
      return chosen_makespan_;
    }
    // The teacher's placement is always rechecked, so that a policy placement judged below it only
    // by the training draws' luck does not displace it.
    std::optional<std::size_t> teacher_at;
    if (options_.teacher && std::isfinite(teacher_makespan_)) {
      for (std::size_t i = 0; i < candidates_.size() && !teacher_at; ++i)
        if (candidates_[i].placement.device == options_.teacher->device &&
            candidates_[i].placement.order == options_.teacher->order)
          teacher_at = i;
      if (!teacher_at) {
        teacher_at = candidates_.size();
        candidates_.push_back(
            candidate{.placement = *options_.teacher, .makespan = teacher_makespan_, .from_policy = false});
      }
    }
    // Each candidate's makespan per recheck draw: the same seeds for all, so differences pair up.
    const std::uint64_t first_seed = options_.judge_seed + options_.judge_draws;
    std::vector<std::vector<seconds>> draws(candidates_.size());
    chosen_makespan_ = std::numeric_limits<seconds>::infinity();
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      double sum = 0;
      for (std::size_t k = 0; k < options_.recheck_draws && std::isfinite(sum); ++k) {
        const auto m = judge(candidates_[i].placement, first_seed + k, 1);
        draws[i].push_back(m ? *m : std::numeric_limits<seconds>::infinity());
        sum += draws[i].back();
      }
      candidates_[i].rechecked = sum / static_cast<double>(options_.recheck_draws);
      if (candidates_[i].rechecked < chosen_makespan_) {
        chosen_makespan_ = candidates_[i].rechecked;
        chosen_ = i;
      }
    }
    // Another placement replaces the teacher's only when it is faster by more than twice the
    // standard error of the paired differences: otherwise the two are the same within the noise,
    // and the teacher's, the one training started from, is the answer.
    if (chosen_ && teacher_at && *chosen_ != *teacher_at && std::isfinite(candidates_[*teacher_at].rechecked)) {
      const auto& a = draws[*chosen_];
      const auto& t = draws[*teacher_at];
      const auto n = static_cast<double>(a.size());
      double mean = 0, square = 0;
      for (std::size_t k = 0; k < a.size(); ++k) mean += (a[k] - t[k]) / n;
      for (std::size_t k = 0; k < a.size(); ++k) square += (a[k] - t[k] - mean) * (a[k] - t[k] - mean);
      const double standard_error = n > 1 ? std::sqrt(square / (n - 1) / n) : 0.0;
      if (!(mean + 2 * standard_error < 0)) {
        chosen_ = *teacher_at;
        chosen_makespan_ = candidates_[*teacher_at].rechecked;
      }
    }
    if (!chosen_) {  // every recheck failed (memory): fall back to the best judged
      chosen_ = 0;
      chosen_makespan_ = candidates_.front().makespan;
    }
    return chosen_makespan_;
  }

  // A placement kept for finish(): its judged makespan and, after finish(), its recheck mean.
  struct candidate {
    gantry::placement placement;
    seconds makespan = 0;
    seconds rechecked = std::numeric_limits<seconds>::infinity();
    bool from_policy = false;  // decoded by the policy, not teacher-forced or the teacher's own
  };
  // The best distinct placements seen, best first (at most recheck_candidates).
  [[nodiscard]] const std::vector<candidate>& candidates() const noexcept { return candidates_; }

  // Gathers the results: finish()'s choice when it ran since the last improvement, else the best seen.
  [[nodiscard]] doppler_result result() const {
    doppler_result out;
    out.weights = weights_;
    out.curve = curve_;
    out.agreement = last_agreement_;
    out.episodes = episodes_;
    out.restarts = restarts_;
    out.training_seconds = elapsed();
    out.stopped_by_time_limit = stopped_by_time_limit_ || interrupted_;
    out.policy_makespan = policy_makespan_;
    out.teacher_makespan = teacher_makespan_;
    if (chosen_) {
      out.placement = candidates_[*chosen_].placement;
      out.makespan = chosen_makespan_;
      out.outcome = out.placement.outcome;
      out.rechecked = options_.judge_cv > 0;
      out.from_policy = candidates_[*chosen_].from_policy;
    } else if (best_) {
      out.placement = *best_;
      out.makespan = best_makespan_;
      out.outcome = best_->outcome;
      out.from_policy = best_from_policy_;
    } else {
      out.outcome = last_outcome_.ok()
                        ? gantry::outcome{.code = status::infeasible, .message = "doppler: no episode ran"}
                        : last_outcome_;
      out.placement.outcome = out.outcome;
    }
    return out;
  }

 private:
  template <class F>
  void run_stage(std::size_t episodes, F&& episode) {
    std::size_t i = 0;
    for (; i < episodes && !out_of_time(); ++i) timed(episode);
    if (i < episodes) stopped_by_time_limit_ = true;
  }
  // One episode; with a finite time limit it ends at the limit, even halfway (interrupted_), and
  // then counts for nothing.
  list_schedule_result run_episode(decoding mode, episode_trace* trace, bool count = true) {
    const placement* taught = mode == decoding::teacher ? (options_.teacher ? &*options_.teacher : nullptr) : flagged();
    doppler_policy policy(weights_, mode, &random_, trace, &encoding_, options_.temperature, taught);
    if (std::isfinite(options_.time_limit))
      policy.set_deadline(started_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                         std::chrono::duration<double>(options_.time_limit)));
    list_scheduler<G, M, D, doppler_policy> engine(graph_, model_, devices_, std::move(policy), options_.list);
    list_schedule_result out;
    try {
      out = engine.run();
    } catch (const episode_deadline_passed&) {
      interrupted_ = true;
      out = {};
      out.placement.outcome = {.code = status::infeasible,
                               .message = "doppler: the time limit (" + format_seconds(options_.time_limit) +
                                          ") ran out during an episode on " + std::to_string(devices_.device_count()) +
                                          " devices, before any episode had placed every vertex"};
      if (!best_) last_outcome_ = out.placement.outcome;
      if (trace != nullptr) trace->steps.clear();
      return out;
    }
    if (count) ++episodes_;
    if (!out.ok() && out.placement.outcome.code != status::over_capacity) last_outcome_ = out.placement.outcome;
    return out;
  }

  // The gradient of every step of an episode; false when the next step would end past the time
  // limit (on a million devices one step's backward pass takes a second or more): the episode then
  // counts for nothing, as one interrupted while placing does. A step is expected to take what the
  // slowest so far took, and at first twice a step's share of `placing`, the seconds the episode
  // took to place (a backward pass costs about two forward ones).
  bool accumulate_all(const episode_trace& trace, double weight, double entropy, double placing) {
    if (trace.steps.empty()) return true;
    double expected = 2 * placing / static_cast<double>(trace.steps.size());
    for (const auto& step : trace.steps) {
      const double began = elapsed();
      if (began + expected >= options_.time_limit) {
        interrupted_ = true;
        return false;
      }
      accumulate(step, weight, entropy);
      expected = std::max(expected, elapsed() - began);
    }
    return true;
  }
  void accumulate(const step_record& step, double weight, double entropy) {
    const vector ps = softmax(weights_.select.forward(step.select_inputs), options_.temperature);
    weights_.select.backward(step.select_inputs,
                             choice_gradient(ps, step.select_choice, weight, entropy) / options_.temperature);
    const vector pp = softmax(weights_.place.forward(step.place_inputs), options_.temperature);
    weights_.place.backward(step.place_inputs,
                            choice_gradient(pp, step.place_choice, weight, entropy) / options_.temperature);
  }

  void step_optimizers(double rate) {
    select_optimizer_.set_rate(rate);
    place_optimizer_.set_rate(rate);
    select_optimizer_.step(weights_.select.parameters(), weights_.select.gradient());
    place_optimizer_.step(weights_.place.parameters(), weights_.place.gradient());
  }

  [[nodiscard]] std::optional<seconds> measure(const placement& p) {
    if (options_.measure) return options_.measure(p, episodes_);
    simulate_options o = options_.simulation;
    o.priority = p.order;
    o.cv = options_.measured_cv;
    o.seed = options_.seed * 0x9E3779B97F4A7C15ULL + episodes_;
    const auto sim = simulate(graph_, model_, devices_, std::span<const device_id>(p.device), o);
    if (!sim.ok()) return std::nullopt;
    return sim.schedule.makespan;
  }

  // Judges a finished run (or the teacher's placement), keeps it when it beats the best, and among
  // the candidates for finish() when it is one of the best distinct placements seen.
  std::optional<seconds> consider(const list_schedule_result& run, bool from_policy) {
    if (!run.ok()) return std::nullopt;
    return consider(run.placement, from_policy);
  }
  std::optional<seconds> consider(const placement& p, bool from_policy, std::optional<seconds> judged = {}) {
    const auto makespan = judged ? judged : judge(p);
    if (!makespan) return makespan;
    if (from_policy) policy_makespan_ = std::min(policy_makespan_, *makespan);
    if (*makespan < best_makespan_) {
      best_makespan_ = *makespan;
      best_ = p;
      best_from_policy_ = from_policy;
      chosen_.reset();
    }
    keep_candidate(p, *makespan, from_policy);
    return makespan;
  }
  void keep_candidate(const placement& p, seconds makespan, bool from_policy) {
    const std::size_t limit = options_.recheck_candidates;
    if (candidates_.size() >= limit && makespan >= candidates_.back().makespan) return;
    for (const auto& c : candidates_)
      if (c.placement.device == p.device && c.placement.order == p.order) return;
    auto at =
        std::find_if(candidates_.begin(), candidates_.end(), [&](const candidate& c) { return makespan < c.makespan; });
    candidates_.insert(at, candidate{.placement = p, .makespan = makespan, .from_policy = from_policy});
    while (candidates_.size() > limit) candidates_.pop_back();
    if (chosen_) chosen_.reset();
  }
  learning_point record(learn_stage stage, const list_schedule_result&, seconds makespan, double agreement) {
    learning_point point{.episode = episodes_,
                         .stage = stage,
                         .makespan = makespan,
                         .best = best_makespan_,
                         .baseline = stage == learn_stage::imitation ? 0.0 : baseline_,
                         .agreement = agreement,
                         .seconds_elapsed = elapsed()};
    curve_.push_back(point);
    if (options_.on_episode) options_.on_episode(point);
    return point;
  }

  const G& graph_;
  detail::csr_view<G> view_;
  const M& model_;
  const D& devices_;
  doppler_options options_;
  detail::portable_random random_;
  dual_policy weights_;
  graph_encoding encoding_;
  adam select_optimizer_, place_optimizer_;
  std::chrono::steady_clock::time_point started_;
  std::vector<learning_point> curve_;
  std::optional<placement> best_;
  seconds best_makespan_ = std::numeric_limits<seconds>::infinity();
  bool best_from_policy_ = false;
  seconds policy_makespan_ = std::numeric_limits<seconds>::infinity();
  seconds teacher_makespan_ = std::numeric_limits<seconds>::infinity();
  std::vector<candidate> candidates_;  // best first, distinct
  std::optional<std::size_t> chosen_;  // finish()'s pick, reset when the candidates change
  seconds chosen_makespan_ = std::numeric_limits<seconds>::infinity();
  gantry::outcome last_outcome_;
  seconds baseline_ = 0;
  std::size_t reinforced_ = 0, episodes_ = 0;
  // The REINFORCE episode of the last improvement, the one the bonus schedule counts from, and the
  // number of restarts (doppler_options::restart_after).
  std::size_t improved_at_ = 0, entropy_origin_ = 0, restarts_ = 0;
  double last_agreement_ = 0;
  // For out_of_time(): the longest episode, and the time and number of the draws judged so far.
  double longest_episode_ = 0;
  bool stopped_by_time_limit_ = false;
  bool interrupted_ = false;  // an episode ran into the time limit: no more start
  mutable double judge_seconds_ = 0;
  mutable std::size_t judged_draws_ = 0;

  template <class Episode>
  void timed(Episode episode) {
    const double began = elapsed();
    episode();
    longest_episode_ = std::max(longest_episode_, elapsed() - began);
  }
};

// Trains the dual policy on one graph (stages I, II, III with the options' episode counts, or from
// `weights` when given: fine-tuning), decodes greedily once more, and returns the best placement
// seen (with drawn durations: the best of the rechecked candidates, see finish()). Throws
// invalid_input for bad options and not_a_dag for a cycle.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] doppler_result doppler(const G& graph, const M& model, const D& devices, doppler_options options = {},
                                     std::optional<dual_policy> weights = std::nullopt) {
  const std::size_t imitation = options.imitation_episodes, reinforce = options.reinforce_episodes,
                    measured = options.measured_episodes;
  doppler_trainer<G, M, D> trainer(graph, model, devices, std::move(options), std::move(weights));
  trainer.imitate(imitation);
  trainer.reinforce(reinforce);
  trainer.measured(measured);
  (void)trainer.decode_greedy();
  (void)trainer.finish();
  return trainer.result();
}

}  // namespace gantry::learn
