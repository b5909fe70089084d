// What several test files need: a scratch directory that is empty when a test starts and gone when
// it ends, a field-by-field graph comparison, "place, simulate, validate" in one call, and a small
// hand-built schedule for the writers and readers.
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <array>
#include <filesystem>
#include <iterator>
#include <string>
#include <system_error>

namespace gantry::test {

struct scratch_directory {
  std::filesystem::path path;
  // `name` must be unique among the tests of the whole suite; the process id keeps concurrent runs apart.
  explicit scratch_directory(const std::string& name) {
    path = std::filesystem::temp_directory_path() / ("gantry_test_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~scratch_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  scratch_directory(const scratch_directory&) = delete;
  scratch_directory& operator=(const scratch_directory&) = delete;

  [[nodiscard]] std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator(path), std::filesystem::directory_iterator()));
  }
};

// Every vertex and edge field of a and b is equal (compute times exactly).
inline void require_same_graph(const graph& a, const graph& b) {
  REQUIRE(a.vertex_count() == b.vertex_count());
  REQUIRE(a.edge_count() == b.edge_count());
  for (vertex_id v = 0; v < a.vertex_count(); ++v) {
    CAPTURE(a[v].name);
    CHECK(a[v].name == b[v].name);
    CHECK(a[v].compute == b[v].compute);
    CHECK(a[v].persistent == b[v].persistent);
    CHECK(a[v].output == b[v].output);
    CHECK(a[v].temporary == b[v].temporary);
    CHECK(a[v].group == b[v].group);
    CHECK(a[v].op == b[v].op);
    CHECK(a[v].flops == b[v].flops);
    CHECK(a.forward_of(v) == b.forward_of(v));
    CHECK(a.kind_times(v) == b.kind_times(v));
  }
  for (edge_id e = 0; e < a.edge_count(); ++e) {
    CHECK(a.source(e) == b.source(e));
    CHECK(a.target(e) == b.target(e));
    CHECK(a.bytes(e) == b.bytes(e));
  }
}

// Places g with m-TOPO on c, simulates the placement and requires validate() to accept it.
inline schedule require_places_and_validates(const graph& g, const cluster& c) {
  const graph_model model(g, c);
  const auto p = m_topo(g, model, c);
  REQUIRE(p.status == status::ok);
  auto result = simulate(g, model, c, p.device, {.priority = p.order});
  REQUIRE(result.status == status::ok);
  const auto report = validate(result.schedule, g, model, c);
  CHECK_MESSAGE(report.ok(), report.to_string());
  return std::move(result.schedule);
}

//   a --100 B--> b ==1000 B, device 0 -> device 1==> c        a, b on device 0; c on device 1
// A valid, summarized schedule with one transfer, and its placement; names are the caller's so
// that writers can be fed names that need escaping.
struct chain_schedule {
  graph g;
  cluster devices;
  schedule s;
  placement p;

  explicit chain_schedule(const std::array<std::string, 3>& names = {"a", "b", "c"},
                          const std::array<std::string, 2>& device_names = {"gpu0", "gpu1"},
                          const std::string& op_of_a = {})
      : devices({{.name = device_names[0], .kind = "gpu"}, {.name = device_names[1], .kind = "gpu"}},
                {.latency = 0.25, .bandwidth = 4000}) {
    g.add_vertex(vertex_properties{.name = names[0], .compute = 1, .output = 100, .op = op_of_a});
    g.add_vertex(vertex_properties{.name = names[1], .compute = 2, .output = 1000});
    g.add_vertex(vertex_properties{.name = names[2], .compute = 1, .output = 10});
    g.add_edge(0, 1, 100);
    g.add_edge(1, 2, 1000);
    s.device = {0, 0, 1};
    s.start = {0, 1, 3.5};
    s.finish = {1, 3, 4.5};
    s.transfers.push_back({.tensor = 1, .edge = 1, .from = 0, .to = 1, .start = 3, .finish = 3.5, .bytes = 1000});
    const graph_model model(g, devices);
    summarize(s, snapshot(g), model, devices.device_count());
    const auto report = validate(s, g, model, devices);
    REQUIRE_MESSAGE(report.ok(), report.to_string());
    p.device = s.device;
    p.order = {0, 1, 2};
    p.placement_time = 0.0125;
  }
};

}  // namespace gantry::test
