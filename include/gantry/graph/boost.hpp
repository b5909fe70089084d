// Boost.Graph bridge. Any Boost graph that models VertexListGraph + IncidenceGraph is an
// adapted_graph as it is. Vertex i is the vertex of index i when vertex descriptors are integers
// (adjacency_list<vecS, ...>), else the i-th vertex that vertices(g) lists (listS, setS);
// gantry::indexed(g, index_map) gives any other numbering (an interior vertex_index of a listS
// graph, say).
// Edge e is the e-th edge listed by source vertex, then out-edge order. Property maps become the
// dense per-vertex and per-edge vectors that gantry's models take via vertex_values() and
// edge_values(), in the same numbering. Messages name a Boost vertex by its bundled property's
// `name` member when it has one, else by index ("#3").
#pragma once

#include <gantry/graph/adaptor.hpp>

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/property_map/property_map.hpp>

#include <map>
#include <sstream>
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
concept boost_incidence_graph = boost_graph_members<G> &&
    requires(const G& g, typename boost::graph_traits<G>::vertex_descriptor v,
             typename boost::graph_traits<G>::edge_descriptor e) {
  {num_vertices(g)};
  {vertices(g)};
  {out_edges(v, g)};
  {target(e, g)};
};
// Integer vertex descriptors (vecS, compressed_sparse_row_graph) come with a vertex_index map;
// asking other graphs for one is a hard error inside Boost, not a substitution failure, so the
// descriptor's type is checked first.
template <class G>
concept boost_indexed_graph = boost_incidence_graph<G> &&
    std::is_integral_v<typename boost::graph_traits<G>::vertex_descriptor> && requires(const G& g) {
  {get(boost::vertex_index, g)};
};
// A Boost graph without a vertex index (listS or setS vertices): numbered in iteration order.
template <class G>
concept boost_unindexed_graph = boost_incidence_graph<G> && !boost_indexed_graph<G>;

// The iteration-order index of every vertex of an unindexed graph, as a property map.
template <class G>
class iteration_index {
 public:
  using descriptor = typename boost::graph_traits<G>::vertex_descriptor;
  explicit iteration_index(const G& g) {
    std::size_t i = 0;
    for (auto [vi, vend] = vertices(g); vi != vend; ++vi) index_.emplace(*vi, i++);
  }
  friend std::size_t get(const iteration_index& map, descriptor v) { return map.index_.at(v); }

 private:
  std::map<descriptor, std::size_t> index_;
};

// The i-th vertex in gantry's numbering, for messages (O(i) for unindexed graphs).
template <class G>
auto boost_vertex_at(const G& g, std::size_t i) {
  auto [vi, vend] = vertices(g);
  if constexpr (boost_indexed_graph<G>) {
    for (; vi != vend; ++vi)
      if (static_cast<std::size_t>(get(boost::vertex_index, g, *vi)) == i) return *vi;
    return *vertices(g).first;
  } else {
    for (std::size_t k = 0; k < i && vi != vend; ++k) ++vi;
    return *vi;
  }
}

// A vertex's name for messages: the bundled property's `name`, else "#i". (Asking a graph for a
// vertex_name property it lacks is a hard error inside Boost, so only bundles are read.)
template <class G>
std::string boost_vertex_name(const G& g, std::size_t i) {
  if (i >= num_vertices(g)) return "#" + std::to_string(i);
  const auto v = boost_vertex_at(g, i);
  if constexpr (requires { g[v].name; }) {
    std::ostringstream out;
    out << g[v].name;
    return out.str();
  } else {
    return "#" + std::to_string(i);
  }
}
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
  static std::string vertex_name(const G& g, std::size_t v) { return detail::boost_vertex_name(g, v); }
};

template <detail::boost_unindexed_graph G>
struct graph_adaptor<G> {
  static std::size_t vertex_count(const G& g) { return num_vertices(g); }
  template <class F>
  static void for_each_edge(const G& g, F&& f) {
    detail::boost_for_each_edge(g, detail::iteration_index<G>(g), f);
  }
  static std::string vertex_name(const G& g, std::size_t v) { return detail::boost_vertex_name(g, v); }
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
  if constexpr (detail::boost_indexed_graph<G>) return vertex_values(g, get(boost::vertex_index, g), map);
  else return vertex_values(g, detail::iteration_index<G>(g), map);
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
