// Contiguous partitioning of a chain onto P processors of memory M each (Euro-Par 2021, §3 and
// §5.1): the partition and period T that minimise T, exactly, with each stage's memory taken from
// the 1F1B*(T) pattern that will run it (W + NCA·a, NCA = the stage's group), not from a guess.
// Also the next-fit partition of Theorem 5.
#pragma once

#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/one_f_one_b_star.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace gantry {

struct partition_result {
  gantry::outcome outcome;  // why no partition fits, naming layers, processors and bytes
  chain_partition partition;
  seconds period = 0;        // T, the 1F1B* period of the partition
  pipeline_pattern pattern;  // 1F1B*(T) of the partition

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

namespace detail {

// Feasibility of one period T, by dynamic programming over groups. A valid 1-periodic pattern
// can be built from any split of the stages into runs ("groups") of total load <= T, numbered
// from the end, each of whose stages then holds g activations (phases 2-3 of Algorithm 1); the
// greedy grouping of 1F1B* gives every stage the smallest g of all of them (Theorem 3). So a
// partition fits under 1F1B*(T) iff it fits under some grouping, and the program may choose the
// groups freely:
//   groups[g][x] = fewest stages covering layers [x, L) as groups g, g-1, ..., 1,
//   groups[1][x] = stages(1, x, L) when cost(x..L) <= T,
//   groups[g][x] = min over e with cost(x..e) <= T of stages(g, x, e) + groups[g-1][e],
// where stages(g, x, e), the fewest stages of [x, e) with W + g·A <= M each, is greedy (a run
// inside a fitting run fits). O(G·L·w) for windows of w layers and G <= min(P, 2·total/T + 1)
// groups, so O(L²) whatever T.
class partition_feasibility {
 public:
  partition_feasibility(const chain& c, std::size_t processors, byte_count capacity)
      : layers_(c.size()), processors_(processors), capacity_(capacity), cost_(layers_ + 1, 0),
        weights_(layers_ + 1, 0), activation_(layers_ + 1, 0) {
    for (std::size_t l = 0; l < layers_; ++l) {
      cost_[l + 1] = cost_[l] + c.cost(l);
      weights_[l + 1] = weights_[l] + c[l].weights;
      activation_[l + 1] = activation_[l] + c[l].activation;
    }
  }

  [[nodiscard]] seconds range_cost(std::size_t x, std::size_t e) const { return cost_[e] - cost_[x]; }
  [[nodiscard]] const std::vector<seconds>& prefix_cost() const noexcept { return cost_; }

  // True when some partition into at most P stages fits under period T; fills the partition.
  bool run(seconds period, chain_partition* found = nullptr) {
    const std::size_t L = layers_, P = processors_;
    constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    const double bound = period + pipeline_tolerance * period;
    window_.assign(L, 0);
    for (std::size_t x = 0, e = 0; x < L; ++x) {
      e = std::max(e, x);
      while (e < L && cost_[e + 1] - cost_[x] <= bound) ++e;
      window_[x] = static_cast<std::uint32_t>(e);  // exclusive end of the longest run within T
    }
    reach_.assign(P * L, 0);
    groups_.assign(P * L, none);
    choice_.assign(P * L, 0);
    std::uint32_t best = none;
    std::size_t best_group = 0;
    // Two neighbouring groups that fit in T together can be merged, which lowers every earlier
    // group's number and so never hurts; hence some optimum has every neighbouring pair above T,
    // and at most 2·ceil(total / T) groups.
    const double pairs = std::ceil(cost_[L] / std::max(period, std::numeric_limits<double>::min()));
    const std::size_t most_groups = std::min<std::size_t>(P, pairs > 1e9 ? P : 2 * static_cast<std::size_t>(pairs) + 1);
    for (std::size_t g = 1; g <= most_groups; ++g) {
      std::uint32_t* reach = &reach_[(g - 1) * L];
      for (std::size_t x = 0, e = 0; x < L; ++x) {
        e = std::max(e, x);
        while (e < L && stage_fits(weights_[e + 1] - weights_[x], activation_[e + 1] - activation_[x], g, capacity_))
          ++e;
        reach[x] = static_cast<std::uint32_t>(e);
      }
      std::uint32_t* row = &groups_[(g - 1) * L];
      std::uint32_t* pick = &choice_[(g - 1) * L];
      const std::uint32_t* next = g > 1 ? &groups_[(g - 2) * L] : nullptr;
      bool any = false;
      for (std::size_t x = 0; x < L; ++x) {
        if (reach[x] == x) continue;  // layer x alone does not fit with g activations
        const std::size_t last = g == 1 ? L : std::min<std::size_t>(window_[x], L - 1);
        if (g == 1 && window_[x] != L) continue;
        std::uint32_t count = 1, stage_end = reach[x];
        for (std::size_t e = x + 1; e <= last; ++e) {
          // Extend the greedy stages of [x, e); stop where a layer does not fit alone.
          while (e > stage_end && reach[stage_end] != stage_end) {
            ++count;
            stage_end = reach[stage_end];
          }
          if (e > stage_end) break;
          if (g == 1) {
            if (e == L) {
              row[x] = count;
              pick[x] = static_cast<std::uint32_t>(L);
            }
          } else if (next[e] != none && count + next[e] < row[x]) {
            row[x] = count + next[e];
            pick[x] = static_cast<std::uint32_t>(e);
          }
        }
        if (row[x] != none) any = true;
      }
      if (row[0] != none && row[0] < best) {
        best = row[0];
        best_group = g;
      }
      if (!any) break;  // no deeper group can start anywhere
    }
    if (best == none || best > P) return false;
    if (found) {
      found->first.clear();
      std::size_t x = 0;
      for (std::size_t g = best_group; g >= 1; --g) {
        const std::size_t e = choice_[(g - 1) * L + x];
        const std::uint32_t* reach = &reach_[(g - 1) * L];
        for (std::size_t at = x; at < e; at = reach[at]) found->first.push_back(static_cast<std::uint32_t>(at));
        x = e;
      }
    }
    return true;
  }

 private:
  std::size_t layers_, processors_;
  byte_count capacity_;
  std::vector<seconds> cost_;
  std::vector<byte_count> weights_, activation_;
  std::vector<std::uint32_t> window_, reach_, groups_, choice_;
};

}  // namespace detail

struct partition_options {
  // Periods above this are not considered (the answer is then out_of_memory).
  seconds max_period = std::numeric_limits<double>::infinity();
};

// The contiguous partition into at most `processors` stages, and the smallest period T, such that
// 1F1B*(T) of that partition keeps every processor within `capacity`. Feasibility is monotone in T
// and changes only at sums of consecutive layer costs, so T is found by binary search over those
// sums (O(L²) of them) with the group program above at each step: O(L² log L + P·L·w·log L), P cut
// to L first (more processors than layers cannot help).
// Returns status out_of_memory, naming the layer or the bytes, when no partition fits.
[[nodiscard]] inline partition_result optimal_contiguous_partition(const chain& c, std::size_t processors,
                                                                   byte_count capacity = unlimited_memory,
                                                                   partition_options options = {}) {
  check_chain(c);
  partition_result result;
  if (processors == 0) throw invalid_input("optimal_contiguous_partition: at least one processor is needed");
  if (c.size() == 0) {
    result.outcome.code = status::infeasible;
    result.outcome.message = "the chain has no layers";
    return result;
  }
  for (std::size_t l = 0; l < c.size(); ++l)
    if (!detail::stage_fits(c[l].weights, c[l].activation, 1, capacity)) {
      result.outcome.code = status::out_of_memory;
      result.outcome.message = "layer " + std::to_string(l) + " ('" + c[l].name + "') needs " +
                               format_bytes(detail::saturating_add(c[l].weights, c[l].activation)) +
                               " (weights and one activation) but a processor holds " + detail::capacity_text(capacity);
      return result;
    }
  // More processors than layers cannot help (a stage holds at least one layer); the program's
  // tables are P·L, so P is cut to L first.
  detail::partition_feasibility feasible(c, useful_workers(c.size(), processors), capacity);
  const auto& prefix = feasible.prefix_cost();
  const std::size_t L = c.size();
  seconds lower = prefix[L] / static_cast<double>(processors);
  for (std::size_t l = 0; l < L; ++l) lower = std::max(lower, c.cost(l));
  lower -= detail::pipeline_tolerance * lower;
  std::vector<seconds> candidates;
  candidates.reserve(L * 8);
  for (std::size_t x = 0; x < L; ++x)
    for (std::size_t e = x + 1; e <= L; ++e) {
      const seconds sum = prefix[e] - prefix[x];
      if (sum >= lower && sum <= options.max_period) candidates.push_back(sum);
    }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  if (candidates.empty() || !feasible.run(candidates.back())) {
    result.outcome.code = status::out_of_memory;
    std::ostringstream out;
    out << "no contiguous partition of the " << L << " layers on " << processors << " processors of "
        << detail::capacity_text(capacity) << " fits 1F1B* at any period up to "
        << (candidates.empty() ? 0.0 : candidates.back());
    result.outcome.message = out.str();
    return result;
  }
  std::size_t low = 0, high = candidates.size() - 1;
  while (low < high) {
    const std::size_t mid = (low + high) / 2;
    if (feasible.run(candidates[mid])) high = mid;
    else low = mid + 1;
  }
  result.period = candidates[high];
  (void)feasible.run(result.period, &result.partition);
  result.pattern = one_f_one_b_star(c, result.partition, result.period);
  if (!result.pattern.ok() || first_over_capacity(result.pattern, capacity) != no_device) {
    // The program guarantees 1F1B* fits; reaching this is a defect, reported rather than hidden.
    result.outcome.code = status::solver_error;
    result.outcome.message = "the partition found for period " + std::to_string(result.period) +
                             " does not fit under 1F1B*: " + result.pattern.outcome.message;
  }
  return result;
}

// Theorem 5's next fit: layers go to the current processor while its load stays <= budget, then
// to the next one. With budget 2T*, T* the best non-contiguous period, it always fits on P
// processors (each processor but the last gets load >= T*). Returns status infeasible when it
// needs more than `processors` or a layer alone exceeds the budget.
[[nodiscard]] inline partition_result next_fit_partition(const chain& c, std::size_t processors, seconds budget) {
  partition_result result;
  const double bound = budget + detail::pipeline_tolerance * budget;
  seconds load = 0, most = 0;
  for (std::uint32_t l = 0; l < c.size(); ++l) {
    if (c.cost(l) > bound) {
      result.outcome.code = status::infeasible;
      result.outcome.message = "layer " + std::to_string(l) + " ('" + c[l].name + "') costs " +
                               std::to_string(c.cost(l)) + ", more than the budget " + std::to_string(budget);
      return result;
    }
    if (l == 0 || load + c.cost(l) > bound) {
      result.partition.first.push_back(l);
      load = 0;
    }
    load += c.cost(l);
    most = std::max(most, load);
  }
  if (result.partition.stage_count() > processors) {
    result.outcome.code = status::infeasible;
    result.outcome.message = "next fit with budget " + std::to_string(budget) + " needs " +
                             std::to_string(result.partition.stage_count()) + " processors, more than " +
                             std::to_string(processors);
    return result;
  }
  result.period = most;
  if (c.size() > 0) result.pattern = one_f_one_b_star(c, result.partition, most);
  return result;
}

}  // namespace gantry
