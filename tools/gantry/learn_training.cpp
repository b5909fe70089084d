// The training behind `gantry learn` (learn_training.hpp) and the tool's `doppler` placer of
// `gantry compare` / `gantry place`: a short training with a fixed seed. The only unit of the tool
// that compiles Eigen and DOPPLER's trainer.
#include "learn_training.hpp"

#include <gantry/core/units.hpp>
#include <gantry/learn/doppler.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
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

// The `doppler` placer of the tool: 20 imitation and doppler_reinforce_episodes() REINFORCE
// episodes, seed 1. With a time limit training may stop earlier; the result's "note" then says so
// (place and compare print it).
placer_entry doppler_placer_entry(std::optional<seconds> time_limit) {
  return {"doppler",
          "DOPPLER's learned dual policy: imitation of Critical Path, then REINFORCE on the simulator "
          "(20 + 200 episodes, 100000 / vertices REINFORCE episodes above 500 vertices; seed 1; `gantry learn` "
          "trains longer)",
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
            auto learned = learn::doppler(r.g, r.model, r.devices, std::move(options));
            placer_result out{std::move(learned.placement),
                              std::nullopt,
                              {{"episodes", std::to_string(learned.episodes)},
                               {"training_seconds", std::to_string(learned.training_seconds)}}};
            if (learned.stopped_by_time_limit)
              out.metadata.emplace_back(
                  "note", "--doppler-time-limit " + format_seconds(*time_limit) + " stopped training after " +
                              std::to_string(learned.episodes) + " episodes, short of its budget of 20 imitation + " +
                              std::to_string(reinforce) + " REINFORCE: another machine may give another placement");
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
                                 .measured_cv = request.measured_cv,
                                 .seed = request.seed,
                                 .time_limit = request.time_limit};
  options.list.group = colocation_groups(g);
  if (request.teacher != "critical-path") {
    const auto& entries = placers();
    const auto entry =
        std::find_if(entries.begin(), entries.end(), [&](const placer_entry& e) { return e.name == request.teacher; });
    if (entry == entries.end()) {
      std::string names;
      for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.name;
      throw invalid_input("--teacher: unknown placer '" + request.teacher + "' (critical-path, " + names + ")");
    }
    auto taught = entry->place({g, model, c});
    if (!taught.placement.ok())
      throw invalid_input("--teacher: " + request.teacher + " found no placement: " + taught.placement.outcome.message);
    options.teacher = std::move(taught.placement);
  }
  options.on_episode = std::move(request.on_episode);
  auto learned = learn::doppler(g, model, c, std::move(options), std::move(weights));
  training_outcome out{.outcome = learned.outcome,
                       .placed = std::move(learned.placement),
                       .simulated = std::nullopt,
                       .makespan = learned.makespan,
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
