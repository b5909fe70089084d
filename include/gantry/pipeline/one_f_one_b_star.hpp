// 1F1B*(T) (Euro-Par 2021, §5.1, Algorithm 1): the 1-periodic pattern of period T that holds the
// fewest activations of every layer among all 1-periodic patterns (Theorem 3), for a contiguous
// partition; and the search for the smallest T whose 1F1B* pattern fits a memory capacity.
#pragma once

#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <sstream>
#include <vector>

namespace gantry {

// The three phases of Algorithm 1 for stages s_1..s_P (link stages included, as §3.1 allows) and
// a period T >= max U(s):
//  1. groups, greedily from the last stage, while the group's Σ U <= T; group 1 holds s_P;
//  2. inside group g an Equal Shift Pattern: forwards back to back with shift h+g-1, then the
//     backwards in reverse with shift h;
//  3. the first forward of group g-1 starts right after the last forward of group g, same batch;
//     an operation at or after T moves back by T and its shift drops by one.
// Written for batch 0 in absolute time: forwards run back to back from 0, and the backward of the
// last stage of group g starts (g-1)·T after that stage's forward ends. Every layer of group g
// gets NCA = g. O(P). T = 0 is accepted when every stage takes no time.
[[nodiscard]] inline pipeline_pattern one_f_one_b_star(const chain& c, std::vector<stage> stages, seconds period) {
  pipeline_pattern p;
  p.name = "1F1B*";
  p.period = period;
  p.processor_count = detail::processors_of(stages);
  p.stages = std::move(stages);
  const std::size_t count = p.stages.size();
  if (count == 0) return p;
  std::size_t widest = 0;
  const seconds most = detail::largest_load(p.stages, &widest);
  const double slack = detail::pipeline_tolerance * std::max(period, most);
  // Period 0 is the smallest when every stage takes no time (an all-zero chain): one group.
  if (!(period >= 0) || period + slack < most) {
    p.outcome.code = status::infeasible;
    std::ostringstream out;
    out << "period " << period << " is shorter than the load " << most << " of stage " << widest << " ("
        << detail::stage_label(c, p.stages[widest]) << ")";
    p.outcome.message = out.str();
    return p;
  }
  p.group.assign(count, 1);
  std::uint32_t g = 1;
  seconds in_group = 0;
  for (std::size_t s = count; s-- > 0;) {
    if (in_group > 0 && in_group + p.stages[s].load() > period + slack) {
      ++g;
      in_group = 0;
    }
    in_group += p.stages[s].load();
    p.group[s] = g;
  }
  std::vector<seconds> forward_start(count), backward_start(count);
  seconds t = 0;
  for (std::size_t s = 0; s < count; ++s) {
    forward_start[s] = t;
    t += p.stages[s].forward;
  }
  // Backwards of one group run back to back from its last stage down to its first.
  for (std::size_t s = count; s-- > 0;) {
    const bool last_of_group = s + 1 == count || p.group[s + 1] != p.group[s];
    if (last_of_group)
      backward_start[s] = forward_start[s] + p.stages[s].forward + static_cast<double>(p.group[s] - 1) * period;
    else backward_start[s] = backward_start[s + 1] + p.stages[s + 1].backward;
  }
  detail::fold_batch(p, forward_start, backward_start);
  detail::finish_pattern(p, c.size());
  return p;
}

[[nodiscard]] inline pipeline_pattern one_f_one_b_star(const chain& c, const chain_partition& partition,
                                                       seconds period) {
  return one_f_one_b_star(c, contiguous_stages(c, partition), period);
}

// The smallest T whose 1F1B*(T) pattern fits `capacity` on every processor, for fixed stages.
// Groups only change where T crosses a sum of consecutive stage loads, and NCA can only drop as
// T grows, so the answer is the smallest such sum (>= max U) that fits: a binary search over the
// O(P²) sums, O(P² log P). Returns status out_of_memory, naming the processor and bytes, when
// even one group holding every stage does not fit.
[[nodiscard]] inline pipeline_pattern smallest_period_one_f_one_b_star(const chain& c, std::vector<stage> stages,
                                                                       byte_count capacity) {
  const std::size_t count = stages.size();
  std::vector<seconds> candidates;
  const seconds most = detail::largest_load(stages);
  for (std::size_t a = 0; a < count; ++a) {
    seconds sum = 0;
    for (std::size_t b = a; b < count; ++b) {
      sum += stages[b].load();
      if (sum >= most) candidates.push_back(sum);
    }
  }
  if (candidates.empty()) candidates.push_back(most > 0 ? most : 1.0);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  const auto fits = [&](const pipeline_pattern& p) { return p.ok() && first_over_capacity(p, capacity) == no_device; };
  auto best = one_f_one_b_star(c, stages, candidates.back());
  if (!fits(best)) {
    if (!best.ok()) return best;
    const auto d = first_over_capacity(best, capacity);
    best.outcome.code = status::out_of_memory;
    best.outcome.message = "processor " + std::to_string(d) + " needs " + format_bytes(best.memory[d]) +
                           " (weights and one activation per layer at the largest period " +
                           std::to_string(candidates.back()) + ") but holds " + detail::capacity_text(capacity);
    return best;
  }
  std::size_t low = 0, high = candidates.size() - 1;  // candidates[high] fits
  while (low < high) {
    const std::size_t mid = (low + high) / 2;
    auto p = one_f_one_b_star(c, stages, candidates[mid]);
    if (fits(p)) {
      high = mid;
      best = std::move(p);
    } else {
      low = mid + 1;
    }
  }
  if (best.period != candidates[high]) best = one_f_one_b_star(c, stages, candidates[high]);
  return best;
}

[[nodiscard]] inline pipeline_pattern smallest_period_one_f_one_b_star(const chain& c, const chain_partition& partition,
                                                                       byte_count capacity) {
  return smallest_period_one_f_one_b_star(c, contiguous_stages(c, partition), capacity);
}

}  // namespace gantry
