// Reading and writing gantry::graph as a "gantry.graph" JSON document (docs/format.md): vertices
// with compute times (one, or per device kind), memory, colocation groups and forward/backward
// pairs; edges with tensor bytes; free-form metadata. Files may be gzip-compressed.
// Bad input throws parse_error naming the file, the position and the reason; the reader never
// trusts the input (cycles, duplicate names and unknown references are all reported).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/json_support.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gantry {

inline constexpr std::string_view graph_format_name = "gantry.graph";
inline constexpr int graph_format_version = 1;

// A graph file: the graph and the document's "metadata" object (an empty object when absent).
struct graph_file {
  gantry::graph graph;
  nlohmann::json metadata = nlohmann::json::object();
};

namespace detail {

// Reads one vertex's "compute": a number (seconds), or {"default": t, "<kind>": t, ...}.
inline void read_compute(const json_reader& in, const nlohmann::json& value, const std::string& pointer,
                         vertex_properties& properties, std::vector<std::pair<std::string, seconds>>& kinds) {
  if (!value.is_object()) {
    properties.compute = in.time(value, pointer, "compute time");
    return;
  }
  if (json_reader::find(value, "default") == nullptr)
    in.fail(pointer, "missing field \"default\" (per-kind compute times need a default for other device kinds)");
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it->is_null()) continue;
    const seconds t = in.time(*it, pointer_to(pointer, it.key()), "compute time");
    if (it.key() == "default") properties.compute = t;
    else kinds.emplace_back(it.key(), t);
  }
}

// The edge id of some edge a -> b in g (the one that closes a reported cycle).
inline edge_id find_edge(const graph& g, vertex_id a, vertex_id b) {
  edge_id found = no_edge;
  g.for_each_out_edge(a, [&](edge_id e) {
    if (found == no_edge && g.target(e) == b) found = e;
  });
  return found;
}

}  // namespace detail

// Builds a graph from a parsed "gantry.graph" document. `source_name` prefixes every message.
[[nodiscard]] inline graph_file graph_from_json(const nlohmann::json& document, std::string_view source_name = "<json>") {
  const detail::json_reader in{std::string(source_name)};
  in.header(document, graph_format_name, graph_format_version);
  graph_file file;
  if (const auto* metadata = detail::json_reader::find(document, "metadata")) file.metadata = in.object(*metadata, "/metadata");

  const auto& vertices = in.array(in.require(document, "vertices", ""), "/vertices");
  const auto* edges = detail::json_reader::find(document, "edges");
  if (edges != nullptr) in.array(*edges, "/edges");
  graph& g = file.graph;
  g.reserve(vertices.size(), edges != nullptr ? edges->size() : 0);

  std::unordered_map<std::string, vertex_id> by_name;
  by_name.reserve(vertices.size());
  std::vector<std::pair<vertex_id, const nlohmann::json*>> forwards;
  std::vector<std::pair<std::string, seconds>> kinds;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const std::string at = detail::pointer_to("/vertices", i);
    const auto& vertex = in.object(vertices[i], at);
    vertex_properties properties;
    properties.name = in.name(in.require(vertex, "name", at), detail::pointer_to(at, "name"));
    kinds.clear();
    if (const auto* compute = detail::json_reader::find(vertex, "compute"))
      detail::read_compute(in, *compute, detail::pointer_to(at, "compute"), properties, kinds);
    if (const auto* bytes = detail::json_reader::find(vertex, "persistent"))
      properties.persistent = in.bytes(*bytes, detail::pointer_to(at, "persistent"));
    if (const auto* bytes = detail::json_reader::find(vertex, "output"))
      properties.output = in.bytes(*bytes, detail::pointer_to(at, "output"));
    if (const auto* bytes = detail::json_reader::find(vertex, "temporary"))
      properties.temporary = in.bytes(*bytes, detail::pointer_to(at, "temporary"));
    if (const auto* group = detail::json_reader::find(vertex, "group"))
      properties.group = in.string(*group, detail::pointer_to(at, "group"));
    if (const auto* op = detail::json_reader::find(vertex, "op")) properties.op = in.string(*op, detail::pointer_to(at, "op"));
    if (const auto* flops = detail::json_reader::find(vertex, "flops")) {
      properties.flops = in.number(*flops, detail::pointer_to(at, "flops"));
      if (!std::isfinite(properties.flops) || properties.flops < 0)
        in.fail(detail::pointer_to(at, "flops"), "flops must be a finite number >= 0, got " + detail::describe_json(*flops));
    }
    const auto [existing, inserted] = by_name.try_emplace(properties.name, static_cast<vertex_id>(i));
    if (!inserted)
      in.fail(detail::pointer_to(at, "name"), "duplicate vertex name \"" + properties.name + "\" (also at " +
                                                  detail::pointer_to("/vertices", existing->second) + ")");
    const vertex_id v = g.add_vertex(std::move(properties));
    for (const auto& [kind, time] : kinds) g.set_compute(v, kind, time);
    if (const auto* forward = detail::json_reader::find(vertex, "forward")) forwards.emplace_back(v, forward);
  }

  for (const auto& [backward, forward] : forwards) {
    const std::string at = detail::pointer_to(detail::pointer_to("/vertices", backward), "forward");
    const std::string name = in.name(*forward, at);
    const auto it = by_name.find(name);
    if (it == by_name.end()) in.fail(at, "unknown vertex \"" + name + "\" (no vertex has this name)");
    if (it->second == backward) in.fail(at, "vertex \"" + name + "\" names itself as its forward vertex");
    g.set_forward(backward, it->second);
  }

  if (edges != nullptr) {
    const auto endpoint = [&](const nlohmann::json& edge, std::string_view key, const std::string& at) {
      const std::string field = detail::pointer_to(at, key);
      const auto& value = in.require(edge, key, at);
      if (!value.is_string()) in.fail(field, "expected a vertex name, got " + detail::describe_json(value));
      const auto it = by_name.find(value.get_ref<const std::string&>());
      if (it == by_name.end())
        in.fail(field, "unknown vertex \"" + value.get<std::string>() + "\" (no vertex has this name)");
      return it->second;
    };
    for (std::size_t i = 0; i < edges->size(); ++i) {
      const std::string at = detail::pointer_to("/edges", i);
      const auto& edge = in.object((*edges)[i], at);
      const vertex_id from = endpoint(edge, "from", at);
      const vertex_id to = endpoint(edge, "to", at);
      byte_count bytes = 0;
      if (const auto* b = detail::json_reader::find(edge, "bytes")) bytes = in.bytes(*b, detail::pointer_to(at, "bytes"));
      g.add_edge(from, to, bytes);
    }
  }

  if (const auto overflow = detail::find_byte_overflow(g))
    in.fail(detail::pointer_to(overflow->at_vertex ? "/vertices" : "/edges", overflow->index),
            detail::byte_overflow_reason());
  if (const auto cycle = snapshot(g).find_cycle(); !cycle.empty()) {
    const edge_id closing = detail::find_edge(g, cycle.back(), cycle.front());
    in.fail("/edges", "the graph has a cycle: " + describe_cycle(g, cycle) + " (the edge " +
                          detail::pointer_to("/edges", closing) + " closes it)");
  }
  return file;
}

// Parses "gantry.graph" JSON text. `source_name` (a file name) prefixes every message.
[[nodiscard]] inline graph_file parse_graph_file(std::string_view text, std::string_view source_name = "<string>",
                                                const read_limits& limits = {}) {
  return graph_from_json(detail::parse_json_text(text, source_name, limits.max_nesting), source_name);
}

// The graph in "gantry.graph" JSON text, without its metadata.
[[nodiscard]] inline graph read_graph_json(std::string_view text, std::string_view source_name = "<string>") {
  return parse_graph_file(text, source_name).graph;
}

// Reads a graph file, gzip-compressed or not (recognised by content). Throws io_error when the
// file cannot be read and parse_error when its content is wrong.
[[nodiscard]] inline graph_file read_graph_file(const std::filesystem::path& path, const read_limits& limits = {}) {
  return parse_graph_file(read_text_file(path, limits), path.string(), limits);
}

// Reads a graph file's graph (see read_graph_file).
[[nodiscard]] inline graph read_graph(const std::filesystem::path& path, const read_limits& limits = {}) {
  return read_graph_file(path, limits).graph;
}

// The "gantry.graph" document of g. Vertex names must be non-empty, unique and valid UTF-8 (the
// file refers to vertices by name); throws invalid_input otherwise. Fields with default values
// (zero bytes, no group) are left out; compute and edge bytes are always written.
[[nodiscard]] inline nlohmann::ordered_json graph_to_json(const graph& g, const nlohmann::json& metadata = nlohmann::json::object()) {
  if (!metadata.is_object() && !metadata.is_null())
    throw invalid_input("graph_to_json: metadata must be a JSON object, got " + detail::describe_json(metadata));
  std::unordered_map<std::string_view, vertex_id> seen;
  seen.reserve(g.vertex_count());
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const std::string& name = g[v].name;
    if (name.empty())
      throw invalid_input("graph_to_json: vertex " + std::to_string(v) + " has no name (a graph file refers to vertices by name)");
    if (const std::string problem = detail::utf8_problem(name); !problem.empty())
      throw invalid_input("graph_to_json: the name of vertex " + std::to_string(v) + " is not valid UTF-8 (" + problem +
                          "); JSON strings must be");
    if (const auto [it, inserted] = seen.try_emplace(name, v); !inserted)
      throw invalid_input("graph_to_json: vertices " + std::to_string(it->second) + " and " + std::to_string(v) +
                          " are both named '" + name + "' (names in a graph file must be unique)");
  }

  nlohmann::ordered_json document;
  document["format"] = graph_format_name;
  document["version"] = graph_format_version;
  document["metadata"] = metadata.is_null() ? nlohmann::ordered_json::object() : nlohmann::ordered_json(metadata);
  auto& vertices = document["vertices"] = nlohmann::ordered_json::array();
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& p = g[v];
    nlohmann::ordered_json vertex;
    vertex["name"] = p.name;
    const auto kinds = g.kind_times(v);
    if (kinds.empty()) {
      vertex["compute"] = p.compute;
    } else {
      auto& compute = vertex["compute"] = {{"default", p.compute}};
      for (const auto& [kind, time] : kinds) compute[kind] = time;
    }
    if (p.persistent != 0) vertex["persistent"] = p.persistent;
    if (p.output != 0) vertex["output"] = p.output;
    if (p.temporary != 0) vertex["temporary"] = p.temporary;
    if (!p.group.empty()) vertex["group"] = p.group;
    if (const vertex_id f = g.forward_of(v); f != no_vertex) vertex["forward"] = g[f].name;
    if (!p.op.empty()) vertex["op"] = p.op;
    if (p.flops != 0) vertex["flops"] = detail::finite_number(p.flops, "graph_to_json: flops of vertex '" + p.name + "'");
    vertices.push_back(std::move(vertex));
  }
  auto& edges = document["edges"] = nlohmann::ordered_json::array();
  for (edge_id e = 0; e < g.edge_count(); ++e)
    edges.push_back({{"from", g[g.source(e)].name}, {"to", g[g.target(e)].name}, {"bytes", g.bytes(e)}});
  return document;
}

// The "gantry.graph" JSON text of g, one vertex and one edge per line.
[[nodiscard]] inline std::string graph_to_json_text(const graph& g, const nlohmann::json& metadata = nlohmann::json::object()) {
  return detail::document_text(graph_to_json(g, metadata), "graph_to_json");
}

// Writes g to `path` atomically, gzip-compressed when the path ends in ".gz".
inline void write_graph(const std::filesystem::path& path, const graph& g,
                        const nlohmann::json& metadata = nlohmann::json::object()) {
  save_text_file(path, detail::content_for(path, [&] { return graph_to_json_text(g, metadata); }));
}
inline void write_graph(const std::filesystem::path& path, const graph_file& file) {
  write_graph(path, file.graph, file.metadata);
}

}  // namespace gantry
