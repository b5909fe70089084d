// `gantry learn`'s training and the tool's `doppler` placer, compiled in a unit of their own
// (learn_training.cpp) so that the command's unit (learn_command.cpp: options, reports, files) does
// not compile Eigen and the trainer, and the trainer's unit compiles no reader or writer.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/learn/learning_curve.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/schedule/schedule.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gantry::cli {

// What to train: the stages (0 episodes: the stage is skipped), the network and its optimiser; the
// defaults are `gantry learn`'s.
struct training_request {
  std::size_t imitation_episodes = 50, reinforce_episodes = 1000, measured_episodes = 200;
  double measured_cv = 0.1;
  std::uint64_t seed = 1;
  seconds time_limit = 600;
  std::size_t hidden = 32;
  double rate = 1e-3, entropy = 1e-2, entropy_half_life = 100;
  std::size_t restart_after = 500;  // REINFORCE episodes without a better placement before the bonus restarts
  // Stage I's teacher: "best" (the best placement of the library's registry under training's judge),
  // a registry placer's name, or "doppler-critical-path" (DOPPLER §6's built-in rule).
  std::string teacher = "best";
  std::string weights_in{};  // start from these weights (a file of learn::save_weights)
  std::function<void(const learn::learning_point&)> on_episode{};
  std::function<void(const std::string&)> on_progress{};  // what runs before the first episode
};

// What training gave.
struct training_outcome {
  gantry::outcome outcome;            // ok, or why training found no placement
  placement placed;                   // the best placement
  std::optional<schedule> simulated;  // placed, simulated with the model's durations
  seconds makespan = 0;               // the best makespan as training judged it
  bool from_policy = false;           // that placement was decoded by the policy, not the teacher's
  seconds policy_makespan = 0;        // the best placement the policy decoded itself (infinity: none)
  std::string teacher;                // the teacher imitated: a registry placer, or "doppler-critical-path"
  seconds teacher_makespan = 0;       // its placement under training's judge (infinity: built-in rule)
  std::size_t teachers_tried = 0;     // "best": the registry placers that ran
  bool teachers_cut_short = false;    // "best": half the time limit passed before the last one
  std::string teacher_fallback;       // "best" found nothing that runs: why the built-in rule taught
  double teacher_seconds = 0;         // choosing the teacher (within the time limit)
  double agreement = 0;               // imitation: agreement with the teacher at the end
  std::size_t episodes = 0;           // every run, greedy decodes included
  double training_seconds = 0;
  bool stopped_by_time_limit = false;
  std::vector<learn::learning_point> curve;
  std::string weights;  // the trained weights as learn::write_weights writes them

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
};

// The names of training_request::teacher besides the registry's placers.
inline constexpr const char* best_teacher_name = "best";
inline constexpr const char* builtin_teacher_name = "doppler-critical-path";

// Trains DOPPLER's dual policy on g over c. The teacher's placement counts toward the best seen, so
// the answer is never worse than the teacher's under training's judge; training_outcome says which
// it is. Throws invalid_input for an unknown teacher, or one that finds no placement, and
// parse_error for a weights file that cannot be read.
[[nodiscard]] training_outcome train_doppler(const graph& g, const cluster& c, training_request request);

// The `doppler` placer of `gantry place` and `compare` (tool_placers.cpp adds it): 20 imitation and
// doppler_reinforce_episodes() REINFORCE episodes, seed 1; a time limit may stop it earlier.
[[nodiscard]] placer_entry doppler_placer_entry(std::optional<seconds> time_limit = std::nullopt);

}  // namespace gantry::cli
