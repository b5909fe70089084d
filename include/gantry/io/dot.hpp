// Graphviz DOT of a gantry::graph: a box per vertex labelled with its name and compute time, edges
// labelled with their bytes, and, when a placement is given, vertices filled with the colour of
// their device plus a legend. Every name is escaped, so any text renders as written.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/markup.hpp>
#include <gantry/model/cluster.hpp>

#include <algorithm>
#include <filesystem>
#include <span>
#include <string>

namespace gantry {

struct dot_options {
  std::span<const device_id> device{};  // one per vertex: colours vertices by device (empty: no colours)
  const cluster* devices = nullptr;     // names the devices in labels and the legend ("d0", ... otherwise)
  bool edge_bytes = true;               // label edges with their size
  bool forward_pairs = false;           // a dotted arrow from each backward vertex to its forward vertex
  bool left_to_right = false;           // rankdir=LR instead of top to bottom
  std::string graph_name = "gantry";
};

// The DOT text of g. Throws invalid_input when options.device has the wrong size.
[[nodiscard]] inline std::string to_dot(const graph& g, const dot_options& options = {}) {
  const std::size_t n = g.vertex_count();
  const bool placed = !options.device.empty();
  if (placed && options.device.size() != n)
    throw invalid_input("to_dot: " + std::to_string(options.device.size()) + " devices given for " + std::to_string(n) +
                        " vertices");
  const auto device_name = [&](device_id d) {
    if (options.devices != nullptr && d < options.devices->device_count()) return (*options.devices)[d].name;
    return "d" + std::to_string(d);
  };
  std::string out = "digraph \"" + detail::dot_escape(options.graph_name) + "\" {\n";
  if (options.left_to_right) out += "  rankdir=LR;\n";
  out += "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f4f4f4\", fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
  for (vertex_id v = 0; v < n; ++v) {
    const auto& p = g[v];
    std::string label =
        detail::dot_escape(p.name.empty() ? "#" + std::to_string(v) : p.name) + "\\n" + format_seconds(p.compute);
    std::string attributes;
    if (placed && options.device[v] != no_device) {
      label += "\\n" + detail::dot_escape(device_name(options.device[v]));
      attributes = ", fillcolor=\"" + detail::device_colour(options.device[v]) + "\"";
    }
    std::string tooltip = detail::dot_escape(p.name);
    if (!p.op.empty()) tooltip += "\\n" + detail::dot_escape(p.op);
    if (p.output != 0) tooltip += "\\noutput " + format_bytes(p.output);
    if (p.persistent != 0) tooltip += "\\npersistent " + format_bytes(p.persistent);
    out += "  v" + std::to_string(v) + " [label=\"" + label + "\", tooltip=\"" + tooltip + "\"" + attributes + "];\n";
  }
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    out += "  v" + std::to_string(g.source(e)) + " -> v" + std::to_string(g.target(e));
    if (options.edge_bytes && g.bytes(e) != 0) out += " [label=\"" + format_bytes(g.bytes(e)) + "\"]";
    out += ";\n";
  }
  if (options.forward_pairs)
    for (vertex_id v = 0; v < n; ++v)
      if (const vertex_id f = g.forward_of(v); f != no_vertex)
        out += "  v" + std::to_string(v) + " -> v" + std::to_string(f) +
               " [style=dotted, arrowhead=empty, constraint=false, color=\"#999999\"];\n";
  if (placed) {
    device_id used = 0;
    for (const device_id d : options.device)
      if (d != no_device) used = std::max(used, d + 1);
    if (options.devices != nullptr)
      used = std::max<device_id>(used, static_cast<device_id>(options.devices->device_count()));
    out += "  subgraph cluster_legend {\n    label=\"devices\";\n    fontname=\"Helvetica\";\n    fontsize=10;\n";
    for (device_id d = 0; d < used; ++d)
      out += "    legend" + std::to_string(d) + " [label=\"" + detail::dot_escape(device_name(d)) + "\", fillcolor=\"" +
             detail::device_colour(d) + "\"];\n";
    out += "  }\n";
  }
  out += "}\n";
  return out;
}

// Writes the DOT text of g atomically.
inline void write_dot(const std::filesystem::path& path, const graph& g, const dot_options& options = {}) {
  save_text_file(path, to_dot(g, options));
}

}  // namespace gantry
