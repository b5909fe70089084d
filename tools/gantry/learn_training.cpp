// The training behind `gantry learn` (learn_training.hpp) and the tool's `doppler` placer of
// `gantry compare` / `gantry place`: a short training with a fixed seed. The only unit of the tool
// that compiles Eigen and DOPPLER's trainer.
#include "learn_training.hpp"

#include <gantry/core/enum_names.hpp>
#include <gantry/core/units.hpp>
#include <gantry/learn/doppler.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gantry::cli {

// Above this many vertices `compare` does not train (an episode places every vertex once).
inline constexpr std::size_t doppler_compare_vertex_limit = 5000;

// The REINFORCE episodes of the tool's `doppler` entry on a graph of n vertices: 200, and on graphs
// of more than 500 vertices 100000 / n (at least 20), since an episode places every vertex once.
// A budget in episodes, not seconds: the same answer on every machine, and on inception_v3 (1,130
// vertices) about a minute.
[[nodiscard]] constexpr std::size_t doppler_reinforce_episodes(std::size_t vertices) noexcept {
  return vertices <= 500 ? 200 : std::max<std::size_t>(20, 100'000 / vertices);
}

namespace {

// The teacher training imitates, and its placement as training judges it.
struct chosen_teacher {
  std::string name{};
  std::optional<placement> placed{};  // none: DOPPLER's built-in rule
  seconds makespan = std::numeric_limits<seconds>::infinity();
  std::size_t tried = 0;      // "best": the registry placers that ran
  bool cut_short = false;     // "best": the time budget stopped it before the last placer
  std::string why_builtin{};  // "best" found no placement that runs: why the built-in rule teaches
  double seconds_taken = 0;
};

// `name` as training_request::teacher reads it. A registry placer runs as `gantry place -a NAME`
// runs it without other flags (placer_request's defaults); "best" runs them in the registry's
// order and keeps the fastest under `judging`'s judge (learn::doppler_judge), the earlier on a tie;
// where none runs within memory, DOPPLER's built-in rule teaches, saying why. With a finite budget,
// "best" starts no placer once half of it is spent and it has a placement, or once all of it is
// spent without one (DOPPLER's built-in rule then teaches); a placer that runs cannot be stopped,
// so this is a soft limit. `progress` hears which placer runs.
chosen_teacher choose_teacher(const std::string& name, const graph& g, const graph_model& model, const cluster& c,
                              bool cache_transfers, const learn::doppler_options& judging, seconds budget,
                              const std::function<void(const std::string&)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  chosen_teacher out{.name = name};
  if (name == builtin_teacher_name) return out;
  const auto& entries = placers();
  // A placer's placement and its judged makespan (nothing when it found none or the run fails).
  struct judged_placement {
    placement placed;
    std::optional<seconds> makespan;
  };
  const auto judged = [&](const placer_entry& e) {
    judged_placement r{e.place(placer_request{g, model, c, cache_transfers}).placement, std::nullopt};
    if (!r.placed.ok()) return r;
    const auto m = learn::doppler_judge(g, model, c, r.placed, judging);
    if (!m) return r;
    // As place and simulate do: a makespan that overflowed is bad input, not a result.
    if (!std::isfinite(*m))
      throw invalid_input("--teacher " + name + ": " + e.name + "'s simulated makespan is not finite (" +
                          format_seconds(*m) +
                          "): the graph's compute and transfer times are too large to add "
                          "up in a double");
    r.makespan = m;
    return r;
  };
  if (name == best_teacher_name) {
    for (const auto& e : entries) {
      // Half the budget with a placement in hand, or all of it without one.
      if (elapsed() >= (out.placed ? budget / 2 : budget)) {
        out.cut_short = true;
        break;
      }
      if (progress)
        progress("choosing the teacher: placer " + std::to_string(out.tried + 1) + " of " +
                 std::to_string(entries.size()) + ", " + e.name);
      ++out.tried;
      if (auto r = judged(e); r.makespan && *r.makespan < out.makespan) {
        out.name = e.name;
        out.placed = std::move(r.placed);
        out.makespan = *r.makespan;
      }
    }
    if (!out.placed) {
      out.name = builtin_teacher_name;
      out.why_builtin = out.cut_short ? "the time limit ran out before a placer of the registry found a placement"
                                      : "no placer of the registry found a placement that runs within memory";
    }
  } else {
    const auto entry =
        std::find_if(entries.begin(), entries.end(), [&](const placer_entry& e) { return e.name == name; });
    if (entry == entries.end()) {
      std::vector<std::string_view> names{best_teacher_name, builtin_teacher_name};
      for (const auto& e : entries) names.push_back(e.name);
      throw invalid_input("--teacher: unknown placer '" + name + "'" + did_you_mean(name, names) + "; expected " +
                          best_teacher_name + ", " + builtin_teacher_name +
                          " or a library placer that `gantry algorithms` lists");
    }
    if (progress) progress("choosing the teacher: " + name);
    auto r = judged(*entry);
    if (!r.makespan)
      throw invalid_input("--teacher: " + name + " found no placement" +
                          (r.placed.ok() ? std::string(" that runs within memory") : ": " + r.placed.outcome.message));
    out.tried = 1;
    out.placed = std::move(r.placed);
    out.makespan = *r.makespan;
  }
  out.seconds_taken = elapsed();
  return out;
}

}  // namespace

// The `doppler` placer of the tool: 20 imitation and doppler_reinforce_episodes() REINFORCE
// episodes, seed 1, imitating the best placer of the registry (as `gantry learn` does). With a
// time limit training may stop earlier; the result's "note" then says so, and whether the answer
// is the teacher's placement (place and compare print it).
placer_entry doppler_placer_entry(std::optional<seconds> time_limit) {
  return {"doppler",
          "DOPPLER's learned dual policy: imitation of the registry's best placer on the graph, then REINFORCE "
          "on the simulator (20 + 200 episodes, 100000 / vertices REINFORCE episodes above 500 vertices; seed 1; "
          "never worse than its teacher; `gantry learn` trains longer)",
          false, [time_limit](const placer_request& r) {
            if (r.g.vertex_count() > doppler_compare_vertex_limit) {
              placement p;
              p.outcome = {.code = status::infeasible,
                           .message = "doppler: the graph has " + std::to_string(r.g.vertex_count()) +
                                      " vertices; compare trains on at most " +
                                      std::to_string(doppler_compare_vertex_limit) + ", use `gantry learn`"};
              return placer_result{std::move(p), std::nullopt, {}};
            }
            const std::size_t reinforce = doppler_reinforce_episodes(r.g.vertex_count());
            learn::doppler_options options{.imitation_episodes = 20, .reinforce_episodes = reinforce, .seed = 1};
            if (time_limit) options.time_limit = *time_limit;
            options.list.cache_transfers = r.cache_transfers;
            options.list.group = colocation_groups(r.g);
            options.simulation.cache_transfers = r.cache_transfers;
            auto teacher = choose_teacher(best_teacher_name, r.g, r.model, r.devices, r.cache_transfers, options,
                                          options.time_limit, {});
            options.teacher = std::move(teacher.placed);
            if (options.teacher) options.teacher_makespan = teacher.makespan;
            options.time_limit = std::max(0.0, options.time_limit - teacher.seconds_taken);
            auto learned = learn::doppler(r.g, r.model, r.devices, std::move(options));
            placer_result out{std::move(learned.placement),
                              std::nullopt,
                              {{"episodes", std::to_string(learned.episodes)},
                               {"training_seconds", std::to_string(learned.training_seconds)},
                               {"teacher", teacher.name},
                               {"from_policy", learned.from_policy ? "true" : "false"}}};
            // One note: what cut training short, and whose placement this is.
            std::string note;
            if (learned.stopped_by_time_limit)
              note = "--doppler-time-limit " + format_seconds(*time_limit) + " stopped training after " +
                     std::to_string(learned.episodes) + " episodes, short of its budget of 20 imitation + " +
                     std::to_string(reinforce) + " REINFORCE: another machine may give another placement";
            if (!teacher.why_builtin.empty())
              note += (note.empty() ? "" : "; ") + teacher.why_builtin + ", so DOPPLER's Critical Path taught";
            else if (learned.ok() && !learned.from_policy)
              note += (note.empty() ? "" : "; ") + std::string("the policy's best (") +
                      (std::isfinite(learned.policy_makespan) ? format_seconds(learned.policy_makespan)
                                                              : std::string("none ran")) +
                      ") did not beat its teacher " + teacher.name + " (" + format_seconds(teacher.makespan) +
                      "): this is the teacher's placement";
            if (!note.empty()) out.metadata.emplace_back("note", std::move(note));
            return out;
          }};
}

// The training of `gantry learn`: DOPPLER's three stages as the request gives them.
training_outcome train_doppler(const graph& g, const cluster& c, training_request request) {
  const graph_model model(g, c);
  std::optional<learn::dual_policy> weights;
  if (!request.weights_in.empty()) weights = learn::load_weights(request.weights_in);
  learn::doppler_options options{.hidden = request.hidden,
                                 .imitation_episodes = request.imitation_episodes,
                                 .reinforce_episodes = request.reinforce_episodes,
                                 .measured_episodes = request.measured_episodes,
                                 .reinforce_rate = request.rate,
                                 .entropy_bonus = request.entropy,
                                 .entropy_half_life = request.entropy_half_life,
                                 .restart_after = request.restart_after,
                                 .measured_cv = request.measured_cv,
                                 .seed = request.seed,
                                 .time_limit = request.time_limit};
  options.list.group = colocation_groups(g);
  auto teacher = choose_teacher(request.teacher, g, model, c, /*cache_transfers=*/true, options, request.time_limit,
                                request.on_progress);
  options.teacher = std::move(teacher.placed);
  if (options.teacher) options.teacher_makespan = teacher.makespan;
  // The time limit covers choosing the teacher and training together.
  options.time_limit = std::max(0.0, request.time_limit - teacher.seconds_taken);
  if (request.on_progress) request.on_progress("training: first episode");
  options.on_episode = std::move(request.on_episode);
  auto learned = learn::doppler(g, model, c, std::move(options), std::move(weights));
  training_outcome out{.outcome = learned.outcome,
                       .placed = std::move(learned.placement),
                       .simulated = std::nullopt,
                       .makespan = learned.makespan,
                       .from_policy = learned.from_policy,
                       .policy_makespan = learned.policy_makespan,
                       .teacher = teacher.name,
                       .teacher_makespan = teacher.makespan,
                       .teachers_tried = teacher.tried,
                       .teachers_cut_short = teacher.cut_short,
                       .teacher_fallback = teacher.why_builtin,
                       .teacher_seconds = teacher.seconds_taken,
                       .agreement = learned.agreement,
                       .episodes = learned.episodes,
                       .training_seconds = learned.training_seconds,
                       .stopped_by_time_limit = learned.stopped_by_time_limit,
                       .curve = std::move(learned.curve),
                       .weights = {}};
  if (!out.ok()) return out;
  if (auto sim = simulate(g, model, c, std::span<const device_id>(out.placed.device), {.priority = out.placed.order});
      sim.ok())
    out.simulated = std::move(sim.schedule);
  std::ostringstream text;
  learn::write_weights(text, learned.weights);
  out.weights = std::move(text).str();
  return out;
}

}  // namespace gantry::cli
