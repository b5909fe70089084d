// Memory over time (schedule/memory_curve.hpp) and its counter tracks in Chrome traces: a
// hand-worked two-device schedule step by step, the curve's peak equal to the memory profile's
// on many simulated schedules, and "C" events in the trace that carry the curve.
#include <gantry/io/chrome_trace.hpp>
#include <gantry/schedule/memory_curve.hpp>
#include <gantry/schedule/memory_profile.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace gantry;

namespace {

// a (d0) -> b (d1), a 100-byte tensor over a 100 B/s link with no latency:
//   a: [0,1) on d0, persistent 10, temporary 5, output 100
//   copy of a: [1,2) d0 -> d1
//   b: [2,3) on d1, persistent 20, temporary 7
struct two_device_case {
  graph g;
  cluster devices = cluster::uniform(2, unlimited_memory, link_model{.latency = 0, .bandwidth = 100});
  schedule s;
  two_device_case() {
    const auto a =
        g.add_vertex(vertex_properties{.name = "a", .compute = 1, .persistent = 10, .output = 100, .temporary = 5});
    const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 1, .persistent = 20, .temporary = 7});
    g.add_edge(a, b, 100);
    s.device = {0, 1};
    s.start = {0, 2};
    s.finish = {1, 3};
    s.transfers = {transfer{.tensor = a, .edge = 0, .from = 0, .to = 1, .start = 1, .finish = 2, .bytes = 100}};
  }
};

}  // namespace

TEST_CASE("the memory curve of a hand-worked schedule, step by step") {
  two_device_case t;
  const graph_model model(t.g, t.devices);
  summarize(t.s, snapshot(t.g), model, 2);
  const auto report = validate(t.s, t.g, model, t.devices);
  REQUIRE(report.ok());

  const memory_curve curve = compute_memory_curve(snapshot(t.g), t.s, model, 2);
  REQUIRE(curve.size() == 2);
  // d0: 10 persistent; a's temporary and output from 0 (115); the temporary freed at 1 (110);
  // the output held until its copy to d1 finishes at 2 (10).
  CHECK(curve[0] == std::vector<memory_step>{{0, 115}, {1, 110}, {2, 10}});
  // d1: 20 persistent; the copy from its start at 1 (120); b's temporary from 2 (127); both freed
  // when b finishes at 3 (20).
  CHECK(curve[1] == std::vector<memory_step>{{0, 20}, {1, 120}, {2, 127}, {3, 20}});
  CHECK(t.s.peak_memory == std::vector<byte_count>{115, 127});
}

TEST_CASE("the curve's highest step is the memory profile's peak, first reached at its peak time") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    CAPTURE(seed);
    const auto c = test::make_random_case(seed, seed % 2 ? comm_mode::sequential : comm_mode::parallel, false);
    const graph_model model(c.g, c.devices);
    const auto p = m_topo(c.g, model, c.devices);
    REQUIRE(p.outcome.code == status::ok);
    const auto run = simulate(c.g, model, c.devices, p.device, {.priority = p.order});
    REQUIRE(run.outcome.code == status::ok);
    REQUIRE(validate(run.schedule, c.g, model, c.devices).ok());
    const csr_graph g = snapshot(c.g);
    const auto profile = compute_memory_profile(g, run.schedule, model, c.devices.device_count());
    const auto curve = compute_memory_curve(g, run.schedule, model, c.devices.device_count());
    REQUIRE(curve.size() == c.devices.device_count());
    for (std::size_t d = 0; d < curve.size(); ++d) {
      CAPTURE(d);
      REQUIRE_FALSE(curve[d].empty());
      CHECK(curve[d].front().time == 0);
      const auto highest =
          std::max_element(curve[d].begin(), curve[d].end(),
                           [](const memory_step& x, const memory_step& y) { return x.bytes < y.bytes; });
      CHECK(highest->bytes == profile.peak[d]);
      CHECK(highest->time == profile.peak_time[d]);
      for (std::size_t i = 1; i < curve[d].size(); ++i) {
        CHECK(curve[d][i - 1].time < curve[d][i].time);
        CHECK(curve[d][i - 1].bytes != curve[d][i].bytes);
      }
      byte_count persistent = 0;  // what is left once everything else is freed
      for (vertex_id v = 0; v < c.g.vertex_count(); ++v)
        if (run.schedule.device[v] == d) persistent += model.persistent_bytes(v);
      CHECK(curve[d].back().bytes == persistent);
    }
  }
}

TEST_CASE("a Chrome trace with a memory curve has one memory counter track per device") {
  two_device_case t;
  const graph_model model(t.g, t.devices);
  summarize(t.s, snapshot(t.g), model, 2);
  const memory_curve curve = compute_memory_curve(snapshot(t.g), t.s, model, 2);
  const auto trace = nlohmann::json::parse(chrome_trace_text(t.g, t.s, {.devices = &t.devices, .memory = &curve}));
  std::vector<std::vector<std::pair<double, byte_count>>> counters(2);
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "C") continue;
    CHECK(event["name"] == "memory");
    const auto pid = event["pid"].get<std::size_t>();
    REQUIRE((pid == 1 || pid == 2));
    counters[pid - 1].emplace_back(event["ts"].get<double>(), event["args"]["bytes"].get<byte_count>());
  }
  // Times in microseconds, as every other event of the trace.
  CHECK(counters[0] == std::vector<std::pair<double, byte_count>>{{0, 115}, {1e6, 110}, {2e6, 10}});
  CHECK(counters[1] == std::vector<std::pair<double, byte_count>>{{0, 20}, {1e6, 120}, {2e6, 127}, {3e6, 20}});

  // Without a curve there are no counters; a curve of the wrong size is refused.
  const auto plain = chrome_trace(t.g, t.s, {.devices = &t.devices});
  CHECK(std::none_of(plain["traceEvents"].begin(), plain["traceEvents"].end(),
                     [](const nlohmann::json& e) { return e["ph"] == "C"; }));
  const memory_curve one_device(1);
  CHECK_THROWS_WITH_AS((void)chrome_trace(t.g, t.s, {.memory = &one_device}),
                       "chrome_trace: the memory curve has 1 devices, the schedule 2", invalid_input);
}
