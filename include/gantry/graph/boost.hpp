// Boost.Graph bridge. Any Boost graph that models VertexListGraph + IncidenceGraph and has an
// interior vertex_index property (adjacency_list<vecS, vecS, ...> has one for free) is an
// adapted_graph as it is; for other vertex containers (listS, setS) wrap the graph with an index
// map: gantry::indexed(g, index_map). Property maps become the dense per-vertex and per-edge
// vectors that gantry's models take via vertex_values() and edge_values(). Messages name Boost
// vertices by index ("#3").
#pragma once

#include <gantry/graph/adaptor.hpp>

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/property_map/property_map.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace gantry {

namespace detail {
// Checked first because boost::graph_traits<G> is a hard error (not a substitution failure) for a
// type without these members, which would break adapted_graph<T> and graph_adaptor partial
// specialisations (indexed_graph's included) for every non-Boost T.
template <class G>
concept boost_graph_members = requires {
  typename G::vertex_descriptor;
  typename G::edge_descriptor;
  typename G::directed_category;
  typename G::edge_parallel_category;
  typename G::traversal_category;
};
template <class G>
concept boost_incidence_graph = boost_graph_members<G> && requires(const G& g, typename boost::graph_traits<G>::vertex_descriptor v,
                                         typename boost::graph_traits<G>::edge_descriptor e) {
  { num_vertices(g) };
  { vertices(g) };
  { out_edges(v, g) };
  { target(e, g) };
};
template <class G>
concept boost_indexed_graph = boost_incidence_graph<G> && requires(const G& g) {
  { get(boost::vertex_index, g) };
};
}  // namespace detail

// A Boost graph viewed through an explicit vertex index map (values in [0, num_vertices)).
template <class G, class IndexMap>
struct indexed_graph {
  const G& graph;
  IndexMap index;
};

template <class G, class IndexMap>
[[nodiscard]] indexed_graph<G, IndexMap> indexed(const G& g, IndexMap index) {
  return {g, index};
}

namespace detail {
template <class G, class IndexMap, class F>
void boost_for_each_edge(const G& g, const IndexMap& index, F&& f) {
  for (auto [vi, vend] = vertices(g); vi != vend; ++vi)
    for (auto [ei, eend] = out_edges(*vi, g); ei != eend; ++ei)
      f(static_cast<std::size_t>(get(index, *vi)), static_cast<std::size_t>(get(index, target(*ei, g))));
}
}  // namespace detail

template <detail::boost_indexed_graph G>
struct graph_adaptor<G> {
  static std::size_t vertex_count(const G& g) { return num_vertices(g); }
  template <class F>
  static void for_each_edge(const G& g, F&& f) {
    detail::boost_for_each_edge(g, get(boost::vertex_index, g), f);
  }
};

template <class G, class IndexMap>
struct graph_adaptor<indexed_graph<G, IndexMap>> {
  static std::size_t vertex_count(const indexed_graph<G, IndexMap>& g) { return num_vertices(g.graph); }
  template <class F>
  static void for_each_edge(const indexed_graph<G, IndexMap>& g, F&& f) {
    detail::boost_for_each_edge(g.graph, g.index, f);
  }
};

// Reads a vertex property map into a vector indexed by vertex index.
template <class G, class IndexMap, class PropertyMap>
[[nodiscard]] auto vertex_values(const G& g, const IndexMap& index, const PropertyMap& map) {
  using value = std::decay_t<typename boost::property_traits<PropertyMap>::value_type>;
  std::vector<value> out(num_vertices(g));
  for (auto [vi, vend] = vertices(g); vi != vend; ++vi) out[get(index, *vi)] = get(map, *vi);
  return out;
}
template <class G, class PropertyMap>
[[nodiscard]] auto vertex_values(const G& g, const PropertyMap& map) {
  return vertex_values(g, get(boost::vertex_index, g), map);
}

// Reads an edge property map into a vector indexed by gantry's edge id (the order in which the
// snapshot lists Boost's edges: by vertex, then out-edge order).
template <class G, class PropertyMap>
[[nodiscard]] auto edge_values(const G& g, const PropertyMap& map) {
  using value = std::decay_t<typename boost::property_traits<PropertyMap>::value_type>;
  std::vector<value> out;
  out.reserve(num_edges(g));
  for (auto [vi, vend] = vertices(g); vi != vend; ++vi)
    for (auto [ei, eend] = out_edges(*vi, g); ei != eend; ++ei) out.push_back(get(map, *ei));
  return out;
}

}  // namespace gantry
