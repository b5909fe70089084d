// Feasibility is monotone in capacity: a memory-aware placer that returns a placement with some
// memory per device returns one with any more memory. Greedy list placers are not monotone by
// nature (with more memory m-ETF packs a device fuller and a later group fits nowhere), so the
// retries of memory_fallback() (place/list_scheduler.hpp) step down gantry's capacity grid: every
// capacity the retries of a smaller run try, a larger run tries as well.
#include <gantry/model/capacity_scaled.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/place/registry/common.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <array>
#include <map>
#include <string>
#include <vector>

using namespace gantry;

TEST_CASE("capacity_grid: points 2^(k/32) bytes, the largest below a capacity and the one below a point") {
  CHECK(capacity_grid::point(0) == 1);
  CHECK(capacity_grid::point(32) == 2);
  CHECK(capacity_grid::point(32 * 20) == byte_count{1} << 20);
  CHECK(capacity_grid::point(capacity_grid::last) == byte_count{1} << 63);
  CHECK(capacity_grid::point(32 * 20 + 16) == 1482910);  // 2^20.5 = 1,482,910.4
  for (byte_count c : {byte_count{2}, byte_count{3}, byte_count{1000}, byte_count{1} << 20, (byte_count{1} << 20) + 1,
                       byte_count{918'000'000}, byte_count{1} << 62}) {
    CAPTURE(c);
    const auto k = capacity_grid::index_below(c);
    REQUIRE(k);
    CHECK(capacity_grid::point(*k) < c);
    CHECK(capacity_grid::point(*k + 1) >= c);
  }
  CHECK_FALSE(capacity_grid::index_below(1));
  CHECK_FALSE(capacity_grid::index_below(0));
  for (unsigned k = 32 * 6; k <= capacity_grid::last; ++k)
    REQUIRE(capacity_grid::point(k - 1) < capacity_grid::point(k));
}

TEST_CASE("feasibility is monotone in capacity for every memory-aware placer: 80 seeded DAGs x 14 capacities") {
  // Capacities from 35% to 100% of the peak of the graph run on one device in Kahn order (where
  // every placer fits, by its one-device answer). Groups on every other seed, the tensor cache off
  // on every fourth, the three link modes in turn.
  std::map<std::string, std::size_t> violations, fits;
  for (std::uint64_t seed = 1; seed <= 80; ++seed) {
    const comm_mode comm = std::array{comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}[seed % 3];
    const auto rc =
        test::make_random_case(seed, comm, false, {.seed_factor = 7919, .max_vertices = 24, .groups = seed % 2 == 0});
    const byte_count peak = test::one_device_kahn_peak(rc.g);
    const bool cache = seed % 4 != 0;
    CAPTURE(seed);
    for (const auto& entry : placers()) {
      if (!entry.respects_memory) continue;
      CAPTURE(entry.name);
      byte_count fitted = 0;  // the smallest capacity so far that fits; 0: none yet
      for (unsigned step = 0; step < 14; ++step) {
        const byte_count capacity = peak * (35 + 5 * step) / 100;
        CAPTURE(capacity);
        const cluster c = cluster::uniform(rc.devices.device_count(), capacity, rc.devices.default_link(), comm);
        const graph_model model(rc.g, c);
        const placer_result r = entry.place({rc.g, model, c, cache});
        if (r.placement.ok()) {
          ++fits[entry.name];
          if (fitted == 0) fitted = capacity;
        } else if (fitted != 0) {
          ++violations[entry.name];
          MESSAGE(entry.name << " seed " << seed << " fits at " << fitted << " B, not at " << capacity
                             << " B: " << r.placement.outcome.message);
        }
      }
    }
  }
  for (const auto& [name, count] : fits) {
    CAPTURE(name);
    CHECK(violations[name] == 0);
    MESSAGE(name << ": " << count << " fits of 1,120");
  }
}

TEST_CASE(
    "the registry plans within the grid point below the memory, and else runs one device in Kahn order within all of "
    "it") {
  // A chain of 100-byte outputs on one device of 200 bytes peaks at exactly 200 (two outputs at
  // once). The grid point at or below 200 is 197: nothing fits there, and Kahn order within 200
  // does.
  graph g;
  for (const char* name : {"a", "b", "c"})
    g.add_vertex(vertex_properties{.name = name, .compute = 0.01, .output = 100});
  g.add_edge(0, 1, 100);
  g.add_edge(1, 2, 100);
  const cluster c = cluster::uniform(1, 200);
  CHECK(detail::on_capacity_grid(c).capacity(0) == 197);
  CHECK(detail::on_capacity_grid(cluster::uniform(2, 1 << 20)).capacity(1) == 1 << 20);  // a grid point stays
  CHECK(detail::on_capacity_grid(cluster::uniform(1)).capacity(0) == unlimited_memory);
  const graph_model model(g, c);
  CHECK_FALSE(m_etf(g, model, cluster::uniform(1, 197)).ok());
  for (const auto& entry : placers()) {
    if (!entry.respects_memory) continue;
    CAPTURE(entry.name);
    const placer_result r = entry.place({g, model, c});
    REQUIRE_MESSAGE(r.placement.ok(), r.placement.outcome.message);
    CHECK(r.placement.outcome.message.find("placed every vertex on d0 in Kahn order instead") != std::string::npos);
    CHECK(r.placement.order == std::vector<vertex_id>{0, 1, 2});
  }
  cluster named = c;
  CHECK_THROWS_WITH_AS(named.set_capacity(1, 10), "cluster: device 1 does not exist (1 devices)", invalid_input);
}
