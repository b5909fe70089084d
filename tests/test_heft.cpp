#include <gantry/place/heft.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <array>

using namespace gantry;

namespace {
// The 10-task, 3-processor example of Topcuoglu, Hariri & Wu (IEEE TPDS 2002, Fig. 2); tasks
// n1..n10 are vertices 0..9, and an edge's number is its communication cost between processors.
struct topcuoglu_example {
  graph g;
  cluster devices = cluster::uniform(3);
  std::array<std::array<double, 3>, 10> cost{{{14, 16, 9},
                                              {13, 19, 18},
                                              {11, 13, 19},
                                              {13, 8, 17},
                                              {12, 13, 10},
                                              {13, 16, 9},
                                              {7, 15, 11},
                                              {5, 11, 14},
                                              {18, 12, 20},
                                              {21, 7, 16}}};
  std::vector<double> comm;
  topcuoglu_example() {
    for (int v = 1; v <= 10; ++v) g.add_vertex("n" + std::to_string(v));
    const std::array<std::array<int, 3>, 15> edges{{{1, 2, 18},
                                                    {1, 3, 12},
                                                    {1, 4, 9},
                                                    {1, 5, 11},
                                                    {1, 6, 14},
                                                    {2, 8, 19},
                                                    {2, 9, 16},
                                                    {3, 7, 23},
                                                    {4, 8, 27},
                                                    {4, 9, 23},
                                                    {5, 9, 13},
                                                    {6, 8, 15},
                                                    {7, 10, 17},
                                                    {8, 10, 11},
                                                    {9, 10, 13}}};
    for (const auto& [u, v, c] : edges) {
      g.add_edge(static_cast<vertex_id>(u - 1), static_cast<vertex_id>(v - 1));
      comm.push_back(c);
    }
  }
  [[nodiscard]] auto model() const {
    return model_from([this](vertex_id v, device_id d) { return cost[v][d]; },
                      [this](edge_id e, device_id, device_id) { return comm[e]; });
  }
};
}  // namespace

TEST_CASE("HEFT reproduces the makespan of Topcuoglu et al.'s example: 80") {
  const topcuoglu_example ex;
  const auto model = ex.model();
  const auto rank = upward_rank(ex.g, model, ex.devices);
  // The paper's table of upward ranks.
  const std::array<double, 10> expected{108, 77, 80, 80, 69, 63.333333, 42.666667, 35.666667, 44.333333, 14.666667};
  for (vertex_id v = 0; v < 10; ++v) CHECK(rank[v] == doctest::Approx(expected[v]).epsilon(1e-6));

  // Every edge carries its own data in the paper, so nothing is cached.
  const auto r = heft(ex.g, model, ex.devices, {.cache_transfers = false});
  REQUIRE(r.ok());
  CHECK(r.schedule.makespan == doctest::Approx(80));
  // The paper's schedule: n1 on P3 at 0-9, n10 on P2 at 73-80.
  CHECK(r.placement.device[0] == 2);
  CHECK(r.schedule.start[0] == doctest::Approx(0));
  CHECK(r.placement.device[9] == 1);
  CHECK(r.schedule.start[9] == doctest::Approx(73));
  const auto report = validate(r.schedule, ex.g, model, ex.devices);
  CHECK_MESSAGE(report.ok(), report.to_string());
}
