// What the list-scheduling engine's contention-free estimates cost in placement quality, on
// DOPPLER's workloads (ChainMM, FFNN, the Llama block and layer; workloads/doppler.hpp) on 4 SM
// partitions of one H200 that share its memory, with the rates measured there (docs/executors.md):
// a partition multiplies at 12.7 TFLOP/s and streams 1,186 GB/s alone, all four draw 3,361 GB/s in
// all, and a copy between partitions takes 6.69 us + bytes / 1.33 TB/s and draws on the same
// memory. A vertex's time alone is the roofline max(flops / 12.7 TFLOP/s, bytes / 1,186 GB/s)
// + 10 us (a launch), its bytes its operands and its output.
// Every registry placer places each graph with the engine's times alone (docs/algorithms.md,
// "Shared memory bandwidth"); each placement is then judged by the simulator twice: with the
// partitions independent (what the engine assumes) and sharing the domain (what the GPU does: the
// shared simulation predicted measured FFNN runs within 10% and the Llama block's within 2%, the
// independent one within 57% and 4%). Reported as ratios to a lower bound of the shared machine
// (the larger of the critical-path and work bounds and of every vertex's bytes over the domain's
// bandwidth), all judged sharing the domain:
//   - the placement the independent judge ranks first among the placers, and the one the shared
//     judge ranks first (what choosing with the right simulator buys);
//   - local search (place/local_search.hpp) from the placers' best, once with the independent
//     simulation as its judge and once with the shared one: the same search, told of the domain or
//     not (what the engine's estimates cost, past what search alone finds);
//   - the whole graph on one partition (nothing shared, nothing copied).
// Usage: bench_shared_placement [max simulations per local search, default 3000]
#include "bench_support.hpp"

#include <gantry/exec/accuracy.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/order/lower_bound.hpp>
#include <gantry/place/local_search.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

using namespace gantry;

namespace {

constexpr std::size_t partitions = 4;
constexpr double flops_per_second = 12.7e12;            // cuBLAS SGEMM on 32 SMs of an H200
constexpr double alone_bandwidth = 1.186e12;            // a bandwidth-bound sum on one partition alone
constexpr double domain_bandwidth = 3.361e12;           // the same on all four at once, in all
constexpr seconds launch = 10e-6;                       // per kernel
constexpr link_model partition_link{6.69e-6, 1.33e12};  // gantry-cuda calibrate, 2026-11-27

// The bytes each vertex moves through its device's memory, by the simulator's own rule
// (detail::traffic_bytes: its operands and its output).
std::vector<byte_count> traffic(const graph& g) {
  const cluster any = cluster::uniform(1);
  const graph_model model(g, any);
  const detail::csr_view<graph> view(g);
  std::vector<byte_count> out(g.vertex_count());
  for (vertex_id v = 0; v < g.vertex_count(); ++v) out[v] = detail::traffic_bytes(model, *view, v);
  return out;
}

// g with every computing vertex's time alone set to the roofline of its flops and bytes.
graph with_roofline_times(graph g) {
  const auto bytes = traffic(g);
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (g[v].flops > 0)  // else an input: nothing to run
      g[v].compute = std::max(g[v].flops / flops_per_second, static_cast<double>(bytes[v]) / alone_bandwidth) + launch;
  return g;
}

// No schedule on the shared machine is shorter: the contention-free bounds hold (sharing only
// slows), and every computing vertex's bytes pass through the domain, which moves at most its
// bandwidth.
seconds shared_lower_bound(const graph& g, const graph_model& model, const cluster& independent) {
  const auto bytes = traffic(g);
  double moved = 0;
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (g[v].flops > 0) moved += static_cast<double>(bytes[v]);
  return std::max(makespan_lower_bound(g, model, independent).value, moved / domain_bandwidth);
}

seconds judge(const graph& g, const graph_model& model, const cluster& c, const placement& p) {
  const auto r = simulate(g, model, c, std::span<const device_id>(p.device), {.priority = p.order});
  return r.ok() ? r.schedule.makespan : std::numeric_limits<seconds>::infinity();
}

struct figures {
  double independent_pick = 0, shared_pick = 0, search_independent = 0, search_shared = 0, one_partition = 0;
  double rank_agreement = 0;  // Spearman of the placers' makespans, independent against shared
};

}  // namespace

int main(int argc, char** argv) {
  const std::size_t budget = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 3000;
  const workload_device device{.flops_per_second = flops_per_second, .op_overhead = launch};
  struct workload {
    const char* name;
    graph g;
  };
  const llama_block_options block{.sequence = 4096, .hidden = 4096, .heads = 32, .ffn_hidden = 11008, .device = device};
  const std::vector<workload> workloads = {
      {"chainmm",
       with_roofline_times(chain_mm({.dimension = 8192, .blocks_per_side = 4, .inner_split = 2, .device = device}))},
      {"ffnn", with_roofline_times(ffnn({.batch = 1 << 15, .hidden = 1 << 16, .device = device}))},
      {"llama-block", with_roofline_times(llama_block(block))},
      {"llama-layer", with_roofline_times(llama_layer({.block = block}))},
  };
  const cluster independent = cluster::uniform(partitions, unlimited_memory, partition_link, comm_mode::parallel);
  cluster shared = independent;
  shared.add_domain({.name = "gpu0", .devices = {0, 1, 2, 3}, .bandwidth = domain_bandwidth});

  std::printf(
      "4 partitions of one H200: %.1f TFLOP/s and %.0f GB/s alone each, %.0f GB/s shared by all; copies "
      "%.2f us + bytes / %.2f TB/s; local search: at most %zu simulations\n",
      flops_per_second / 1e12, alone_bandwidth / 1e9, domain_bandwidth / 1e9, 1e6 * partition_link.latency,
      partition_link.bandwidth / 1e12, budget);
  std::printf("every figure judged sharing the memory, as a ratio to the shared machine's lower bound\n");
  std::printf("%-12s %8s %10s | %11s %11s | %13s %13s | %9s | %s\n", "workload", "vertices", "bound ms", "indep. pick",
              "shared pick", "search indep.", "search shared", "one part.",
              "the placers' ranks, independent against shared");
  std::vector<figures> all;
  for (const auto& w : workloads) {
    const graph_model model_independent(w.g, independent), model_shared(w.g, shared);
    const seconds bound = shared_lower_bound(w.g, model_independent, independent);
    figures f;
    placement best_shared;
    seconds best_independent_time = std::numeric_limits<seconds>::infinity();
    seconds best_shared_time = best_independent_time;
    std::vector<double> judged_independent, judged_shared;
    for (const auto& entry : placers()) {
      if (entry.name == "exact") continue;  // takes long, and is exact only without sharing
      auto result = entry.place({w.g, model_independent, independent});
      if (!result.placement.ok()) continue;
      const seconds alone = judge(w.g, model_independent, independent, result.placement);
      const seconds sharing = judge(w.g, model_shared, shared, result.placement);
      judged_independent.push_back(alone);
      judged_shared.push_back(sharing);
      if (alone < best_independent_time) {
        best_independent_time = alone;
        f.independent_pick = sharing / bound;
      }
      if (sharing < best_shared_time) {
        best_shared_time = sharing;
        best_shared = result.placement;
        f.shared_pick = sharing / bound;
      }
    }
    // The same search from the same start, judged without and with the domain.
    const auto searched_independent =
        local_search(w.g, model_independent, independent, best_shared, {.max_simulations = budget});
    const auto searched_shared = local_search(w.g, model_shared, shared, best_shared, {.max_simulations = budget});
    f.search_independent = judge(w.g, model_shared, shared, searched_independent.placement) / bound;
    f.search_shared = judge(w.g, model_shared, shared, searched_shared.placement) / bound;
    f.rank_agreement = spearman(judged_independent, judged_shared);
    placement one;
    one.device.assign(w.g.vertex_count(), 0);
    f.one_partition = judge(w.g, model_shared, shared, one) / bound;
    std::printf("%-12s %8zu %10.3f | %11.3f %11.3f | %13.3f %13.3f | %9.3f | %zu placers, Spearman %.3f\n", w.name,
                w.g.vertex_count(), 1e3 * bound, f.independent_pick, f.shared_pick, f.search_independent,
                f.search_shared, f.one_partition, judged_shared.size(), f.rank_agreement);
    all.push_back(f);
  }
  // What the engine's times alone cost: the placement they lead to, judged sharing the memory,
  // over the one the shared simulation leads to (a pick among the placers; a search).
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const std::string name = std::string("shared_placement_") + workloads[i].name;
    bench::print_target((name + "_independent_pick_over_shared_pick").c_str(),
                        all[i].independent_pick / all[i].shared_pick, 1.05);
    bench::print_target((name + "_independent_search_over_shared_search").c_str(),
                        all[i].search_independent / all[i].search_shared, 1.05);
  }
  return 0;
}
