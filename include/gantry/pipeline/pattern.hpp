// Periodic patterns of pipelined training (Euro-Par 2021, §3.1-3.2): for each forward and backward
// of each stage, a start time in [0, T) and an index shift; the number of concurrent activations
// (NCA) each pattern implies, and the memory per processor, Σ W_l + NCA_l·a_l.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/pipeline/chain.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gantry {

enum class pass { forward, backward };

[[nodiscard]] constexpr const char* to_string(pass p) noexcept { return p == pass::forward ? "F" : "B"; }

// One operation of a k-periodic pattern: in period j it starts at j·T + start and processes
// batch j·k + shift.
struct pipeline_operation {
  std::uint32_t stage = 0;
  pass kind = pass::forward;
  seconds start = 0;     // in [0, period)
  seconds duration = 0;  // the stage's forward or backward time
  std::int64_t shift = 0;
};

struct pipeline_pattern {
  gantry::outcome outcome;             // why there is no pattern, naming stage, numbers
  std::string name;                    // "1F1B*", "1F1B", "GPipe", "3-periodic 1F1B", ...
  seconds period = 0;                  // T
  std::size_t batches_per_period = 1;  // k
  std::size_t processor_count = 0;     // resources [0, processor_count) are processors, the rest links
  std::vector<stage> stages;
  std::vector<pipeline_operation> operations;
  std::vector<std::uint32_t> group;      // per stage: 1F1B* group (1 holds the last stage); else empty
  std::vector<std::uint32_t> stage_nca;  // per stage
  std::vector<std::uint32_t> nca;        // per layer: NCA_l
  std::vector<byte_count> memory;        // per processor (per worker of a replicated stage):
                                         // Σ W_l + ceil(NCA_l / r)·a_l over its layers

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
  // T / k: the time per batch, what a pattern's throughput is compared by.
  [[nodiscard]] seconds normalized_period() const noexcept {
    return period / static_cast<double>(std::max<std::size_t>(1, batches_per_period));
  }
  [[nodiscard]] byte_count peak_memory() const noexcept {
    return memory.empty() ? 0 : *std::max_element(memory.begin(), memory.end());
  }
  [[nodiscard]] std::size_t resource_count() const noexcept {
    std::size_t count = processor_count;
    for (const auto& s : stages) count = std::max<std::size_t>(count, s.resource + 1);
    return count;
  }
};

namespace detail {

// Relative tolerance for comparing sums of times computed in different orders.
inline constexpr double pipeline_tolerance = 1e-9;

// W + copies·A <= M without overflow; unlimited memory holds anything.
inline bool stage_fits(byte_count weights, byte_count activation, std::uint64_t copies, byte_count capacity) {
  if (capacity == unlimited_memory) return true;
  if (weights > capacity) return false;
  constexpr std::uint64_t small = 0xFFFFFFFF;  // a product of two such numbers fits in 64 bits
  if (copies <= small && activation <= small) return copies * activation <= capacity - weights;
  return activation == 0 || copies <= (capacity - weights) / activation;
}

// "unlimited memory" or "1.50 GiB", for messages.
inline std::string capacity_text(byte_count capacity) {
  return capacity == unlimited_memory ? "unlimited memory" : format_bytes(capacity);
}

inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// NCA of each stage from the shifts (§3.2): just after F_s of batch x starts, the activations
// held are those of batches (y, x], y the last batch whose B_s finished by then (batches run in
// order). NCA_s is the largest x - y over the F_s of the pattern.
inline std::vector<std::uint32_t> stage_nca(const pipeline_pattern& p) {
  const std::size_t count = p.stages.size();
  std::vector<std::vector<const pipeline_operation*>> forwards(count), backwards(count);
  for (const auto& op : p.operations) (op.kind == pass::forward ? forwards : backwards)[op.stage].push_back(&op);
  const auto k = static_cast<std::int64_t>(std::max<std::size_t>(1, p.batches_per_period));
  const double period = p.period > 0 ? p.period : 1.0;
  std::vector<std::uint32_t> nca(count, 0);
  for (std::size_t s = 0; s < count; ++s) {
    std::int64_t most = 0;
    for (const auto* f : forwards[s]) {
      std::int64_t finished = std::numeric_limits<std::int64_t>::min();
      for (const auto* b : backwards[s]) {
        // The last period j with j·T + start_B + duration_B <= start_F.
        const double gap = (f->start - b->start - b->duration) / period;
        const auto j = static_cast<std::int64_t>(std::floor(gap + pipeline_tolerance));
        finished = std::max(finished, j * k + b->shift);
      }
      // B_s of batch x follows F_s of batch x, even when both take no time and the fold puts them
      // at the same instant: the batch being started is always held.
      if (finished != std::numeric_limits<std::int64_t>::min())
        most = std::max(most, f->shift - std::min(finished, f->shift - 1));
    }
    nca[s] = static_cast<std::uint32_t>(std::max<std::int64_t>(most, 0));
  }
  return nca;
}

// Fills stage_nca, per-layer nca and memory per processor.
inline void finish_pattern(pipeline_pattern& p, std::size_t layer_count) {
  p.stage_nca = stage_nca(p);
  p.nca.assign(layer_count, 0);
  p.memory.assign(p.processor_count, 0);
  for (std::size_t s = 0; s < p.stages.size(); ++s) {
    const auto& st = p.stages[s];
    if (st.link) continue;
    for (auto l = st.first_layer; l < st.end_layer; ++l) p.nca[l] = p.stage_nca[s];
    // A replicated stage's workers take turns, so each holds ceil(NCA / r) of the activations.
    const std::uint32_t replicas = std::max<std::uint32_t>(1, st.replicas);
    const std::uint32_t held = (p.stage_nca[s] + replicas - 1) / replicas;
    // Saturating: W + NCA·a of a huge stage reads as unlimited_memory, never as a wrapped small number.
    const byte_count activations = st.activation == 0                        ? 0
                                   : held > unlimited_memory / st.activation ? unlimited_memory
                                                                             : held * st.activation;
    if (st.resource < p.memory.size())
      p.memory[st.resource] = saturating_add(p.memory[st.resource], saturating_add(st.weights, activations));
  }
}

// A 1-periodic pattern from the absolute start times of batch 0's operations (forward_start[s],
// backward_start[s]): start = time mod T, shift = -floor(time / T), then all shifts moved so that
// the backward of the first stage has shift 0 (the paper's convention). A period of 0 (stages that
// take no time) folds every time, all 0, to start 0 and shift 0.
inline void fold_batch(pipeline_pattern& p, const std::vector<seconds>& forward_start,
                       const std::vector<seconds>& backward_start) {
  const double period = p.period > 0 ? p.period : 1.0;
  p.operations.clear();
  const auto place = [&](std::uint32_t s, pass kind, seconds time, seconds duration) {
    const double periods = std::floor(time / period + pipeline_tolerance);
    seconds start = time - periods * period;
    if (start < 0) start = 0;
    p.operations.push_back({s, kind, start, duration, -static_cast<std::int64_t>(periods)});
  };
  for (std::uint32_t s = 0; s < p.stages.size(); ++s) place(s, pass::forward, forward_start[s], p.stages[s].forward);
  for (std::uint32_t s = 0; s < p.stages.size(); ++s) place(s, pass::backward, backward_start[s], p.stages[s].backward);
  std::int64_t base = 0;
  for (const auto& op : p.operations)
    if (op.kind == pass::backward && op.stage == 0) base = op.shift;
  for (auto& op : p.operations) op.shift -= base;
}

inline std::size_t processors_of(const std::vector<stage>& stages) {
  std::size_t count = 0;
  for (const auto& s : stages)
    if (!s.link) count = std::max<std::size_t>(count, s.resource + 1);
  return count;
}

inline seconds largest_load(const std::vector<stage>& stages, std::size_t* which = nullptr) {
  seconds most = 0;
  for (std::size_t s = 0; s < stages.size(); ++s)
    if (stages[s].load() > most) {
      most = stages[s].load();
      if (which) *which = s;
    }
  return most;
}

// Load per resource (a processor may run several stages in a non-contiguous allocation).
inline std::vector<seconds> resource_loads(const std::vector<stage>& stages) {
  std::size_t count = 0;
  for (const auto& s : stages) count = std::max<std::size_t>(count, s.resource + 1);
  std::vector<seconds> load(count, 0);
  for (const auto& s : stages) load[s.resource] += s.load();
  return load;
}

inline std::string stage_label(const chain& c, const stage& s) {
  if (s.link) return "link after '" + c[s.end_layer - 1].name + "'";
  if (s.end_layer == s.first_layer + 1) return "'" + c[s.first_layer].name + "'";
  return "'" + c[s.first_layer].name + "'..'" + c[s.end_layer - 1].name + "'";
}

}  // namespace detail

// Memory per processor with a capacity: the first processor over it, or no_device.
[[nodiscard]] inline device_id first_over_capacity(const pipeline_pattern& p, byte_count capacity) {
  for (device_id d = 0; d < p.memory.size(); ++d)
    if (p.memory[d] > capacity) return d;
  return no_device;
}

}  // namespace gantry
