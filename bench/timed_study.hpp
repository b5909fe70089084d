// What the executors' studies with timed kernels share (bench_execute, bench_execute_starpu,
// bench_execute_starpu_mpi): how a workload's times are stretched so that a run is long enough to
// measure, and a runtime's own cost on a workload's shape.
#pragma once

#include <gantry/exec/replay_ahead.hpp>
#include <gantry/exec/study.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace bench {

struct timed_scaling {
  double scale = 1;         // every compute time is multiplied by it
  gantry::link_model link;  // the link the study's cluster uses
};

// The factor that makes g's compute last at least `target_work` in all and 0.5 ms per vertex that
// computes, so that a backend's cost per vertex (tens of microseconds) is a small part of each;
// and a reference link of 12 GB/s and 10 us slowed by the same factor, so that the balance of
// compute and transfers is the workload's own, but never faster than this machine's memcpy (as
// calibrated): a copy cannot beat the memory it runs on.
inline timed_scaling timed_scaling_of(const gantry::graph& g, gantry::seconds target_work,
                                      const gantry::link_model& memcpy_link) {
  gantry::seconds work = 0;
  std::size_t working = 0;
  for (const auto& v : g.vertices()) {
    work += v.compute;
    working += v.compute > 0 ? 1 : 0;
  }
  const double scale = std::max(target_work, 0.5e-3 * static_cast<double>(working)) / work;
  return {scale,
          {.latency = std::max(10e-6 * scale, memcpy_link.latency),
           .bandwidth = std::min(12e9 / scale, memcpy_link.bandwidth)}};
}

// A runtime's own cost on g's shape: g with every time zero, placed by `placement` on 2 devices
// joined by free links, replayed ahead `runs` times; the median makespan and host time, and how
// many tasks and copies each run has.
struct empty_graph_cost {
  double makespan = 0, host = 0, tasks = 0;
};
template <class Backend>
empty_graph_cost empty_graph_cost_of(const gantry::graph& g, std::span<const gantry::device_id> placement,
                                     Backend& backend, int runs = 5) {
  using namespace gantry;
  const graph empty = with_compute_times(g, 0, 0);
  const cluster free_links =
      cluster::uniform(2, unlimited_memory, {.latency = 0, .bandwidth = 1e30}, comm_mode::sequential);
  const graph_model model(empty, free_links);
  const auto simulated = simulate(empty, model, free_links, placement);
  std::vector<double> makespans, hosts;
  for (int run = 0; run < runs; ++run) {
    const auto r = replay_ahead(empty, model, free_links, simulated.schedule, backend);
    makespans.push_back(r.schedule.makespan);
    hosts.push_back(r.host_seconds);
  }
  std::sort(makespans.begin(), makespans.end());
  std::sort(hosts.begin(), hosts.end());
  return {makespans[(makespans.size() - 1) / 2], hosts[(hosts.size() - 1) / 2],
          static_cast<double>(empty.vertex_count() + simulated.schedule.transfers.size())};
}

struct study_workload {
  std::string name;
  gantry::graph g;
  bool pooled;  // one of DOPPLER's workloads, in the pooled figures
};

// DOPPLER's three workloads and Inception-V3 (from --graphs DIR, the source tree's examples/graphs,
// or ./examples/graphs; left out, and said so when `talk`, where none has it).
inline std::vector<study_workload> study_workloads(int argc, char** argv, bool talk = true) {
  using namespace gantry;
  std::string dir = std::filesystem::exists(GANTRY_BENCH_GRAPH_DIR) ? GANTRY_BENCH_GRAPH_DIR : "examples/graphs";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--graphs") dir = argv[i + 1];
  std::vector<study_workload> out;
  out.push_back({"chainmm", chain_mm({.dimension = 2048}), true});
  out.push_back({"ffnn", ffnn({.batch = 4096, .hidden = 8192}), true});
  out.push_back({"llama-block", llama_block({.sequence = 512, .hidden = 1024, .heads = 8, .ffn_hidden = 2752}), true});
  const std::string inception = dir + "/inception_v3.json.gz";
  if (std::filesystem::exists(inception)) out.push_back({"inception-v3", read_graph(inception), false});
  else if (talk) std::printf("note: %s not found (--graphs DIR): Inception-V3 left out\n", inception.c_str());
  return out;
}

}  // namespace bench
