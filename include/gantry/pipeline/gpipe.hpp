// GPipe's pattern (Huang et al. 2019, as compared in Euro-Par 2021 §2): a mini-batch of m
// micro-batches runs all its forwards, then all its backwards, then the pipeline flushes. As an
// m-periodic pattern its period is the mini-batch's makespan and every stage holds m activations.
#pragma once

#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <vector>

namespace gantry {

struct gpipe_options {
  std::size_t micro_batches = 0;  // m; 0 means one per compute stage
};

// Each operation starts as soon as its inputs are ready and its resource is free; a stage starts
// its backwards once all its forwards are done, micro-batch 0 first. O(P·m).
[[nodiscard]] inline pipeline_pattern gpipe(const chain& c, std::vector<stage> stages, gpipe_options options = {}) {
  pipeline_pattern p;
  p.name = "GPipe";
  p.processor_count = detail::processors_of(stages);
  p.stages = std::move(stages);
  const std::size_t count = p.stages.size();
  const std::size_t m = options.micro_batches > 0 ? options.micro_batches : std::max<std::size_t>(1, p.processor_count);
  p.batches_per_period = m;
  if (count == 0) return p;
  std::vector<seconds> forward_end(count * m), backward_end(count * m);
  std::vector<seconds> free_at(count, 0);
  const auto at = [&](std::size_t s, std::size_t i) { return i * count + s; };
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t s = 0; s < count; ++s) {
      const seconds ready = s == 0 ? 0.0 : forward_end[at(s - 1, i)];
      const seconds start = std::max(ready, free_at[s]);
      p.operations.push_back(
          {static_cast<std::uint32_t>(s), pass::forward, start, p.stages[s].forward, static_cast<std::int64_t>(i)});
      forward_end[at(s, i)] = free_at[s] = start + p.stages[s].forward;
    }
  seconds makespan = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t s = count; s-- > 0;) {
      const seconds ready = s + 1 == count ? forward_end[at(s, m - 1)] : backward_end[at(s + 1, i)];
      const seconds start = std::max(ready, free_at[s]);
      p.operations.push_back(
          {static_cast<std::uint32_t>(s), pass::backward, start, p.stages[s].backward, static_cast<std::int64_t>(i)});
      backward_end[at(s, i)] = free_at[s] = start + p.stages[s].backward;
      makespan = std::max(makespan, free_at[s]);
    }
  p.period = makespan;  // 0 when every stage takes no time
  detail::finish_pattern(p, c.size());
  return p;
}

[[nodiscard]] inline pipeline_pattern gpipe(const chain& c, const chain_partition& partition,
                                            gpipe_options options = {}) {
  return gpipe(c, contiguous_stages(c, partition), options);
}

}  // namespace gantry
