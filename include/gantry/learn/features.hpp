// What the learned dual policy sees (DOPPLER §5, Appendix D): static vertex features, a
// message-passing encoding of the graph computed once per episode (§5.3), the features aggregated
// along each vertex's bottom-level and top-level critical paths, and the per-step features of a
// ready vertex (for SEL) and of a (vertex, device) pair (for PLC) read from the list-scheduling
// engine's view. Times are divided by the graph's critical path so that features are O(1).
//
// Departure from the paper: the encoder's propagation has no weights of its own (a simplified
// graph convolution: means over predecessors and successors, `rounds` hops each way, concatenated);
// the learned weights are those of the SEL and PLC heads, so one episode's backpropagation stops
// at the heads and costs O(steps · candidates · parameters).
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/learn/mlp.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace gantry::learn {

// Static features per vertex: compute, output bytes, bottom level, top level, path through,
// in-degree, out-degree, incoming transfer time (times over the critical path, counts as log1p).
inline constexpr std::size_t vertex_feature_count = 8;
// Dynamic features of a ready vertex for SEL and of a (vertex, device) pair for PLC.
inline constexpr std::size_t select_dynamic_count = 6;
inline constexpr std::size_t place_dynamic_count = 11;

[[nodiscard]] constexpr std::size_t embedding_size(unsigned rounds) {
  return vertex_feature_count * (1 + 2 * static_cast<std::size_t>(rounds));
}
// SEL's input: embedding, means of the static features along the bottom- and top-level paths, dynamic.
[[nodiscard]] constexpr std::size_t select_input_size(unsigned rounds) {
  return embedding_size(rounds) + 2 * vertex_feature_count + select_dynamic_count;
}
// PLC's input: the vertex's static features, dynamic pair features, mean static features of the
// vertices already on the device.
[[nodiscard]] constexpr std::size_t place_input_size() { return 2 * vertex_feature_count + place_dynamic_count; }

// The per-episode encoding of a graph.
struct graph_encoding {
  seconds scale = 1;                          // the critical path (mean costs), the unit of every time feature
  matrix features;                            // n x vertex_feature_count
  matrix embedding;                           // n x embedding_size(rounds)
  matrix bottom_path;                         // n x vertex_feature_count: mean over v's bottom-level path
  matrix top_path;                            // n x vertex_feature_count: mean over v's top-level path
  std::vector<seconds> bottom, top, compute;  // levels and mean compute time per vertex
  std::vector<vertex_id> topological;         // Kahn order
};

// Encodes g for a model over `devices` devices. O((n + e) · (m + rounds · F)).
template <placement_model M>
[[nodiscard]] graph_encoding encode_graph(const csr_graph& g, const M& model, std::size_t devices,
                                          unsigned rounds = 2) {
  graph_encoding out;
  const std::size_t n = g.vertex_count();
  const auto rows = static_cast<Eigen::Index>(n);
  constexpr auto f = static_cast<Eigen::Index>(vertex_feature_count);
  out.topological = detail::kahn_on(g);
  if (out.topological.size() != n) throw not_a_dag("encode_graph: the graph has a cycle");
  const levels lv = detail::compute_levels(g, out.topological, model, devices);
  out.bottom = lv.bottom;
  out.top = lv.top;
  out.scale = lv.critical_path > 0 ? lv.critical_path : 1.0;
  const double s = out.scale;
  out.compute.assign(n, 0);
  double mean_output = 0;
  for (vertex_id v = 0; v < n; ++v) {
    out.compute[v] = mean_compute_time(model, v, devices);
    mean_output += static_cast<double>(model.output_bytes(v));
  }
  mean_output = n > 0 && mean_output > 0 ? mean_output / static_cast<double>(n) : 1.0;
  out.features = matrix::Zero(rows, f);
  for (vertex_id v = 0; v < n; ++v) {
    seconds incoming = 0;
    for (const edge_id e : g.in_edges(v)) incoming += mean_transfer_time(model, e, devices);
    auto row = out.features.row(static_cast<Eigen::Index>(v));
    row[0] = out.compute[v] / s;
    row[1] = std::log1p(static_cast<double>(model.output_bytes(v)) / mean_output);
    row[2] = lv.bottom[v] / s;
    row[3] = lv.top[v] / s;
    row[4] = (lv.bottom[v] + lv.top[v]) / s;
    row[5] = std::log1p(static_cast<double>(g.in_degree(v)));
    row[6] = std::log1p(static_cast<double>(g.out_degree(v)));
    row[7] = incoming / s;
  }
  // Message passing: h_pred^{k+1}(v) = mean over predecessors of h_pred^k, likewise successors.
  out.embedding = matrix::Zero(rows, static_cast<Eigen::Index>(embedding_size(rounds)));
  out.embedding.leftCols(f) = out.features;
  matrix back = out.features, forth = out.features;
  for (unsigned k = 0; k < rounds; ++k) {
    matrix next_back = matrix::Zero(rows, f), next_forth = matrix::Zero(rows, f);
    for (vertex_id v = 0; v < n; ++v) {
      const auto r = static_cast<Eigen::Index>(v);
      const auto pred = g.predecessors(v);
      const auto succ = g.successors(v);
      for (const vertex_id u : pred) next_back.row(r) += back.row(static_cast<Eigen::Index>(u));
      for (const vertex_id w : succ) next_forth.row(r) += forth.row(static_cast<Eigen::Index>(w));
      if (!pred.empty()) next_back.row(r) /= static_cast<double>(pred.size());
      if (!succ.empty()) next_forth.row(r) /= static_cast<double>(succ.size());
    }
    back = std::move(next_back);
    forth = std::move(next_forth);
    out.embedding.middleCols(f * (1 + 2 * k), f) = back;
    out.embedding.middleCols(f * (2 + 2 * k), f) = forth;
  }
  // Paths: v's bottom-level path continues to the successor w maximising c(v,w) + b(w); its
  // top-level path comes from the predecessor u maximising t(u) + p(u) + c(u,v). Sums and lengths
  // by dynamic programming over the topological order.
  matrix bottom_sum = out.features, top_sum = out.features;
  std::vector<double> bottom_length(n, 1), top_length(n, 1);
  for (auto it = out.topological.rbegin(); it != out.topological.rend(); ++it) {
    const vertex_id v = *it;
    const auto succ = g.successors(v);
    const auto edges = g.out_edges(v);
    vertex_id next = no_vertex;
    seconds best = -1;
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const seconds via = mean_transfer_time(model, edges[i], devices) + lv.bottom[succ[i]];
      if (via > best) best = via, next = succ[i];
    }
    if (next == no_vertex) continue;
    bottom_sum.row(static_cast<Eigen::Index>(v)) += bottom_sum.row(static_cast<Eigen::Index>(next));
    bottom_length[v] += bottom_length[next];
  }
  for (const vertex_id v : out.topological) {
    const auto pred = g.predecessors(v);
    const auto edges = g.in_edges(v);
    vertex_id previous = no_vertex;
    seconds best = -1;
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      const seconds via = lv.top[u] + out.compute[u] + mean_transfer_time(model, edges[i], devices);
      if (via > best) best = via, previous = u;
    }
    if (previous == no_vertex) continue;
    top_sum.row(static_cast<Eigen::Index>(v)) += top_sum.row(static_cast<Eigen::Index>(previous));
    top_length[v] += top_length[previous];
  }
  out.bottom_path = bottom_sum;
  out.top_path = top_sum;
  for (vertex_id v = 0; v < n; ++v) {
    out.bottom_path.row(static_cast<Eigen::Index>(v)) /= bottom_length[v];
    out.top_path.row(static_cast<Eigen::Index>(v)) /= top_length[v];
  }
  return out;
}

}  // namespace gantry::learn
