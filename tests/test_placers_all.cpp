// One harness for every placer in the registry (gantry/place/placers.hpp): each runs on seeded
// random DAGs in every communication mode, with and without memory limits, and its output goes
// through validate(), the simulator and a replay of its own schedule. A new placer is checked by
// adding it to the registry.
#include <gantry/generate/random_dag.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <array>
#include <map>
#include <random>
#include <string>

using namespace gantry;

namespace {

struct random_case {
  graph g;
  cluster devices;
};

std::uint64_t draw(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); }

random_case make_case(std::uint64_t seed, comm_mode comm, bool limited) {
  std::mt19937_64 rng(seed * 7919);
  random_case c;
  const auto n = static_cast<std::size_t>(draw(rng, 2, 30));
  c.g = random_layered_dag({.vertices = n,
                            .layers = static_cast<std::size_t>(draw(rng, 1, 6)),
                            .mean_out_degree = 1.0 + static_cast<double>(draw(rng, 0, 20)) / 10.0,
                            .max_persistent = 1 << 20,
                            .max_temporary = 1 << 19,
                            .seed = seed});
  // Some groups, as graphs from the exporter have them.
  for (vertex_id v = 0; v + 1 < n; v += 5) c.g[v].group = c.g[v + 1].group = "g" + std::to_string(v);
  const auto m = static_cast<std::size_t>(draw(rng, 1, 4));
  byte_count capacity = unlimited_memory;
  if (limited) {
    byte_count total = 0, largest = 0;
    for (vertex_id v = 0; v < n; ++v) {
      const byte_count bytes = c.g[v].persistent + c.g[v].output + c.g[v].temporary;
      total += bytes;
      largest = std::max(largest, bytes);
    }
    capacity = 2 * largest + total * draw(rng, 8, 30) / (10 * m);
  }
  std::vector<device> list(m);
  for (device_id d = 0; d < m; ++d) {
    list[d].name = "d" + std::to_string(d);
    list[d].capacity = capacity;
    list[d].speed = seed % 3 == 0 ? 1.0 + static_cast<double>(d) / 2.0 : 1.0;
  }
  c.devices = cluster(std::move(list), link_model{.latency = 2e-4, .bandwidth = 2e8}, comm);
  return c;
}

}  // namespace

TEST_CASE("every placer x every communication mode x limited and unlimited memory, on seeded DAGs") {
  std::map<std::string, std::size_t> placed, out_of_memory, replay_over_memory;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      for (const bool limited : {false, true}) {
        const auto c = make_case(seed, comm, limited);
        const graph_model model(c.g, c.devices);
        const auto groups = colocation_groups(c.g);
        const std::string mode = to_string(comm);
        CAPTURE(seed);
        CAPTURE(mode);
        CAPTURE(limited);
        for (const auto& entry : placers()) {
          CAPTURE(entry.name);
          const placer_result r = entry.place({c.g, model, c.devices});
          if (!r.placement.ok()) {
            // Only a memory-aware placer may refuse, and only for memory.
            CHECK(limited);
            CHECK(entry.respects_memory);
            CHECK(r.placement.status == status::out_of_memory);
            CHECK(!r.placement.message.empty());
            ++out_of_memory[entry.name];
            continue;
          }
          ++placed[entry.name];
          REQUIRE(r.placement.device.size() == c.g.vertex_count());
          const validate_options with_groups{.group = groups};
          if (r.own_schedule) {
            const auto report = validate(*r.own_schedule, c.g, model, c.devices,
                                         {.group = groups});
            // A placer that ignores memory may exceed it; nothing else may be wrong.
            const std::size_t allowed = entry.respects_memory ? 0 : report.count(violation_kind::memory);
            CHECK_MESSAGE(report.violations.size() == allowed, report.to_string());
          }
          // The work-conserving replay of the placement in its own order.
          const auto sim = simulate(c.g, model, c.devices, std::span<const device_id>(r.placement.device),
                                    {.priority = r.placement.order});
          if (!sim.ok()) {
            CHECK(sim.status == status::out_of_memory);
            CHECK(limited);
            if (entry.respects_memory) ++replay_over_memory[entry.name];
            continue;
          }
          const auto report = validate(sim.schedule, c.g, model, c.devices, with_groups);
          CHECK_MESSAGE(report.ok(), report.to_string());
          // In parallel mode the strict replay of a list scheduler's order is its own schedule.
          if (r.own_schedule && comm == comm_mode::parallel) {
            const auto strict = simulate(c.g, model, c.devices, std::span<const device_id>(r.placement.device),
                                         {.policy = ready_policy::strict_order, .priority = r.placement.order});
            REQUIRE(strict.ok());
            CHECK(strict.schedule.start == r.own_schedule->start);
          }
        }
      }
    }
  }
  for (const auto& entry : placers()) {
    MESSAGE(entry.name << ": placed " << placed[entry.name] << ", out of memory " << out_of_memory[entry.name]
                       << ", replay over memory " << replay_over_memory[entry.name]);
    CHECK(placed[entry.name] > 0);
  }
}
