// Four SM partitions of one GPU share its memory bandwidth: DOPPLER's FFNN placed by m-ETF and
// simulated as independent devices, then with the partitions in one bandwidth domain, as measured
// on an H200 (one partition alone 1,186 GB/s, all four together 3,361 GB/s; docs/executors.md).
//
//          one GPU (HBM, 3.4 TB/s shared)
//   +---------+---------+---------+---------+
//   |   p0    |   p1    |   p2    |   p3    |   4 x 32 SMs, 12.9 TFLOP/s and 1.19 TB/s each alone
//   +---------+---------+---------+---------+
//
// Each vertex's time alone is its roofline on one partition (its FLOPs at 12.9 TFLOP/s or its
// bytes at 1,186 GB/s, whichever is longer, plus 10 us per kernel); the simulator slows the
// element-wise ops that stream gigabytes when several run at once.
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <algorithm>
#include <cstdio>

int main() {
  constexpr double flops_per_second = 12.9e12, bytes_per_second = 1.186e12, per_kernel = 10e-6;
  gantry::graph g = gantry::ffnn({.batch = 1 << 15, .hidden = 1 << 16});
  for (gantry::vertex_id v = 0; v < g.vertex_count(); ++v) {
    if (g[v].op == "input") continue;
    gantry::byte_count bytes = g[v].output;
    g.for_each_in_edge(v, [&](gantry::edge_id e) { bytes += g.bytes(e); });
    g[v].compute = per_kernel + std::max(g[v].flops / flops_per_second, static_cast<double>(bytes) / bytes_per_second);
  }

  auto partitions = gantry::cluster::uniform(4, gantry::unlimited_memory, {.latency = 8e-6, .bandwidth = 1.1e12});
  const gantry::graph_model alone_model(g, partitions);
  const auto placed = gantry::m_etf(g, alone_model, partitions);
  if (!placed) {
    std::printf("m-ETF failed: %s\n", placed.placement.outcome.message.c_str());
    return 1;
  }
  const auto& p = placed.placement;
  const auto one = gantry::single_device(g, partitions);
  const auto independent = gantry::simulate(g, alone_model, partitions, p.device, {.priority = p.order});

  partitions.add_domain({.name = "gpu0", .devices = {0, 1, 2, 3}, .bandwidth = 3.361e12});
  const gantry::graph_model shared_model(g, partitions);
  const auto shared = gantry::simulate(g, shared_model, partitions, p.device, {.priority = p.order});
  const auto single = gantry::simulate(g, shared_model, partitions, one.device, {.priority = one.order});

  std::printf("FFNN, %zu vertices, m-ETF on 4 partitions of one GPU:\n", g.vertex_count());
  std::printf("  m-ETF's own schedule (times alone)          %7.2f ms\n", placed.schedule.makespan * 1e3);
  std::printf("  simulated as independent partitions         %7.2f ms\n", independent.schedule.makespan * 1e3);
  std::printf("  simulated sharing 3.36 TB/s of bandwidth    %7.2f ms (%.2fx)\n", shared.schedule.makespan * 1e3,
              shared.schedule.makespan / independent.schedule.makespan);
  std::printf("  everything on one partition                 %7.2f ms\n", single.schedule.makespan * 1e3);
  return independent.ok() && shared.ok() && single.ok() ? 0 : 1;
}
