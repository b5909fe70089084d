// k-periodic patterns (Euro-Par 2021, §5.2, Theorem 4): unroll the no-idle 1-periodic 1F1B pattern
// over k+1 periods and drop every (k+1)-th batch. The pattern processes k batches per period
// (k+1)·T, so its normalized period is (1 + 1/k)·T, and it holds fewer activations than 1F1B:
// for P = L = k+1 homogeneous layers it reaches 2(1 + 1/k) within M = k+1, which no j-periodic
// pattern with j < k does.
#pragma once

#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/one_f_one_b.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <string>
#include <vector>

namespace gantry {

// Copy r (0..k) of a 1F1B operation with shift h runs at start + r·T and processes batch
// q = h + r of the unrolled numbering; batches q ≡ k (mod k+1) are dropped and the rest renumbered
// to floor(q/(k+1))·k + q mod (k+1), which keeps every batch's operations in order. O(P·k).
[[nodiscard]] inline pipeline_pattern k_periodic(const chain& c, std::vector<stage> stages, std::size_t k) {
  if (k == 0) throw invalid_input("k_periodic: k must be at least 1");
  const pipeline_pattern base = one_f_one_b(c, std::move(stages));
  pipeline_pattern p;
  p.name = std::to_string(k) + "-periodic 1F1B";
  p.outcome.code = base.outcome.code;
  p.outcome.message = base.outcome.message;
  p.processor_count = base.processor_count;
  p.stages = base.stages;
  p.batches_per_period = k;
  p.period = static_cast<double>(k + 1) * base.period;
  if (!base.ok()) return p;
  const auto cycle = static_cast<std::int64_t>(k + 1);
  for (const auto& op : base.operations)
    for (std::int64_t r = 0; r < cycle; ++r) {
      const std::int64_t q = op.shift + r;
      const std::int64_t a = detail::floor_div(q, cycle), rest = q - a * cycle;
      if (rest == cycle - 1) continue;
      auto copy = op;
      copy.start = op.start + static_cast<double>(r) * base.period;
      copy.shift = a * static_cast<std::int64_t>(k) + rest;
      p.operations.push_back(copy);
    }
  detail::finish_pattern(p, c.size());
  return p;
}

[[nodiscard]] inline pipeline_pattern k_periodic(const chain& c, const chain_partition& partition, std::size_t k) {
  return k_periodic(c, contiguous_stages(c, partition), k);
}

}  // namespace gantry
