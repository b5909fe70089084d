// The placers the gantry tool knows by name: `gantry place --algorithm NAME` runs one and
// `gantry compare` runs them all. A placer family adds its entries through one function.
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/single_device.hpp>
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

inline void add_baseline_algorithms(std::vector<algorithm_entry>& out) {
  out.push_back({"single-device", "every vertex on device 0: the baseline speed-ups are measured against",
                 [](const graph& g, const graph_model&, const cluster& c) { return single_device(g, c); }});
  out.push_back({"m-topo", "Baechi's m-TOPO: Kahn order, devices filled one by one up to a balanced cap",
                 [](const graph& g, const graph_model& m, const cluster& c) { return m_topo(g, m, c); }});
}

}  // namespace gantry::cli
