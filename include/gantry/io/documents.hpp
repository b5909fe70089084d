// What gantry's readers return and its writers take, without the readers and writers: a graph
// file with its metadata (io/json_graph.hpp), a placement file and the options of a placement
// document (io/json_placement.hpp). A unit that only passes these around includes this header
// and leaves the JSON parsing and printing to the unit that reads and writes.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/schedule/schedule.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace gantry {

// A graph with the metadata its file carried ("metadata": free-form JSON, e.g. how it was profiled).
struct graph_file {
  gantry::graph graph;
  nlohmann::json metadata = nlohmann::json::object();
};

struct placement_json_options {
  std::string algorithm{};                             // written as "algorithm", e.g. "m-topo"
  const gantry::schedule* schedule = nullptr;          // when set: makespan, per-device summary, vertex times
  nlohmann::json metadata = nlohmann::json::object();  // written as "metadata" when not empty
};

// What a placement file holds, with names mapped to the ids of the graph and cluster it was read
// against.
struct placement_file {
  std::string algorithm;
  gantry::placement placement;
  std::optional<seconds> makespan;  // when the file has a schedule summary
  nlohmann::json metadata = nlohmann::json::object();
};

}  // namespace gantry
