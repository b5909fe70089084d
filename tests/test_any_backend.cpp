// The type-erased backend: the executor driven through any_backend& runs the CPU backend to a
// schedule that validate() accepts, calibrate_backend() measures it, and around a virtual clock it
// reproduces simulate() where the executor's measured rules and the simulator's coincide (every
// vertex takes time, memory is unlimited: any_backend does not erase advance() and pop_due(), so
// the loop treats it as measured).
#include "support.hpp"

#include <gantry/exec/any_backend.hpp>
#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/executor.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/event_loop.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <type_traits>
#include <vector>

using namespace gantry;

static_assert(execution_backend<any_backend>);
static_assert(execution_backend<backend_adaptor<cpu_backend>>);
static_assert(!virtual_time_backend<any_backend>, "the executor treats an erased backend as measured");
static_assert(!std::is_copy_constructible_v<backend_adaptor<virtual_clock>>);

TEST_CASE("the executor runs the CPU backend through any_backend") {
  // a -> b -> c, a -> c, across two devices: two transfers.
  graph g;
  const auto a = g.add_vertex("a", 1e-3);
  const auto b = g.add_vertex("b", 1e-3);
  const auto c = g.add_vertex("c", 1e-3);
  g.add_edge(a, b, 1000);
  g.add_edge(b, c, 1000);
  g.add_edge(a, c, 500);
  const cluster devices = cluster::uniform(2, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
  const graph_model model(g, devices);
  const std::vector<device_id> placement{0, 1, 0};
  for (const cpu_kernel kernel : {cpu_kernel::sleep, cpu_kernel::spin}) {
    CAPTURE(to_string(kernel));
    std::unique_ptr<any_backend> backend =
        std::make_unique<backend_adaptor<cpu_backend>>(cpu_backend_options{.kernel = kernel});
    const auto r = execute(g, model, devices, std::span<const device_id>(placement), *backend);
    REQUIRE(r.ok());
    const auto report = validate(r.schedule, g, model, devices, {.exact_durations = false});
    INFO(report.to_string());
    CHECK(report.ok());
    CHECK(r.schedule.transfers.size() == 2);
    CHECK(r.schedule.order[0] == std::vector<vertex_id>{a, c});
    CHECK(r.schedule.order[1] == std::vector<vertex_id>{b});
  }
}

TEST_CASE("calibrate_backend measures an erased backend") {
  backend_adaptor<cpu_backend> adaptor(cpu_backend_options{.kernel = cpu_kernel::spin, .pace_copies = false});
  any_backend& backend = adaptor;
  const auto measured = calibrate_backend(backend, {.devices = 2, .overhead_vertices = 50, .repeats = 3});
  CHECK(measured.launch_overhead >= 0);
  CHECK(measured.samples.size() == 5);
  CHECK(measured.link.link.bandwidth > 0);
  CHECK(adaptor.get().now() >= 0);  // get() reaches the backend itself
}

TEST_CASE("around a virtual clock, any_backend gives simulate()'s schedule") {
  std::size_t compared = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
      const auto c = test::make_random_case(seed, comm, false);
      const graph_model model(c.g, c.devices);
      std::vector<device_id> p(c.g.vertex_count());
      for (vertex_id v = 0; v < p.size(); ++v) p[v] = static_cast<device_id>((v * 7 + seed) % c.devices.device_count());
      CAPTURE(seed);
      const simulate_options options{.policy = seed % 2 == 0 ? ready_policy::placement_order : ready_policy::fifo,
                                     .cache_transfers = seed % 3 != 0};
      const auto simulated = simulate(c.g, model, c.devices, p, options);
      REQUIRE(simulated.ok());
      backend_adaptor<virtual_clock> clock;
      any_backend& backend = clock;
      const auto executed =
          execute(c.g, model, c.devices, std::span<const device_id>(p), backend, execute_options_from(options));
      REQUIRE(executed.ok());
      const auto& x = executed.schedule;
      const auto& s = simulated.schedule;
      CHECK(x.start == s.start);
      CHECK(x.finish == s.finish);
      CHECK(x.order == s.order);
      REQUIRE(x.transfers.size() == s.transfers.size());
      for (std::size_t k = 0; k < s.transfers.size(); ++k) {
        CHECK(x.transfers[k].start == s.transfers[k].start);
        CHECK(x.transfers[k].finish == s.transfers[k].finish);
      }
      CHECK(x.makespan == s.makespan);
      CHECK(x.bytes_moved == s.bytes_moved);
      CHECK(validate(x, c.g, model, c.devices).ok());
      ++compared;
    }
  }
  CHECK(compared == 120);
}
