// exact_schedule() (GLPK MIP) against brute force over every placement and every topological order
// on tiny DAGs, on hand-worked graphs, and as a bound that no placer beats.
#include <gantry/io/json_graph.hpp>
#include <gantry/lp/glpk.hpp>
#ifdef GANTRY_HAS_CLP
#include <gantry/lp/clp.hpp>
#endif
#include <gantry/order/lower_bound.hpp>
#include <gantry/place/exact.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace gantry;

namespace {

// The shortest makespan over every placement (whose static memory fits, when `memory` is set)
// and every topological order, each run without idling and with parallel communication.
template <class M>
seconds brute_force(const graph& g, const M& model, const cluster& c, bool memory) {
  const std::size_t n = g.vertex_count(), m = c.device_count();
  std::vector<device_id> device(n, 0);
  seconds best = std::numeric_limits<double>::infinity();
  const auto fits = [&] {
    std::vector<byte_count> used(m, 0);
    std::set<std::tuple<vertex_id, byte_count, device_id>> copies;
    for (vertex_id v = 0; v < n; ++v) used[device[v]] += total_bytes(model, v);
    for (edge_id e = 0; e < g.edge_count(); ++e) {
      const vertex_id u = g.source(e), v = g.target(e);
      if (device[u] != device[v] && copies.insert({u, g.bytes(e), device[v]}).second) used[device[v]] += g.bytes(e);
    }
    for (device_id d = 0; d < m; ++d)
      if (used[d] > c.capacity(d)) return false;
    return true;
  };
  std::vector<vertex_id> order;
  std::vector<bool> done(n, false);
  std::vector<seconds> finish(n, 0);
  // Extends `order` by every ready vertex in turn; evaluates complete orders.
  std::function<void(std::vector<seconds>&)> extend = [&](std::vector<seconds>& available) {
    if (order.size() == n) {
      best = std::min(best, *std::max_element(available.begin(), available.end()));
      return;
    }
    for (vertex_id v = 0; v < n; ++v) {
      if (done[v]) continue;
      bool ready = true;
      seconds at = available[device[v]];
      for (edge_id e = 0; e < g.edge_count() && ready; ++e)
        if (g.target(e) == v) {
          const vertex_id u = g.source(e);
          ready = done[u];
          if (ready) at = std::max(at, finish[u] + model.transfer_time(e, device[u], device[v]));
        }
      if (!ready) continue;
      const seconds before = available[device[v]];
      done[v] = true;
      finish[v] = at + model.compute_time(v, device[v]);
      available[device[v]] = finish[v];
      order.push_back(v);
      extend(available);
      order.pop_back();
      available[device[v]] = before;
      done[v] = false;
    }
  };
  while (true) {
    if (!memory || fits()) {
      std::vector<seconds> available(m, 0);
      extend(available);
    }
    std::size_t i = 0;
    while (i < n && ++device[i] == m) device[i++] = 0;
    if (i == n) break;
  }
  return best;
}

template <class M>
void require_valid(const exact_result& r, const graph& g, const M& model, const cluster& c) {
  REQUIRE_MESSAGE(r.ok(), r.outcome.message);
  REQUIRE(r.placement.device.size() == g.vertex_count());
  REQUIRE(r.placement.order.size() == g.vertex_count());
  const auto report = validate(r.schedule, g, model, c);
  CHECK_MESSAGE(report.ok(), report.to_string());
  CHECK(r.makespan == r.schedule.makespan);
  CHECK(r.bound <= r.makespan);
  CHECK(r.bound >= makespan_lower_bound(g, model, c).value * (1 - 1e-9));
}

//      a(1)
//     /    \        b and c take 2 s each; a copy takes `latency` s.
//   b(2)  c(2)
//     \    /
//      d(1)
graph diamond() {
  graph g;
  g.add_vertex("a", 1);
  g.add_vertex("b", 2);
  g.add_vertex("c", 2);
  g.add_vertex("d", 1);
  g.add_edge(0, 1);
  g.add_edge(0, 2);
  g.add_edge(1, 3);
  g.add_edge(2, 3);
  return g;
}

}  // namespace

TEST_CASE("diamond: split when copies are cheap, one device when they are dear") {
  const graph g = diamond();
  SUBCASE("latency 0.5: c and d on the other device, 1 + 0.5 + 2 + 1 = 4.5") {
    const auto c = cluster::uniform(2, unlimited_memory, {.latency = 0.5});
    const graph_model model(g, c);
    const auto r = exact_schedule(g, model, c);
    require_valid(r, g, model, c);
    CHECK(r.makespan == doctest::Approx(4.5));
    CHECK(r.bound == doctest::Approx(4.5));
    CHECK(r.optimal);
    CHECK(r.gap() == 0);
    CHECK(r.placement.device[1] != r.placement.device[2]);
    CHECK(!r.time_limit_reached);
  }
  SUBCASE("latency 2: every vertex on one device, 6") {
    const auto c = cluster::uniform(2, unlimited_memory, {.latency = 2});
    const graph_model model(g, c);
    const auto r = exact_schedule(g, model, c);
    require_valid(r, g, model, c);
    CHECK(r.makespan == doctest::Approx(6.0));
    CHECK(r.optimal);
    CHECK(std::count(r.placement.device.begin(), r.placement.device.end(), r.placement.device[0]) == 4);
  }
  SUBCASE("a slow link from device 1 back to device 0: a and b on 0, c and d on 1") {
    // 0 -> 1 costs 0.5, 1 -> 0 costs 3, so the mirror image (a on 1) would pay 3: a 1, copy to 1
    // 0.5, c 2 = 3.5; b ends at 3 and its copy to 1 arrives at 3.5; d ends at 4.5.
    auto c = cluster::uniform(2, unlimited_memory, {.latency = 0.5});
    c.set_link(1, 0, {.latency = 3});
    const graph_model model(g, c);
    const auto r = exact_schedule(g, model, c);
    require_valid(r, g, model, c);
    CHECK(r.makespan == doctest::Approx(4.5));
    CHECK(r.optimal);
    CHECK(r.placement.device[0] == 0);
    CHECK(r.placement.device[3] == 1);
    CHECK(r.makespan == doctest::Approx(brute_force(g, model, c, false)));
  }
}

TEST_CASE("memory: a device that holds only two of three vertices forces a split") {
  // Three independent 1 s vertices of 6 bytes; devices of 12 bytes: 2 + 1, makespan 2.
  graph g;
  for (int i = 0; i < 3; ++i)
    g.add_vertex(vertex_properties{.name = "v" + std::to_string(i), .compute = 1, .persistent = 6});
  const auto c = cluster::uniform(2, 12);
  const graph_model model(g, c);
  const auto r = exact_schedule(g, model, c);
  require_valid(r, g, model, c);
  CHECK(r.makespan == doctest::Approx(2.0));
  CHECK(r.optimal);
  SUBCASE("devices of 10 bytes hold one each: infeasible, with the totals") {
    const auto small = cluster::uniform(2, 10);
    const graph_model small_model(g, small);
    const auto none = exact_schedule(g, small_model, small);
    CHECK(none.outcome.code == status::infeasible);
    CHECK(none.outcome.needed == 18);
    CHECK(none.outcome.available == 20);
    CHECK(none.placement.outcome.code == status::infeasible);
  }
  SUBCASE("a vertex larger than every device: out of memory, naming it") {
    g[1].persistent = 100;
    const graph_model big_model(g, c);
    const auto none = exact_schedule(g, big_model, c);
    CHECK(none.outcome.code == status::out_of_memory);
    CHECK(none.outcome.vertex == 1);
    CHECK(none.outcome.needed == 100);
    CHECK(none.outcome.available == 12);
    const auto ignored = exact_schedule(g, big_model, c, {.respect_memory = false});
    CHECK(ignored.ok());
    CHECK(ignored.makespan == doctest::Approx(2.0));
  }
}

TEST_CASE("a colocation group keeps two independent vertices on one device") {
  graph g;
  g.add_vertex("x", 1);
  g.add_vertex("y", 1);
  const auto c = cluster::uniform(2);
  const graph_model model(g, c);
  CHECK(exact_schedule(g, model, c).makespan == doctest::Approx(1.0));
  const std::vector<std::uint32_t> group{0, 0};
  const auto r = exact_schedule(g, model, c, {.group = group});
  require_valid(r, g, model, c);
  CHECK(r.makespan == doctest::Approx(2.0));
  CHECK(r.placement.device[0] == r.placement.device[1]);
}

TEST_CASE("bad input and failures") {
  graph g;
  for (int i = 0; i < 31; ++i) g.add_vertex("v" + std::to_string(i), 1);
  const auto c = cluster::uniform(2);
  const graph_model model(g, c);
  CHECK_THROWS_AS((void)exact_schedule(g, model, c), invalid_input);
  CHECK_THROWS_AS((void)exact_schedule(g, model, c, {.time_limit_ms = 0}), invalid_input);
  graph cycle;
  cycle.add_vertex("a", 1);
  cycle.add_vertex("b", 1);
  cycle.add_edge(0, 1);
  cycle.add_edge(1, 0);
  const graph_model cycle_model(cycle, c);
  CHECK_THROWS_AS((void)exact_schedule(cycle, cycle_model, c), not_a_dag);
  const graph empty;
  const graph_model empty_model(empty, c);
  CHECK(exact_schedule(empty, empty_model, c).optimal);
  // Too many devices is refused up front, not an allocation of e·m² transfer times that fails.
  graph pair;
  pair.add_vertex("a", 1);
  pair.add_vertex("b", 1);
  pair.add_edge(0, 1);
  const auto many = cluster::uniform(100000);
  const graph_model pair_model(pair, many);
  CHECK_THROWS_WITH_AS((void)exact_schedule(pair, pair_model, many),
                       "exact_schedule: the cluster has 100000 devices, more than max_devices = 64 (the program grows "
                       "as n·m + e·m²)",
                       invalid_input);
  const auto some = cluster::uniform(65);
  const graph_model some_model(pair, some);
  CHECK(exact_schedule(pair, some_model, some, {.max_devices = 65}).optimal);
}

TEST_CASE("exact equals brute force on tiny random DAGs (parallel links, with and without memory)") {
  std::size_t limited_cases = 0;
  for (std::uint64_t seed = 1; seed <= 36; ++seed) {
    std::mt19937_64 rng(seed * 6007);
    const auto base =
        test::make_random_case(seed, comm_mode::parallel, false, {.seed_factor = 6007, .max_vertices = 6});
    const std::size_t n = base.g.vertex_count();
    const std::size_t m = n <= 5 ? 1 + rng() % 3 : 2;
    const bool limited = seed % 2 == 0;
    byte_count total = 0, largest = 0;
    for (vertex_id v = 0; v < n; ++v) {
      const byte_count bytes = base.g[v].persistent + base.g[v].output + base.g[v].temporary;
      total += bytes;
      largest = std::max(largest, bytes);
    }
    std::vector<device> list(m);
    for (device_id d = 0; d < m; ++d) {
      list[d].name = "d" + std::to_string(d);
      list[d].speed = seed % 3 == 0 ? 1.0 + d : 1.0;
      if (limited) list[d].capacity = largest + total * (6 + rng() % 10) / (10 * m);
    }
    cluster c(std::move(list), {.latency = 1e-3, .bandwidth = 5e8});
    if (seed % 4 == 1 && m > 1) c.set_link(1, 0, {.latency = 4e-3, .bandwidth = 1e8});
    const graph_model model(base.g, c);
    CAPTURE(seed);
    CAPTURE(n);
    CAPTURE(m);
    CAPTURE(limited);
    const seconds best = brute_force(base.g, model, c, limited);
    const auto r = exact_schedule(base.g, model, c);
    if (!std::isfinite(best)) {
      CHECK(r.outcome.code == status::infeasible);
      continue;
    }
    limited_cases += limited ? 1 : 0;
    require_valid(r, base.g, model, c);
    CHECK(r.optimal);
    CHECK(r.makespan == doctest::Approx(best).epsilon(1e-6));
    CHECK(r.bound == doctest::Approx(best).epsilon(1e-6));
  }
  CHECK(limited_cases > 5);
}

TEST_CASE("no placer beats the exact bound, in any communication mode") {
  std::size_t checked = 0, optimal = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed)
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      const auto c = test::make_random_case(seed, comm, false, {.seed_factor = 15485863, .max_vertices = 10});
      const graph_model model(c.g, c.devices);
      CAPTURE(seed);
      CAPTURE(to_string(comm));
      const auto r = exact_schedule(c.g, model, c.devices, {.respect_memory = false});
      require_valid(r, c.g, model, c.devices);
      optimal += r.optimal ? 1 : 0;
      for (const auto& entry : placers()) {
        CAPTURE(entry.name);
        const auto p = entry.place({c.g, model, c.devices});
        REQUIRE(p.placement.ok());
        const auto sim = simulate(c.g, model, c.devices, std::span<const device_id>(p.placement.device),
                                  {.priority = p.placement.order});
        REQUIRE(sim.ok());
        CHECK(sim.schedule.makespan >= r.bound * (1 - 1e-9));
        if (comm == comm_mode::parallel) CHECK(sim.schedule.makespan >= r.makespan * (1 - 1e-6));
        ++checked;
      }
    }
  CHECK(checked > 100);
  CHECK(optimal > 18);
}

TEST_CASE("a time limit still gives a valid schedule and a bound below it") {
  // 30 vertices on 3 devices: too many to prove within 50 ms.
  graph g = random_layered_dag({.vertices = 30,
                                .layers = 3,
                                .mean_out_degree = 1.5,
                                .min_compute = 1e-3,
                                .max_compute = 1e-2,
                                .min_bytes = 1 << 10,
                                .max_bytes = 1 << 20,
                                .seed = 11});
  const auto devices = cluster::uniform(3, unlimited_memory, {.latency = 2e-4, .bandwidth = 2e8});
  const graph_model model(g, devices);
  const auto r = exact_schedule(g, model, devices, {.time_limit_ms = 50});
  require_valid(r, g, model, devices);
  CHECK(r.gap() >= 0);
  if (!r.optimal) {
    CHECK(r.time_limit_reached);
    CHECK(!r.outcome.message.empty());
  }
}

TEST_CASE("GLPK's fatal errors end the call, not the process, and GLPK works after them") {
  // GLPK ends the process on an internal error unless its error hook jumps out; a column number
  // out of range is one that any build meets the same way.
  glp_prob* lp = glp_create_prob();
  glp_add_cols(lp, 1);
  bool after = false;
  CHECK_FALSE(detail::glpk_guarded([&] {
    glp_set_col_bnds(lp, 2, GLP_FX, 0, 0);  // GLPK: column number out of range
    after = true;
  }));
  CHECK_FALSE(after);  // lp went with GLPK's environment: not deleted here
  int columns = 0;
  CHECK(detail::glpk_guarded([&] {
    glp_prob* fresh = glp_create_prob();
    glp_add_cols(fresh, 3);
    columns = glp_get_num_cols(fresh);
    glp_delete_prob(fresh);
  }));
  CHECK(columns == 3);
}

TEST_CASE("an early end of GLPK's branch and bound gives the best found, a bound below it, and says why") {
  // Topcuoglu's example (examples/graphs/topcuoglu.json) on 2 devices with the tool's default links
  // (12 GB/s, 10 us): the transfers are a millionth of the horizon, and GLPK's branch and bound
  // ends early on this program, with GLP_EFAIL or (in the tool's release build of 2026-12-05) a
  // failed assertion in its primal simplex, "teta_lim >= 0.0", which used to abort the process.
  const graph g = read_graph(std::string(GANTRY_SOURCE_DIR) + "/examples/graphs/topcuoglu.json");
  const auto devices = cluster::uniform(2, unlimited_memory, {.latency = 10e-6, .bandwidth = 12e9});
  const graph_model model(g, devices);
  const auto r = exact_schedule(g, model, devices, {.time_limit_ms = 30000});
  require_valid(r, g, model, devices);
  CHECK(r.bound <= r.makespan);
  CHECK(r.bound > 0);
  INFO(r.outcome.message);
  CHECK((r.optimal || !r.outcome.message.empty()));
  // The next program on this thread is solved, whatever GLPK's environment went through.
  const auto one = cluster::uniform(1);
  const graph_model one_model(g, one);
  CHECK(exact_schedule(g, one_model, one, {.time_limit_ms = 30000}).optimal);
}

TEST_CASE("GLPK's branch and bound through the LP layer: optimum, start, presolve, infeasibility, refusals") {
  // A knapsack: maximise 5a + 4b + 3c with 2a + 3b + c <= 5, a, b, c in {0, 1}. The relaxation
  // takes c, a and 2/3 of b (10.67); the optimum is a and b (9), below it.
  linear_program knapsack;
  for (const double value : {5.0, 4.0, 3.0}) knapsack.add_integer_column(-value, 0, 1);
  const int weight = knapsack.add_row(-lp_infinity, 5);
  for (const auto& [column, w] : {std::pair{0, 2.0}, {1, 3.0}, {2, 1.0}}) knapsack.add_entry(weight, column, w);
  CHECK(knapsack.has_integer_columns());
  const auto check_optimum = [](const mip_solution& s) {
    REQUIRE_MESSAGE(s.ok(), s.outcome.message);
    CHECK(s.proven);
    CHECK_FALSE(s.time_limit_reached);
    CHECK(s.stopped.empty());
    CHECK(s.objective == doctest::Approx(-9));
    CHECK(s.bound == doctest::Approx(-9));
    REQUIRE(s.values.size() == 3);
    CHECK(s.values[0] == doctest::Approx(1));
    CHECK(s.values[1] == doctest::Approx(1));
    CHECK(s.values[2] == doctest::Approx(0));
  };
  check_optimum(glpk_backend{}.solve_mip(knapsack));
  check_optimum(glpk_backend{.method = glpk_method::primal_simplex, .cuts = true}.solve_mip(knapsack));
  check_optimum(glpk_backend{.presolve = true}.solve_mip(knapsack));
  // A start (a and c: 8) and a known bound the relaxation beats do not change the optimum.
  const std::vector<double> start{1, 0, 1};
  check_optimum(glpk_backend{}.solve_mip(knapsack, start, -20));
  // The relaxation of a continuous copy is above the optimum: the integer columns were honoured.
  linear_program relaxed = knapsack;
  relaxed.column_integer.clear();
  const lp_solution relaxation = glpk_backend{}.solve(relaxed);
  REQUIRE(relaxation.ok());
  CHECK(relaxation.objective == doctest::Approx(-32.0 / 3));

  // Integer-infeasible with a feasible relaxation (2a = 1), and infeasible outright.
  linear_program half;
  half.add_integer_column(0, 0, 1);
  half.add_entry(half.add_row(1, 1), 0, 2);
  for (const bool presolve : {false, true}) {
    const mip_solution none = glpk_backend{.presolve = presolve}.solve_mip(half);
    CHECK(none.outcome.code == status::infeasible);
    CHECK(none.values.empty());
    CHECK(none.outcome.message.find("GLPK") != std::string::npos);
  }
  linear_program over = knapsack;
  const int at_least = over.add_row(4, lp_infinity);  // a + b + c >= 4
  for (int j = 0; j < 3; ++j) over.add_entry(at_least, j, 1);
  CHECK(glpk_backend{}.solve_mip(over).outcome.code == status::infeasible);

  // What the layer refuses, by name.
  CHECK_THROWS_WITH_AS((void)glpk_backend{}.solve(knapsack), doctest::Contains("integer columns"), invalid_input);
#ifdef GANTRY_HAS_CLP
  CHECK_THROWS_WITH_AS((void)clp_backend{}.solve(knapsack), doctest::Contains("integer columns"), invalid_input);
#endif
  CHECK_THROWS_WITH_AS((void)glpk_backend{}.solve_mip(knapsack, std::vector<double>{1, 0}),
                       doctest::Contains("a start of 2 values for 3 columns"), invalid_input);
  CHECK_THROWS_WITH_AS((void)glpk_backend{.presolve = true}.solve_mip(knapsack, start), doctest::Contains("presolve"),
                       invalid_input);
  CHECK_THROWS_WITH_AS((void)glpk_backend{.method = glpk_method::interior_point}.solve_mip(knapsack),
                       doctest::Contains("simplex"), invalid_input);
  linear_program short_flags = knapsack;
  short_flags.column_integer.pop_back();
  CHECK_THROWS_WITH_AS((void)glpk_backend{}.solve_mip(short_flags), doctest::Contains("2 integer flags for 3 columns"),
                       invalid_input);
}
