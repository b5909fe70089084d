// The tool's file formats (files.hpp): the only unit of the tool that compiles gantry's JSON
// readers and writers, its trace, Gantt and DOT writers.
#include "files.hpp"

#include <gantry/graph/snapshot.hpp>
#include <gantry/io/chrome_trace.hpp>
#include <gantry/io/dot.hpp>
#include <gantry/io/import_pipedream.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/io/json_placement.hpp>
#include <gantry/io/svg_gantt.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/memory_curve.hpp>

#include <string>
#include <string_view>

namespace gantry::cli {

graph_file read_any_graph_file(const std::string& path, const graph_reading& how, const read_limits& limits) {
  if (how.format != "auto" && how.format != "gantry" && how.format != "pipedream")
    throw invalid_input("unknown graph format '" + how.format + "' (expected auto, gantry or pipedream)");
  return detail::with_text_file(path, limits, [&](std::string_view text) -> graph_file {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
      throw parse_error(path +
                        ": the file is empty (expected a gantry graph JSON document or a PipeDream graph.txt "
                        "profile)");
    if (how.format == "pipedream" || (how.format == "auto" && looks_like_pipedream(text)))
      return {parse_graph_pipedream(text, path,
                                    {.zero_input_time = !how.keep_input_time, .weight_factor = how.weight_factor}),
              {}};
    return parse_graph_file(text, path, limits);
  });
}

cluster cluster_flags::make(const read_limits& limits) const {
  if (!cluster_file.empty()) return read_cluster(cluster_file, limits);
  if (devices == 0) throw invalid_input("give --devices N (N >= 1) or --cluster FILE");
  const byte_count capacity = cli::size_option("--memory", memory, true);
  const link_model link{cli::duration_option("--latency", latency), cli::rate_option("--bandwidth", bandwidth, true)};
  const comm_mode mode = parse_enum_name<comm_mode>(comm, "--comm");
  return cluster::uniform(devices, capacity, link, mode);
}

cluster read_cluster_file(const std::string& path, const read_limits& limits) { return read_cluster(path, limits); }

void write_cluster_file(const std::string& path, const cluster& c) { write_cluster(path, c); }

cluster read_placement_file_cluster(const std::string& path, const read_limits& limits) {
  return read_placement_cluster(path, limits);
}

placement_file read_complete_placement(const std::string& path, const graph& g, const cluster& c,
                                       const read_limits& limits) {
  auto file = read_placement(path, g, c, limits);
  require_complete_placement(file, path);
  return file;
}

std::string placement_text(const graph& g, const cluster& c, const placement& p,
                           const placement_json_options& options) {
  return placement_to_json_text(g, c, p, options);
}

std::string trace_text(const graph& g, const schedule& s, const cluster& c, bool memory_tracks) {
  if (!memory_tracks) return chrome_trace_text(g, s, {.devices = &c});
  const memory_curve memory =
      compute_memory_curve(snapshot(g), s, graph_model(g, c), detail::schedule_device_count(s, c.device_count()));
  return chrome_trace_text(g, s, {.devices = &c, .memory = &memory});
}

std::string gantt_text(const graph& g, const schedule& s, const cluster& c, const std::string& title) {
  return svg_gantt(g, s, {.devices = &c, .title = title});
}

std::string dot_text(const graph& g, const cluster& c, const placement& p) {
  return to_dot(g, {.device = p.device, .devices = &c});
}

}  // namespace gantry::cli
