// The dense form every algorithm runs on: successors and predecessors in CSR arrays, indexed by
// vertex id, with edge ids kept beside them. Built once per call in O(n + e) by a stable counting
// sort, so out- and in-lists keep the order in which the adaptor listed the edges.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/adaptor.hpp>
#include <gantry/graph/graph.hpp>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

namespace gantry {

class csr_graph {
 public:
  csr_graph() = default;

  // Builds from an edge list given as source and target arrays (edge i is source[i] -> target[i]).
  csr_graph(std::size_t vertex_count, std::vector<vertex_id> source, std::vector<vertex_id> target)
      : source_(std::move(source)), target_(std::move(target)) {
    if (source_.size() != target_.size())
      throw invalid_input("csr_graph: " + std::to_string(source_.size()) + " sources but " +
                          std::to_string(target_.size()) + " targets");
    build(vertex_count);
  }

  [[nodiscard]] std::size_t vertex_count() const noexcept { return out_offset_.empty() ? 0 : out_offset_.size() - 1; }
  [[nodiscard]] std::size_t edge_count() const noexcept { return source_.size(); }

  [[nodiscard]] std::span<const vertex_id> successors(vertex_id v) const {
    return {out_target_.data() + out_offset_[v], out_offset_[v + 1] - out_offset_[v]};
  }
  [[nodiscard]] std::span<const edge_id> out_edges(vertex_id v) const {
    return {out_edge_.data() + out_offset_[v], out_offset_[v + 1] - out_offset_[v]};
  }
  [[nodiscard]] std::span<const vertex_id> predecessors(vertex_id v) const {
    return {in_source_.data() + in_offset_[v], in_offset_[v + 1] - in_offset_[v]};
  }
  [[nodiscard]] std::span<const edge_id> in_edges(vertex_id v) const {
    return {in_edge_.data() + in_offset_[v], in_offset_[v + 1] - in_offset_[v]};
  }
  [[nodiscard]] std::size_t out_degree(vertex_id v) const { return out_offset_[v + 1] - out_offset_[v]; }
  [[nodiscard]] std::size_t in_degree(vertex_id v) const { return in_offset_[v + 1] - in_offset_[v]; }
  [[nodiscard]] vertex_id source(edge_id e) const { return source_[e]; }
  [[nodiscard]] vertex_id target(edge_id e) const { return target_[e]; }

  // Vertices on one cycle, in edge order (v0 -> v1 -> ... -> v0), or empty when acyclic. O(n + e).
  [[nodiscard]] std::vector<vertex_id> find_cycle() const {
    const std::size_t n = vertex_count();
    std::vector<std::uint32_t> indegree(n);
    std::vector<vertex_id> queue;
    queue.reserve(n);
    for (vertex_id v = 0; v < n; ++v)
      if ((indegree[v] = static_cast<std::uint32_t>(in_degree(v))) == 0) queue.push_back(v);
    for (std::size_t head = 0; head < queue.size(); ++head)
      for (const vertex_id w : successors(queue[head]))
        if (--indegree[w] == 0) queue.push_back(w);
    if (queue.size() == n) return {};
    // Every vertex left has a predecessor that is also left: walk backwards until one repeats.
    vertex_id v = 0;
    while (indegree[v] == 0) ++v;
    std::vector<std::uint32_t> seen_at(n, 0);
    std::vector<vertex_id> walk;
    while (seen_at[v] == 0) {
      walk.push_back(v);
      seen_at[v] = static_cast<std::uint32_t>(walk.size());
      for (const vertex_id u : predecessors(v))
        if (indegree[u] != 0) {
          v = u;
          break;
        }
    }
    std::vector<vertex_id> cycle(walk.begin() + (seen_at[v] - 1), walk.end());
    std::reverse(cycle.begin(), cycle.end());
    return cycle;
  }

 private:
  void build(std::size_t n) {
    const std::size_t e = source_.size();
    out_offset_.assign(n + 1, 0);
    in_offset_.assign(n + 1, 0);
    for (std::size_t i = 0; i < e; ++i) {
      if (source_[i] >= n || target_[i] >= n)
        throw invalid_input("csr_graph: edge " + std::to_string(i) + " (" + std::to_string(source_[i]) + " -> " +
                            std::to_string(target_[i]) + ") names a vertex outside [0, " + std::to_string(n) + ")");
      ++out_offset_[source_[i] + 1];
      ++in_offset_[target_[i] + 1];
    }
    for (std::size_t v = 0; v < n; ++v) {
      out_offset_[v + 1] += out_offset_[v];
      in_offset_[v + 1] += in_offset_[v];
    }
    out_target_.resize(e);
    out_edge_.resize(e);
    in_source_.resize(e);
    in_edge_.resize(e);
    std::vector<std::uint32_t> out_fill(out_offset_.begin(), out_offset_.end() - 1);
    std::vector<std::uint32_t> in_fill(in_offset_.begin(), in_offset_.end() - 1);
    for (std::size_t i = 0; i < e; ++i) {
      const auto u = source_[i], v = target_[i];
      out_target_[out_fill[u]] = v;
      out_edge_[out_fill[u]++] = static_cast<edge_id>(i);
      in_source_[in_fill[v]] = u;
      in_edge_[in_fill[v]++] = static_cast<edge_id>(i);
    }
  }

  std::vector<vertex_id> source_, target_;
  std::vector<std::uint32_t> out_offset_, in_offset_;
  std::vector<vertex_id> out_target_, in_source_;
  std::vector<edge_id> out_edge_, in_edge_;
};

// Snapshots any adapted graph. Edge ids are the adaptor's own when it has them, else the order
// in which for_each_edge lists the edges. Throws invalid_input for out-of-range indices or ids.
template <adapted_graph G>
[[nodiscard]] csr_graph snapshot(const G& g) {
  using adaptor = graph_adaptor<G>;
  const std::size_t n = adaptor::vertex_count(g);
  if (n >= no_vertex) throw invalid_input("snapshot: too many vertices (" + std::to_string(n) + ")");
  std::vector<vertex_id> source, target;
  const auto check = [&](std::size_t u, std::size_t v) {
    if (u >= n || v >= n)
      throw invalid_input("snapshot: edge " + std::to_string(u) + " -> " + std::to_string(v) +
                          " names a vertex outside [0, " + std::to_string(n) + ")");
  };
  if constexpr (adapted_graph_with_edge_ids<G>) {
    const std::size_t e = adaptor::edge_count(g);
    source.assign(e, no_vertex);
    target.assign(e, no_vertex);
    adaptor::for_each_edge(g, [&](std::size_t u, std::size_t v, std::size_t id) {
      check(u, v);
      if (id >= e || source[id] != no_vertex)
        throw invalid_input("snapshot: edge id " + std::to_string(id) + " is out of range or repeated");
      source[id] = static_cast<vertex_id>(u);
      target[id] = static_cast<vertex_id>(v);
    });
    if (std::find(source.begin(), source.end(), no_vertex) != source.end())
      throw invalid_input("snapshot: the adaptor listed fewer edges than edge_count()");
  } else {
    adaptor::for_each_edge(g, [&](std::size_t u, std::size_t v) {
      check(u, v);
      source.push_back(static_cast<vertex_id>(u));
      target.push_back(static_cast<vertex_id>(v));
    });
  }
  return csr_graph(n, std::move(source), std::move(target));
}

// The message for a cycle: "a -> b -> c -> a".
template <adapted_graph G>
[[nodiscard]] std::string describe_cycle(const G& g, const std::vector<vertex_id>& cycle) {
  std::string text;
  for (const vertex_id v : cycle) text += vertex_name(g, v) + " -> ";
  if (!cycle.empty()) text += vertex_name(g, cycle.front());
  return text;
}

// Snapshots g and checks that it is acyclic; throws not_a_dag naming the vertices of a cycle.
template <adapted_graph G>
[[nodiscard]] csr_graph snapshot_dag(const G& g) {
  csr_graph s = snapshot(g);
  if (const auto cycle = s.find_cycle(); !cycle.empty())
    throw not_a_dag("the graph has a cycle: " + describe_cycle(g, cycle));
  return s;
}

}  // namespace gantry

namespace gantry {

// A snapshot is itself an adapted graph, so every algorithm also accepts one (and then does not
// copy it: see as_csr()).
template <>
struct graph_adaptor<csr_graph> {
  static std::size_t vertex_count(const csr_graph& g) { return g.vertex_count(); }
  static std::size_t edge_count(const csr_graph& g) { return g.edge_count(); }
  template <class F>
  static void for_each_edge(const csr_graph& g, F&& f) {
    for (edge_id e = 0; e < g.edge_count(); ++e) f(g.source(e), g.target(e), e);
  }
};

namespace detail {
// Holds a snapshot of g, or refers to g when it already is one.
template <class G>
class csr_view {
 public:
  explicit csr_view(const G& g) {
    if constexpr (std::is_same_v<G, csr_graph>) ptr_ = &g;
    else {
      own_ = snapshot(g);
      ptr_ = &own_;
    }
  }
  csr_view(const csr_view&) = delete;
  csr_view& operator=(const csr_view&) = delete;
  [[nodiscard]] const csr_graph& operator*() const noexcept { return *ptr_; }
  [[nodiscard]] const csr_graph* operator->() const noexcept { return ptr_; }

 private:
  csr_graph own_;
  const csr_graph* ptr_ = nullptr;
};
}  // namespace detail

}  // namespace gantry
