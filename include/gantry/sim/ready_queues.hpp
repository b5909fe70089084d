// The ready vertices of a run (sim/event_loop.hpp), per device, and which one an idle device runs
// next under each ready_policy (sim/run_options.hpp): a queue per device keyed by the policy (the
// time it became ready for fifo, the bottom level for bottom_level) and then the priority rank; or,
// under strict_order, each device's vertices in rank order, one after another.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/sim/run_options.hpp>

#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <tuple>
#include <vector>

namespace gantry::detail {

class ready_queues {
 public:
  // Nothing ready. rank: each vertex's place in the priority order; bottom: each vertex's bottom
  // level (used by bottom_level only); both must outlive the queues.
  void reset(ready_policy policy, std::size_t devices, std::span<const device_id> placement,
             std::span<const std::uint32_t> rank, std::span<const seconds> bottom) {
    policy_ = policy;
    rank_ = rank;
    bottom_ = bottom;
    ready_.assign(devices, {});
    strict_next_.assign(devices, 0);
    strict_list_.assign(devices, {});
    if (policy == ready_policy::strict_order) {
      std::vector<vertex_id> by_rank(rank.size());
      for (vertex_id v = 0; v < rank.size(); ++v) by_rank[rank[v]] = v;
      for (const vertex_id v : by_rank) strict_list_[placement[v]].push_back(v);
    }
  }

  // v, placed on d, has its inputs on d at time `now`.
  void push(vertex_id v, device_id d, seconds now) {
    if (policy_ == ready_policy::strict_order) return;  // its list says when
    double key = 0;
    switch (policy_) {
      case ready_policy::placement_order:
      case ready_policy::strict_order:
        break;
      case ready_policy::fifo:
        key = now;
        break;
      case ready_policy::bottom_level:
        key = -bottom_[v];
        break;
    }
    ready_[d].push({key, rank_[v], v});
  }

  // The vertex idle device d starts now, taken off its queue, or no_vertex: under strict_order the
  // next of d's list once its inputs are there (pending[v] == 0) and fits(v); otherwise the first
  // ready vertex in policy order for which fits(v) and admits(v) hold (the others stay queued).
  template <class Fits, class Admits>
  vertex_id take(device_id d, std::span<const std::uint32_t> pending, Fits fits, Admits admits) {
    if (policy_ == ready_policy::strict_order) {
      auto& next = strict_next_[d];
      const auto& list = strict_list_[d];
      if (next < list.size() && pending[list[next]] == 0 && fits(list[next])) return list[next++];
      return no_vertex;
    }
    vertex_id chosen = no_vertex;
    skipped_.clear();
    while (!ready_[d].empty()) {
      const auto top = ready_[d].top();
      ready_[d].pop();
      if (fits(std::get<2>(top)) && admits(std::get<2>(top))) {
        chosen = std::get<2>(top);
        break;
      }
      skipped_.push_back(top);
    }
    for (const auto& key : skipped_) ready_[d].push(key);
    return chosen;
  }

  // Under strict_order: the next vertex of d's list that has not started, or no_vertex.
  [[nodiscard]] vertex_id strict_next(device_id d) const {
    return strict_next_[d] < strict_list_[d].size() ? strict_list_[d][strict_next_[d]] : no_vertex;
  }

 private:
  using key_type = std::tuple<double, std::uint32_t, vertex_id>;  // policy key, rank, vertex
  ready_policy policy_ = ready_policy::placement_order;
  std::span<const std::uint32_t> rank_;
  std::span<const seconds> bottom_;
  std::vector<std::priority_queue<key_type, std::vector<key_type>, std::greater<>>> ready_;
  std::vector<key_type> skipped_;
  std::vector<std::size_t> strict_next_;
  std::vector<std::vector<vertex_id>> strict_list_;
};

}  // namespace gantry::detail
