// Classic 1F1B (PipeDream's "one forward, one backward", as the Euro-Par 2021 paper describes it):
// the 1-periodic pattern of period T = max U(s) with no idle time in steady state, where stage s of
// P keeps P - s + 1 activations. Beside 1F1B* for comparison.
#pragma once

#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <vector>

namespace gantry {

// Each stage runs the forward of batch b + (P - s) and then, at once, the backward of batch b:
// after P - s forwards of warm-up it alternates one forward and one backward. Forwards of a batch
// run back to back through the stages; the backward of stage s starts (P - s)·T after its forward
// ended, which leaves room for stage s+1's forward and backward since U(s+1) <= T. O(P).
[[nodiscard]] inline pipeline_pattern one_f_one_b(const chain& c, std::vector<stage> stages, seconds period = 0) {
  pipeline_pattern p;
  p.name = "1F1B";
  p.processor_count = detail::processors_of(stages);
  p.stages = std::move(stages);
  const seconds most = detail::largest_load(p.stages);
  p.period = period > 0 ? period : most;
  const std::size_t count = p.stages.size();
  if (count == 0) return p;
  if (p.period + detail::pipeline_tolerance * most < most) {
    p.outcome.code = status::infeasible;
    p.outcome.message =
        "period " + std::to_string(p.period) + " is shorter than the largest stage load " + std::to_string(most);
    return p;
  }
  std::vector<seconds> forward_start(count), backward_start(count);
  seconds t = 0;
  for (std::size_t s = 0; s < count; ++s) {
    forward_start[s] = t;
    t += p.stages[s].forward;
    const auto warm_up = static_cast<double>(count - 1 - s);  // forwards ahead of the backward
    backward_start[s] = t + warm_up * p.period;
  }
  detail::fold_batch(p, forward_start, backward_start);
  detail::finish_pattern(p, c.size());
  return p;
}

[[nodiscard]] inline pipeline_pattern one_f_one_b(const chain& c, const chain_partition& partition) {
  return one_f_one_b(c, contiguous_stages(c, partition));
}

}  // namespace gantry
