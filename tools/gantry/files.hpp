// Every file the tool reads or writes beyond its own text output: graphs (inputs.hpp:
// read_any_graph_file), clusters, placements, Chrome traces, Gantt charts and DOT. They are all
// compiled in one unit (files.cpp), so that the JSON readers and writers are compiled once rather
// than in every command's unit, which only see these declarations.
#pragma once

#include "inputs.hpp"

#include <gantry/io/documents.hpp>
#include <gantry/io/limits.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/schedule/schedule.hpp>

#include <string>

namespace gantry::cli {

// A cluster file (docs/format.md); throws parse_error naming the file and the position.
[[nodiscard]] cluster read_cluster_file(const std::string& path, const read_limits& limits);
// Writes `c` as a cluster file, atomically (gzip-compressed where the name ends in .gz).
void write_cluster_file(const std::string& path, const cluster& c);

// The cluster a placement file was made for.
[[nodiscard]] cluster read_placement_file_cluster(const std::string& path, const read_limits& limits);
// A placement file read against `g` and `c`; refuses a file that does not place every vertex.
[[nodiscard]] placement_file read_complete_placement(const std::string& path, const graph& g, const cluster& c,
                                                     const read_limits& limits);
// `p` as a placement document (JSON text).
[[nodiscard]] std::string placement_text(const graph& g, const cluster& c, const placement& p,
                                         const placement_json_options& options);

// A schedule as a Chrome trace (JSON text); with `memory_tracks`, a memory counter per device by the
// same rules as the reported peaks.
[[nodiscard]] std::string trace_text(const graph& g, const schedule& s, const cluster& c, bool memory_tracks);
// A schedule as an SVG Gantt chart headed by `title`.
[[nodiscard]] std::string gantt_text(const graph& g, const schedule& s, const cluster& c, const std::string& title);
// The graph as Graphviz DOT, vertices coloured by the device `p` puts them on.
[[nodiscard]] std::string dot_text(const graph& g, const cluster& c, const placement& p);

}  // namespace gantry::cli
