// Tight memory: how little memory per device each memory-aware placer needs, and what Celeritas
// places there against the list schedulers.
//
// 1. Baechi's own GNMT graph (tests/data/baechi/gnmt.json.gz, 569 co-placement groups) on 4
//    devices with Baechi's link model (134 us + bytes / 5.70 GB/s), parallel, sequential and duplex
//    links: per memory-aware placer, the smallest capacity per device (bisected to 1 MB, or the peak
//    itself when it fits and the bisection ends within the MB above it) at which it returns a placement, divided by the peak of the whole step on one device in Kahn order (the
//    reference: what one device needs to run it as it comes). Also whether every capacity above the
//    minimum, in 25 MB steps up to twice the peak, fits as well (feasibility is monotone). A result
//    at the minimum that memory_fallback() (place/list_scheduler.hpp) found, within less memory or
//    on one device, counts as a fit, and is said. Targets per placer: the worst ratio over the three
//    link modes (<= 1), and the number of capacities above a minimum that fail (0).
// 2. gnmt_80 on 4 devices of 60% of the one-device peak, 12 GB/s + 10 us (bench_celeritas's
//    setting): celeritas's simulated makespan divided by the best of m-ETF and m-SCT.
#include <gantry/io/json_graph.hpp>
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

attempt place_at(const placer_entry& entry, const graph& g, byte_count capacity, const link_model& link, comm_mode comm) {
  const cluster c = cluster::uniform(4, capacity, link, comm);
  const graph_model model(g, c);
  const placer_result r = entry.place({g, model, c});
  return {r.placement.ok(), r.placement.ok() && r.placement.outcome.message.find("instead") != std::string::npos};
}

std::optional<seconds> makespan(const placer_entry& entry, const graph& g, const cluster& c) {
  const graph_model model(g, c);
  const placer_result r = entry.place({g, model, c});
  if (!r.placement.ok()) return std::nullopt;
  const auto run = simulate(g, model, c, std::span<const device_id>(r.placement.device), {.priority = r.placement.order});
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

  const graph g80 = read_graph(dir / "gnmt_80.json.gz");
  const byte_count peak80 = one_device_peak(g80);
  const cluster split = cluster::uniform(4, peak80 / 10 * 6, link_model{.latency = 1e-5, .bandwidth = 12e9});
  std::optional<seconds> best;
  for (const char* name : {"m-etf", "m-sct"}) {
    const placer_entry* entry = find_placer(name);
    if (entry == nullptr) continue;
    const auto t = makespan(*entry, g80, split);
    std::printf("gnmt_80 (%zu vertices, 4 x %.2f GB): %-9s %s\n", g80.vertex_count(),
                static_cast<double>(peak80 / 10 * 6) / 1e9, name, t ? (std::to_string(*t) + " s").c_str() : "fails");
    if (t && (!best || *t < *best)) best = t;
  }
  const auto celeritas = makespan(*find_placer("celeritas"), g80, split);
  std::printf("gnmt_80: celeritas %s\n", celeritas ? (std::to_string(*celeritas) + " s").c_str() : "fails");

  for (const auto& v : verdicts) {
    bench::print_target(("min_capacity_over_one_device_peak_" + v.name).c_str(), v.worst_ratio, 1.0);
    bench::print_target(("failing_capacities_above_min_" + v.name).c_str(), static_cast<double>(v.gaps), 0.0);
  }
  const double celeritas_ratio = celeritas && best ? *celeritas / *best : 1e9;
  bench::print_target("celeritas_over_best_m_etf_m_sct_gnmt_80", celeritas_ratio, 1.05);
}
