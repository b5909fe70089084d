// The stages of DOPPLER's training and one point of its learning curve (learn/doppler.hpp), in a
// header of their own: a program that only reports or plots a curve needs neither Eigen nor the
// trainer.
#pragma once

#include <gantry/core/types.hpp>

#include <cstddef>

namespace gantry::learn {

enum class learn_stage { imitation, reinforce, measured };

[[nodiscard]] constexpr const char* to_string(learn_stage s) noexcept {
  switch (s) {
    case learn_stage::imitation:
      return "imitation";
    case learn_stage::reinforce:
      return "reinforce";
    case learn_stage::measured:
      return "measured";
  }
  return "unknown";
}

// One point of the learning curve.
struct learning_point {
  std::size_t episode = 0;  // counted over all stages, from 1
  learn_stage stage = learn_stage::imitation;
  seconds makespan = 0;        // this episode's reward makespan (imitation: the teacher's placement)
  seconds best = 0;            // best simulated makespan seen so far
  seconds baseline = 0;        // the REINFORCE baseline after this episode (0 in imitation)
  double agreement = 0;        // imitation: share of steps where the policy's argmax pair is the teacher's
  double seconds_elapsed = 0;  // training time so far
};

}  // namespace gantry::learn
