// The DOPPLER workloads (ChainMM, FFNN, Llama block, Llama layer) generated for a 4-GPU server, placed with
// m-TOPO and simulated against running everything on one GPU.
//
//   ChainMM, Fig. 1:   A[ij] B[ij]    D[ij] E[ij]
//                        \  /           \  /
//                   AB.matmul[ijg]  DE.matmul[ijg]   (8 block products per multiply)
//                         |             |
//                      AB.sum[ij]    DE.sum[ij]  C[ij]
//                         |               \      /
//                         |           CDE.matmul, CDE.sum
//                          \               /
//                           out.add[ij] (4 blocks)
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <cstdio>
#include <string>

namespace {

void report(const char* name, const gantry::graph& g, const gantry::cluster& gpus) {
  double flops = 0;
  gantry::seconds work = 0;
  gantry::byte_count bytes = 0;
  for (const auto& v : g.vertices()) {
    flops += v.flops;
    work += v.compute;
  }
  for (gantry::edge_id e = 0; e < g.edge_count(); ++e) bytes += g.bytes(e);

  const gantry::graph_model model(g, gpus);
  const auto critical_path = gantry::compute_levels(g, model, gpus).critical_path;
  const auto one = gantry::single_device(g, gpus);
  const auto alone = gantry::simulate(g, model, gpus, one.device, {.priority = one.order});
  const auto placed = gantry::m_topo(g, model, gpus);
  if (placed.outcome.code != gantry::status::ok) {
    std::printf("%-12s m-TOPO failed: %s\n", name, placed.outcome.message.c_str());
    return;
  }
  const auto spread = gantry::simulate(g, model, gpus, placed.device, {.priority = placed.order});
  std::printf(
      "%-12s %4zu vertices %4zu edges  %8.2f TFLOP  %7.1f GB on edges  work %7.1f ms  "
      "critical path %6.1f ms  1 GPU %7.1f ms  m-TOPO on %zu GPUs %7.1f ms (%.2fx)\n",
      name, g.vertex_count(), g.edge_count(), flops / 1e12, static_cast<double>(bytes) / 1e9, work * 1e3,
      critical_path * 1e3, alone.schedule.makespan * 1e3, gpus.device_count(), spread.schedule.makespan * 1e3,
      alone.schedule.makespan / spread.schedule.makespan);
}

}  // namespace

int main() {
  // An A100-like GPU for fp32 (19.5 TFLOP/s, 10 us per kernel), fp32 tensors, and 4 GPUs
  // connected by 100 GB/s links.
  const gantry::workload_device a100{.flops_per_second = 19.5e12, .op_overhead = 1e-5, .element_bytes = 4};
  const auto gpus = gantry::cluster::uniform(4, gantry::unlimited_memory, {.latency = 5e-6, .bandwidth = 100e9});

  report("ChainMM", gantry::chain_mm({.device = a100}), gpus);
  report("ChainMM 4w", gantry::chain_mm({.inner_split = 1, .device = a100}), gpus);
  report("FFNN", gantry::ffnn({.device = a100}), gpus);
  report("Llama block", gantry::llama_block({.device = a100}), gpus);
  report("Llama layer", gantry::llama_layer({.block = {.device = a100}}), gpus);
  return 0;
}
