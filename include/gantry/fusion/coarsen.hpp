// Coarsening: merge the vertices of a graph into clusters and get a smaller graph to place, then
// map the coarse placement back. Every fusion rule (Baechi's degree rule, the exact reachability
// rule, Kernighan's breakpoints along a topological order) decides only `cluster_of`; this header
// builds the coarse graph by one set of rules (docs/algorithms.md, "Colocation, co-placement and
// fusion"):
//   - compute times add (per device kind too: a kind's time on a member without one is its
//     device-independent time);
//   - persistent bytes add;
//   - a coarse vertex's output is the sum of its members' outputs that leave the cluster; a tensor
//     is a producer's edges of equal bytes (docs/format.md), sent once to each cluster that reads it;
//   - its temporary bytes are the most its members hold besides that, running one after another in
//     the order of `members`: a member's temporary bytes plus the outputs read only inside the
//     cluster that are live then (from their producer's start to their last reader's finish), so a
//     coarse placement that fits leaves room for what the cluster holds inside;
//   - one coarse edge per pair of clusters, carrying the bytes of the distinct tensors between them;
//   - colocation groups: clusters that hold members of one group form one coarse group (named
//     after the smallest original group name among them); forward/backward pairs are not carried.
//   - a coarse vertex is named after its first member, with "+k" for the k others.
// The coarse graph must be a DAG; a cluster map that makes a cycle is refused with the clusters on it.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gantry {

struct coarsening {
  graph coarse;                      // one vertex per cluster, numbered 0..k-1
  std::vector<vertex_id> coarse_of;  // per original vertex: its coarse vertex
  // Per coarse vertex, its members in the original graph's topological order (Kahn's), so
  // expanding a coarse order gives a topological order of the original.
  std::vector<std::vector<vertex_id>> members;
};

namespace detail {
inline vertex_id find_root(std::vector<vertex_id>& parent, vertex_id x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}
}  // namespace detail

// Builds the coarse graph of `g` for the clusters in `cluster_of` (one entry per vertex, ids dense
// from 0: every id below the largest used must be used). Throws invalid_input for a wrong size,
// gaps in the ids, or clusters that make a cycle (naming them); not_a_dag if g itself has one.
[[nodiscard]] inline coarsening coarsen(const graph& g, std::span<const vertex_id> cluster_of) {
  const std::size_t n = g.vertex_count();
  if (cluster_of.size() != n)
    throw invalid_input("coarsen: " + std::to_string(cluster_of.size()) + " cluster ids for " + std::to_string(n) +
                        " vertices");
  std::size_t k = 0;
  for (const vertex_id c : cluster_of) {
    if (c == no_vertex) throw invalid_input("coarsen: a vertex has no cluster (no_vertex)");
    k = std::max<std::size_t>(k, std::size_t{c} + 1);
  }

  // Kahn's order of the original orders each cluster's members (throws not_a_dag for a cycle).
  const std::vector<vertex_id> order = kahn_order(g);

  coarsening out;
  out.coarse_of.assign(cluster_of.begin(), cluster_of.end());
  out.members.assign(k, {});
  for (const vertex_id v : order) out.members[cluster_of[v]].push_back(v);
  for (std::size_t c = 0; c < k; ++c)
    if (out.members[c].empty())
      throw invalid_input("coarsen: cluster id " + std::to_string(c) + " has no vertex (ids must be dense, 0.." +
                          std::to_string(k - 1) + ")");

  // Distinct tensors leaving each cluster: (producer, bytes, target cluster), each counted once.
  std::vector<std::tuple<vertex_id, vertex_id, byte_count, vertex_id>> leaving;  // (from, to, bytes, producer)
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const vertex_id u = g.source(e), v = g.target(e);
    if (cluster_of[u] != cluster_of[v]) leaving.emplace_back(cluster_of[u], cluster_of[v], g.bytes(e), u);
  }
  std::sort(leaving.begin(), leaving.end());
  leaving.erase(std::unique(leaving.begin(), leaving.end()), leaving.end());

  graph& c = out.coarse;
  c.reserve(k, leaving.size());
  for (std::size_t i = 0; i < k; ++i) {
    const auto& mem = out.members[i];
    vertex_properties p;
    p.name = g[mem.front()].name;
    if (mem.size() > 1) p.name += "+" + std::to_string(mem.size() - 1);
    p.op = mem.size() == 1 ? g[mem.front()].op : std::string("fused");
    for (const vertex_id v : mem) {
      p.compute += g[v].compute;
      p.persistent = detail::saturating_add(p.persistent, g[v].persistent);
      p.flops += g[v].flops;
    }
    if (!std::isfinite(p.compute))
      throw invalid_input("coarsen: the compute time of cluster '" + p.name + "' (" + std::to_string(mem.size()) +
                          " vertices) is not finite: its members' times are too large to add up in a double");
    c.add_vertex(std::move(p));
  }
  // Outputs: a member whose output leaves the cluster keeps it as before, counted once whatever
  // the number of clusters reading it; outputs used only inside the cluster are its own business.
  {
    std::vector<vertex_id> producers;
    for (const auto& entry : leaving) producers.push_back(std::get<3>(entry));
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    for (const vertex_id u : producers) {
      auto& p = c[cluster_of[u]];
      p.output = detail::saturating_add(p.output, g[u].output);
    }
  }
  // Temporaries: per cluster, a sweep over its members in order with the outputs read only inside
  // it added at their producer and dropped after their last reader. O(n + e) in all.
  {
    std::vector<std::uint32_t> position(n);
    for (const auto& mem : out.members)
      for (std::uint32_t i = 0; i < mem.size(); ++i) position[mem[i]] = i;
    std::vector<std::uint8_t> leaves(n, 0);
    for (const auto& entry : leaving) leaves[std::get<3>(entry)] = 1;
    std::vector<std::uint32_t> last(position);  // per vertex: its last reader's position, or its own
    for (edge_id e = 0; e < g.edge_count(); ++e)
      if (cluster_of[g.source(e)] == cluster_of[g.target(e)])
        last[g.source(e)] = std::max(last[g.source(e)], position[g.target(e)]);
    std::vector<byte_count> ends_after;  // per member position: internal outputs freed after it
    for (std::size_t i = 0; i < k; ++i) {
      const auto& mem = out.members[i];
      ends_after.assign(mem.size(), 0);
      byte_count live = 0, most = 0;
      for (std::uint32_t at = 0; at < mem.size(); ++at) {
        const vertex_id v = mem[at];
        if (!leaves[v]) {
          live = detail::saturating_add(live, g[v].output);
          ends_after[last[v]] = detail::saturating_add(ends_after[last[v]], g[v].output);
        }
        most = std::max(most, detail::saturating_add(live, g[v].temporary));
        live -= ends_after[at];
      }
      c[static_cast<vertex_id>(i)].temporary = most;
    }
  }
  // One edge per pair of clusters with the bytes of the distinct tensors between them.
  for (std::size_t i = 0; i < leaving.size();) {
    const auto from = std::get<0>(leaving[i]), to = std::get<1>(leaving[i]);
    byte_count bytes = 0;
    for (; i < leaving.size() && std::get<0>(leaving[i]) == from && std::get<1>(leaving[i]) == to; ++i)
      bytes = detail::saturating_add(bytes, std::get<2>(leaving[i]));
    c.add_edge(from, to, bytes);
  }

  // Per-kind compute times: for every kind used by a member, the sum over the members.
  for (std::size_t i = 0; i < k; ++i) {
    std::map<std::string, seconds> kinds;
    for (const vertex_id v : out.members[i])
      for (const auto& [kind, time] : g.kind_times(v)) kinds.emplace(kind, 0.0);
    if (kinds.empty()) continue;
    for (auto& [kind, total] : kinds)
      for (const vertex_id v : out.members[i]) total += g.compute_on(v, kind);
    for (const auto& [kind, total] : kinds) {
      if (!std::isfinite(total))
        throw invalid_input("coarsen: the '" + kind + "' compute time of cluster '" +
                            c[static_cast<vertex_id>(i)].name +
                            "' is not finite: its members' times are too large to add up in a double");
      c.set_compute(static_cast<vertex_id>(i), kind, total);
    }
  }

  // Colocation groups: clusters sharing an original group become one coarse group.
  {
    std::vector<vertex_id> parent(k);
    std::iota(parent.begin(), parent.end(), vertex_id{0});
    std::map<std::string, vertex_id> first_cluster;
    for (vertex_id v = 0; v < n; ++v) {
      if (g[v].group.empty()) continue;
      const auto [it, fresh] = first_cluster.emplace(g[v].group, cluster_of[v]);
      if (!fresh) parent[detail::find_root(parent, cluster_of[v])] = detail::find_root(parent, it->second);
    }
    std::vector<std::string> name(k);
    for (const auto& [group, cluster] : first_cluster) {  // map order: smallest name first
      auto& slot = name[detail::find_root(parent, cluster)];
      if (slot.empty()) slot = group;
    }
    for (std::size_t i = 0; i < k; ++i)
      c[static_cast<vertex_id>(i)].group = name[detail::find_root(parent, static_cast<vertex_id>(i))];
  }

  // The coarse graph must be acyclic.
  try {
    (void)kahn_order(c);
  } catch (const not_a_dag& e) {
    throw invalid_input(std::string("coarsen: the clusters make a cycle; ") + e.what());
  }
  return out;
}

// A placement of the original graph from one of the coarse graph: every member goes where its
// cluster went; the order expands each coarse vertex into its members (a topological order of the
// original when the coarse order is one of the coarse graph). A failed coarse placement expands to a
// failed placement with the same outcome, its vertex the first member of the coarse vertex named.
[[nodiscard]] inline placement expand(const coarsening& c, const placement& coarse) {
  const std::size_t k = c.members.size();
  if (coarse.device.size() != k)
    throw invalid_input("expand: the placement has " + std::to_string(coarse.device.size()) + " entries for " +
                        std::to_string(k) + " coarse vertices");
  placement p;
  p.outcome = coarse.outcome;  // a coarse vertex it names becomes its first member
  if (p.outcome.vertex != no_vertex && p.outcome.vertex < k) p.outcome.vertex = c.members[p.outcome.vertex].front();
  p.placement_time = coarse.placement_time;
  p.device.resize(c.coarse_of.size(), no_device);
  for (std::size_t v = 0; v < c.coarse_of.size(); ++v) p.device[v] = coarse.device[c.coarse_of[v]];
  p.order.reserve(c.coarse_of.size());
  for (const vertex_id cv : coarse.order) {
    if (cv >= k)
      throw invalid_input("expand: the order names coarse vertex " + std::to_string(cv) + " of " + std::to_string(k));
    p.order.insert(p.order.end(), c.members[cv].begin(), c.members[cv].end());
  }
  return p;
}

}  // namespace gantry
