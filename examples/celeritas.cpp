// Fuses the GNMT training graph (examples/graphs/gnmt.json.gz, 16.7k vertices) with Kernighan's
// breakpoint DP along its CPD-TOPO order, places the clusters with Celeritas's Adjusting Placement
// on 4 memory-limited devices, and compares the simulated step with m-ETF's on the whole graph.
//
//   v1 v2 v3 | v4 v5 | v6 v7 v8 v9 | ...     the CPD-TOPO order, cut into segments of <= R vertices
//   \______/   \___/   \_________/           and <= M bytes where the cut edges cost least;
//      c0        c1        c2      ...       each segment is one vertex of the coarse graph
#include <gantry/io/json_graph.hpp>
#include <gantry/place/celeritas.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/sim/simulator.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>

int main() {
  using namespace gantry;
  const std::string path = std::string(GANTRY_EXAMPLES_DIR) + "/graphs/gnmt.json.gz";
  if (!std::filesystem::exists(path)) {
    std::printf("%s is not there\n", path.c_str());
    return 0;
  }
  const graph g = read_graph(path);
  const auto devices = cluster::uniform(4, 3ull << 30, {.latency = 1e-5, .bandwidth = 12e9});
  const graph_model model(g, devices);

  const auto t0 = std::chrono::steady_clock::now();
  const celeritas_result c = celeritas(g, devices, {.window = 200});  // M: a quarter of 3 GiB
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%zu vertices cut into %zu clusters (cut cost %.3f s of transfers) and placed in %.1f ms: %s\n",
              g.vertex_count(), c.fusion.coarsening.coarse.vertex_count(), c.fusion.segments.cost, took * 1e3,
              to_string(c.outcome.code));
  if (!c.ok()) std::printf("  %s\n", c.outcome.message.c_str());
  const auto run =
      simulate(g, model, devices, std::span<const device_id>(c.placement.device), {.priority = c.placement.order});
  if (run.ok()) std::printf("celeritas: simulated step %.3f s\n", run.schedule.makespan);
  else std::printf("celeritas: the placement does not run: %s\n", run.outcome.message.c_str());

  const auto etf_run = m_etf(g, model, devices);
  if (etf_run.ok())
    std::printf("m-ETF:     step %.3f s (its own schedule, which the simulator reproduces)\n",
                etf_run.schedule.makespan);
  else std::printf("m-ETF: %s\n", etf_run.placement.outcome.message.c_str());
}
