// validate(): accepts correct hand-built schedules and reports each kind of violation on a
// hand-built bad one, with a message naming the vertex or device involved. Also the memory rules
// of schedule.hpp, worked out by hand.
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/schedule/validate.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace gantry;

namespace {

bool mentions(const validation_report& r, violation_kind kind, const std::string& text) {
  for (const auto& v : r.violations)
    if (v.kind == kind && v.message.find(text) != std::string::npos) return true;
  return false;
}

cluster two_devices(comm_mode comm = comm_mode::parallel, byte_count capacity1 = unlimited_memory) {
  // Every link: 1 s + bytes / 100 B/s, so 100 bytes take 2 s.
  return cluster({{.name = "d0"}, {.name = "d1", .capacity = capacity1}}, {.latency = 1, .bandwidth = 100}, comm);
}

// a (1 s, persistent 10, output 100) --100 B--> b (2 s, persistent 20, temporary 5)
graph pair_graph() {
  graph g;
  g.add_vertex(vertex_properties{.name = "a", .compute = 1, .persistent = 10, .output = 100});
  g.add_vertex(vertex_properties{.name = "b", .compute = 2, .persistent = 20, .temporary = 5});
  g.add_edge(0, 1, 100);
  return g;
}

// a on d0 [0, 1); a's output d0 -> d1 [1, 3); b on d1 [3, 5).
schedule good_pair_schedule() {
  schedule s;
  s.device = {0, 1};
  s.start = {0, 3};
  s.finish = {1, 5};
  s.transfers = {{.tensor = 0, .edge = 0, .from = 0, .to = 1, .start = 1, .finish = 3, .bytes = 100}};
  return s;
}

}  // namespace

TEST_CASE("a correct cross-device schedule passes, with memory peaks as the rules say") {
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule s = good_pair_schedule();
  const auto report = validate(s, g, model, c);
  CHECK_MESSAGE(report.ok(), report.to_string());
  // d0: a's weights 10 for the whole run + a's output 100 from its start until the transfer out
  //     finishes, [0, 3): peak 110.
  // d1: b's weights 20 + the received copy 100 from the transfer's start until b finishes, [1, 5),
  //     + b's scratch 5 during [3, 5): peak 125.
  CHECK(report.peak_memory == std::vector<byte_count>{110, 125});

  summarize(s, snapshot(g), model, 2);
  CHECK(s.makespan == 5);
  CHECK(s.busy == std::vector<seconds>{1, 2});
  CHECK(s.bytes_moved == 100);
  CHECK(s.order == std::vector<std::vector<vertex_id>>{{0}, {1}});
  CHECK(s.peak_memory == std::vector<byte_count>{110, 125});
  CHECK(s.peak_memory_time == std::vector<seconds>{0, 3});
}

TEST_CASE("summarize() reads each device's order off a by-start order, ties by vertex id") {
  // Five vertices of no work on two devices; 1 and 3 tie on d0 at [2, 2), 2 and 4 on d1 at [1, 1).
  graph g;
  for (int i = 0; i < 5; ++i) g.add_vertex(vertex_properties{});
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule s;
  s.device = {0, 0, 1, 0, 1};
  s.start = {0, 2, 1, 2, 1};
  s.finish = {1, 2, 1, 2, 1};
  // Sorted by (start, finish) with each tie the other way round: the ties come back by id.
  schedule hinted = s;
  summarize(hinted, snapshot(g), model, 2, true, std::vector<vertex_id>{0, 4, 2, 3, 1});
  summarize(s, snapshot(g), model, 2);
  CHECK(s.order == std::vector<std::vector<vertex_id>>{{0, 1, 3}, {2, 4}});
  CHECK(hinted.order == s.order);
  CHECK(hinted.makespan == 2);
  CHECK(hinted.busy == std::vector<seconds>{1, 0});
  // An order that is not by start is sorted instead of trusted.
  schedule misled = s;
  summarize(misled, snapshot(g), model, 2, true, std::vector<vertex_id>{1, 3, 0, 4, 2});
  CHECK(misled.order == s.order);
}

TEST_CASE("a device's peak from unsorted events matches the scan of the sorted events") {
  // 5,000 back-to-back one-byte holds [i, i + 1) and one of 100 bytes over [2500.5, 2500.7), on 7
  // bytes held throughout: 108 bytes at 2500.5, the only time above 8. Enough events to be
  // bucketed, given in a shuffled order.
  std::vector<detail::memory_event> events;
  for (int i = 0; i < 5000; ++i) {
    events.push_back({detail::memory_event_key(i, true), 1});
    events.push_back({detail::memory_event_key(i + 1, false), 1});
  }
  events.push_back({detail::memory_event_key(2500.5, true), 100});
  events.push_back({detail::memory_event_key(2500.7, false), 100});
  std::mt19937_64 rng(3);
  std::shuffle(events.begin(), events.end(), rng);
  std::vector<detail::memory_event> scratch;
  byte_count peak = 0;
  seconds time = 0;
  detail::peak_of_unsorted(7, events.data(), events.size(), peak, time, scratch);
  CHECK(peak == 108);
  CHECK(time == 2500.5);

  // Seeded random holds, with times spread out, repeated, and far apart.
  for (int trial = 0; trial < 12; ++trial) {
    events.clear();
    const auto draw = [&]() -> double {
      switch (trial % 3) {
        case 0:
          return std::uniform_real_distribution<double>(0, 70)(rng);
        case 1:
          return static_cast<double>(rng() % 40);
        default:
          return rng() % 10 == 0 ? 1e6 : std::uniform_real_distribution<double>(0, 1e-3)(rng);
      }
    };
    while (events.size() < 9000) {
      double from = draw(), to = draw();
      if (to < from) std::swap(from, to);
      if (!(from < to)) continue;
      const byte_count bytes = 1 + rng() % 1000;
      events.push_back({detail::memory_event_key(from, true), bytes});
      events.push_back({detail::memory_event_key(to, false), bytes});
    }
    std::vector<detail::memory_event> sorted = events;
    detail::sort_memory_events(sorted.data(), sorted.size(), scratch);
    byte_count expected_peak = 0;
    seconds expected_time = 0;
    detail::peak_of(3, sorted.data(), sorted.size(), expected_peak, expected_time);
    detail::peak_of_unsorted(3, events.data(), events.size(), peak, time, scratch);
    CHECK(peak == expected_peak);
    CHECK(time == expected_time);
  }
}

TEST_CASE("a correct single-device schedule and a cached transfer serving two consumers pass") {
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule same;
  same.device = {1, 1};
  same.start = {0, 1};
  same.finish = {1, 3};
  const auto r1 = validate(same, g, model, c);
  CHECK_MESSAGE(r1.ok(), r1.to_string());
  // d1: weights 30, a's output 100 over [0, 3) (until b finished), b's scratch 5 over [1, 3).
  CHECK(r1.peak_memory == std::vector<byte_count>{0, 135});

  // a -> b and a -> c, both consumers on d1; one transfer of a's output serves both.
  graph fan;
  fan.add_vertex(vertex_properties{.name = "a", .compute = 1, .output = 100});
  fan.add_vertex("b", 1);
  fan.add_vertex("c", 1);
  fan.add_edge(0, 1, 100);
  fan.add_edge(0, 2, 100);
  const graph_model fan_model(fan, c);
  schedule s;
  s.device = {0, 1, 1};
  s.start = {0, 3, 4};
  s.finish = {1, 4, 5};
  s.transfers = {{.tensor = 0, .edge = 0, .from = 0, .to = 1, .start = 1, .finish = 3, .bytes = 100}};
  const auto r2 = validate(s, fan, fan_model, c);
  CHECK_MESSAGE(r2.ok(), r2.to_string());
  // The copy on d1 is held from 1 until c, its last consumer there, finishes at 5.
  CHECK(r2.peak_memory == std::vector<byte_count>{100, 100});
}

TEST_CASE("structure: sizes, device ids and malformed transfers") {
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  SUBCASE("vectors of the wrong size") {
    schedule s = good_pair_schedule();
    s.finish.pop_back();
    const auto r = validate(s, g, model, c);
    CHECK(r.count(violation_kind::structure) == 1);
    CHECK(mentions(r, violation_kind::structure, "2 vertices"));
  }
  SUBCASE("a device that does not exist") {
    schedule s = good_pair_schedule();
    s.device[1] = 7;
    const auto r = validate(s, g, model, c);
    CHECK(r.count(violation_kind::structure) == 1);
    CHECK(mentions(r, violation_kind::structure, "'b' is on device 7"));
  }
  SUBCASE("finish before start") {
    schedule s = good_pair_schedule();
    s.finish[0] = -1;
    const auto r = validate(s, g, model, c);
    CHECK(mentions(r, violation_kind::structure, "'a'"));
  }
  SUBCASE("a transfer for an edge its tensor does not produce") {
    schedule s = good_pair_schedule();
    s.transfers[0].tensor = 1;
    const auto r = validate(s, g, model, c);
    CHECK(r.count(violation_kind::structure) == 1);
    CHECK(mentions(r, violation_kind::structure, "transfer 0"));
  }
}

TEST_CASE("duration: a vertex that runs shorter than the model says") {
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule s = good_pair_schedule();
  s.finish[1] = 4;  // b takes 2 s
  const auto r = validate(s, g, model, c);
  CHECK(r.count(violation_kind::duration) == 1);
  CHECK(mentions(r, violation_kind::duration, "'b'"));
  CHECK(mentions(r, violation_kind::duration, "device 1"));
  // Drawn durations are allowed to differ.
  CHECK(validate(s, g, model, c, {.exact_durations = false}).ok());
}

TEST_CASE("duration: without exact durations, a vertex still runs for the least share asked of it") {
  // A measured run whose kernels returned early (a deadline that overflowed ran b for 0 s) fails;
  // one that ran a little short or long passes.
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule s = good_pair_schedule();
  const seconds takes = s.finish[1] - s.start[1];
  REQUIRE(takes > 0);
  s.finish[1] = s.start[1] + 0.6 * takes;
  CHECK(validate(s, g, model, c, {.exact_durations = false, .min_duration_share = 0.5}).ok());
  s.finish[1] = s.start[1] + 0.4 * takes;
  const auto r = validate(s, g, model, c, {.exact_durations = false, .min_duration_share = 0.5});
  CHECK(r.count(violation_kind::duration) == 1);
  CHECK(mentions(r, violation_kind::duration, "'b'"));
  CHECK(mentions(r, violation_kind::duration, "less than 0.5 of the"));
  s.finish[1] = s.start[1];
  CHECK(!validate(s, g, model, c, {.exact_durations = false, .min_duration_share = 0.5}).ok());
  CHECK(validate(s, g, model, c, {.exact_durations = false}).ok());  // 0: no such check
}

TEST_CASE("precedence: a consumer that starts before the transfer arrives") {
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule s = good_pair_schedule();
  s.start[1] = 2.5;  // a finished at 1, but the transfer lands at 3
  s.finish[1] = 4.5;
  const auto r = validate(s, g, model, c);
  CHECK(r.count(violation_kind::precedence) == 1);
  CHECK(mentions(r, violation_kind::precedence, "'b' starts at 2.5"));
  CHECK(mentions(r, violation_kind::precedence, "'a' arrives at 3"));
}

TEST_CASE("precedence: a consumer that starts before its producer on the same device") {
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule s;
  s.device = {0, 0};
  s.start = {0, 0.5};
  s.finish = {1, 2.5};
  const auto r = validate(s, g, model, c);
  CHECK(r.count(violation_kind::precedence) == 1);
  CHECK(mentions(r, violation_kind::precedence, "'b' starts at 0.5 before 'a' finishes at 1 on device 0"));
}

TEST_CASE("missing transfer: a cross-device edge that nothing carries") {
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule s = good_pair_schedule();
  s.transfers.clear();
  const auto r = validate(s, g, model, c);
  CHECK(r.count(violation_kind::precedence) == 1);
  CHECK(mentions(r, violation_kind::precedence, "'a' -> 'b' crosses device 0 -> 1"));
}

TEST_CASE("transfer: sent before the producer finishes, from the wrong device, too short, too small") {
  const graph g = pair_graph();
  const cluster c = two_devices();
  const graph_model model(g, c);
  SUBCASE("before the producer finishes") {
    schedule s = good_pair_schedule();
    s.transfers[0].start = 0.5;
    s.transfers[0].finish = 2.5;
    const auto r = validate(s, g, model, c);
    CHECK(r.count(violation_kind::transfer) == 1);
    CHECK(mentions(r, violation_kind::transfer, "of 'a'"));
    CHECK(mentions(r, violation_kind::transfer, "before its producer finishes at 1"));
  }
  SUBCASE("from a device the producer did not run on") {
    graph g3 = pair_graph();
    g3.add_vertex("z", 0);
    const cluster c3 = cluster::uniform(3, unlimited_memory, {.latency = 1, .bandwidth = 100});
    const graph_model m3(g3, c3);
    schedule s = good_pair_schedule();
    s.device.push_back(2);
    s.start.push_back(0);
    s.finish.push_back(0);
    s.transfers[0].from = 2;
    const auto r = validate(s, g3, m3, c3);
    CHECK(mentions(r, violation_kind::transfer, "leaves device 2 but the vertex ran on 0"));
  }
  SUBCASE("shorter than the link allows") {
    schedule s = good_pair_schedule();
    s.transfers[0].finish = 2;
    s.start[1] = 2;
    s.finish[1] = 4;
    const auto r = validate(s, g, model, c);
    CHECK(mentions(r, violation_kind::transfer, "takes 1 s but the model says 2 s"));
  }
  SUBCASE("fewer bytes than the edge carries") {
    schedule s = good_pair_schedule();
    s.transfers[0].bytes = 60;
    const auto r = validate(s, g, model, c);
    CHECK(r.count(violation_kind::transfer) >= 1);
    CHECK(mentions(r, violation_kind::transfer, "moves 60 bytes"));
  }
}

TEST_CASE("device overlap: two vertices at once on one device") {
  graph g;
  g.add_vertex("p", 2);
  g.add_vertex("q", 2);
  const cluster c = two_devices();
  const graph_model model(g, c);
  schedule s;
  s.device = {1, 1};
  s.start = {0, 1};
  s.finish = {2, 3};
  const auto r = validate(s, g, model, c);
  CHECK(r.count(violation_kind::device_overlap) == 1);
  CHECK(mentions(r, violation_kind::device_overlap, "'p' [0, 2) and 'q' [1, 3) overlap on device 1"));
  // Back to back is fine.
  s.start[1] = 2;
  s.finish[1] = 4;
  CHECK(validate(s, g, model, c).ok());
}

namespace {
// x on d0 sends to y on d1 while p on d1 sends to q on d0, both transfers over [1, 3).
//   x (d0) --100--> y (d1)
//   p (d1) --100--> q (d0)
struct crossing {
  graph g;
  schedule s;
  crossing() {
    for (const char* n : {"x", "y", "p", "q"}) g.add_vertex(n, 1);
    g.add_edge(0, 1, 100);
    g.add_edge(2, 3, 100);
    s.device = {0, 1, 1, 0};
    s.start = {0, 3, 0, 3};
    s.finish = {1, 4, 1, 4};
    s.transfers = {{.tensor = 0, .edge = 0, .from = 0, .to = 1, .start = 1, .finish = 3, .bytes = 100},
                   {.tensor = 2, .edge = 1, .from = 1, .to = 0, .start = 1, .finish = 3, .bytes = 100}};
  }
};
// x on d0 sends to y on d1 and z on d2 at the same time.
struct broadcast {
  graph g;
  schedule s;
  broadcast() {
    for (const char* n : {"x", "y", "z"}) g.add_vertex(n, 1);
    g.add_edge(0, 1, 100);
    g.add_edge(0, 2, 100);
    s.device = {0, 1, 2};
    s.start = {0, 3, 3};
    s.finish = {1, 4, 4};
    s.transfers = {{.tensor = 0, .edge = 0, .from = 0, .to = 1, .start = 1, .finish = 3, .bytes = 100},
                   {.tensor = 0, .edge = 1, .from = 0, .to = 2, .start = 1, .finish = 3, .bytes = 100}};
  }
};
}  // namespace

TEST_CASE("channel overlap in sequential mode: one channel per device for sending and receiving") {
  const crossing x;
  const cluster c = two_devices(comm_mode::sequential);
  const graph_model model(x.g, c);
  const auto r = validate(x.s, x.g, model, c);
  // Both transfers use the channels of device 0 and device 1.
  CHECK(r.count(violation_kind::channel_overlap) == 2);
  CHECK(mentions(r, violation_kind::channel_overlap, "overlap on the channel of device 0"));
  CHECK(mentions(r, violation_kind::channel_overlap, "overlap on the channel of device 1"));
  // In parallel mode the same schedule is fine.
  const cluster p = two_devices(comm_mode::parallel);
  CHECK(validate(x.s, x.g, graph_model(x.g, p), p).ok());
}

TEST_CASE("channel overlap in duplex mode: one send and one receive channel per device") {
  const cluster c = two_devices(comm_mode::duplex);
  // Opposite directions at once use different channels: fine.
  const crossing x;
  const auto ok = validate(x.s, x.g, graph_model(x.g, c), c);
  CHECK_MESSAGE(ok.ok(), ok.to_string());
  // Two sends from device 0 at once share its send channel.
  const broadcast b;
  const cluster c3 = cluster::uniform(3, unlimited_memory, {.latency = 1, .bandwidth = 100}, comm_mode::duplex);
  const auto r = validate(b.s, b.g, graph_model(b.g, c3), c3);
  CHECK(r.count(violation_kind::channel_overlap) == 1);
  CHECK(mentions(r, violation_kind::channel_overlap, "overlap on the send channel of device 0"));
  // Sending one after the other is fine.
  broadcast later;
  later.s.transfers[1].start = 3;
  later.s.transfers[1].finish = 5;
  later.s.start[2] = 5;
  later.s.finish[2] = 6;
  const auto r2 = validate(later.s, later.g, graph_model(later.g, c3), c3);
  CHECK_MESSAGE(r2.ok(), r2.to_string());
}

TEST_CASE("memory over capacity names the device, the bytes and the time") {
  const graph g = pair_graph();
  const cluster c = two_devices(comm_mode::parallel, 124);  // d1 peaks at 125 (see the first test)
  const graph_model model(g, c);
  const auto r = validate(good_pair_schedule(), g, model, c);
  CHECK(r.count(violation_kind::memory) == 1);
  CHECK(mentions(r, violation_kind::memory, "device 1 holds 125 bytes at time 3 but its capacity is 124"));
  const cluster roomy = two_devices(comm_mode::parallel, 125);
  CHECK(validate(good_pair_schedule(), g, graph_model(g, roomy), roomy).ok());
}

TEST_CASE("memory intervals are half-open: a free and an allocation at the same time do not add up") {
  // u -> v, then w, all on one device of capacity 200, each with a 100-byte output. u's output is
  // held until v, its consumer, finishes: [0, 2); v's over [1, 2); w's over [2, 3).
  graph g;
  g.add_vertex(vertex_properties{.name = "u", .compute = 1, .output = 100});
  g.add_vertex(vertex_properties{.name = "v", .compute = 1, .output = 100});
  g.add_vertex(vertex_properties{.name = "w", .compute = 1, .output = 100});
  g.add_edge(0, 1, 100);
  const cluster c({{.name = "d0", .capacity = 200}});
  const graph_model model(g, c);
  schedule s;
  s.device = {0, 0, 0};
  s.start = {0, 1, 2};
  s.finish = {1, 2, 3};
  const auto r = validate(s, g, model, c);
  CHECK_MESSAGE(r.ok(), r.to_string());
  // v's output ends at 2 (no consumer), exactly when w's begins: peak stays 200, not 300.
  CHECK(r.peak_memory == std::vector<byte_count>{200});
}

TEST_CASE("the report lists several violations and can cap them") {
  graph g;
  for (int i = 0; i < 5; ++i) g.add_vertex("v" + std::to_string(i), 1);
  const cluster c = cluster::uniform(1);
  const graph_model model(g, c);
  schedule s;
  s.device.assign(5, 0);
  s.start.assign(5, 0);
  s.finish.assign(5, 1);
  const auto all = validate(s, g, model, c);
  CHECK(all.count(violation_kind::device_overlap) == 4);
  CHECK(all.to_string().find("device overlap: ") != std::string::npos);
  const auto capped = validate(s, g, model, c, {.max_violations = 2});
  CHECK(capped.violations.size() == 3);
  CHECK(capped.violations.back().message == "2 more violations not listed");
}
