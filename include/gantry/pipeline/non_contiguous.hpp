// Non-contiguous allocations (Euro-Par 2021, §6): any processor may hold any set of layers. A
// 1-periodic pattern for a given allocation, of period T = the largest processor load, and a
// greedy allocator (largest cost first onto the least loaded processor that has room).
#pragma once

#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace gantry {

struct allocation_result {
  gantry::outcome outcome;           // why no allocation fits, naming layers, processors and bytes
  std::vector<device_id> processor;  // per layer
  seconds period = 0;                // T = largest processor load
  pipeline_pattern pattern;          // a valid pattern of period T; its memory uses its NCA

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

// A 1-periodic pattern of period T for one stage per layer on the given processors. Batch 0's
// operations are placed in dependency order (F_1..F_L, B_L..B_1), each at the first time after
// its predecessor ends at which its processor's circular timeline continues: a processor's
// operations form one block of length <= T modulo T, so they never overlap (modulo scheduling
// without fragmentation). On a contiguous allocation this is the 1F1B pattern. O(L).
// T = 0 takes the largest processor load; a smaller T is refused.
[[nodiscard]] inline pipeline_pattern allocation_pattern(const chain& c, const std::vector<device_id>& processor,
                                                         std::size_t processors, seconds period = 0) {
  pipeline_pattern p;
  p.name = "allocation";
  p.stages = allocation_stages(c, processor);
  p.processor_count = processors;
  for (std::size_t l = 0; l < c.size(); ++l)
    if (processor[l] >= processors)
      throw invalid_input("allocation: layer " + std::to_string(l) + " is on processor " +
                          std::to_string(processor[l]) + " but there are " + std::to_string(processors));
  const auto load = detail::resource_loads(p.stages);
  const seconds most = load.empty() ? 0.0 : *std::max_element(load.begin(), load.end());
  p.period = period > 0 ? period : (most > 0 ? most : 1.0);
  if (p.period + detail::pipeline_tolerance * most < most) {
    p.outcome.code = status::infeasible;
    p.outcome.message =
        "period " + std::to_string(p.period) + " is shorter than the largest processor load " + std::to_string(most);
    return p;
  }
  const std::size_t L = c.size();
  std::vector<seconds> forward_start(L), backward_start(L);
  std::vector<seconds> cursor(processors, 0);
  std::vector<bool> used(processors, false);
  const double T = p.period;
  const auto place = [&](device_id d, seconds ready, seconds duration) {
    seconds start = ready;
    if (used[d]) {
      const double periods = std::max(0.0, std::ceil((ready - cursor[d]) / T - detail::pipeline_tolerance));
      start = cursor[d] + periods * T;
    }
    used[d] = true;
    cursor[d] = start + duration;
    return start;
  };
  seconds ready = 0;
  for (std::size_t l = 0; l < L; ++l) {
    forward_start[l] = place(processor[l], ready, c[l].forward);
    ready = forward_start[l] + c[l].forward;
  }
  for (std::size_t l = L; l-- > 0;) {
    backward_start[l] = place(processor[l], ready, c[l].backward);
    ready = backward_start[l] + c[l].backward;
  }
  detail::fold_batch(p, forward_start, backward_start);
  detail::finish_pattern(p, L);
  return p;
}

struct greedy_allocation_options {
  // Activations reserved per layer when checking memory during the greedy (the pattern built
  // afterwards decides the real NCA, and the result says out_of_memory if it does not fit).
  std::uint32_t reserved_activations = 1;
};

namespace detail {
inline void finish_allocation(allocation_result& r, const chain& c, std::size_t processors, byte_count capacity) {
  r.pattern = allocation_pattern(c, r.processor, processors);
  r.period = r.pattern.period;
  if (!r.pattern.ok()) {
    r.outcome.code = r.pattern.outcome.code;
    r.outcome.message = r.pattern.outcome.message;
    return;
  }
  if (const auto d = first_over_capacity(r.pattern, capacity); d != no_device) {
    r.outcome.code = status::out_of_memory;
    std::ostringstream out;
    out << "processor " << d << " holds " << r.pattern.memory[d]
        << " bytes with the pattern's activations (NCA) but its "
        << "capacity is " << capacity;
    r.outcome.message = out.str();
  }
}
}  // namespace detail

// Layers by decreasing cost (ties: larger weights first, then chain order) each go to the least
// loaded processor whose memory still holds W_l + reserved·a_l. O(L log L + L·P). Not optimal
// (the problem is strongly NP-hard, Theorem 1), but it beats contiguous partitions where §6
// shows they lose: costs (1,2,1) on 2 processors give period 2 instead of 3.
[[nodiscard]] inline allocation_result greedy_allocation(const chain& c, std::size_t processors,
                                                         byte_count capacity = unlimited_memory,
                                                         greedy_allocation_options options = {}) {
  check_chain(c);
  if (processors == 0) throw invalid_input("greedy_allocation: at least one processor is needed");
  allocation_result r;
  const std::size_t L = c.size();
  std::vector<std::uint32_t> order(L);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (c.cost(a) != c.cost(b)) return c.cost(a) > c.cost(b);
    return c[a].weights + c[a].activation > c[b].weights + c[b].activation;
  });
  std::vector<seconds> load(processors, 0);
  std::vector<byte_count> room(processors, capacity);
  r.processor.assign(L, no_device);
  for (const auto l : order) {
    const byte_count need_activation = c[l].activation;
    device_id best = no_device;
    for (device_id d = 0; d < processors; ++d) {
      if (!detail::stage_fits(c[l].weights, need_activation, options.reserved_activations, room[d])) continue;
      if (best == no_device || load[d] < load[best]) best = d;
    }
    if (best == no_device) {
      r.outcome.code = status::out_of_memory;
      r.outcome.message = "layer " + std::to_string(l) + " ('" + c[l].name + "') needs " +
                          std::to_string(c[l].weights) + " bytes of weights and " +
                          std::to_string(options.reserved_activations) + " x " + std::to_string(c[l].activation) +
                          " of activations, but no processor has that much left";
      return r;
    }
    r.processor[l] = best;
    load[best] += c.cost(l);
    room[best] -= c[l].weights + static_cast<byte_count>(options.reserved_activations) * c[l].activation;
  }
  detail::finish_allocation(r, c, processors, capacity);
  return r;
}

}  // namespace gantry
