// The exported training graphs in examples/graphs load, are acyclic, say where they were
// measured, pair backward vertices with forward ones, and place and simulate into valid schedules.
#include <gantry/io/json_graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

using namespace gantry;

namespace {

std::vector<std::filesystem::path> exported_graphs() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(GANTRY_SOURCE_DIR) + "/examples/graphs"))
    if (entry.path().string().ends_with(".json.gz")) paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

TEST_CASE("the Inception-V3 training graph used by the README demo is there") {
  CHECK(std::filesystem::exists(std::string(GANTRY_SOURCE_DIR) + "/examples/graphs/inception_v3.json.gz"));
}

TEST_CASE("exported training graphs load, pair backward with forward, and schedule validly") {
  const auto paths = exported_graphs();
  CHECK(paths.size() >= 4);
  std::size_t largest = 0;  // bench_celeritas needs a graph of transformer scale
  for (const auto& path : paths) {
    CAPTURE(path.string());
    const graph_file file = read_graph_file(path);
    const graph& g = file.graph;
    for (const char* key : {"model", "batch_size", "device", "torch_version", "created", "command", "timing"})
      CHECK_MESSAGE(file.metadata.contains(key), key);
    REQUIRE(g.vertex_count() > 10);
    largest = std::max(largest, g.vertex_count());
    CHECK_NOTHROW((void)snapshot_dag(g));

    std::size_t paired = 0, with_parameters = 0;
    seconds total = 0;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
      total += g[v].compute;
      with_parameters += g[v].persistent > 0;
      if (const auto f = g.forward_of(v); f != no_vertex) {
        ++paired;
        CHECK(g[f].op.starts_with("aten."));  // paired with an op, never a parameter or input
      }
    }
    CHECK(paired > g.vertex_count() / 10);
    CHECK(with_parameters > 0);
    CHECK(total > 0);

    const cluster gpus = cluster::uniform(4, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e10});
    const graph_model model(g, gpus);
    const auto one = single_device(g, gpus);
    const auto alone = simulate(g, model, gpus, one.device, {.priority = one.order});
    REQUIRE(alone.outcome.code == status::ok);
    CHECK(alone.schedule.makespan == doctest::Approx(total));
    const auto p = m_topo(g, model, gpus);
    REQUIRE(p.outcome.code == status::ok);
    const auto spread = simulate(g, model, gpus, p.device, {.priority = p.order});
    REQUIRE(spread.outcome.code == status::ok);
    const auto report = validate(spread.schedule, g, model, gpus);
    CHECK_MESSAGE(report.ok(), report.to_string());
  }
  CHECK(largest >= 30'000);
}
