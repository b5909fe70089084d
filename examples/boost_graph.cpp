// A Boost.Graph adjacency_list used as it is: bundled properties become gantry's dense vectors
// through vertex_values() / edge_values(), feed an array_model, and the graph is placed with
// m-TOPO and simulated on 4 devices.
//
//                 tokens
//                   |
//                 embed
//         .-----.---+---.-----.
//       head0 head1   head2 head3     (attention heads, 64 MB out each)
//         '-----'---+---'-----'
//                 concat
//                   |
//                  mlp               (1.2 GB of weights)
//                   |
//                 logits
#include <gantry/graph/boost.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <boost/graph/adjacency_list.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr gantry::byte_count mb = 1 << 20;

struct op {
  std::string name;
  double seconds = 0;
  gantry::byte_count weights = 0, output = 0;
};
struct tensor {
  gantry::byte_count bytes = 0;
};
using net = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, op, tensor>;

net build_net() {
  net g;
  const auto add = [&](const char* name, double ms, gantry::byte_count weights_mb, gantry::byte_count output_mb) {
    return boost::add_vertex(op{name, ms / 1000, weights_mb * mb, output_mb * mb}, g);
  };
  const auto wire = [&](auto from, auto to) { boost::add_edge(from, to, tensor{g[from].output}, g); };
  const auto tokens = add("tokens", 0.1, 0, 8), embed = add("embed", 2.0, 400, 64);
  const auto concat_op = add("concat", 0.5, 0, 256), mlp = add("mlp", 8.0, 1200, 64),
             logits = add("logits", 3.0, 600, 16);
  wire(tokens, embed);
  for (int h = 0; h < 4; ++h) {
    const auto head = add(("head" + std::to_string(h)).c_str(), 6.0, 300, 64);
    wire(embed, head);
    wire(head, concat_op);
  }
  wire(concat_op, mlp);
  wire(mlp, logits);
  return g;
}

}  // namespace

int main() {
  const net g = build_net();
  const auto devices =
      gantry::cluster::uniform(4, 2048 * mb, {.latency = 20e-6, .bandwidth = 12e9}, gantry::comm_mode::sequential);
  // Property maps -> dense vectors indexed the way gantry numbers Boost's vertices and edges.
  const gantry::array_model model(
      devices, gantry::vertex_values(g, get(&op::seconds, g)), gantry::edge_values(g, get(&tensor::bytes, g)),
      gantry::vertex_values(g, get(&op::weights, g)), gantry::vertex_values(g, get(&op::output, g)));

  const auto placed = gantry::m_topo(g, model, devices);
  if (!placed) {
    std::printf("m-TOPO failed: %s\n", placed.outcome.message.c_str());
    return 1;
  }
  const auto run = gantry::simulate(g, model, devices, placed.device, {.priority = placed.order});
  if (!run) {
    std::printf("simulation failed: %s\n", run.outcome.message.c_str());
    return 1;
  }
  if (const auto check = gantry::validate(run.schedule, g, model, devices); !check) {
    std::printf("invalid schedule:\n%s", check.to_string().c_str());
    return 1;
  }
  std::printf("m-TOPO on 4 devices (Boost adjacency_list, %zu vertices, %zu edges)\n", boost::num_vertices(g),
              boost::num_edges(g));
  for (gantry::device_id d = 0; d < devices.device_count(); ++d) {
    std::string names;
    for (const auto v : run.schedule.order[d]) names += (names.empty() ? "" : ", ") + g[v].name;
    std::printf("  %s  peak %7.1f MB  %s\n", devices[d].name.c_str(),
                static_cast<double>(run.schedule.peak_memory[d]) / static_cast<double>(mb),
                names.empty() ? "-" : names.c_str());
  }
  std::printf("  makespan %.2f ms, %.1f MB moved\n", run.schedule.makespan * 1000,
              static_cast<double>(run.schedule.bytes_moved) / static_cast<double>(mb));
  return 0;
}
