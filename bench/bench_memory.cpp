// Tight memory: how little memory per device each memory-aware placer needs, and what Celeritas
// places there against the list schedulers.
//
// 1. Baechi's own GNMT graph (tests/data/baechi/gnmt.json.gz, 569 co-placement groups) on 4
//    devices with Baechi's link model (134 us + bytes / 5.70 GB/s), parallel, sequential and duplex
//    links: per memory-aware placer, the smallest capacity per device (bisected to 1 MB, or the peak
//    itself when it fits and the bisection ends within the MB above it) at which it returns a placement, divided by the
//    peak of the whole step on one device in Kahn order (the reference: what one device needs to run it as it comes).
//    Also whether every capacity above the minimum, in 25 MB steps up to twice the peak, fits as well (feasibility is
//    monotone). A result at the minimum that memory_fallback() (place/list_scheduler.hpp) found, within less memory or
//    on one device, counts as a fit, and is said. Targets per placer: the worst ratio over the three
//    link modes (<= 1), and the number of capacities above a minimum that fail (0).
// 2. gnmt_80, gnmt, inception_v3, resnet50 and gpt2 on 4 devices of 60% of the one-device peak,
//    12 GB/s + 10 us (bench_celeritas's setting): celeritas's simulated makespan divided by the best
//    of m-ETF and m-SCT (target <= 1.05 on each), beside the paper's pipeline alone
//    (celeritas_options::also_unfused = false).
// 3. GNMT at 803 MB per device: the best memory-aware placement (unfused or fused by Baechi's
//    rule), improved by local_search for the judge, over Baechi's best placement, per link mode and
//    simulator policy (target <= 0.90).
#include <gantry/fusion/fusion.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/place/celeritas.hpp>
#include <gantry/place/local_search.hpp>
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

byte_count one_device_peak(const graph& g) {
  const cluster roomy = cluster::uniform(1, unlimited_memory);
  const graph_model model(g, roomy);
  const auto p = single_device(g, roomy);
  const auto run = simulate(g, model, roomy, std::span<const device_id>(p.device), {.priority = p.order});
  return run.ok() ? run.schedule.peak_memory[0] : 0;
}

struct attempt {
  bool ok = false;
  bool fallback = false;
};

attempt place_at(const placer_entry& entry, const graph& g, byte_count capacity, const link_model& link,
                 comm_mode comm) {
  const cluster c = cluster::uniform(4, capacity, link, comm);
  const graph_model model(g, c);
  const placer_result r = entry.place({g, model, c});
  return {r.placement.ok(), r.placement.ok() && r.placement.outcome.message.find("instead") != std::string::npos};
}

std::optional<seconds> makespan(const placer_entry& entry, const graph& g, const cluster& c) {
  const graph_model model(g, c);
  const placer_result r = entry.place({g, model, c});
  if (!r.placement.ok()) return std::nullopt;
  const auto run =
      simulate(g, model, c, std::span<const device_id>(r.placement.device), {.priority = r.placement.order});
  if (!run.ok()) return std::nullopt;
  return run.schedule.makespan;
}

}  // namespace

int main() {
  const std::filesystem::path dir = GANTRY_BENCH_GRAPH_DIR;
  const graph gnmt = read_graph(std::filesystem::path(GANTRY_BENCH_DATA_DIR) / "baechi" / "gnmt.json.gz");
  const byte_count peak = one_device_peak(gnmt);
  const link_model baechi_link{.latency = 134e-6, .bandwidth = 5701254275.940706};
  constexpr byte_count mb = 1'000'000;
  std::printf("Baechi's GNMT: %zu vertices, one device peaks at %.1f MB; 4 devices, 134 us + bytes / 5.70 GB/s\n",
              gnmt.vertex_count(), static_cast<double>(peak) / mb);
  std::printf("%-22s %-10s %10s %8s  %s\n", "placer", "links", "min MB", "/ peak", "monotone above");
  struct verdict {
    std::string name;
    double worst_ratio = 0;
    std::size_t gaps = 0;
  };
  std::vector<verdict> verdicts;
  for (const auto& entry : placers()) {
    if (!entry.respects_memory) continue;
    verdict v{entry.name};
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      std::uint64_t lo = 1, hi = 4 * peak / mb;  // in MB: lo fails (or is 1), hi fits
      if (!place_at(entry, gnmt, hi * mb, baechi_link, comm).ok) {
        std::printf("%-22s %-10s %10s\n", entry.name.c_str(), to_string(comm), "> 4x peak");
        v.worst_ratio = std::max(v.worst_ratio, 4.0);
        continue;
      }
      while (hi - lo > 1) {
        const std::uint64_t mid = (lo + hi) / 2;
        (place_at(entry, gnmt, mid * mb, baechi_link, comm).ok ? hi : lo) = mid;
      }
      const bool fell_back = place_at(entry, gnmt, hi * mb, baechi_link, comm).fallback;
      std::vector<std::uint64_t> gaps;
      for (std::uint64_t at = hi; at <= 2 * peak / mb; at += 25)
        if (!place_at(entry, gnmt, at * mb, baechi_link, comm).ok) gaps.push_back(at);
      // Bisected to whole MB; a minimum within the MB that holds the peak is checked at the peak itself.
      byte_count minimum = hi * mb;
      if (peak < minimum && peak > (hi - 1) * mb && place_at(entry, gnmt, peak, baechi_link, comm).ok) minimum = peak;
      const double ratio = static_cast<double>(minimum) / static_cast<double>(peak);
      v.worst_ratio = std::max(v.worst_ratio, ratio);
      v.gaps += gaps.size();
      std::string monotone = gaps.empty() ? "yes" : "no, fails at";
      for (std::size_t i = 0; i < std::min<std::size_t>(gaps.size(), 5); ++i) monotone += " " + std::to_string(gaps[i]);
      std::printf("%-22s %-10s %10llu %8.3f  %s%s\n", entry.name.c_str(), to_string(comm),
                  static_cast<unsigned long long>(hi), ratio, monotone.c_str(),
                  fell_back ? " (at the minimum: a fallback)" : "");
    }
    verdicts.push_back(std::move(v));
  }

  struct celeritas_verdict {
    std::string graph;
    double ratio = 1e9;
  };
  std::vector<celeritas_verdict> celeritas_verdicts;
  std::printf("\n4 devices of 60%% of the one-device peak, 12 GB/s + 10 us (simulated makespans):\n");
  std::printf("%-14s %8s %12s %12s %12s %14s %10s %10s\n", "graph", "vertices", "m-etf", "m-sct", "celeritas",
              "paper alone", "cel/best", "paper/best");
  for (const char* name : {"gnmt_80", "gnmt", "inception_v3", "resnet50", "gpt2"}) {
    const graph h = read_graph(dir / (std::string(name) + ".json.gz"));
    const byte_count peak_h = one_device_peak(h);
    const cluster split = cluster::uniform(4, peak_h / 10 * 6, link_model{.latency = 1e-5, .bandwidth = 12e9});
    std::optional<seconds> times[2];
    std::optional<seconds> best;
    for (int i = 0; i < 2; ++i) {
      const placer_entry* entry = find_placer(i == 0 ? "m-etf" : "m-sct");
      if (entry == nullptr) continue;
      times[i] = makespan(*entry, h, split);
      if (times[i] && (!best || *times[i] < *best)) best = times[i];
    }
    const auto celeritas_time = makespan(*find_placer("celeritas"), h, split);
    const auto paper_time = [&]() -> std::optional<seconds> {
      const graph_model model(h, split);
      const celeritas_result r = celeritas(h, split, {.also_unfused = false});
      if (!r.ok()) return std::nullopt;
      const auto run =
          simulate(h, model, split, std::span<const device_id>(r.placement.device), {.priority = r.placement.order});
      return run.ok() ? std::optional<seconds>(run.schedule.makespan) : std::nullopt;
    }();
    const auto shown = [](const std::optional<seconds>& t) {
      char text[32];
      if (t) std::snprintf(text, sizeof text, "%10.3f s", *t);
      else std::snprintf(text, sizeof text, "%12s", "fails");
      return std::string(text);
    };
    const auto over_best = [&](const std::optional<seconds>& t) { return t && best ? *t / *best : 1e9; };
    std::printf("%-14s %8zu %12s %12s %12s %14s %10.3f %10.3f\n", name, h.vertex_count(), shown(times[0]).c_str(),
                shown(times[1]).c_str(), shown(celeritas_time).c_str(), shown(paper_time).c_str(),
                over_best(celeritas_time), over_best(paper_time));
    celeritas_verdicts.push_back({name, over_best(celeritas_time)});
  }

  // 3. GNMT at 803 MB per device, where one device cannot hold the step: the best placement of the
  //    memory-aware placers, each on the graph as it is and fused by Baechi's degree rule inside the
  //    co-placement groups (--fuse baechi --co-place off: Baechi's own 576 ops),
  //    judged by gantry's simulator with parallel and with sequential links, in placement order and
  //    first-come first-served. The reference is Baechi's best placement of this graph at 803 MB
  //    judged the same way: Baechi's public code (github.com/beomyeol/baechi, m_etf.py at 2bf0615,
  //    the rest at 40ab546; m_sct's LP solved by GLPK, as MOSEK is not available) run on 2026-11-27
  //    on the 2-core build machine with m_etf, m_sct and m_topo, each on the plain graph and on its
  //    own fused graph (576 ops), 4 devices of 803 MB, the same link; its placements at 803 MB equal
  //    its roomy ones. Best per judge: m_etf fused, 95.31 ms parallel in placement order, 95.80 ms
  //    fifo, 115.51 ms sequential either way. (Baechi's own simulator, sequential links per device,
  //    gives that placement 118.32 ms; it is Python and not part of this bench.)
  //    Then local_search (place/local_search.hpp) improves that best placement for the same judge,
  //    moving colocation groups (and, for a fused placement, the fused clusters) whole.
  std::printf(
      "\nGNMT at 803 MB per device (one device cannot hold it), best of the memory-aware placers,\n"
      "then improved by local_search for the same judge:\n");
  std::printf("%-11s %-16s %-28s %10s %8s %14s %8s %12s %8s\n", "links", "judge", "best placement", "gantry", "ratio",
              "local search", "ratio", "Baechi best", "search");
  const graph gnmt_paired = colocate_forward_backward(gnmt);
  const coarsening baechi_fused = fuse(gnmt_paired, {.rule = fusion_rule::baechi_degree, .co_place = false});
  struct judged {
    std::string name;
    double ratio = 1e9;
  };
  std::vector<judged> at_803;
  for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential}) {
    const cluster tight = cluster::uniform(4, 803 * mb, baechi_link, comm);
    const graph_model model(gnmt, tight);
    for (const ready_policy policy : {ready_policy::placement_order, ready_policy::fifo}) {
      const seconds baechi = comm == comm_mode::sequential  ? 115.51e-3
                             : policy == ready_policy::fifo ? 95.80e-3
                                                            : 95.31e-3;
      std::optional<seconds> best;
      placement best_placement;
      bool best_fused = false;
      std::string best_name = "none fits";
      for (const auto& entry : placers()) {
        if (!entry.respects_memory) continue;
        for (const bool fused : {false, true}) {
          placement p;
          if (fused) {
            const graph_model coarse_model(baechi_fused.coarse, tight);
            const placer_result r = entry.place({baechi_fused.coarse, coarse_model, tight});
            if (!r.placement.ok()) continue;
            p = expand(baechi_fused, r.placement);
          } else {
            placer_result r = entry.place({gnmt, model, tight});
            if (!r.placement.ok()) continue;
            p = std::move(r.placement);
          }
          const auto run = simulate(gnmt, model, tight, std::span<const device_id>(p.device),
                                    {.policy = policy, .priority = p.order});
          if (!run.ok() || (best && *best <= run.schedule.makespan)) continue;
          best = run.schedule.makespan;
          best_placement = std::move(p);
          best_fused = fused;
          best_name = entry.name + (fused ? " --fuse baechi" : "");
        }
      }
      std::optional<seconds> searched;
      seconds search_time = 0;
      if (best) {
        const auto r = local_search(gnmt, model, tight, best_placement,
                                    {.policy = policy,
                                     .group = colocation_groups(best_fused ? gnmt_paired : gnmt),
                                     .cluster = best_fused ? baechi_fused.coarse_of : std::vector<vertex_id>{}});
        if (r.placement.ok()) searched = r.makespan;
        search_time = r.placement.placement_time;
      }
      const double ratio = searched ? *searched / baechi : 1e9;
      const char* judge = policy == ready_policy::fifo ? "fifo" : "placement order";
      std::printf("%-11s %-16s %-28s %7.1f ms %8.3f %11.1f ms %8.3f %9.1f ms %6.1f s\n", to_string(comm), judge,
                  best_name.c_str(), best ? *best * 1e3 : 0.0, best ? *best / baechi : 1e9,
                  searched ? *searched * 1e3 : 0.0, ratio, baechi * 1e3, search_time);
      at_803.push_back(
          {std::string(to_string(comm)) + "_" + (policy == ready_policy::fifo ? "fifo" : "placement_order"), ratio});
    }
  }

  for (const auto& v : verdicts) {
    bench::print_target(("min_capacity_over_one_device_peak_" + v.name).c_str(), v.worst_ratio, 1.0);
    bench::print_target(("failing_capacities_above_min_" + v.name).c_str(), static_cast<double>(v.gaps), 0.0);
  }
  for (const auto& v : celeritas_verdicts)
    bench::print_target(("celeritas_over_best_m_etf_m_sct_" + v.graph).c_str(), v.ratio, 1.05);
  for (const auto& v : at_803)
    bench::print_target(("gnmt_803MB_best_over_baechi_best_" + v.name).c_str(), v.ratio, 0.90);
}
