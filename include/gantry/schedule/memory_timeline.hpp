// detail::memory_timeline: the memory held on one device over time, for placers that must keep a
// schedule within capacity while they build it (the list schedulers' dynamic memory accounting).
#pragma once

#include <gantry/core/types.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace gantry::detail {

// Memory held on one device over time: net byte changes keyed by time in a treap whose subtrees
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
      root_ = insert(root_, time + 0.0, bytes);
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
    for (const auto& [time, bytes] : log_) root_ = insert(root_, time, bytes);
    for (const auto& [time, bytes] : deferred)
      if (bytes != 0) root_ = insert(root_, time + 0.0, bytes);
    log_ = {};
  }
  // The most memory held at any time in [from, to), changes at `from` included.
  [[nodiscard]] std::int64_t peak(seconds from, seconds to) {
    build();
    return std::max(held_at(from), peak_keys(root_, from, to, 0, false, false));
  }
  // The most memory held at any time from `from` on, without building the treap (then O(k log k)
  // from the log; an owner deferring changes builds first).
  [[nodiscard]] std::int64_t peak_from(seconds from) const {
    if (built_)
      return std::max(held_at(from), peak_keys(root_, from, std::numeric_limits<seconds>::infinity(), 0, false, false));
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
    return root_ == nil ? 0 : std::max<std::int64_t>(0, nodes_[root_].best);
  }
  // Room for about `changes` changes before the first range query, without regrowing.
  void reserve(std::size_t changes) {
    if (!built_) log_.reserve(changes);
  }
  void clear() {
    nodes_.clear();
    log_.clear();
    root_ = nil;
    seed_ = 0;
    allocated_ = 0;
    built_ = false;
  }

 private:
  static constexpr std::uint32_t nil = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::int64_t none = std::numeric_limits<std::int64_t>::min();
  struct node {
    seconds time;
    std::int64_t change, sum, best;  // best: the largest sum of a non-empty prefix of the subtree
    std::uint64_t priority;
    std::uint32_t left, right;
  };
  [[nodiscard]] std::int64_t sum(std::uint32_t t) const { return t == nil ? 0 : nodes_[t].sum; }
  [[nodiscard]] std::int64_t best(std::uint32_t t) const { return t == nil ? none : nodes_[t].best; }
  void pull(std::uint32_t t) {
    node& x = nodes_[t];
    const std::int64_t through = sum(x.left) + x.change;
    x.sum = through + sum(x.right);
    x.best = std::max(best(x.left), through);
    if (x.right != nil) x.best = std::max(x.best, through + nodes_[x.right].best);
  }
  std::uint32_t rotate_right(std::uint32_t t) {
    const std::uint32_t l = nodes_[t].left;
    nodes_[t].left = nodes_[l].right;
    nodes_[l].right = t;
    pull(t);
    pull(l);
    return l;
  }
  std::uint32_t rotate_left(std::uint32_t t) {
    const std::uint32_t r = nodes_[t].right;
    nodes_[t].right = nodes_[r].left;
    nodes_[r].left = t;
    pull(t);
    pull(r);
    return r;
  }
  std::uint32_t insert(std::uint32_t t, seconds time, std::int64_t bytes) {
    if (t == nil) {
      seed_ += 0x9e3779b97f4a7c15ULL;  // splitmix64: deterministic priorities
      std::uint64_t z = seed_;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      nodes_.push_back({time, bytes, bytes, bytes, z ^ (z >> 31), nil, nil});
      return static_cast<std::uint32_t>(nodes_.size() - 1);
    }
    if (time == nodes_[t].time) {
      nodes_[t].change += bytes;
    } else if (time < nodes_[t].time) {
      const std::uint32_t l = insert(nodes_[t].left, time, bytes);
      nodes_[t].left = l;
      if (nodes_[l].priority > nodes_[t].priority) return rotate_right(t);
    } else {
      const std::uint32_t r = insert(nodes_[t].right, time, bytes);
      nodes_[t].right = r;
      if (nodes_[r].priority > nodes_[t].priority) return rotate_left(t);
    }
    pull(t);
    return t;
  }
  // Memory held at `time`: every change at or before it.
  [[nodiscard]] std::int64_t held_at(seconds time) const {
    std::int64_t total = 0;
    for (std::uint32_t t = root_; t != nil;) {
      const node& x = nodes_[t];
      if (x.time <= time) {
        total += sum(x.left) + x.change;
        t = x.right;
      } else {
        t = x.left;
      }
    }
    return total;
  }
  // The largest level right after a change at a time in [from, to), for the subtree t preceded by
  // `before` bytes; after_from / before_to say that every time in t is known to be in range.
  [[nodiscard]] std::int64_t peak_keys(std::uint32_t t, seconds from, seconds to, std::int64_t before, bool after_from,
                                       bool before_to) const {
    if (t == nil) return none;
    const node& x = nodes_[t];
    if (after_from && before_to) return before + x.best;
    if (x.time < from) return peak_keys(x.right, from, to, before + sum(x.left) + x.change, after_from, before_to);
    if (!(x.time < to)) return peak_keys(x.left, from, to, before, after_from, before_to);
    const std::int64_t through = before + sum(x.left) + x.change;
    return std::max({peak_keys(x.left, from, to, before, after_from, true), through,
                     peak_keys(x.right, from, to, through, true, before_to)});
  }

  std::vector<node> nodes_;
  std::vector<change> log_;
  std::uint32_t root_ = nil;
  std::uint64_t seed_ = 0;
  std::int64_t allocated_ = 0;
  bool built_ = false;
};

}  // namespace gantry::detail
