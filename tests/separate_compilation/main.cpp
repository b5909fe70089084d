// A program built with GANTRY_SEPARATE_COMPILATION (gantry/compiled.hpp): this unit only declares
// the default instances, the graph reader and writer and the placer registry, compiled.cpp defines
// them. It calls each of them, so the build fails to link when a declaration and its definition
// drift apart, and checks that what they return is right.
#include <gantry/io/json_graph.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/random_dag.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#if !defined(GANTRY_SEPARATE_COMPILATION)
#error "built with GANTRY_SEPARATE_COMPILATION"
#endif

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "separate compilation: %s\n", what.c_str());
    ++failures;
  }
}

}  // namespace

int main() {
  using namespace gantry;
  const graph g = random_layered_dag({.vertices = 40, .layers = 6, .seed = 7});
  const cluster devices = cluster::uniform(3, 1ull << 40, {.latency = 1e-5, .bandwidth = 1e10});
  const graph_model model(g, devices);

  // Each list scheduler's own schedule is the simulator's on its placement and order, and valid.
  const auto judge = [&](const std::string& name, const list_schedule_result& r) {
    check(r.ok(), name + " failed: " + r.placement.outcome.message);
    const auto run = simulate(g, model, devices, r.placement.device, {.priority = r.placement.order});
    check(run.ok(), name + ": the simulation failed");
    const auto report = validate(run.schedule, g, model, devices);
    check(report.ok(), name + ": " + report.to_string());
    check(validate(r.schedule, g, model, devices).ok(), name + ": its own schedule is not valid");
  };
  judge("etf", etf(g, model, devices));
  judge("m-etf", m_etf(g, model, devices));
  judge("critical path", critical_path_schedule(g, model, devices));
  judge("heft", heft(g, model, devices));
  judge("cpop", cpop(g, model, devices));
  judge("peft", peft(g, model, devices));
  check(m_topo(g, model, devices).ok(), "m-topo failed");

  // The registry's families, compiled in the other unit.
  const placer_entry* entry = find_placer("m-etf");
  check(entry != nullptr, "no placer named m-etf in the registry");
  if (entry != nullptr)
    check(entry->place({.g = g, .model = model, .devices = devices}).placement.ok(), "the registry's m-etf failed");

  // The graph file's writer and reader round-trip the graph.
  const auto path = std::filesystem::temp_directory_path() / "gantry_separate_compilation_graph.json";
  write_graph(path, g);
  const graph back = read_graph(path);
  std::filesystem::remove(path);
  check(back.vertex_count() == g.vertex_count() && back.edge_count() == g.edge_count(),
        "the graph read back differs from the graph written");
  check(graph_to_json_text(back) == graph_to_json_text(g), "the graph's text differs after a round trip");

  if (failures == 0) std::printf("separate compilation: every instance links and runs\n");
  return failures == 0 ? 0 : 1;
}
