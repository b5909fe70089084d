// The placers the gantry tool knows by name: `gantry place --algorithm NAME` runs one and
// `gantry compare` runs them all. A placer family adds its entries through one function.
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/schedule.hpp>

#include <functional>
#include <string>
#include <vector>

namespace gantry::cli {

struct algorithm_entry {
  std::string name;         // as typed on the command line, e.g. "m-topo"
  std::string description;  // one line for --help
  std::function<placement(const graph&, const graph_model&, const cluster&)> place;
};

}  // namespace gantry::cli
