// Colocation groups and co-placement (Baechi §3.1-3.2): vertices that must, or should, share a
// device. Groups are vectors indexed by vertex; the list schedulers place a whole group with its
// first placed member. Helpers read groups and forward/backward pairs from a gantry::graph.
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

namespace gantry {

// A vertex that belongs to no colocation group.
inline constexpr std::uint32_t no_group = std::numeric_limits<std::uint32_t>::max();

// The colocation group of every vertex of g, from vertex_properties::group: vertices naming the
// same group get the same id (0, 1, ... in order of first appearance); the others get no_group.
[[nodiscard]] inline std::vector<std::uint32_t> colocation_groups(const graph& g) {
  std::vector<std::uint32_t> group(g.vertex_count(), no_group);
  std::unordered_map<std::string, std::uint32_t> ids;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& name = g[v].group;
    if (name.empty()) continue;
    group[v] = ids.try_emplace(name, static_cast<std::uint32_t>(ids.size())).first->second;
  }
  return group;
}

// The forward vertex of every vertex of g (no_vertex for forward vertices), from set_forward().
[[nodiscard]] inline std::vector<vertex_id> forward_pairs(const graph& g) {
  std::vector<vertex_id> forward(g.vertex_count(), no_vertex);
  for (vertex_id v = 0; v < g.vertex_count(); ++v) forward[v] = g.forward_of(v);
  return forward;
}

struct co_placement_options {
  // Colocation groups to start from (empty: none); no_group marks a vertex alone.
  std::vector<std::uint32_t> group{};
  // A vertex whose output has exactly one consumer joins that consumer's group.
  bool single_consumer = true;
  // Forward vertex per vertex (empty: none); each backward vertex joins its forward vertex.
  std::vector<vertex_id> forward_of{};
};

namespace detail {
// Union-find over vertices with path halving; O(α(n)) per operation.
class vertex_union {
 public:
  explicit vertex_union(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), vertex_id{0}); }
  vertex_id find(vertex_id v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  void join(vertex_id a, vertex_id b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[b] = a;  // the smaller id is the root, so results do not depend on join order
  }

 private:
  std::vector<vertex_id> parent_;
};

// Dense group ids (0..k-1, numbered by smallest member) after merging colocation groups,
// single-consumer chains and forward/backward pairs. Throws invalid_input for vectors of the wrong
// size or forward vertices out of range.
inline std::vector<std::uint32_t> merge_groups(const csr_graph& g, const std::vector<std::uint32_t>& group,
                                               bool single_consumer, const std::vector<vertex_id>& forward_of) {
  const std::size_t n = g.vertex_count();
  if (!group.empty() && group.size() != n)
    throw invalid_input("colocation groups: " + std::to_string(group.size()) + " entries for " + std::to_string(n) +
                        " vertices");
  if (!forward_of.empty() && forward_of.size() != n)
    throw invalid_input("forward pairs: " + std::to_string(forward_of.size()) + " entries for " + std::to_string(n) +
                        " vertices");
  vertex_union sets(n);
  if (!group.empty()) {
    std::unordered_map<std::uint32_t, vertex_id> first;
    for (vertex_id v = 0; v < n; ++v)
      if (group[v] != no_group) sets.join(v, first.try_emplace(group[v], v).first->second);
  }
  if (single_consumer) {
    for (vertex_id u = 0; u < n; ++u) {
      const auto succ = g.successors(u);
      if (succ.empty()) continue;
      bool one = true;  // parallel edges into one consumer still make one consumer
      for (const vertex_id w : succ) one = one && w == succ.front();
      if (one) sets.join(u, succ.front());
    }
  }
  for (vertex_id v = 0; v < forward_of.size(); ++v) {
    if (forward_of[v] == no_vertex) continue;
    if (forward_of[v] >= n)
      throw invalid_input("forward pairs: vertex " + std::to_string(v) + " names forward vertex " +
                          std::to_string(forward_of[v]) + " but the graph has " + std::to_string(n) + " vertices");
    sets.join(v, forward_of[v]);
  }
  std::vector<std::uint32_t> dense(n, no_group), out(n);
  std::uint32_t count = 0;
  for (vertex_id v = 0; v < n; ++v) {
    const vertex_id root = sets.find(v);
    if (dense[root] == no_group) dense[root] = count++;
    out[v] = dense[root];
  }
  return out;
}
}  // namespace detail

// Co-placement groups (Baechi §3.2): starting from the colocation groups, a vertex whose output has
// exactly one consumer joins that consumer's group, and each backward vertex joins its forward
// vertex. Every vertex gets a dense group id; a vertex alone is a group of one. O(n + e).
template <adapted_graph G>
[[nodiscard]] std::vector<std::uint32_t> co_placement_groups(const G& graph, const co_placement_options& options) {
  const detail::csr_view<G> g(graph);
  return detail::merge_groups(*g, options.group, options.single_consumer, options.forward_of);
}

}  // namespace gantry
