// The first placers: m-TOPO (Baechi §2.2) with and without the real capacity check, and the
// single-device baseline.
#include <gantry/core/random.hpp>
#include <gantry/workloads/random_dag.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace gantry;

namespace {

using placement_t = std::vector<device_id>;

// v0 -> v1 -> v2 -> v3, each holding 10 persistent bytes.
graph four_chain() {
  graph g;
  for (int i = 0; i < 4; ++i)
    g.add_vertex(vertex_properties{.name = "v" + std::to_string(i), .compute = 1, .persistent = 10});
  for (vertex_id v = 0; v + 1 < 4; ++v) g.add_edge(v, v + 1, 0);
  return g;
}

template <class M>
std::vector<byte_count> static_use(const placement& p, const M& model, std::size_t m) {
  std::vector<byte_count> use(m, 0);
  for (vertex_id v = 0; v < p.device.size(); ++v) use[p.device[v]] += total_bytes(model, v);
  return use;
}

}  // namespace

TEST_CASE("m-TOPO fills devices in Kahn order up to the balanced cap") {
  // Total 40 bytes on 2 devices: cap = 40 / 2 + 10 = 30. v0, v1, v2 fill d0 to 30; v3 goes to d1.
  const graph g = four_chain();
  const cluster c = cluster::uniform(2);
  const graph_model model(g, c);
  const placement p = m_topo(g, model, c);
  REQUIRE(p.ok());
  CHECK(p.device == placement_t{0, 0, 0, 1});
  CHECK(p.order == kahn_order(g));
  CHECK(p.outcome.message.empty());
}

TEST_CASE("m-TOPO respects each device's capacity; the published behaviour overshoots it") {
  const graph g = four_chain();
  // Capacity 25 < cap 30: d0 takes v0, v1 (20); v2 would make 30 > 25, so d1 takes v2, v3.
  const cluster c = cluster::uniform(2, 25);
  const graph_model model(g, c);
  const placement p = m_topo(g, model, c);
  REQUIRE(p.ok());
  CHECK(p.device == placement_t{0, 0, 1, 1});
  for (const byte_count use : static_use(p, model, 2)) CHECK(use <= 25);
  const auto run = simulate(g, model, c, p.device);
  CHECK(run.ok());

  // respect_capacity = false only checks the cap: 30 bytes on a 25-byte device, and the simulator
  // then runs out of memory on d0 while placing the weights.
  const placement published = m_topo(g, model, c, {.respect_capacity = false});
  REQUIRE(published.ok());
  CHECK(published.device == placement_t{0, 0, 0, 1});
  CHECK(static_use(published, model, 2)[0] == 30);
  const auto overshoot = simulate(g, model, c, published.device);
  CHECK(overshoot.outcome.code == status::out_of_memory);
  CHECK(overshoot.outcome.device == 0);
}

TEST_CASE("m-TOPO reports running out of devices with a status naming the vertex") {
  // Capacity 15: d0 holds v0, d1 holds v1, and v2 has nowhere to go.
  const graph g = four_chain();
  const cluster c = cluster::uniform(2, 15);
  const placement p = m_topo(g, graph_model(g, c), c);
  CHECK(p.outcome.code == status::out_of_memory);
  CHECK_FALSE(p.ok());
  CHECK(p.outcome.vertex == 2);
  CHECK(p.outcome.device == 1);
  CHECK(p.outcome.needed == 10);
  CHECK(p.outcome.available == 5);  // d1's 15 bytes less v1's 10
  CHECK(p.outcome.message.find("'v2'") != std::string::npos);
  CHECK(p.device[2] == no_device);
  CHECK(p.device[0] == 0);

  const cluster none = cluster::uniform(0);
  const placement q = m_topo(g, graph_model(g, none), none);
  CHECK(q.outcome.code == status::out_of_memory);
  CHECK(q.outcome.message.find("no devices") != std::string::npos);
}

TEST_CASE("m-TOPO on seeded random DAGs: never over capacity, devices in Kahn order, failures named") {
  std::size_t placed = 0, failed = 0, overshoots = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    detail::portable_random rng(seed);
    const graph g = random_layered_dag({.vertices = static_cast<std::size_t>(rng.integer(1, 60)),
                                        .layers = 6,
                                        .min_bytes = 1,
                                        .max_bytes = 1000,
                                        .max_persistent = 2000,
                                        .max_temporary = 500,
                                        .seed = seed});
    const auto m = static_cast<std::size_t>(rng.integer(1, 5));
    const cluster probe = cluster::uniform(m);
    byte_count total = 0, largest = 0;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
      total += total_bytes(graph_model(g, probe), v);
      largest = std::max(largest, total_bytes(graph_model(g, probe), v));
    }
    const byte_count cap = total / m + largest;
    // Capacities around the cap: sometimes everything fits, sometimes not.
    const byte_count capacity = total / m / 2 + rng.integer(0, cap);
    const cluster c = cluster::uniform(m, capacity, {.latency = 1e-4, .bandwidth = 1e6});
    const graph_model model(g, c);
    const auto order = kahn_order(g);

    const placement p = m_topo(g, model, c);
    CHECK(p.order == order);
    if (p.ok()) {
      ++placed;
      for (const byte_count use : static_use(p, model, m)) {
        CHECK(use <= capacity);
        CHECK(use <= cap);
      }
      for (std::size_t i = 1; i < order.size(); ++i) CHECK(p.device[order[i - 1]] <= p.device[order[i]]);
      // The static sum leaves out copies received from other devices, so a run may still run out
      // of memory; when it does not, its schedule is valid.
      const auto run = simulate(g, model, c, p.device, {.priority = p.order});
      if (run.ok()) {
        const auto report = validate(run.schedule, g, model, c);
        CHECK_MESSAGE(report.ok(), report.to_string());
      } else {
        CHECK(run.outcome.code == status::out_of_memory);
      }
    } else {
      ++failed;
      CHECK(p.outcome.code == status::out_of_memory);
      const auto first_unplaced =
          std::find_if(order.begin(), order.end(), [&](vertex_id v) { return p.device[v] == no_device; });
      REQUIRE(first_unplaced != order.end());
      CHECK(p.outcome.message.find("'" + g[*first_unplaced].name + "'") != std::string::npos);
    }

    // The published rule never fails (each device is filled past sum/m before the next is used)
    // but may put more on a device than it holds.
    const placement published = m_topo(g, model, c, {.respect_capacity = false});
    REQUIRE(published.ok());
    for (const byte_count use : static_use(published, model, m)) {
      CHECK(use <= cap);
      if (use > capacity) ++overshoots;
    }
  }
  CHECK(placed > 20);
  CHECK(failed > 20);
  CHECK(overshoots > 20);
}

TEST_CASE("single_device puts everything on one device in Kahn order") {
  const graph g = random_layered_dag({.vertices = 30, .seed = 3});
  const cluster c = cluster::uniform(3);
  const graph_model model(g, c);
  const placement p = single_device(g, c, {.device = 2});
  REQUIRE(p.ok());
  CHECK(p.device == placement_t(30, 2));
  CHECK(p.order == kahn_order(g));
  // On one device the run is the sum of the compute times, back to back.
  const auto run = simulate(g, model, c, p.device, {.priority = p.order});
  REQUIRE(run.ok());
  seconds sum = 0;
  for (vertex_id v = 0; v < 30; ++v) sum += model.compute_time(v, 2);
  CHECK(run.schedule.makespan == doctest::Approx(sum));
  CHECK(run.schedule.transfers.empty());
  CHECK(validate(run.schedule, g, model, c).ok());
  CHECK(single_device(g, c).device == placement_t(30, 0));
  CHECK_THROWS_WITH_AS((void)single_device(g, c, {.device = 3}), doctest::Contains("device 3"), invalid_input);
}

TEST_CASE("placers refuse a cycle with not_a_dag naming its vertices") {
  graph g;
  g.add_vertex("head");
  g.add_vertex("spin1");
  g.add_vertex("spin2");
  g.add_edge(0, 1);
  g.add_edge(1, 2);
  g.add_edge(2, 1);
  const cluster c = cluster::uniform(2);
  const auto names_cycle = [](const auto& place) {
    try {
      (void)place();
      FAIL("a cycle was accepted");
    } catch (const not_a_dag& e) {
      const std::string text = e.what();
      CHECK(text.find("spin1") != std::string::npos);
      CHECK(text.find("spin2") != std::string::npos);
      CHECK(text.find("head") == std::string::npos);
    }
  };
  names_cycle([&] { return m_topo(g, graph_model(g, c), c); });
  names_cycle([&] { return single_device(g, c); });
}
