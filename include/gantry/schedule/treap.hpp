// detail::treap: a treap whose nodes keep a summary of their subtree, the one search tree behind
// the schedulers' timelines: a device's idle gaps (schedule/idle_gaps.hpp, the longest gap of a
// subtree) and its memory over time (schedule/memory_timeline.hpp, a subtree's sum and largest
// prefix sum). Nodes live in one vector and are named by index; priorities come from a splitmix64
// sequence, so every run builds the same tree.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace gantry::detail {

// Traits: value_type (a node's key and data, and its subtree's summary), key(value) (ordered by
// <, compared with ==), and pull(value, left, right), which recomputes value's summary from its
// own data and its children's values (nullptr for none). Insertion, erasure and rotations are
// O(log k) expected for k nodes; the owner walks the tree through root(), node(t), left(t) and
// right(t) for its queries.
template <class Traits>
class treap {
 public:
  using value_type = typename Traits::value_type;
  static constexpr std::uint32_t nil = std::numeric_limits<std::uint32_t>::max();

  void clear() {
    nodes_.clear();
    root_ = free_ = nil;
    seed_ = 0;
  }
  [[nodiscard]] std::uint32_t root() const noexcept { return root_; }
  [[nodiscard]] bool empty() const noexcept { return root_ == nil; }
  [[nodiscard]] const value_type& node(std::uint32_t t) const { return nodes_[t].value; }
  [[nodiscard]] std::uint32_t left(std::uint32_t t) const { return nodes_[t].left; }
  [[nodiscard]] std::uint32_t right(std::uint32_t t) const { return nodes_[t].right; }
  // The value of node t, nullptr for nil: for summaries of children that may be missing.
  [[nodiscard]] const value_type* at(std::uint32_t t) const { return t == nil ? nullptr : &nodes_[t].value; }
  [[nodiscard]] std::size_t size() const { return count(root_); }

  // Adds `value`; a key already present goes after the nodes that have it.
  void insert(const value_type& value) {
    auto apart = [](value_type&, const value_type&) { return false; };
    root_ = insert(root_, value, apart);
  }
  // Adds `value` or, when a node has its key, calls combine(that node's value, value) instead.
  template <class Combine>
  void insert_or_combine(const value_type& value, Combine&& combine) {
    auto taken = [&](value_type& existing, const value_type& fresh) {
      combine(existing, fresh);
      return true;
    };
    root_ = insert(root_, value, taken);
  }
  // Removes a node with this key, if any; its slot is reused by a later insertion.
  template <class Key>
  void erase(const Key& key) {
    root_ = erase(root_, key);
  }

 private:
  struct slot {
    value_type value;
    std::uint64_t priority;
    std::uint32_t left, right;
  };

  [[nodiscard]] std::size_t count(std::uint32_t t) const {
    return t == nil ? 0 : 1 + count(nodes_[t].left) + count(nodes_[t].right);
  }
  void pull(std::uint32_t t) { Traits::pull(nodes_[t].value, at(nodes_[t].left), at(nodes_[t].right)); }
  std::uint32_t make(const value_type& value) {
    seed_ += 0x9e3779b97f4a7c15ULL;  // splitmix64: deterministic priorities
    std::uint64_t z = seed_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    const slot fresh{value, z ^ (z >> 31), nil, nil};
    std::uint32_t index;
    if (free_ != nil) {  // reuse an erased node
      index = free_;
      free_ = nodes_[index].left;
      nodes_[index] = fresh;
    } else {
      index = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back(fresh);
    }
    pull(index);
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
  // Combine returns true when it took `value` into a node with the same key.
  template <class Combine>
  std::uint32_t insert(std::uint32_t t, const value_type& value, Combine& combine) {
    if (t == nil) return make(value);
    const auto key = Traits::key(value);
    if (key == Traits::key(nodes_[t].value) && combine(nodes_[t].value, value)) {
      // taken into node t
    } else if (key < Traits::key(nodes_[t].value)) {
      const std::uint32_t l = insert(nodes_[t].left, value, combine);
      nodes_[t].left = l;
      if (nodes_[l].priority > nodes_[t].priority) return rotate_right(t);
    } else {
      const std::uint32_t r = insert(nodes_[t].right, value, combine);
      nodes_[t].right = r;
      if (nodes_[r].priority > nodes_[t].priority) return rotate_left(t);
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
  template <class Key>
  std::uint32_t erase(std::uint32_t t, const Key& key) {
    if (t == nil) return nil;
    if (Traits::key(nodes_[t].value) == key) {
      const std::uint32_t joined = merge(nodes_[t].left, nodes_[t].right);
      nodes_[t].left = free_;
      free_ = t;
      return joined;
    }
    if (key < Traits::key(nodes_[t].value)) nodes_[t].left = erase(nodes_[t].left, key);
    else nodes_[t].right = erase(nodes_[t].right, key);
    pull(t);
    return t;
  }

  std::vector<slot> nodes_;
  std::uint32_t root_ = nil;
  std::uint32_t free_ = nil;
  std::uint64_t seed_ = 0;
};

}  // namespace gantry::detail
