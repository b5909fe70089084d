// Seeded random DAGs for tests and benchmarks: layered DAGs like those of the list-scheduling
// literature, with compute times, tensor bytes and memory drawn from given ranges. The same seed
// gives the same graph on every platform (only std::mt19937_64's raw output is used).
#pragma once

#include <gantry/core/random.hpp>
#include <gantry/graph/graph.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace gantry {

struct random_dag_options {
  std::size_t vertices = 100;
  std::size_t layers = 10;         // vertices are spread evenly over this many layers
  double mean_out_degree = 2.0;    // edges per vertex into the next few layers
  std::size_t max_layer_skip = 2;  // an edge from layer i goes to layers i+1 .. i+max_layer_skip
  seconds min_compute = 1e-3, max_compute = 1e-2;
  byte_count min_bytes = 1 << 10, max_bytes = 1 << 20;  // edge tensor bytes, and vertex output
  byte_count max_persistent = 0;                        // persistent bytes drawn from [0, max_persistent]
  byte_count max_temporary = 0;                         // temporary bytes drawn from [0, max_temporary]
  bool names = true;                                    // name vertices "v<id>" (false keeps names empty)
  std::uint64_t seed = 1;
};

// A layered DAG: vertex v belongs to layer v * layers / vertices; each vertex draws its out-degree
// around mean_out_degree and connects to random vertices of the next max_layer_skip layers. Every
// vertex outside the first layer gets at least one predecessor, so the graph is connected-ish.
[[nodiscard]] inline graph random_layered_dag(const random_dag_options& options) {
  detail::portable_random rng(options.seed);
  graph g;
  const std::size_t n = options.vertices;
  const std::size_t layers = std::max<std::size_t>(1, std::min(options.layers, std::max<std::size_t>(n, 1)));
  g.reserve(n, static_cast<std::size_t>(static_cast<double>(n) * (options.mean_out_degree + 1)));
  const auto layer_of = [&](std::size_t v) { return v * layers / std::max<std::size_t>(n, 1); };
  const auto layer_begin = [&](std::size_t l) { return (l * n + layers - 1) / layers; };
  for (std::size_t v = 0; v < n; ++v) {
    vertex_properties p;
    if (options.names) p.name = "v" + std::to_string(v);
    p.compute = rng.uniform(options.min_compute, options.max_compute);
    p.output = rng.integer(options.min_bytes, options.max_bytes);
    p.persistent = rng.integer(0, options.max_persistent);
    p.temporary = rng.integer(0, options.max_temporary);
    g.add_vertex(std::move(p));
  }
  std::vector<std::uint8_t> has_pred(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t l = layer_of(v);
    if (l + 1 >= layers) continue;
    const std::size_t lo = layer_begin(l + 1);
    const std::size_t hi = layer_begin(std::min(layers, l + 1 + std::max<std::size_t>(1, options.max_layer_skip)));
    if (lo >= hi) continue;
    const auto degree =
        static_cast<std::size_t>(rng.integer(0, static_cast<std::uint64_t>(2 * options.mean_out_degree)));
    const byte_count bytes = g[static_cast<vertex_id>(v)].output;
    for (std::size_t k = 0; k < degree; ++k) {
      const auto w = static_cast<vertex_id>(rng.integer(lo, hi - 1));
      g.add_edge(static_cast<vertex_id>(v), w, bytes);
      has_pred[w] = 1;
    }
  }
  for (std::size_t w = layer_begin(1); w < n; ++w) {
    if (has_pred[w] || layer_of(w) == 0) continue;
    const std::size_t l = layer_of(w);
    const std::size_t lo = layer_begin(l - 1), hi = layer_begin(l);
    const auto u = static_cast<vertex_id>(rng.integer(lo, hi - 1));
    g.add_edge(u, static_cast<vertex_id>(w), g[u].output);
  }
  return g;
}

}  // namespace gantry
