// Large clusters and many device kinds: building a 100,000-device uniform cluster and its
// graph_model (mean link and mean compute in O(m + overrides)), reading a 20,000-device cluster
// file with one explicit link, and a graph of 70,000 vertices each with its own kind (set, look
// up and list every per-kind time), and graph_model::compute_time on a graph with per-kind times. Baseline, measured in
// the same run: copying the cluster's device vector, the least any O(m) build must do. Limits are absolute seconds (the
// issue asks for well under a second) and a ratio to the baseline that a quadratic pass would exceed by orders of
// magnitude.
#include <gantry/io/json_cluster.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_support.hpp"

namespace {

std::string cluster_text(std::size_t m) {
  std::string text =
      R"({"format": "gantry.cluster", "version": 1, "link": {"latency": 1e-5, "bandwidth": 1e10}, "devices": [)";
  for (std::size_t d = 0; d < m; ++d) text += (d ? ",{\"name\":\"gpu" : "{\"name\":\"gpu") + std::to_string(d) + "\"}";
  text += R"(], "links": [{"from": "gpu0", "to": "gpu1", "bandwidth": 5e9}]})";
  return text;
}

}  // namespace

int main() {
  constexpr std::size_t m = 100'000;
  gantry::graph g;
  const auto a = g.add_vertex("a", 1.0);
  const auto b = g.add_vertex("b", 1.0);
  const auto e = g.add_edge(a, b, 1 << 20);
  double sink = 0;

  const gantry::cluster reference = gantry::cluster::uniform(m);
  const double baseline = bench::median_seconds(5, [&] {
    const std::vector<gantry::device> copy = reference.devices();
    sink += static_cast<double>(copy.size());
  });
  const double build = bench::median_seconds(5, [&] {
    gantry::cluster c = gantry::cluster::uniform(m, gantry::unlimited_memory, {1e-5, 1e10});
    c.set_link(0, 1, {2e-5, 5e9});
    const gantry::graph_model model(g, c);
    sink += model.mean_transfer_time(e) + model.mean_compute_time(a);
  });
  const std::string text = cluster_text(20'000);
  const double read = bench::median_seconds(3, [&] {
    const auto c = gantry::read_cluster_json(text, "bench.json");
    sink += static_cast<double>(c.own_link_count());
  });

  constexpr std::size_t kinds = 70'000;
  const double kind_times = bench::median_seconds(3, [&] {
    gantry::graph many;
    for (std::size_t v = 0; v < kinds; ++v) {
      const auto id = many.add_vertex("v" + std::to_string(v), 1.0);
      many.set_compute(id, "kind" + std::to_string(v), 0.5);
    }
    for (std::size_t v = 0; v < kinds; ++v)
      sink += many.compute_on(static_cast<gantry::vertex_id>(v), "kind" + std::to_string(kinds - 1 - v)) +
              static_cast<double>(many.kind_times(static_cast<gantry::vertex_id>(v)).size());
  });

  // compute_time with per-kind times: device kinds are the graph's dense kind ids once the model is
  // built, so a call walks the vertex's own kind times instead of hashing the kind's name. Baseline:
  // the device-independent time divided by the speed, read straight from the graph.
  constexpr std::size_t vertices = 100'000;
  gantry::graph kinded;
  for (std::size_t v = 0; v < vertices; ++v) {
    const auto id = kinded.add_vertex("v" + std::to_string(v), 1e-3);
    if (v % 2 == 0) kinded.set_compute(id, "gpu", 2e-4);
  }
  const gantry::cluster mixed({{.name = "g0", .kind = "gpu"},
                               {.name = "g1", .kind = "gpu", .speed = 2},
                               {.name = "c0", .kind = "cpu"},
                               {.name = "c1", .kind = "cpu", .speed = 2}});
  const gantry::graph_model kind_model(kinded, mixed);
  const double calls = static_cast<double>(vertices * mixed.device_count());
  const double direct = bench::median_seconds(5, [&] {
    for (gantry::vertex_id v = 0; v < vertices; ++v)
      for (gantry::device_id d = 0; d < mixed.device_count(); ++d) sink += kinded[v].compute / mixed[d].speed;
  });
  const double through_model = bench::median_seconds(5, [&] {
    for (gantry::vertex_id v = 0; v < vertices; ++v)
      for (gantry::device_id d = 0; d < mixed.device_count(); ++d) sink += kind_model.compute_time(v, d);
  });

  std::printf("bench_cluster: %zu devices (sink %g)\n", m, sink);
  std::printf("  copy of the device vector (baseline)        %9.3f ms\n", baseline * 1e3);
  std::printf("  uniform cluster + 1 link + graph_model       %9.3f ms (%.1fx baseline)\n", build * 1e3,
              build / baseline);
  std::printf("  read a 20,000-device cluster, 1 own link     %9.3f ms\n", read * 1e3);
  std::printf("  70,000 kinds: set, look up, list             %9.3f ms\n", kind_times * 1e3);
  bench::print_target("cluster_100k_model_build_seconds", build, 1.0);
  bench::print_target("cluster_100k_model_build_over_baseline", build / baseline, 100.0);
  bench::print_target("cluster_20k_file_read_seconds", read, 1.0);
  std::printf("  compute_time, 2 kinds: direct read (baseline) %7.2f ns/call\n", direct / calls * 1e9);
  std::printf("  compute_time, 2 kinds: graph_model           %7.2f ns/call (%.2fx baseline)\n",
              through_model / calls * 1e9, through_model / direct);
  bench::print_target("kinds_70k_set_lookup_list_seconds", kind_times, 1.0);
  bench::print_target("compute_time_with_kinds_over_direct_read", through_model / direct, 2.0);
  return 0;
}
