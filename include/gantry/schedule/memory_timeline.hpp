// detail::memory_timeline: the memory held on one device over time, for placers that must keep a
// schedule within capacity while they build it (the list schedulers' dynamic memory accounting).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/schedule/treap.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace gantry::detail {

// Memory held on one device over time: net byte changes keyed by time in a treap (schedule/
// treap.hpp) whose subtrees
// keep their sum and largest prefix sum, so adding a change and finding the most memory held over
// a range of times are O(log k) expected for k distinct times. Changes at one time add up. Until a
// range is first asked for, changes are only logged (O(1)) and the bound is the sum of allocations.
// An owner that can list its changes again (the list scheduler, from its placed state) defers them
// instead: add_deferred() only counts the allocation, and build() takes the list when a range is
// first needed, so a run that never needs one keeps no log at all.
class memory_timeline {
 public:
  using change = std::pair<seconds, std::int64_t>;  // (time, bytes)

  // Adds `bytes` (negative to free) to the memory held from `time` on.
  void add(seconds time, std::int64_t bytes) {
    if (bytes == 0) return;
    if (built_) {
      insert(time + 0.0, bytes);
    } else {
      log_.emplace_back(time + 0.0, bytes);
      allocated_ += std::max<std::int64_t>(bytes, 0);
    }
  }
  // Counts a change the owner will list again in build(): until then only its allocation counts.
  void add_deferred(std::int64_t bytes) { allocated_ += std::max<std::int64_t>(bytes, 0); }
  [[nodiscard]] bool built() const noexcept { return built_; }
  // Builds the treap from the log and the deferred changes (every one so far); later changes are
  // added with add(). A range query builds it from the log alone.
  void build(std::span<const change> deferred = {}) {
    if (built_) return;
    built_ = true;
    for (const auto& [time, bytes] : log_) insert(time, bytes);
    for (const auto& [time, bytes] : deferred)
      if (bytes != 0) insert(time + 0.0, bytes);
    log_ = {};
  }
  // The most memory held at any time in [from, to), changes at `from` included.
  [[nodiscard]] std::int64_t peak(seconds from, seconds to) {
    build();
    return std::max(held_at(from), peak_keys(tree_.root(), from, to, 0, false, false));
  }
  // The most memory held at any time from `from` on, without building the treap (then O(k log k)
  // from the log; an owner deferring changes builds first).
  [[nodiscard]] std::int64_t peak_from(seconds from) const {
    if (built_)
      return std::max(held_at(from),
                      peak_keys(tree_.root(), from, std::numeric_limits<seconds>::infinity(), 0, false, false));
    auto changes = log_;
    std::sort(changes.begin(), changes.end());
    std::int64_t level = 0, most = none;
    for (std::size_t i = 0; i < changes.size();) {
      const seconds time = changes[i].first;
      if (time > from && most == none) most = level;  // the level at `from` itself
      for (; i < changes.size() && changes[i].first == time; ++i) level += changes[i].second;
      if (time >= from) most = std::max(most, level);
    }
    return most == none ? level : most;
  }
  // At least the most memory held at any time: exact once a range has been asked for. O(1).
  [[nodiscard]] std::int64_t ceiling() const {
    if (!built_) return allocated_;
    return tree_.empty() ? 0 : std::max<std::int64_t>(0, tree_.node(tree_.root()).best);
  }
  // Room for about `changes` changes before the first range query, without regrowing.
  void reserve(std::size_t changes) {
    if (!built_) log_.reserve(changes);
  }
  void clear() {
    tree_.clear();
    log_.clear();
    allocated_ = 0;
    built_ = false;
  }

 private:
  static constexpr std::int64_t none = std::numeric_limits<std::int64_t>::min();
  struct point {
    seconds time;
    std::int64_t change, sum, best;  // best: the largest sum of a non-empty prefix of the subtree
  };
  struct traits {
    using value_type = point;
    static seconds key(const point& x) { return x.time; }
    static void pull(point& x, const point* left, const point* right) {
      const std::int64_t through = (left ? left->sum : 0) + x.change;
      x.sum = through + (right ? right->sum : 0);
      x.best = std::max(left ? left->best : none, through);
      if (right) x.best = std::max(x.best, through + right->best);
    }
  };
  static constexpr std::uint32_t nil = treap<traits>::nil;

  [[nodiscard]] std::int64_t sum(std::uint32_t t) const { return t == nil ? 0 : tree_.node(t).sum; }
  void insert(seconds time, std::int64_t bytes) {
    tree_.insert_or_combine({time, bytes, 0, 0}, [](point& at, const point& more) { at.change += more.change; });
  }
  // Memory held at `time`: every change at or before it.
  [[nodiscard]] std::int64_t held_at(seconds time) const {
    std::int64_t total = 0;
    for (std::uint32_t t = tree_.root(); t != nil;) {
      const point& x = tree_.node(t);
      if (x.time <= time) {
        total += sum(tree_.left(t)) + x.change;
        t = tree_.right(t);
      } else {
        t = tree_.left(t);
      }
    }
    return total;
  }
  // The largest level right after a change at a time in [from, to), for the subtree t preceded by
  // `before` bytes; after_from / before_to say that every time in t is known to be in range.
  [[nodiscard]] std::int64_t peak_keys(std::uint32_t t, seconds from, seconds to, std::int64_t before, bool after_from,
                                       bool before_to) const {
    if (t == nil) return none;
    const point& x = tree_.node(t);
    const std::uint32_t left = tree_.left(t), right = tree_.right(t);
    if (after_from && before_to) return before + x.best;
    if (x.time < from) return peak_keys(right, from, to, before + sum(left) + x.change, after_from, before_to);
    if (!(x.time < to)) return peak_keys(left, from, to, before, after_from, before_to);
    const std::int64_t through = before + sum(left) + x.change;
    return std::max({peak_keys(left, from, to, before, after_from, true), through,
                     peak_keys(right, from, to, through, true, before_to)});
  }

  treap<traits> tree_;
  std::vector<change> log_;
  std::int64_t allocated_ = 0;
  bool built_ = false;
};

}  // namespace gantry::detail
