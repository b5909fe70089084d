// Baechi's graph reductions (Baechi §3.1-3.3), usable before any placer: co-placement (a vertex
// whose outputs all go to one consumer joins it, to a fixed point), forward/backward colocation,
// and fusion of the edges inside those groups by Baechi's degree rule or by gantry's exact rule.
// Each reduction only decides which vertices form a cluster; fusion/coarsen.hpp builds the coarse
// DAG and maps a coarse placement back (expand). See docs/algorithms.md, "Colocation, co-placement
// and fusion".
#pragma once

#include <gantry/fusion/coarsen.hpp>
#include <gantry/graph/graph.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

// When two ends of a candidate edge u→v may be fused.
enum class fusion_rule {
  // Baechi's rule: only if u has at most one successor or v at most one predecessor, counted on
  // the graph fused so far. Never makes a cycle, but refuses some safe merges.
  baechi_degree,
  // Exactly when no other u⇝v path exists in the graph fused so far: every merge that keeps the
  // graph a DAG. Decided by a search bounded by a topological order kept up to date as clusters
  // merge (Pearce & Kelly 2006), so it stays near-linear on graphs of ML models.
  exact,
};

inline constexpr enum_name<fusion_rule> fusion_rule_names[] = {{fusion_rule::baechi_degree, "baechi"},
                                                               {fusion_rule::exact, "exact"}};
[[nodiscard]] constexpr std::span<const enum_name<fusion_rule>> enum_names(fusion_rule) noexcept {
  return fusion_rule_names;
}
[[nodiscard]] constexpr const char* to_string(fusion_rule r) noexcept { return name_of(r); }

struct fusion_options {
  fusion_rule rule = fusion_rule::exact;
  // Which edges are candidates: those inside one group, where groups are the union of
  bool co_place = true;          // co-placement clusters (co_placement_clusters below)
  bool colocation = true;        // named colocation groups (vertex_properties::group)
  bool forward_backward = true;  // forward/backward pairs (graph::set_forward)
  // Most bytes a cluster may hold: two clusters fuse only while the persistent, output and
  // temporary bytes of all their members add up to at most this, a bound on what coarsen() gives
  // the fused vertex, so a device of this size holds it. Unlimited by default; the tool passes a
  // quarter of the smallest device's memory, as Celeritas's cluster memory M (fusion/kernighan.hpp).
  byte_count max_cluster_bytes = unlimited_memory;
};

namespace detail {
// Kahn's order of g (a FIFO queue, sources by id): position per vertex. O(n + e).
inline std::vector<std::uint32_t> kahn_positions(const graph& g) {
  const std::size_t n = g.vertex_count();
  std::vector<std::uint32_t> indegree(n, 0), position(n, 0);
  for (edge_id e = 0; e < g.edge_count(); ++e) ++indegree[g.target(e)];
  std::vector<vertex_id> queue;
  queue.reserve(n);
  for (vertex_id v = 0; v < n; ++v)
    if (indegree[v] == 0) queue.push_back(v);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const vertex_id u = queue[head];
    position[u] = static_cast<std::uint32_t>(head);
    g.for_each_out_edge(u, [&](edge_id e) {
      if (--indegree[g.target(e)] == 0) queue.push_back(g.target(e));
    });
  }
  if (queue.size() != n) throw not_a_dag("fusion: the graph has a cycle");
  return position;
}

// Dense cluster ids (numbered by smallest member) from a union-find parent array.
inline std::vector<vertex_id> dense_clusters(std::vector<vertex_id>& parent) {
  std::vector<vertex_id> id(parent.size(), no_vertex), out(parent.size());
  vertex_id count = 0;
  for (vertex_id v = 0; v < parent.size(); ++v) {
    const vertex_id root = find_root(parent, v);
    if (id[root] == no_vertex) id[root] = count++;
    out[v] = id[root];
  }
  return out;
}

// A DAG whose vertices merge along edges: clusters as union-find roots, neighbour lists that may
// hold stale ids (mapped to roots and compacted when read), and for the exact rule a topological
// position per cluster kept valid across merges.
class fusing_graph {
 public:
  fusing_graph(const graph& g, std::vector<std::uint32_t> position, byte_count max_bytes = unlimited_memory)
      : graph_(&g), parent_(g.vertex_count()), out_(g.vertex_count()), in_(g.vertex_count()),
        loaded_(g.vertex_count(), 0), position_(std::move(position)), seen_(g.vertex_count(), 0),
        max_bytes_(max_bytes) {
    std::iota(parent_.begin(), parent_.end(), vertex_id{0});
    if (max_bytes_ == unlimited_memory) return;
    bytes_.resize(g.vertex_count());
    for (vertex_id v = 0; v < g.vertex_count(); ++v)
      bytes_[v] = saturating_add(saturating_add(g[v].persistent, g[v].output), g[v].temporary);
  }
  vertex_id find(vertex_id v) { return find_root(parent_, v); }

  // Fuses the clusters of u and v (an edge u→v) when the rule allows; true when they are one now.
  bool try_fuse(vertex_id u, vertex_id v, fusion_rule rule) {
    const vertex_id a = find(u), b = find(v);
    if (a == b) return true;
    if (!within_bytes(a, b)) return false;
    const std::size_t successors = compact(out(a), a), predecessors = compact(in(b), b);
    // a's only successor is b: the merged cluster can stand where b stood; b's only predecessor
    // is a: where a stood. No search either way.
    if (successors <= 1 || predecessors <= 1) {
      merge(a, b, successors <= 1 ? position_[b] : position_[a], std::min(a, b));
      return true;
    }
    if (rule != fusion_rule::exact || other_path(a, b)) return false;
    merge(a, b, reorder(a, b), std::min(a, b));
    return true;
  }
  // Baechi's step on an edge a→b between two clusters (both roots, or nothing happens): b fuses
  // into a, which stays the root, when outdeg(a) ≤ 1 or indeg(b) ≤ 1. Calls new_edge(x, y) for
  // every edge between clusters the merge creates (x→a or a→y that was not there), in-edges first.
  // True when b fused.
  template <class F>
  bool fuse_into(vertex_id a, vertex_id b, F&& new_edge) {
    if (a == b || find(a) != a || find(b) != b || !within_bytes(a, b)) return false;
    const std::size_t successors = compact(out(a), a), predecessors = compact(in(b), b);
    if (!std::binary_search(out_[a].begin(), out_[a].end(), b)) return false;
    if (successors > 1 && predecessors > 1) return false;
    compact(in(a), a);
    compact(out(b), b);
    for (const vertex_id x : in_[b])
      if (x != a && !std::binary_search(in_[a].begin(), in_[a].end(), x)) new_edge(x, a);
    for (const vertex_id y : out_[b])
      if (y != a && !std::binary_search(out_[a].begin(), out_[a].end(), y)) new_edge(a, y);
    merge(a, b, successors <= 1 ? position_[b] : position_[a], a);
    return true;
  }
  std::vector<vertex_id>& parents() { return parent_; }

 private:
  // Whether clusters a and b (roots) together stay within max_bytes_.
  [[nodiscard]] bool within_bytes(vertex_id a, vertex_id b) const {
    return max_bytes_ == unlimited_memory || saturating_add(bytes_[a], bytes_[b]) <= max_bytes_;
  }
  // A vertex's lists start as its edges in the graph, read on first use.
  std::vector<vertex_id>& out(vertex_id v) {
    load(v);
    return out_[v];
  }
  std::vector<vertex_id>& in(vertex_id v) {
    load(v);
    return in_[v];
  }
  void load(vertex_id v) {
    if (loaded_[v]) return;
    loaded_[v] = 1;
    graph_->for_each_out_edge(v, [&](edge_id e) { out_[v].push_back(graph_->target(e)); });
    graph_->for_each_in_edge(v, [&](edge_id e) { in_[v].push_back(graph_->source(e)); });
  }
  // Maps the list to current roots, drops `self` and repeats; returns its length.
  std::size_t compact(std::vector<vertex_id>& list, vertex_id self) {
    for (auto& x : list) x = find(x);
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    list.erase(std::remove(list.begin(), list.end(), self), list.end());
    return list.size();
  }
  // Whether a path a⇝b other than the edge a→b exists. Only clusters placed before b can be on
  // one; those reached are left in forward_ for reorder().
  bool other_path(vertex_id a, vertex_id b) {
    ++stamp_;
    forward_.clear();
    stack_.clear();
    const std::uint32_t limit = position_[b];
    for (const vertex_id x : out(a))
      if (x != b && position_[x] < limit && seen_[x] != stamp_) {
        seen_[x] = stamp_;
        stack_.push_back(x);
      }
    while (!stack_.empty()) {
      const vertex_id x = stack_.back();
      stack_.pop_back();
      forward_.push_back(x);
      compact(out(x), x);
      for (const vertex_id y : out_[x]) {
        if (y == b) return true;
        if (position_[y] < limit && seen_[y] != stamp_) {
          seen_[y] = stamp_;
          stack_.push_back(y);
        }
      }
    }
    return false;
  }
  // Keeps positions topological when a and b (a before b, no other a⇝b path, forward_ holding what
  // a reaches before b) become one cluster: the clusters between them that reach b move before it,
  // those reached from a after it (Pearce & Kelly's reordering). Returns the merged cluster's position.
  std::uint32_t reorder(vertex_id a, vertex_id b) {
    const std::uint32_t low = position_[a];
    ++stamp_;
    backward_.clear();
    stack_.clear();
    for (const vertex_id x : in(b))
      if (x != a && position_[x] > low && seen_[x] != stamp_) {
        seen_[x] = stamp_;
        stack_.push_back(x);
      }
    while (!stack_.empty()) {
      const vertex_id x = stack_.back();
      stack_.pop_back();
      backward_.push_back(x);
      compact(in(x), x);
      for (const vertex_id y : in_[x])
        if (position_[y] > low && seen_[y] != stamp_) {
          seen_[y] = stamp_;
          stack_.push_back(y);
        }
    }
    const auto by_position = [&](vertex_id x, vertex_id y) { return position_[x] < position_[y]; };
    std::sort(backward_.begin(), backward_.end(), by_position);
    std::sort(forward_.begin(), forward_.end(), by_position);
    slots_.clear();
    for (const vertex_id x : backward_) slots_.push_back(position_[x]);
    for (const vertex_id x : forward_) slots_.push_back(position_[x]);
    slots_.push_back(position_[a]);
    slots_.push_back(position_[b]);
    std::sort(slots_.begin(), slots_.end());
    std::size_t next = 0;
    for (const vertex_id x : backward_) position_[x] = slots_[next++];
    const std::uint32_t merged = slots_[next++];
    next = slots_.size() - forward_.size();
    for (const vertex_id x : forward_) position_[x] = slots_[next++];
    return merged;
  }
  // Makes a and b one cluster whose root is `root` (one of them) and whose position is `position`.
  void merge(vertex_id a, vertex_id b, std::uint32_t position, vertex_id root) {
    load(a);
    load(b);
    const vertex_id other = root == a ? b : a;
    parent_[other] = root;
    position_[root] = position;
    if (!bytes_.empty()) bytes_[root] = saturating_add(bytes_[a], bytes_[b]);
    auto& outs = out_[root];
    outs.insert(outs.end(), out_[other].begin(), out_[other].end());
    auto& ins = in_[root];
    ins.insert(ins.end(), in_[other].begin(), in_[other].end());
    std::vector<vertex_id>().swap(out_[other]);
    std::vector<vertex_id>().swap(in_[other]);
    compact(outs, root);
    compact(ins, root);
  }

  const graph* graph_;
  std::vector<vertex_id> parent_;
  std::vector<std::vector<vertex_id>> out_, in_;
  std::vector<std::uint8_t> loaded_;
  std::vector<std::uint32_t> position_;
  std::vector<std::uint32_t> seen_;
  std::uint32_t stamp_ = 0;
  byte_count max_bytes_;
  std::vector<byte_count> bytes_;  // per root, with a cap: its members' bytes added up
  std::vector<vertex_id> stack_, forward_, backward_;
  std::vector<std::uint32_t> slots_;
};
}  // namespace detail

// Co-placement (Baechi §3.2): a vertex whose outputs all go to one consumer joins that consumer's
// cluster (parallel edges into one consumer are one consumer). The rule looks at vertices, not at
// clusters, so one pass reaches its fixed point, and it never makes a cycle: every path out of u
// starts with the edge into its consumer. Returns a cluster id per vertex (dense, numbered by
// smallest member), for coarsen(). O(n + e).
namespace detail {
inline std::vector<vertex_id> co_placement_clusters(const graph& g) {
  std::vector<vertex_id> parent(g.vertex_count());
  std::iota(parent.begin(), parent.end(), vertex_id{0});
  for (vertex_id u = 0; u < g.vertex_count(); ++u) {
    vertex_id consumer = no_vertex;
    bool one = true;
    g.for_each_out_edge(u, [&](edge_id e) {
      if (consumer == no_vertex) consumer = g.target(e);
      else one = one && g.target(e) == consumer;
    });
    if (consumer == no_vertex || !one) continue;
    const vertex_id a = find_root(parent, u), b = find_root(parent, consumer);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  return dense_clusters(parent);
}
}  // namespace detail

[[nodiscard]] inline std::vector<vertex_id> co_placement_clusters(const graph& g) {
  (void)detail::kahn_positions(g);  // refuses a graph with a cycle, as fuse() does
  return detail::co_placement_clusters(g);
}

// The coarse graph of co-placement: co_placement_clusters() fused by coarsen().
[[nodiscard]] inline coarsening co_place(const graph& g) {
  const auto clusters = co_placement_clusters(g);
  return coarsen(g, clusters);
}

// Forward/backward colocation (Baechi §3.2): a copy of g in which each backward vertex shares a
// colocation group with its forward vertex. Groups that a pair joins merge; a merged set keeps
// the smallest group name among its members, or is named "fwd:" + its first forward vertex's name
// (with its id when names are empty). The placers honour the groups, and coarsen() carries them.
[[nodiscard]] inline graph colocate_forward_backward(const graph& g) {
  const std::size_t n = g.vertex_count();
  std::vector<vertex_id> parent(n);
  std::iota(parent.begin(), parent.end(), vertex_id{0});
  const auto join = [&](vertex_id a, vertex_id b) {
    a = detail::find_root(parent, a);
    b = detail::find_root(parent, b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  std::map<std::string, vertex_id> first;
  bool any_pair = false;
  for (vertex_id v = 0; v < n; ++v) {
    if (!g[v].group.empty()) join(v, first.try_emplace(g[v].group, v).first->second);
    if (g.forward_of(v) != no_vertex) {
      join(v, g.forward_of(v));
      any_pair = true;
    }
  }
  graph out = g;
  if (!any_pair) return out;
  std::vector<std::string> name(n);
  for (vertex_id v = 0; v < n; ++v) {
    auto& slot = name[detail::find_root(parent, v)];
    if (!g[v].group.empty() && (slot.empty() || g[v].group < slot)) slot = g[v].group;
  }
  std::vector<std::uint8_t> paired(n, 0);
  for (vertex_id v = 0; v < n; ++v)
    if (g.forward_of(v) != no_vertex) paired[detail::find_root(parent, v)] = 1;
  for (vertex_id v = 0; v < n; ++v) {
    const vertex_id root = detail::find_root(parent, v);
    if (!paired[root]) continue;
    if (name[root].empty()) {
      // the root is the set's smallest id; name the set after it
      name[root] = "fwd:" + (g[root].name.empty() ? std::to_string(root) : g[root].name);
    }
    out[v].group = name[root];
  }
  return out;
}

namespace detail {
// fusion_clusters() with Baechi's rule and order; `group` is a union-find parent array of groups.
inline std::vector<vertex_id> baechi_fusion(const graph& g, std::vector<std::uint32_t> position,
                                            std::vector<vertex_id>& group, byte_count max_bytes) {
  const std::size_t n = g.vertex_count();
  std::vector<vertex_id> members_by_group(n), begin(n + 1, 0);
  {
    std::vector<vertex_id> parents = group;
    const auto dense = dense_clusters(parents);
    for (vertex_id v = 0; v < n; ++v) ++begin[dense[v] + 1];
    for (std::size_t k = 0; k < n; ++k) begin[k + 1] += begin[k];
    std::vector<vertex_id> next(begin.begin(), begin.end() - 1);
    for (vertex_id v = 0; v < n; ++v) members_by_group[next[dense[v]]++] = v;
  }
  fusing_graph fusing(g, std::move(position), max_bytes);
  std::deque<std::pair<vertex_id, vertex_id>> queue;
  for (std::size_t k = 0; k < n && begin[k] < begin[k + 1]; ++k) {
    const vertex_id root = find_root(group, members_by_group[begin[k]]);
    for (std::size_t i = begin[k]; i < begin[k + 1]; ++i) {
      const vertex_id u = members_by_group[i];
      g.for_each_out_edge(u, [&](edge_id e) {
        if (find_root(group, g.target(e)) == root) queue.emplace_back(u, g.target(e));
      });
    }
    while (!queue.empty()) {
      const auto [a, b] = queue.front();
      queue.pop_front();
      fusing.fuse_into(a, b, [&](vertex_id x, vertex_id y) {
        if (find_root(group, x) == root && find_root(group, y) == root) queue.emplace_back(x, y);
      });
    }
  }
  return dense_clusters(fusing.parents());
}
}  // namespace detail

// The candidate edges' clusters after fusion: an edge is a candidate when both ends are in one
// group (options say which groups count). The exact rule tries candidates in the order of their
// ends in Kahn's order, in passes until none fuses. Baechi's rule follows Baechi's own procedure,
// on which the coarse graph it gives depends: group by group (in order of smallest member), a
// queue of the group's internal edges (members by id, each one's out-edges in graph order); an
// edge popped whose ends are still two clusters fuses its target into its source when the rule
// allows, and each edge that merge creates towards another cluster of the group joins the queue's
// back; a refused edge is not tried again. Either way the result is a DAG. Returns a cluster id per
// vertex for coarsen().
[[nodiscard]] inline std::vector<vertex_id> fusion_clusters(const graph& g, const fusion_options& options = {}) {
  const std::size_t n = g.vertex_count();
  const auto position = detail::kahn_positions(g);
  std::vector<vertex_id> group(n);
  std::iota(group.begin(), group.end(), vertex_id{0});
  const auto join = [&](vertex_id a, vertex_id b) {
    a = detail::find_root(group, a);
    b = detail::find_root(group, b);
    if (a != b) group[std::max(a, b)] = std::min(a, b);
  };
  if (options.co_place) {
    const auto clusters = detail::co_placement_clusters(g);
    std::vector<vertex_id> first(n, no_vertex);
    for (vertex_id v = 0; v < n; ++v) {
      if (first[clusters[v]] == no_vertex) first[clusters[v]] = v;
      else join(v, first[clusters[v]]);
    }
  }
  if (options.colocation) {
    std::map<std::string, vertex_id> first;
    for (vertex_id v = 0; v < n; ++v)
      if (!g[v].group.empty()) join(v, first.try_emplace(g[v].group, v).first->second);
  }
  if (options.forward_backward)
    for (vertex_id v = 0; v < n; ++v)
      if (g.forward_of(v) != no_vertex) join(v, g.forward_of(v));

  if (options.rule == fusion_rule::baechi_degree)
    return detail::baechi_fusion(g, position, group, options.max_cluster_bytes);

  std::vector<std::pair<vertex_id, vertex_id>> candidates;
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const vertex_id u = g.source(e), v = g.target(e);
    if (u != v && detail::find_root(group, u) == detail::find_root(group, v)) candidates.emplace_back(u, v);
  }
  std::sort(candidates.begin(), candidates.end(), [&](const auto& a, const auto& b) {
    return std::pair(position[a.first], position[a.second]) < std::pair(position[b.first], position[b.second]);
  });
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

  detail::fusing_graph fusing(g, position, options.max_cluster_bytes);
  for (bool fused = true; fused && !candidates.empty();) {
    fused = false;
    std::size_t kept = 0;
    for (const auto& [u, v] : candidates) {
      const bool before = fusing.find(u) == fusing.find(v);
      if (fusing.try_fuse(u, v, options.rule)) {
        fused = fused || !before;
        continue;  // one cluster now: never a candidate again
      }
      candidates[kept++] = {u, v};
    }
    candidates.resize(kept);
  }
  return detail::dense_clusters(fusing.parents());
}

// The coarse graph of fusion: fusion_clusters() fused by coarsen(). Colocation groups named in g
// are carried to the coarse graph (forward/backward pairs are not: colocate_forward_backward()
// first turns them into named groups).
[[nodiscard]] inline coarsening fuse(const graph& g, const fusion_options& options = {}) {
  const auto clusters = fusion_clusters(g, options);
  return coarsen(g, clusters);
}

}  // namespace gantry
