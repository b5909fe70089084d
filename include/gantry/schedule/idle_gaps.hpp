// detail::idle_gaps: the idle intervals of one device, for list schedulers that insert a vertex
// into the earliest gap long enough for it (HEFT, CPOP, PEFT, Adjusting Placement).
#pragma once

#include <gantry/core/types.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace gantry::detail {

// Disjoint idle intervals [begin, end) of one device, starting as [0, ∞). A treap keyed by begin
// whose subtrees keep their longest gap, so the earliest start for a vertex is found in O(log k)
// expected for k gaps instead of a walk over every gap after the vertex's inputs arrive (quadratic
// on a long schedule with many short gaps).
class idle_gaps {
 public:
  idle_gaps() { reset(); }
  void reset() {
    nodes_.clear();
    free_ = nil;
    seed_ = 0;
    root_ = make(0.0, std::numeric_limits<seconds>::infinity());
  }
  // The earliest t >= ready with [t, t + length) inside one gap: the same answer as trying every gap
  // in order of time, with the same floating-point test (t + length <= end).
  [[nodiscard]] seconds earliest_start(seconds ready, seconds length) const {
    // The gap holding `ready`, if any: the last gap that begins at or before it.
    std::uint32_t holding = nil;
    for (std::uint32_t t = root_; t != nil;) {
      if (nodes_[t].begin <= ready) {
        holding = t;
        t = nodes_[t].right;
      } else {
        t = nodes_[t].left;
      }
    }
    seconds after = -std::numeric_limits<seconds>::infinity();  // later gaps begin after this
    if (holding != nil) {
      const node& x = nodes_[holding];
      if (ready + length <= x.end) return ready;
      after = x.begin;
    }
    // A gap whose (rounded) length is below this cannot pass the exact test: subtrees are pruned
    // with it, and the exact test decides at each gap.
    const seconds floor = length * (1 - 1e-12);
    const std::uint32_t found = first_fit(root_, after, length, floor);
    return found == nil ? std::numeric_limits<seconds>::infinity() : nodes_[found].begin;
  }
  // Marks [begin, end) busy; it must lie inside one gap (as earliest_start() returns).
  void occupy(seconds begin, seconds end) {
    std::uint32_t holding = nil;
    for (std::uint32_t t = root_; t != nil;) {
      if (nodes_[t].begin <= begin) {
        holding = t;
        t = nodes_[t].right;
      } else {
        t = nodes_[t].left;
      }
    }
    // Nothing idle there (a zero-length vertex at the end of a gap changes nothing either).
    if (holding == nil || !(begin < nodes_[holding].end)) return;
    const seconds gap_begin = nodes_[holding].begin, gap_end = nodes_[holding].end;
    root_ = erase(root_, gap_begin);
    if (gap_begin < begin) root_ = insert(root_, make(gap_begin, begin));
    if (end < gap_end) root_ = insert(root_, make(end, gap_end));
  }
  [[nodiscard]] std::size_t size() const noexcept { return count(root_); }

 private:
  static constexpr std::uint32_t nil = std::numeric_limits<std::uint32_t>::max();
  struct node {
    seconds begin, end, longest;  // longest: the longest gap (end - begin) in the subtree
    std::uint64_t priority;
    std::uint32_t left, right;
  };
  [[nodiscard]] seconds longest(std::uint32_t t) const {
    return t == nil ? -std::numeric_limits<seconds>::infinity() : nodes_[t].longest;
  }
  [[nodiscard]] std::size_t count(std::uint32_t t) const {
    return t == nil ? 0 : 1 + count(nodes_[t].left) + count(nodes_[t].right);
  }
  void pull(std::uint32_t t) {
    node& x = nodes_[t];
    x.longest = std::max({x.end - x.begin, longest(x.left), longest(x.right)});
  }
  std::uint32_t make(seconds begin, seconds end) {
    seed_ += 0x9e3779b97f4a7c15ULL;  // splitmix64: deterministic priorities
    std::uint64_t z = seed_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    std::uint32_t index;
    if (free_ != nil) {  // reuse an erased node
      index = free_;
      free_ = nodes_[index].left;
      nodes_[index] = {begin, end, end - begin, z ^ (z >> 31), nil, nil};
    } else {
      index = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back({begin, end, end - begin, z ^ (z >> 31), nil, nil});
    }
    return index;
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
  std::uint32_t insert(std::uint32_t t, std::uint32_t fresh) {
    if (t == nil) return fresh;
    if (nodes_[fresh].begin < nodes_[t].begin) {
      nodes_[t].left = insert(nodes_[t].left, fresh);
      if (nodes_[nodes_[t].left].priority > nodes_[t].priority) return rotate_right(t);
    } else {
      nodes_[t].right = insert(nodes_[t].right, fresh);
      if (nodes_[nodes_[t].right].priority > nodes_[t].priority) return rotate_left(t);
    }
    pull(t);
    return t;
  }
  std::uint32_t merge(std::uint32_t a, std::uint32_t b) {  // every key of a below every key of b
    if (a == nil) return b;
    if (b == nil) return a;
    if (nodes_[a].priority > nodes_[b].priority) {
      nodes_[a].right = merge(nodes_[a].right, b);
      pull(a);
      return a;
    }
    nodes_[b].left = merge(a, nodes_[b].left);
    pull(b);
    return b;
  }
  std::uint32_t erase(std::uint32_t t, seconds begin) {
    if (t == nil) return nil;
    if (nodes_[t].begin == begin) {
      const std::uint32_t joined = merge(nodes_[t].left, nodes_[t].right);
      nodes_[t].left = free_;
      free_ = t;
      return joined;
    }
    if (begin < nodes_[t].begin) nodes_[t].left = erase(nodes_[t].left, begin);
    else nodes_[t].right = erase(nodes_[t].right, begin);
    pull(t);
    return t;
  }
  // The earliest gap of subtree t beginning after `after` that holds `length` (begin + length <=
  // end); subtrees whose longest gap is below `floor` are skipped.
  [[nodiscard]] std::uint32_t first_fit(std::uint32_t t, seconds after, seconds length, seconds floor) const {
    if (t == nil || nodes_[t].longest < floor) return nil;
    const node& x = nodes_[t];
    if (!(x.begin > after)) return first_fit(x.right, after, length, floor);
    if (const auto found = first_fit(x.left, after, length, floor); found != nil) return found;
    if (x.begin + length <= x.end) return t;
    return first_fit(x.right, after, length, floor);
  }

  std::vector<node> nodes_;
  std::uint32_t root_ = nil;
  std::uint32_t free_ = nil;
  std::uint64_t seed_ = 0;
};

}  // namespace gantry::detail
