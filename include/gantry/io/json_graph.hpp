// Reading and writing gantry::graph as a "gantry.graph" JSON document (docs/format.md): vertices
// with compute times (one, or per device kind), memory, colocation groups and forward/backward
// pairs; edges with tensor bytes; free-form metadata. Files may be gzip-compressed.
// Bad input throws parse_error naming the file, the position and the reason; the reader never
// trusts the input (cycles, duplicate names and unknown references are all reported).
// The definitions are in io/impl/json_graph.hpp, included at the end of this header or, with
// GANTRY_SEPARATE_COMPILATION, compiled once (gantry/compiled.hpp).
#pragma once

#include <gantry/core/config.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/io/documents.hpp>
#include <gantry/io/limits.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace gantry {

inline constexpr std::string_view graph_format_name = "gantry.graph";
inline constexpr int graph_format_version = 1;

// A graph file (graph_file, io/documents.hpp): the graph and the document's "metadata" object (an
// empty object when absent).

// Builds a graph from a parsed "gantry.graph" document. `source_name` prefixes every message.
[[nodiscard]] GANTRY_DECL graph_file graph_from_json(const nlohmann::json& document,
                                                     std::string_view source_name = "<json>");

// Parses "gantry.graph" JSON text. `source_name` (a file name) prefixes every message.
// Well-formed documents take a fast path without a JSON tree; anything it does not read goes
// through the checked reader, so every error message is the same either way.
[[nodiscard]] GANTRY_DECL graph_file parse_graph_file(std::string_view text, std::string_view source_name = "<string>",
                                                      const read_limits& limits = {});

// The graph in "gantry.graph" JSON text, without its metadata.
[[nodiscard]] GANTRY_DECL graph read_graph_json(std::string_view text, std::string_view source_name = "<string>");

// Reads a graph file, gzip-compressed or not (recognised by content). Throws io_error when the
// file cannot be read and parse_error when its content is wrong.
[[nodiscard]] GANTRY_DECL graph_file read_graph_file(const std::filesystem::path& path, const read_limits& limits = {});

// Reads a graph file's graph (see read_graph_file).
[[nodiscard]] GANTRY_DECL graph read_graph(const std::filesystem::path& path, const read_limits& limits = {});

// The "gantry.graph" document of g. Vertex names must be non-empty, unique and valid UTF-8 (the
// file refers to vertices by name); throws invalid_input otherwise. Fields with default values
// (zero bytes, no group) are left out; compute and edge bytes are always written.
[[nodiscard]] GANTRY_DECL nlohmann::ordered_json graph_to_json(
    const graph& g, const nlohmann::json& metadata = nlohmann::json::object());

// The "gantry.graph" JSON text of g, one vertex and one edge per line: the document and layout of
// detail::document_text(graph_to_json(g)), written directly instead of through a JSON tree.
[[nodiscard]] GANTRY_DECL std::string graph_to_json_text(const graph& g,
                                                         const nlohmann::json& metadata = nlohmann::json::object());

// Writes g to `path` atomically, gzip-compressed when the path ends in ".gz".
GANTRY_DECL void write_graph(const std::filesystem::path& path, const graph& g,
                             const nlohmann::json& metadata = nlohmann::json::object());
// Writes a graph file's graph and metadata (see above).
GANTRY_DECL void write_graph(const std::filesystem::path& path, const graph_file& file);

}  // namespace gantry

#if !defined(GANTRY_SEPARATE_COMPILATION)
#include <gantry/io/impl/json_graph.hpp>
#endif
