// The common part of list-scheduling policies that pick the ready vertex with the highest priority
// (Critical Path, HEFT, CPOP, PEFT): a heap of ready vertices, the choice of a device by a key, and
// priority_list_policy, which makes a policy of a rule that gives priorities and picks devices.
// A vertex that fits on no device it may use waits aside while others are placed (their placement
// may free memory) and comes back at the next choice.
#pragma once

#include <gantry/place/list_policy.hpp>

#include <cstdint>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

namespace gantry {

// Ready vertices by decreasing priority, ties to the earlier vertex in Kahn order.
class ready_by_priority {
 public:
  void assign(std::vector<seconds> priority) {
    priority_ = std::move(priority);
    heap_ = {};
    aside_.clear();
  }
  [[nodiscard]] seconds priority(vertex_id v) const { return priority_[v]; }
  [[nodiscard]] const std::vector<seconds>& priorities() const noexcept { return priority_; }

  template <class View>
  void push(const View& view, vertex_id v) {
    heap_.push({priority_[v], view.kahn_rank(v), v});
  }

  // The first vertex, by priority, for which pick(v) names a device (no_device: fits nowhere now).
  template <class View, class Pick>
  [[nodiscard]] std::optional<list_choice> choose(const View& view, Pick&& pick) {
    std::optional<list_choice> out;
    while (!heap_.empty() && !out) {
      const entry top = heap_.top();
      heap_.pop();
      if (view.is_placed(top.vertex)) continue;
      const device_id d = pick(top.vertex);
      if (d == no_device) aside_.push_back(top);
      else out = list_choice{top.vertex, d};
    }
    for (const entry& e : aside_) heap_.push(e);
    aside_.clear();
    return out;
  }

 private:
  struct entry {
    seconds priority;
    std::uint32_t rank;
    vertex_id vertex;
    bool operator<(const entry& o) const {  // max-heap: larger priority, then smaller rank
      return priority < o.priority || (priority == o.priority && rank > o.rank);
    }
  };
  std::vector<seconds> priority_;
  std::priority_queue<entry> heap_;
  std::vector<entry> aside_;
};

// The device d that v may use and fits on with the smallest key(d), ties to the lowest id;
// no_device when there is none.
template <class View, class Key>
[[nodiscard]] device_id best_device(const View& view, vertex_id v, Key&& key) {
  device_id chosen = no_device;
  seconds best = 0;
  for (device_id d = 0; d < view.device_count(); ++d) {
    if (!view.allowed(v, d) || !view.fits(v, d)) continue;
    const seconds k = key(d);
    if (chosen == no_device || k < best) {
      chosen = d;
      best = k;
    }
  }
  return chosen;
}

// A list-scheduling policy from a rule:
//   struct rule {
//     static constexpr bool insertion = ...;                        // idle-gap insertion or not
//     template <class View> std::vector<seconds> priorities(const View&);  // once, at the start
//     template <class View> device_id device(const View&, vertex_id v);    // no_device: fits nowhere now
//   };
// The ready vertex with the highest priority (ties: Kahn order) goes to rule.device().
template <class Rule>
class priority_list_policy {
 public:
  static constexpr bool insertion = Rule::insertion;
  explicit priority_list_policy(std::string name, Rule rule = {}) : name_(std::move(name)), rule_(std::move(rule)) {}
  [[nodiscard]] std::string_view name() const { return name_; }

  template <class View>
  void start(const View& view) {
    ready_.assign(rule_.priorities(view));
  }
  template <class View>
  void on_ready(const View& view, vertex_id v) {
    ready_.push(view, v);
  }
  template <class View>
  [[nodiscard]] std::optional<list_choice> choose(const View& view) {
    return ready_.choose(view, [&](vertex_id v) { return rule_.device(view, v); });
  }

  [[nodiscard]] const Rule& rule() const noexcept { return rule_; }
  [[nodiscard]] seconds priority(vertex_id v) const { return ready_.priority(v); }

 private:
  std::string name_;
  Rule rule_;
  ready_by_priority ready_;
};

}  // namespace gantry
