// Celeritas at transformer scale: CPD-TOPO + Kernighan fusion + Adjusting Placement (+ expansion),
// and beside it the unfused placement with the earliest-start walk (celeritas_options::also_unfused),
// on the shipped graph of at least 30,000 vertices, 4 devices, timed (median of 5) against Kahn's
// topological order of the same graph; the paper's pipeline alone, at R = 200, over the window
// ladder of the registry's celeritas-paper, and at narrower windows; m-ETF, m-HEFT and m-SCT (when
// the registry has it) with and without the fusion. Then the quality on every shipped real graph
// with 4 devices and memory that forces a split: the simulated makespan of celeritas beside the
// paper's pipeline alone (at R = 200 and as celeritas-paper), m-ETF's, m-SCT's, Order-Place's (on
// the coarse graph, Celeritas's own baseline) and a lower bound, and celeritas-paper over the better
// of m-ETF and m-SCT.
//
// Memory that forces a split: each device gets 60% of the peak memory of the whole step run on one
// device (simulated, unlimited memory), so no single device can hold the run.
// Lower bound: max(critical path of compute times on the fastest device with zero communication,
// total compute / total speed); every placement's makespan is at least that.
#include <gantry/fusion/kernighan.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/place/celeritas.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench_support.hpp"

namespace {

using namespace gantry;

struct devices_for {
  cluster devices;
  byte_count one_device_peak = 0;
};

// 4 identical devices of 60% of the one-device peak each, 12 GB/s links with 10 us latency.
devices_for split_cluster(const graph& g) {
  const link_model link{.latency = 1e-5, .bandwidth = 12e9};
  const cluster roomy = cluster::uniform(1, unlimited_memory, link);
  const graph_model model(g, roomy);
  const auto p = single_device(g, roomy);
  const auto run = simulate(g, model, roomy, std::span<const device_id>(p.device), {.priority = p.order});
  const byte_count peak = run.ok() ? run.schedule.peak_memory[0] : 0;
  return {cluster::uniform(4, peak / 10 * 6, link), peak};
}

// max(longest compute path at the fastest speed, total compute / total speed).
seconds lower_bound(const graph& g, const cluster& c) {
  double fastest = 0, total_speed = 0;
  for (device_id d = 0; d < c.device_count(); ++d) {
    fastest = std::max(fastest, c[d].speed);
    total_speed += c[d].speed;
  }
  const auto order = kahn_order(g);
  std::vector<seconds> finish(g.vertex_count(), 0);
  seconds longest = 0, work = 0;
  for (const vertex_id v : order) {
    seconds start = 0;
    g.for_each_in_edge(v, [&](edge_id e) { start = std::max(start, finish[g.source(e)]); });
    finish[v] = start + g[v].compute / fastest;
    longest = std::max(longest, finish[v]);
    work += g[v].compute;
  }
  return std::max(longest, work / total_speed);
}

struct outcome_row {
  double seconds_taken = 0;
  std::optional<seconds> makespan;  // simulated; empty when the placer failed or the run does not fit
  std::string note;
};

outcome_row simulated(const graph& g, const cluster& c, const placement& p, double seconds_taken) {
  outcome_row row{seconds_taken, std::nullopt, {}};
  if (!p.ok() && p.outcome.code != status::over_capacity) {
    row.note = std::string(to_string(p.outcome.code));
    return row;
  }
  if (p.outcome.code == status::over_capacity) row.note = "over capacity (best effort)";
  const graph_model model(g, c);
  const auto run = simulate(g, model, c, std::span<const device_id>(p.device), {.priority = p.order});
  if (run.ok()) row.makespan = run.schedule.makespan;
  else row.note += (row.note.empty() ? "" : "; ") + std::string("replay: ") + to_string(run.outcome.code);
  return row;
}

// A registry placer on the graph, or on its Kernighan-fused graph expanded back (or on the graph
// itself where the fused one leaves the placer no room).
outcome_row run_placer(const placer_entry& entry, const graph& g, const cluster& c, bool fused, int repeats) {
  const graph_model model(g, c);
  placer_result placed;
  const double taken = bench::median_seconds(repeats, [&] {
    const placer_request request{g, model, c, true, 200, quarter_device_memory(c)};
    placed = fused ? place_kernighan_fused(entry, request) : entry.place(request);
  });
  outcome_row row = simulated(g, c, placed.placement, taken);
  // place_kernighan_fused() places the unfused graph where the fused one leaves no room: say so.
  if (placed_unfused(placed)) row.note += (row.note.empty() ? "" : "; ") + std::string("fusion left no room: unfused");
  return row;
}

std::string show(const outcome_row& row) {
  char text[96];
  if (row.makespan) std::snprintf(text, sizeof text, "%9.3f s", *row.makespan);
  else std::snprintf(text, sizeof text, "%11s", "-");
  return std::string(text) + (row.note.empty() ? "" : " (" + row.note + ")");
}

}  // namespace

int main() {
  const std::filesystem::path dir = GANTRY_BENCH_GRAPH_DIR;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().string().ends_with(".json.gz")) paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  std::vector<graph> graphs;
  for (const auto& path : paths) graphs.push_back(read_graph(path.string()));
  std::size_t big = graphs.size();
  for (std::size_t i = 0; i < graphs.size(); ++i)
    if (graphs[i].vertex_count() >= 30'000 &&
        (big == graphs.size() || graphs[i].vertex_count() > graphs[big].vertex_count()))
      big = i;
  if (big == graphs.size()) {
    std::printf("no shipped graph has 30,000 vertices or more\n");
    bench::print_target("celeritas_30k_4dev_seconds", 1e9, 0.2);
    return 0;
  }

  // --- speed on the large graph ------------------------------------------------------------------
  const graph& g = graphs[big];
  const auto [c, peak] = split_cluster(g);
  std::printf("%s: %zu vertices, %zu edges; 4 devices of %.2f GiB (60%% of the one-device peak %.2f GiB)\n",
              paths[big].filename().c_str(), g.vertex_count(), g.edge_count(),
              static_cast<double>(c.capacity(0)) / (1 << 30), static_cast<double>(peak) / (1 << 30));
  const double baseline = bench::median_seconds(5, [&] { (void)kahn_order(g); });
  std::printf("baseline: Kahn's topological order %.4f s\n", baseline);
  const graph_model model(g, c);
  std::vector<vertex_id> order;
  const double t_order = bench::median_seconds(5, [&] { order = cpd_topo_order(g, model, c); });
  kernighan_fusion fusion;
  const double t_fuse = bench::median_seconds(5, [&] {
    fusion =
        fuse_kernighan(g, std::span<const vertex_id>(order), model, c, {.cluster_memory = quarter_device_memory(c)});
  });
  celeritas_result result;
  const double t_total = bench::median_seconds(5, [&] { result = celeritas(g, c); });
  std::printf("  CPD-TOPO order            %.4f s  (%.1fx Kahn)\n", t_order, t_order / baseline);
  std::printf("  + Kernighan fusion (R=200, M=%.2f GiB): %.4f s, %zu clusters, cut cost %.4f s\n",
              static_cast<double>(quarter_device_memory(c)) / (1 << 30), t_fuse,
              fusion.coarsening.coarse.vertex_count(), fusion.segments.cost);
  celeritas_result paper;
  const double t_paper = bench::median_seconds(5, [&] { paper = celeritas(g, c, {.also_unfused = false}); });
  std::printf("  celeritas in total        %.4f s  (%.1fx Kahn)  %s, %s  peak RSS %.1f MiB\n", t_total,
              t_total / baseline, to_string(result.outcome.code),
              result.unfused ? "kept the unfused placement" : "kept the paper's",
              static_cast<double>(bench::peak_rss_kib()) / 1024.0);
  std::printf("  the paper's pipeline alone %.4f s  (%.1fx Kahn)\n", t_paper, t_paper / baseline);
  celeritas_result ladder;
  const double t_ladder = bench::median_seconds(
      3, [&] { ladder = celeritas(g, c, {.windows = celeritas_window_ladder(), .also_unfused = false}); });
  std::printf("  the paper's over the window ladder %.4f s  (%.1fx Kahn), kept R = %zu, makespan %s\n", t_ladder,
              t_ladder / baseline, ladder.window, show(simulated(g, c, ladder.placement, t_ladder)).c_str());
  const outcome_row celeritas_row = simulated(g, c, result.placement, t_total);
  std::printf("  celeritas makespan %s; the paper's alone %s; lower bound %.3f s\n", show(celeritas_row).c_str(),
              show(simulated(g, c, paper.placement, t_paper)).c_str(), lower_bound(g, c));
  // How the window trades fusion for parallelism in the paper's pipeline (R = 200 above).
  for (const std::size_t window : {50, 10, 2}) {
    celeritas_result narrower;
    const double taken =
        bench::median_seconds(3, [&] { narrower = celeritas(g, c, {.window = window, .also_unfused = false}); });
    std::printf("  the paper's with R = %-3zu  %.4f s, %zu clusters, makespan %s\n", window, taken,
                narrower.fusion.coarsening.coarse.vertex_count(),
                show(simulated(g, c, narrower.placement, taken)).c_str());
  }

  std::printf("\nother placers on %s (one run each; placement time, simulated makespan):\n",
              paths[big].filename().c_str());
  for (const char* name : {"m-etf", "m-sct", "m-heft", "order-place"}) {
    const placer_entry* entry = find_placer(name);
    if (entry == nullptr) {
      std::printf("  %-12s not in this build's registry\n", name);
      continue;
    }
    for (const bool fused : {false, true}) {
      const outcome_row row = run_placer(*entry, g, c, fused, 1);
      std::printf("  %-12s %-15s %8.3f s  (%.0fx Kahn)  makespan %s\n", name, fused ? "Kernighan-fused" : "unfused",
                  row.seconds_taken, row.seconds_taken / baseline, show(row).c_str());
    }
  }

  // --- quality on every shipped graph -------------------------------------------------------------
  std::printf("\nquality, 4 devices of 60%% of the one-device peak each (simulated makespans):\n");
  std::printf("%-22s %7s %11s %24s %24s %24s %24s %24s %24s %10s %10s %10s\n", "graph", "vertices", "lower bnd",
              "celeritas", "paper alone", "celeritas-paper", "m-etf", "m-sct", "order-place (fused)", "cel/m-etf",
              "cel/o-p", "c-p/best");
  std::vector<std::pair<std::string, double>> paper_ratios;  // celeritas-paper over the best of m-ETF and m-SCT
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const graph& h = graphs[i];
    const cluster hc = split_cluster(h).devices;
    const seconds bound = lower_bound(h, hc);
    const auto cel = celeritas(h, hc);
    const outcome_row cel_row = simulated(h, hc, cel.placement, 0);
    const outcome_row paper_row = simulated(h, hc, celeritas(h, hc, {.also_unfused = false}).placement, 0);
    const auto by_name = [&](const char* name, bool fused) {
      const placer_entry* entry = find_placer(name);
      return entry ? run_placer(*entry, h, hc, fused, 1) : outcome_row{0, std::nullopt, "not in registry"};
    };
    const outcome_row etf_row = by_name("m-etf", false), sct_row = by_name("m-sct", false),
                      order_row = by_name("order-place", true), ladder_row = by_name("celeritas-paper", false);
    const auto ratio = [](const outcome_row& a, const outcome_row& b) {
      char text[32];
      if (a.makespan && b.makespan)
        std::snprintf(text, sizeof text, "%+.1f%%", 100.0 * (*a.makespan / *b.makespan - 1));
      else std::snprintf(text, sizeof text, "-");
      return std::string(text);
    };
    const outcome_row& best_row =
        !sct_row.makespan || (etf_row.makespan && *etf_row.makespan <= *sct_row.makespan) ? etf_row : sct_row;
    std::printf("%-22s %7zu %9.3f s %24s %24s %24s %24s %24s %24s %10s %10s %10s\n", paths[i].filename().c_str(),
                h.vertex_count(), bound, show(cel_row).c_str(), show(paper_row).c_str(), show(ladder_row).c_str(),
                show(etf_row).c_str(), show(sct_row).c_str(), show(order_row).c_str(), ratio(cel_row, etf_row).c_str(),
                ratio(cel_row, order_row).c_str(), ratio(ladder_row, best_row).c_str());
    if (h.vertex_count() >= 100)  // the shipped example graphs, not the hand-made ones
      paper_ratios.emplace_back(paths[i].stem().stem().string(), ladder_row.makespan && best_row.makespan
                                                                     ? *ladder_row.makespan / *best_row.makespan
                                                                     : 1e9);
  }
  std::printf(
      "(paper alone: celeritas_options::also_unfused = false;\n"
      " celeritas-paper: the registry's entry, the paper's pipeline run with each window of\n"
      "   celeritas_window_ladder(), the placement whose work-conserving run finishes first kept;\n"
      " cel/m-etf, cel/o-p: celeritas's makespan over m-ETF's and over Order-Place's on the fused graph;\n"
      " c-p/best: celeritas-paper's over the better of m-ETF's and m-SCT's;\n"
      " lower bnd: max(longest compute path on the fastest device with free communication, total compute / total "
      "speed))\n");

  bench::print_target("celeritas_30k_4dev_seconds", t_total, 0.2);
  // The paper's pipeline alone at R = 200 (celeritas_options::also_unfused = false), and the
  // registry's celeritas-paper, which runs it with each window of the ladder.
  bench::print_target("celeritas_paper_alone_30k_4dev_seconds", t_paper, 0.2);
  bench::print_target("celeritas_paper_ladder_30k_4dev_seconds", t_ladder, 0.2);
  for (const auto& [name, r] : paper_ratios)
    bench::print_target(("celeritas_paper_over_best_of_m_etf_m_sct_" + name).c_str(), r, 1.10);
  return 0;
}
