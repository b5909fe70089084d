// detail::idle_gaps: the idle intervals of one device, for list schedulers that insert a vertex
// into the earliest gap long enough for it (HEFT, CPOP, PEFT, Adjusting Placement).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/schedule/treap.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace gantry::detail {

// Disjoint idle intervals [begin, end) of one device, starting as [0, ∞). A treap keyed by begin
// (schedule/treap.hpp) whose subtrees keep their longest gap, so the earliest start for a vertex
// is found in O(log k) expected for k gaps instead of a walk over every gap after the vertex's
// inputs arrive (quadratic on a long schedule with many short gaps).
class idle_gaps {
 public:
  idle_gaps() { reset(); }
  void reset() {
    tree_.clear();
    tree_.insert({0.0, std::numeric_limits<seconds>::infinity(), 0});
  }
  // The earliest t >= ready with [t, t + length) inside one gap: the same answer as trying every gap
  // in order of time, with the same floating-point test (t + length <= end).
  [[nodiscard]] seconds earliest_start(seconds ready, seconds length) const {
    seconds after = -std::numeric_limits<seconds>::infinity();  // later gaps begin after this
    if (const std::uint32_t holding = holding_gap(ready); holding != nil) {
      const gap& x = tree_.node(holding);
      if (ready + length <= x.end) return ready;
      after = x.begin;
    }
    // A gap whose (rounded) length is below this cannot pass the exact test: subtrees are pruned
    // with it, and the exact test decides at each gap.
    const seconds floor = length * (1 - 1e-12);
    const std::uint32_t found = first_fit(tree_.root(), after, length, floor);
    return found == nil ? std::numeric_limits<seconds>::infinity() : tree_.node(found).begin;
  }
  // Marks [begin, end) busy; it must lie inside one gap (as earliest_start() returns).
  void occupy(seconds begin, seconds end) {
    const std::uint32_t holding = holding_gap(begin);
    // Nothing idle there (a zero-length vertex at the end of a gap changes nothing either).
    if (holding == nil || !(begin < tree_.node(holding).end)) return;
    const gap was = tree_.node(holding);
    tree_.erase(was.begin);
    if (was.begin < begin) tree_.insert({was.begin, begin, 0});
    if (end < was.end) tree_.insert({end, was.end, 0});
  }
  [[nodiscard]] std::size_t size() const { return tree_.size(); }

 private:
  struct gap {
    seconds begin, end, longest;  // longest: the longest gap (end - begin) in the subtree
  };
  struct traits {
    using value_type = gap;
    static seconds key(const gap& x) { return x.begin; }
    static void pull(gap& x, const gap* left, const gap* right) {
      constexpr seconds none = -std::numeric_limits<seconds>::infinity();
      x.longest = std::max({x.end - x.begin, left ? left->longest : none, right ? right->longest : none});
    }
  };
  static constexpr std::uint32_t nil = treap<traits>::nil;

  // The gap holding `time`, if any: the last gap that begins at or before it.
  [[nodiscard]] std::uint32_t holding_gap(seconds time) const {
    std::uint32_t holding = nil;
    for (std::uint32_t t = tree_.root(); t != nil;) {
      if (tree_.node(t).begin <= time) {
        holding = t;
        t = tree_.right(t);
      } else {
        t = tree_.left(t);
      }
    }
    return holding;
  }
  // The earliest gap of subtree t beginning after `after` that holds `length` (begin + length <=
  // end); subtrees whose longest gap is below `floor` are skipped.
  [[nodiscard]] std::uint32_t first_fit(std::uint32_t t, seconds after, seconds length, seconds floor) const {
    if (t == nil || tree_.node(t).longest < floor) return nil;
    const gap& x = tree_.node(t);
    if (!(x.begin > after)) return first_fit(tree_.right(t), after, length, floor);
    if (const auto found = first_fit(tree_.left(t), after, length, floor); found != nil) return found;
    if (x.begin + length <= x.end) return t;
    return first_fit(tree_.right(t), after, length, floor);
  }

  treap<traits> tree_;
};

}  // namespace gantry::detail
