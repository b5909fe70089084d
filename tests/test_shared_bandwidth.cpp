// Devices that share a memory bandwidth (sim/shared_bandwidth.hpp): hand cases of the sharing rule
// (bandwidth-bound vertices slow each other, a compute-bound one does not, a copy inside the
// domain draws on it), results unchanged without a finite domain, the executor's virtual clock
// equal to simulate() field for field, validate() on stretched schedules, every placer's placement
// judged with a shared domain, the cluster file's "domains", and measure_domain().
#include "support.hpp"

#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/executor.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/shared_bandwidth.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

using namespace gantry;

namespace {

using placement_t = std::vector<device_id>;

vertex_id add(graph& g, const char* name, seconds compute, byte_count output) {
  return g.add_vertex(vertex_properties{.name = name, .compute = compute, .output = output});
}

// m devices on free links of 100 B/s, the first `shared` of them in one domain of `bandwidth` B/s.
cluster sharing(std::size_t m, std::size_t shared, double bandwidth, bool copies = true) {
  cluster c = cluster::uniform(m, unlimited_memory, {.latency = 0, .bandwidth = 100});
  bandwidth_domain domain{.name = "hbm", .devices = {}, .bandwidth = bandwidth, .copies = copies};
  for (device_id d = 0; d < shared; ++d) domain.devices.push_back(d);
  c.add_domain(domain);
  return c;
}

schedule run_ok(const graph& g, const cluster& c, const placement_t& p) {
  const graph_model model(g, c);
  const auto r = simulate(g, model, c, p);
  REQUIRE_MESSAGE(r.ok(), r.outcome.message);
  const auto report = validate(r.schedule, g, model, c);
  CHECK_MESSAGE(report.ok(), report.to_string());
  return r.schedule;
}

}  // namespace

TEST_CASE("max-min fair shares: small demands are met, the rest split what is left") {
  std::vector<std::uint32_t> scratch;
  const std::vector<double> demand = {10, 100, 100};
  std::vector<double> share(3);
  detail::share_fairly(100, demand, share, scratch);
  CHECK(share[0] == 10);
  CHECK(share[1] == 45);
  CHECK(share[2] == 45);
  detail::share_fairly(1000, demand, share, scratch);  // room for all
  CHECK(share == demand);
  const std::vector<double> equal = {60, 60, 60, 60};
  std::vector<double> four(4);
  detail::share_fairly(120, equal, four, scratch);
  for (const double x : four) CHECK(x == 30);
}

TEST_CASE("two bandwidth-bound vertices in one domain take twice as long as one") {
  // Each moves 100 B in 1 s alone: a demand of 100 B/s, the whole domain.
  graph g;
  add(g, "a", 1, 100);
  add(g, "b", 1, 100);
  const auto alone = run_ok(g, sharing(2, 2, 100), {0, 0});  // one device: one at a time
  CHECK(alone.finish[0] == 1);
  CHECK(alone.finish[1] == 2);
  const auto together = run_ok(g, sharing(2, 2, 100), {0, 1});
  CHECK(together.start[0] == 0);
  CHECK(together.start[1] == 0);
  CHECK(together.finish[0] == doctest::Approx(2));
  CHECK(together.finish[1] == doctest::Approx(2));
  CHECK(together.busy[0] == doctest::Approx(2));
  CHECK(together.makespan == doctest::Approx(2));
  // Outside the domain (device 1 is not in it), or with room for both, nothing slows.
  CHECK(run_ok(g, sharing(2, 1, 100), {0, 1}).makespan == 1);
  CHECK(run_ok(g, sharing(2, 2, 200), {0, 1}).makespan == 1);
}

TEST_CASE("a compute-bound vertex beside bandwidth-bound ones keeps its time") {
  // a and b draw 100 B/s each, c 10 B/s, in a domain of 100 B/s: c gets its 10, a and b 45 each
  // (speed 0.45) until c ends at 1 s; then 50 each: the 0.55 s of work left takes 1.1 s.
  graph g;
  add(g, "a", 1, 100);
  add(g, "b", 1, 100);
  add(g, "c", 1, 10);
  const auto s = run_ok(g, sharing(3, 3, 100), {0, 1, 2});
  CHECK(s.finish[2] == 1);
  CHECK(s.finish[0] == doctest::Approx(2.1));
  CHECK(s.finish[1] == doctest::Approx(2.1));
}

TEST_CASE("a copy inside the domain reads and writes there, and slows a co-running vertex") {
  // u (no time, 100 B output) on device 0 feeds w on device 2: a 1 s copy of 100 B that draws
  // 200 B/s (read on 0, written on 2, one domain). x on device 1 moves 150 B in 1 s. In 200 B/s
  // both get 100 B/s: x runs at 2/3 and ends at 1.5 s; the copy at 1/2 has 0.25 s left then and
  // ends at 1.75 s alone; w starts then.
  graph g;
  const auto u = add(g, "u", 0, 100);
  const auto w = add(g, "w", 1, 0);
  const auto x = add(g, "x", 1, 150);
  g.add_edge(u, w, 100);
  const placement_t p = {0, 2, 1};
  const auto s = run_ok(g, sharing(3, 3, 200), p);
  CHECK(s.finish[x] == doctest::Approx(1.5));
  REQUIRE(s.transfers.size() == 1);
  CHECK(s.transfers[0].start == 0);
  CHECK(s.transfers[0].finish == doctest::Approx(1.75));
  CHECK(s.start[w] == doctest::Approx(1.75));
  // A domain whose copies do not draw on it: neither slows.
  const auto free = run_ok(g, sharing(3, 3, 200, false), p);
  CHECK(free.finish[x] == 1);
  CHECK(free.transfers[0].finish == 1);
}

TEST_CASE("devices that share cores: three busy devices on two cores each run at two thirds") {
  // No bytes move: only the cores are shared.
  graph g;
  add(g, "a", 1, 0);
  add(g, "b", 1, 0);
  add(g, "c", 1, 0);
  cluster c = cluster::uniform(3, unlimited_memory, {.latency = 0, .bandwidth = 100});
  c.add_domain({.name = "host", .devices = {0, 1, 2}, .cores = 2});
  const auto s = run_ok(g, c, {0, 1, 2});
  for (vertex_id v = 0; v < 3; ++v) CHECK(s.finish[v] == doctest::Approx(1.5));
  // Two devices on two cores run as if alone.
  CHECK(run_ok(g, c, {0, 1, 1}).finish[0] == 1);
}

TEST_CASE("a copy takes a core from the devices that share them") {
  // u (no time) on device 0 feeds w on device 1 over a 1 s copy; x and y keep devices 1 and 2 busy
  // for 1 s. Three on two cores: each at 2/3 until all end at 1.5 s.
  graph g;
  const auto u = add(g, "u", 0, 100);
  const auto w = add(g, "w", 1, 0);
  const auto x = add(g, "x", 1, 0);
  const auto y = add(g, "y", 1, 0);
  g.add_edge(u, w, 100);
  cluster c = cluster::uniform(3, unlimited_memory, {.latency = 0, .bandwidth = 100});
  c.add_domain({.name = "host", .devices = {0, 1, 2}, .cores = 2});
  const auto s = run_ok(g, c, {0, 1, 1, 2});
  CHECK(s.finish[x] == doctest::Approx(1.5));
  CHECK(s.finish[y] == doctest::Approx(1.5));
  REQUIRE(s.transfers.size() == 1);
  CHECK(s.transfers[0].finish == doctest::Approx(1.5));
  CHECK(s.start[w] == doctest::Approx(1.5));
  // Copies that do not draw on the domain take no core.
  c.clear_domains();
  c.add_domain({.name = "host", .devices = {0, 1, 2}, .copies = false, .cores = 2});
  const auto free = run_ok(g, c, {0, 1, 1, 2});
  CHECK(free.finish[x] == 1);
  CHECK(free.transfers[0].finish == 1);
}

TEST_CASE("without a finite domain every result is what it was, field for field") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const auto c = test::make_random_case(seed, seed % 2 ? comm_mode::parallel : comm_mode::sequential, seed % 3 == 0);
    cluster unlimited = c.devices;
    bandwidth_domain all{.name = "host", .devices = {}};
    for (device_id d = 0; d < unlimited.device_count(); ++d) all.devices.push_back(d);
    unlimited.add_domain(all);
    const graph_model model(c.g, c.devices), model_unlimited(c.g, unlimited);
    placement_t p(c.g.vertex_count());
    for (vertex_id v = 0; v < p.size(); ++v) p[v] = static_cast<device_id>((v * 5 + seed) % c.devices.device_count());
    const auto a = simulate(c.g, model, c.devices, p);
    const auto b = simulate(c.g, model_unlimited, unlimited, p);
    CHECK(a.outcome.code == b.outcome.code);
    CHECK(a.schedule.start == b.schedule.start);
    CHECK(a.schedule.finish == b.schedule.finish);
    CHECK(a.schedule.busy == b.schedule.busy);
    CHECK(a.schedule.makespan == b.schedule.makespan);
    CHECK(a.schedule.peak_memory == b.schedule.peak_memory);
  }
}

TEST_CASE("with a shared domain the executor's virtual clock is simulate(), field for field") {
  const ready_policy policies[] = {ready_policy::placement_order, ready_policy::strict_order, ready_policy::fifo,
                                   ready_policy::bottom_level};
  std::size_t stretched = 0, compared = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      CAPTURE(seed);
      auto c = test::make_random_case(seed, comm, seed % 2 == 0, {.zero_compute = true});
      bandwidth_domain domain{.name = "hbm", .devices = {}, .bandwidth = 2e8, .copies = seed % 4 != 0};
      for (device_id d = 0; d < c.devices.device_count(); ++d)
        if (d != 3) domain.devices.push_back(d);
      c.devices.add_domain(domain);
      const graph_model model(c.g, c.devices);
      placement_t p(c.g.vertex_count());
      for (vertex_id v = 0; v < p.size(); ++v) p[v] = static_cast<device_id>((v * 7 + seed) % c.devices.device_count());
      const simulate_options options{
          .policy = policies[seed % 4], .cache_transfers = seed % 3 != 0, .wait_for_memory = seed % 5 != 1};
      const auto simulated = simulate(c.g, model, c.devices, p, options);
      virtual_clock clock;
      const auto executed =
          execute(c.g, model, c.devices, std::span<const device_id>(p), clock, execute_options_from(options));
      ++compared;
      CHECK(executed.outcome.code == simulated.outcome.code);
      CHECK(executed.outcome.time == simulated.outcome.time);
      const auto& a = executed.schedule;
      const auto& b = simulated.schedule;
      CHECK(a.start == b.start);
      CHECK(a.finish == b.finish);
      CHECK(a.order == b.order);
      REQUIRE(a.transfers.size() == b.transfers.size());
      for (std::size_t k = 0; k < a.transfers.size(); ++k) {
        CHECK(a.transfers[k].start == b.transfers[k].start);
        CHECK(a.transfers[k].finish == b.transfers[k].finish);
      }
      CHECK(a.makespan == b.makespan);
      CHECK(a.busy == b.busy);
      CHECK(a.peak_memory == b.peak_memory);
      if (!simulated.ok()) continue;
      const auto report = validate(b, c.g, model, c.devices);
      CHECK_MESSAGE(report.ok(), report.to_string());
      const graph_model alone(c.g, test::make_random_case(seed, comm, seed % 2 == 0, {.zero_compute = true}).devices);
      for (vertex_id v = 0; v < p.size(); ++v)
        if (b.finish[v] - b.start[v] > alone.compute_time(v, p[v]) * (1 + 1e-9)) {
          ++stretched;
          break;
        }
    }
  }
  CHECK(compared == 180);
  CHECK(stretched > 20);  // the domain binds in many runs
}

TEST_CASE("validate() takes a stretched activity, never a shortened one") {
  graph g;
  add(g, "a", 1, 100);
  add(g, "b", 1, 100);
  const cluster c = sharing(2, 2, 100);
  const graph_model model(g, c);
  auto s = run_ok(g, c, {0, 1});
  s.finish[0] = 0.5;
  s.makespan = 2;
  const auto report = validate(s, g, model, c);
  CHECK(report.count(violation_kind::duration) == 1);
  CHECK(report.to_string().find("at the least") != std::string::npos);
  // Without the domain, the stretched schedule itself is refused.
  const cluster plain = cluster::uniform(2, unlimited_memory, {.latency = 0, .bandwidth = 100});
  CHECK(validate(run_ok(g, c, {0, 1}), g, graph_model(g, plain), plain).count(violation_kind::duration) == 2);
}

TEST_CASE("every placer's placement, judged with a shared domain, validates") {
  std::size_t judged = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    auto c = test::make_random_case(seed, seed % 2 ? comm_mode::parallel : comm_mode::duplex, seed % 3 == 0);
    bandwidth_domain domain{.name = "hbm", .devices = {}, .bandwidth = 1.5e8};
    for (device_id d = 0; d < c.devices.device_count(); ++d) domain.devices.push_back(d);
    c.devices.add_domain(domain);
    const graph_model model(c.g, c.devices);
    for (const auto& entry : placers()) {
      if (entry.name == "exact") continue;
      CAPTURE(entry.name);
      const placer_result placed = entry.place({c.g, model, c.devices});
      if (!placed.placement.ok()) continue;
      const auto r = simulate(c.g, model, c.devices, placed.placement.device);
      if (!r.ok()) continue;
      const auto report = validate(r.schedule, c.g, model, c.devices);
      CHECK_MESSAGE(report.ok(), report.to_string());
      ++judged;
    }
  }
  CHECK(judged > 100);
}

TEST_CASE("the cluster file states domains, and refuses bad ones with the place named") {
  cluster c = cluster::uniform(3, unlimited_memory, {.latency = 1e-6, .bandwidth = 1e9});
  c.add_domain({.name = "gpu0", .devices = {0, 1}, .bandwidth = 3.6e12, .copies = false});
  const auto text = cluster_to_json_text(c);
  const cluster back = read_cluster_json(text);
  REQUIRE(back.domains().size() == 1);
  CHECK(back.domains()[0] == c.domains()[0]);
  CHECK(back.domain_of(1) == 0);
  CHECK(back.domain_of(2) == no_domain);
  CHECK(cluster_to_json_text(back) == text);

  const auto fails = [](const std::string& domains, const std::string& expected) {
    const std::string document =
        R"({"format": "gantry.cluster", "version": 1, "devices": [{"name": "a"}, {"name": "b"}],
                                      "domains": )" +
        domains + "}";
    CAPTURE(domains);
    try {
      (void)read_cluster_json(document, "c.json");
      FAIL("accepted");
    } catch (const std::exception& e) {
      CHECK_MESSAGE(std::string(e.what()).find(expected) != std::string::npos, e.what());
    }
  };
  fails(R"([{"name": "h", "devices": ["a", "z"], "bandwidth": "1 GB/s"}])", "/domains/0/devices/1");
  fails(R"([{"name": "h", "devices": ["a", "z"], "bandwidth": "1 GB/s"}])", "unknown device \"z\"");
  fails(R"([{"name": "h", "devices": [], "bandwidth": "1 GB/s"}])", "at least one device");
  fails(R"([{"name": "h", "devices": ["a"], "bandwidth": -3}])", "/domains/0/bandwidth");
  fails(R"([{"name": "h", "devices": ["a"], "bandwidth": 5, "copies": "yes"}])", "/domains/0/copies");
  fails(R"([{"name": "h", "devices": ["a"], "bandwidth": 5}, {"name": "i", "devices": ["b", "a"], "bandwidth": 5}])",
        "already in a bandwidth domain (at /domains/0)");
  fails(R"([{"name": "h", "devices": ["a"], "bandwidth": 5}, {"name": "h", "devices": ["b"], "bandwidth": 5}])",
        "duplicate domain name");
  CHECK_THROWS_AS(c.add_domain({.name = "again", .devices = {1}, .bandwidth = 1}), invalid_input);
  // A refused domain leaves the cluster as it was.
  CHECK_THROWS_AS(c.add_domain({.name = "twice", .devices = {2, 2}, .bandwidth = 1}), invalid_input);
  CHECK_THROWS_AS(c.add_domain({.name = "beyond", .devices = {2, 7}, .bandwidth = 1}), invalid_input);
  CHECK(c.domain_of(2) == no_domain);
  CHECK(c.domains().size() == 1);
  c.add_domain({.name = "cpu", .devices = {2}, .cores = 4});
  CHECK(read_cluster_json(cluster_to_json_text(c)).domains()[1] == c.domains()[1]);
  fails(R"([{"name": "h", "devices": ["a"], "bandwidth": 5, "cores": -1}])", "/domains/0/cores");
  fails(R"([{"name": "h", "devices": ["a"], "bandwidth": 5, "cores": 1.5}])", "/domains/0/cores");
  CHECK_THROWS_AS(cluster(c).add_domain({.name = "none", .devices = {}, .bandwidth = 1}), invalid_input);
}

TEST_CASE("measure_domain times the probe alone and on every device, and states what all reached together") {
  const graph probe = bandwidth_probe(3, 1000);
  REQUIRE(probe.vertex_count() == 9);
  CHECK(probe[2].op == "add");
  CHECK(probe.edge_count() == 6);
  // Over a virtual clock the sum takes its modelled 1 ms wherever it runs.
  virtual_clock clock;
  const auto m = measure_domain(clock, 3, 1000, 2);
  CHECK(m.traffic == 12000);
  CHECK(m.devices == 3);
  CHECK(m.alone == doctest::Approx(1e-3));
  CHECK(m.together == doctest::Approx(1e-3));
  CHECK(m.alone_bandwidth() == doctest::Approx(12e6));
  CHECK(m.together_bandwidth() == doctest::Approx(36e6));
  CHECK(m.slowdown() == doctest::Approx(1));
  cluster c = cluster::uniform(3);
  add_measured_domain(c, m, "host");
  REQUIRE(c.domains().size() == 1);
  CHECK(c.domains()[0].devices == std::vector<device_id>{0, 1, 2});
  CHECK(c.domains()[0].bandwidth == doctest::Approx(36e6));
  CHECK_THROWS_AS((void)bandwidth_probe(0, 10), invalid_input);
}
