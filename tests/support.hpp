// What several test files need: a scratch directory that is empty when a test starts and gone when
// it ends, a field-by-field graph comparison, and "place, simulate, validate" in one call.
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

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

}  // namespace gantry::test
