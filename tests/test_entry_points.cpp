// One entry point shape for every list placer: (graph, model, devices, list_options), every option
// honoured. ETF, HEFT, Critical Path, CPOP and PEFT respect memory exactly when
// options.respect_memory says so, and each has an m_ function that is the same call with it set
// (m_etf, m_heft, m_critical_path_schedule, m_cpop, m_peft). SCT's options hold these under `list`
// (test_lp_sct.cpp checks it).
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/schedule/validate.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <array>
#include <functional>
#include <string>
#include <vector>

using namespace gantry;

namespace {

using entry_point = std::function<list_schedule_result(const graph&, const graph_model&, const cluster&, list_options)>;
struct list_placer {
  std::string name;      // the placer's own name for its run that ignores memory
  entry_point plain, m;  // X and m_X
};

std::vector<list_placer> list_placers() {
  return {
      {"ETF", [](const auto& g, const auto& m, const auto& c, list_options o) { return etf(g, m, c, std::move(o)); },
       [](const auto& g, const auto& m, const auto& c, list_options o) { return m_etf(g, m, c, std::move(o)); }},
      {"HEFT", [](const auto& g, const auto& m, const auto& c, list_options o) { return heft(g, m, c, std::move(o)); },
       [](const auto& g, const auto& m, const auto& c, list_options o) { return m_heft(g, m, c, std::move(o)); }},
      {"Critical Path",
       [](const auto& g, const auto& m, const auto& c, list_options o) {
         return critical_path_schedule(g, m, c, std::move(o));
       },
       [](const auto& g, const auto& m, const auto& c, list_options o) {
         return m_critical_path_schedule(g, m, c, std::move(o));
       }},
      {"CPOP", [](const auto& g, const auto& m, const auto& c, list_options o) { return cpop(g, m, c, std::move(o)); },
       [](const auto& g, const auto& m, const auto& c, list_options o) { return m_cpop(g, m, c, std::move(o)); }},
      {"PEFT", [](const auto& g, const auto& m, const auto& c, list_options o) { return peft(g, m, c, std::move(o)); },
       [](const auto& g, const auto& m, const auto& c, list_options o) { return m_peft(g, m, c, std::move(o)); }},
  };
}

}  // namespace

TEST_CASE("every list placer honours respect_memory, and its m_ function is the same call with it set") {
  // Tight memory on every other seed (some runs then fail), groups on every third, the three link
  // modes in turn.
  std::size_t within_memory = 0, refused = 0, ignoring = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const comm_mode comm = std::array{comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}[seed % 3];
    const auto rc = test::make_random_case(seed, comm, seed % 2 == 0, {.seed_factor = 31, .groups = seed % 3 == 0});
    const graph_model model(rc.g, rc.devices);
    const auto groups = colocation_groups(rc.g);
    CAPTURE(seed);
    for (const auto& placer : list_placers()) {
      CAPTURE(placer.name);
      // Without memory: the placer's own name, a valid schedule but for memory.
      const auto free = placer.plain(rc.g, model, rc.devices, {.respect_memory = false, .group = groups});
      REQUIRE(free.ok());
      const auto loose = validate(free.schedule, rc.g, model, rc.devices, {.group = groups});
      CHECK(loose.violations.size() == loose.count(violation_kind::memory));
      ignoring += loose.count(violation_kind::memory) > 0 ? 1 : 0;
      // With memory: valid within it, or refused naming out of memory.
      const auto held = placer.plain(rc.g, model, rc.devices, {.respect_memory = true, .group = groups});
      if (held.ok()) {
        const auto report = validate(held.schedule, rc.g, model, rc.devices, {.group = groups});
        CHECK_MESSAGE(report.ok(), report.to_string());
        ++within_memory;
      } else {
        CHECK((held.placement.outcome.code == status::out_of_memory ||
               held.placement.outcome.code == status::over_capacity));
        CHECK_MESSAGE(held.placement.outcome.message.starts_with("m-" + placer.name), held.placement.outcome.message);
        ++refused;
      }
      // m_X is X with respect_memory set, whatever the options say.
      const auto m = placer.m(rc.g, model, rc.devices, {.respect_memory = false, .group = groups});
      CHECK(m.placement.outcome.code == held.placement.outcome.code);
      CHECK(m.placement.device == held.placement.device);
      CHECK(m.placement.order == held.placement.order);
      CHECK(m.schedule.start == held.schedule.start);
      // With unlimited memory, respecting it changes nothing.
      if (rc.devices.capacity(0) == unlimited_memory) {
        REQUIRE(held.ok());
        CHECK(held.placement.device == free.placement.device);
        CHECK(held.schedule.start == free.schedule.start);
      }
    }
  }
  // The seeds exercise all three outcomes.
  CHECK(within_memory > 0);
  CHECK(refused > 0);
  CHECK(ignoring > 0);
}
