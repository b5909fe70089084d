// How gantry reads a graph of any type. Specialise gantry::graph_adaptor<G> with two static
// functions (three with names) and every algorithm accepts G; see examples/custom_graph.cpp.
// The concepts only: gantry::graph's adaptor is in graph/graph.hpp, Boost.Graph's in graph/boost.hpp,
// so this header pulls in no concrete graph type.
#pragma once

#include <gantry/core/types.hpp>

#include <concepts>
#include <cstddef>
#include <string>

namespace gantry {

// Required:
//   static std::size_t vertex_count(const G& g);
//   template <class F> static void for_each_edge(const G& g, F&& f);
//     calls f(source, target) for every edge, with vertex indices in [0, vertex_count), in the
//     same order every time; or f(source, target, id) when the adaptor numbers its edges itself,
//     in which case it also provides
//   static std::size_t edge_count(const G& g);   // ids are 0..edge_count-1, each used once
// Optional:
//   static std::string vertex_name(const G& g, std::size_t v);   // used in messages
template <class G>
struct graph_adaptor;

namespace detail {
struct edge_sink2 {
  void operator()(std::size_t, std::size_t) const {}
};
}  // namespace detail

// A graph type gantry can read.
template <class G>
concept adapted_graph = requires(const G& g, detail::edge_sink2 sink) {
  { graph_adaptor<G>::vertex_count(g) } -> std::convertible_to<std::size_t>;
  graph_adaptor<G>::for_each_edge(g, sink);
}
|| requires(const G& g) {
  { graph_adaptor<G>::vertex_count(g) } -> std::convertible_to<std::size_t>;
  { graph_adaptor<G>::edge_count(g) } -> std::convertible_to<std::size_t>;
  graph_adaptor<G>::for_each_edge(g, [](std::size_t, std::size_t, std::size_t) {});
};

// True when the adaptor hands out its own edge ids.
template <class G>
concept adapted_graph_with_edge_ids = adapted_graph<G> && requires(const G& g) {
  { graph_adaptor<G>::edge_count(g) } -> std::convertible_to<std::size_t>;
};

// The name of vertex v for messages: the adaptor's name if it has one, else "#v".
template <adapted_graph G>
[[nodiscard]] std::string vertex_name(const G& g, std::size_t v) {
  if constexpr (requires { graph_adaptor<G>::vertex_name(g, v); }) {
    std::string name = graph_adaptor<G>::vertex_name(g, v);
    if (!name.empty()) return name;
  }
  return std::string("#").append(std::to_string(v));
}

// vertex_name in single quotes, as messages name a vertex.
template <adapted_graph G>
[[nodiscard]] std::string quoted_vertex_name(const G& g, std::size_t v) {
  std::string text(1, '\'');  // not "'" + name: GCC 12 warns of an overlap there (-Wrestrict, a false positive)
  text += vertex_name(g, v);
  text += '\'';
  return text;
}

}  // namespace gantry
