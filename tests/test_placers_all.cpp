// One harness for every placer in the registry (gantry/place/placers.hpp): each runs on seeded
// random DAGs in every communication mode, with and without memory limits, and its output goes
// through validate(), the simulator and a replay of its own schedule. A new placer is checked by
// adding it to the registry.
#include <gantry/place/placers.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <array>
#include <map>
#include <string>

using namespace gantry;


TEST_CASE("every placer x every communication mode x limited and unlimited memory, on seeded DAGs") {
  std::map<std::string, std::size_t> placed, out_of_memory, replay_over_memory;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      for (const bool limited : {false, true}) {
        const auto c = test::make_random_case(
            seed, comm, limited, {.seed_factor = 7919, .max_vertices = 30, .zero_compute = false, .groups = true, .largest_factor = 2});
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
            // Only a memory-aware placer may refuse, and only for memory; a best-effort placer
            // (over capacity) still places every vertex.
            CHECK(limited);
            CHECK(entry.respects_memory);
            CHECK((r.placement.outcome.code == status::out_of_memory || r.placement.outcome.code == status::over_capacity));
            CHECK(r.placement.outcome.vertex < c.g.vertex_count());
            CHECK(!r.placement.outcome.message.empty());
            if (r.placement.outcome.code == status::over_capacity)
              for (const device_id d : r.placement.device) CHECK(d < c.devices.device_count());
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
            CHECK(sim.outcome.code == status::out_of_memory);
            CHECK(limited);
            if (entry.respects_memory) ++replay_over_memory[entry.name];
            continue;
          }
          const auto report = validate(sim.schedule, c.g, model, c.devices, with_groups);
          CHECK_MESSAGE(report.ok(), report.to_string());
          // In every mode the strict replay of a list scheduler's order, its channels serving the
          // transfers in the order the placer reserved them, is its own schedule.
          if (r.own_schedule) {
            const auto strict = simulate(c.g, model, c.devices, std::span<const device_id>(r.placement.device),
                                         {.policy = ready_policy::strict_order, .priority = r.placement.order,
                                          .transfer_order = r.own_schedule->transfers});
            if (!strict.ok()) {  // only a placer that ignores memory may have made a schedule that exceeds it
              CHECK(!entry.respects_memory);
              CHECK(strict.outcome.code == status::out_of_memory);
              continue;
            }
            CHECK(strict.schedule.start == r.own_schedule->start);
            CHECK(strict.schedule.finish == r.own_schedule->finish);
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
