// Your own graph type, adapted in a few lines, placed with m-TOPO and simulated on 4 devices.
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
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

// The user's types: nothing gantry-specific in them.
struct layer {
  std::string name;
  double milliseconds;  // compute time
  double weights_mb;    // parameters, held for the whole step
  double output_mb;     // activation passed to the next layers
};
struct my_net {
  std::vector<layer> layers;
  std::vector<std::pair<int, int>> wires;  // (from, to) indices into layers
};

// All gantry needs to read my_net.
template <>
struct gantry::graph_adaptor<my_net> {
  static std::size_t vertex_count(const my_net& net) { return net.layers.size(); }
  template <class F>
  static void for_each_edge(const my_net& net, F&& f) {
    for (const auto& [from, to] : net.wires) f(static_cast<std::size_t>(from), static_cast<std::size_t>(to));
  }
  static std::string vertex_name(const my_net& net, std::size_t v) { return net.layers[v].name; }
};

namespace {

constexpr double mb = 1 << 20;

my_net build_net() {
  my_net net;
  net.layers = {{"tokens", 0.1, 0, 8},   {"embed", 2.0, 400, 64}, {"head0", 6.0, 300, 64},
                {"head1", 6.0, 300, 64}, {"head2", 6.0, 300, 64}, {"head3", 6.0, 300, 64},
                {"concat", 0.5, 0, 256}, {"mlp", 8.0, 1200, 64},  {"logits", 3.0, 600, 16}};
  net.wires = {{0, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {2, 6}, {3, 6}, {4, 6}, {5, 6}, {6, 7}, {7, 8}};
  return net;
}

// Per-vertex and per-edge numbers for gantry's array_model; an edge carries its source's output.
gantry::array_model model_of(const my_net& net, const gantry::cluster& devices) {
  std::vector<gantry::seconds> compute;
  std::vector<gantry::byte_count> weights, outputs, edge_bytes;
  for (const auto& l : net.layers) {
    compute.push_back(l.milliseconds / 1000);
    weights.push_back(static_cast<gantry::byte_count>(l.weights_mb * mb));
    outputs.push_back(static_cast<gantry::byte_count>(l.output_mb * mb));
  }
  for (const auto& [from, to] : net.wires) edge_bytes.push_back(outputs[static_cast<std::size_t>(from)]);
  return gantry::array_model(devices, std::move(compute), std::move(edge_bytes), std::move(weights),
                             std::move(outputs));
}

void report(const char* title, const my_net& net, const gantry::placement& p, const gantry::simulation_result& run) {
  std::printf("%s\n", title);
  for (gantry::device_id d = 0; d < run.schedule.device_count(); ++d) {
    std::string names;
    for (const auto v : run.schedule.order[d]) names += (names.empty() ? "" : ", ") + net.layers[v].name;
    std::printf("  d%u  peak %7.1f MB  busy %5.1f ms  %s\n", d, static_cast<double>(run.schedule.peak_memory[d]) / mb,
                run.schedule.busy[d] * 1000, names.empty() ? "-" : names.c_str());
  }
  std::printf("  makespan %.2f ms, %.1f MB moved in %zu transfers (placement order: %zu vertices)\n\n",
              run.schedule.makespan * 1000, static_cast<double>(run.schedule.bytes_moved) / mb,
              run.schedule.transfers.size(), p.order.size());
}

}  // namespace

int main() {
  const my_net net = build_net();
  // Four 2 GB devices; each link costs 20 us + bytes at 12 GB/s, one transfer per device at a time.
  const auto devices = gantry::cluster::uniform(4, 2048 * static_cast<gantry::byte_count>(mb),
                                                {.latency = 20e-6, .bandwidth = 12e9}, gantry::comm_mode::sequential);
  const auto model = model_of(net, devices);

  const auto spread = gantry::m_topo(net, model, devices);
  if (!spread) {
    std::printf("m-TOPO failed: %s\n", spread.outcome.message.c_str());
    return 1;
  }
  const auto run = gantry::simulate(net, model, devices, spread.device, {.priority = spread.order});
  if (!run) {
    std::printf("simulation failed: %s\n", run.outcome.message.c_str());
    return 1;
  }
  if (const auto check = gantry::validate(run.schedule, net, model, devices); !check) {
    std::printf("invalid schedule:\n%s", check.to_string().c_str());
    return 1;
  }
  report("m-TOPO on 4 devices", net, spread, run);

  // The same net on one device, for comparison: no transfers, but all weights in one place.
  const auto alone = gantry::single_device(net, devices);
  const auto baseline = gantry::simulate(net, model, devices, alone.device, {.priority = alone.order});
  if (baseline) report("single device", net, alone, baseline);
  else std::printf("single device does not fit: %s\n", baseline.outcome.message.c_str());
  return 0;
}
