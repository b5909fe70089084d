// What several test files need: a scratch directory that is empty when a test starts and gone when
// it ends, a field-by-field graph comparison, "place, simulate, validate" in one call, a small
// hand-built schedule for the writers and readers, seeded random placement cases and the
// one-device Kahn-order peak of a graph.
#pragma once

#include <gantry/workloads/random_dag.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/io/graph_schema.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <array>
#include <filesystem>
#include <iterator>
#include <random>
#include <string>
#include <system_error>

namespace gantry::test {

// A seeded random DAG on 1 to 4 devices, with memory and optionally limited capacities.
struct random_case {
  graph g;
  cluster devices;
};
struct random_case_options {
  std::uint64_t seed_factor = 1;  // the case draws from mt19937_64(seed * seed_factor)
  std::uint64_t max_vertices = 36;
  bool zero_compute = true;       // every fifth seed: every third vertex takes no time (ties)
  bool groups = false;            // vertices 5k and 5k+1 share a colocation group
  byte_count largest_factor = 1;  // capacity: largest_factor x the largest vertex + a share of the rest
};
inline random_case make_random_case(std::uint64_t seed, comm_mode comm, bool limited, random_case_options o = {}) {
  std::mt19937_64 rng(seed * o.seed_factor);
  const auto draw = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
  random_case c;
  const auto n = static_cast<std::size_t>(draw(2, o.max_vertices));
  c.g = random_layered_dag({.vertices = n,
                            .layers = static_cast<std::size_t>(draw(1, 6)),
                            .mean_out_degree = 1.0 + static_cast<double>(draw(0, 20)) / 10.0,
                            .min_compute = 1e-3,
                            .max_compute = 1e-2,
                            .min_bytes = 1 << 10,
                            .max_bytes = 1 << 20,
                            .max_persistent = 1 << 20,
                            .max_temporary = 1 << 19,
                            .seed = seed});
  if (o.zero_compute && seed % 5 == 0)
    for (vertex_id v = 0; v < n; v += 3) c.g[v].compute = 0;
  if (o.groups)
    for (vertex_id v = 0; v + 1 < n; v += 5) c.g[v].group = c.g[v + 1].group = "g" + std::to_string(v);
  const auto m = static_cast<std::size_t>(draw(1, 4));
  byte_count capacity = unlimited_memory;
  if (limited) {
    byte_count total = 0, largest = 0;
    for (vertex_id v = 0; v < n; ++v) {
      const byte_count bytes = c.g[v].persistent + c.g[v].output + c.g[v].temporary;
      total += bytes;
      largest = std::max(largest, bytes);
    }
    // From a little over a fair share (some runs fail) to plenty.
    capacity = o.largest_factor * largest + total * draw(8, 30) / (10 * m);
  }
  std::vector<device> list(m);
  for (device_id d = 0; d < m; ++d) {
    list[d].name = "gpu" + std::to_string(d);
    list[d].capacity = capacity;
    list[d].speed = seed % 3 == 0 ? 1.0 + static_cast<double>(d) / 2.0 : 1.0;
  }
  c.devices = cluster(std::move(list), link_model{.latency = 2e-4, .bandwidth = 2e8}, comm);
  return c;
}

// The peak memory of g run on one device in Kahn order, its vertices one after another: what one
// device needs to hold the run as it comes (the registry's last answer fits from there on).
inline byte_count one_device_kahn_peak(const graph& g) {
  const cluster one = cluster::uniform(1);
  const auto alone = simulate(g, graph_model(g, one), one, std::vector<device_id>(g.vertex_count(), 0),
                              {.policy = ready_policy::strict_order, .priority = kahn_order(g)});
  REQUIRE(alone.ok());
  return alone.schedule.peak_memory[0];
}

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
    for (const vertex_field& f : vertex_fields) {  // the one field table of graph files
      CAPTURE(f.key);
      CHECK(same_field(a, v, b, v, f));
    }
    CHECK(a.forward_of(v) == b.forward_of(v));
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
  REQUIRE(p.outcome.code == status::ok);
  auto result = simulate(g, model, c, p.device, {.priority = p.order});
  REQUIRE(result.outcome.code == status::ok);
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
