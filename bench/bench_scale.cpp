// The whole path a user runs on a large graph, as the gantry tool's place and simulate run it:
// read the graph file, place with m-ETF, simulate the placement, write the placement. The graph is
// a seeded random layered DAG generated in the same run (1M vertices, 100 per layer, about two
// edges out of each), written once as gantry's graph JSON; 8 devices, unlimited memory. The path
// runs in a child process of its own (this program again, --path), so that its peak resident set
// is the path's alone and not the generator's; each stage is timed there, median of 3 runs, and
// printed with its share. Baseline, in the same run: boost::topological_sort on an
// adjacency_list<vecS, vecS, directedS> copy of the same graph. Then m-ETF, HEFT, Critical Path and
// simulate() as ratios to that sort at 100k and at 1M vertices, to show whether the ratio grows.
//   bench_scale [--vertices N]   (default 1000000; the scaling rows use 100k and N)
#include <gantry/io/json_graph.hpp>
#include <gantry/io/json_placement.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/random_dag.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench_support.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace gantry;

constexpr std::size_t device_count = 8;
constexpr int repeats = 3;

cluster devices() { return cluster::uniform(device_count, unlimited_memory, {.latency = 1e-5, .bandwidth = 12e9}); }

graph generate(std::size_t n) {
  return random_layered_dag({.vertices = n,
                             .layers = std::max<std::size_t>(1, n / 100),
                             .mean_out_degree = 2.0,
                             .max_layer_skip = 1,
                             .seed = 7});
}

// The stages' median seconds, as the child measures them.
struct stages {
  double read = 0, place = 0, simulate = 0, write = 0;
  [[nodiscard]] double total() const { return read + place + simulate + write; }
};

// The child: reads `graph_path`, places, simulates and writes the placement to `out_path`, each
// stage `repeats` times; writes the four medians to `times_path`. Exits 1 on a failed stage.
int run_path(const char* graph_path, const char* out_path, const char* times_path) {
  const cluster c = devices();
  graph g;
  stages s;
  s.read = bench::median_seconds(repeats, [&] { g = read_graph(graph_path); });
  const graph_model model(g, c);
  list_schedule_result placed;
  s.place = bench::median_seconds(repeats, [&] { placed = m_etf(g, model, c); });
  if (!placed.ok()) {
    std::fprintf(stderr, "bench_scale: m-ETF failed: %s\n", placed.placement.outcome.message.c_str());
    return 1;
  }
  const placement& p = placed.placement;
  simulation_result run;
  s.simulate = bench::median_seconds(repeats, [&] { run = simulate(g, model, c, p.device, {.priority = p.order}); });
  if (!run.ok()) {
    std::fprintf(stderr, "bench_scale: the simulation failed: %s\n", run.outcome.message.c_str());
    return 1;
  }
  s.write = bench::median_seconds(repeats, [&] { write_placement(out_path, g, c, p); });
  std::ofstream(times_path) << s.read << ' ' << s.place << ' ' << s.simulate << ' ' << s.write << '\n';
  return 0;
}

// Runs this program with --path; its stage times and its peak resident set in MB.
bool spawn_path(const fs::path& graph_path, const fs::path& dir, stages& s, double& peak_mb) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string out = (dir / "placement.json").string(), times = (dir / "times.txt").string();
  std::vector<std::string> args{self, "--path", graph_path.string(), out, times};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return false;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  std::ifstream in(times);
  return static_cast<bool>(in >> s.read >> s.place >> s.simulate >> s.write);
}

double topological_sort_seconds(const graph& g) {
  using boost_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  boost_graph bg(g.vertex_count());
  for (edge_id e = 0; e < g.edge_count(); ++e) boost::add_edge(g.source(e), g.target(e), bg);
  std::vector<boost_graph::vertex_descriptor> order;
  return bench::median_seconds(5, [&] {
    order.clear();
    boost::topological_sort(bg, std::back_inserter(order));
  });
}

// m-ETF, HEFT, Critical Path and simulate() on a graph of n vertices, over the topological sort.
struct scaling {
  double m_etf = 0, heft = 0, critical_path = 0, simulate = 0;
};
scaling scale_row(std::size_t n) {
  const graph g = generate(n);
  const cluster c = devices();
  const graph_model model(g, c);
  const double sort = topological_sort_seconds(g);
  list_schedule_result etf_run;
  scaling r;
  r.m_etf = bench::median_seconds(repeats, [&] { etf_run = m_etf(g, model, c); }) / sort;
  r.heft = bench::median_seconds(repeats, [&] { (void)heft(g, model, c); }) / sort;
  r.critical_path = bench::median_seconds(repeats, [&] { (void)critical_path_schedule(g, model, c); }) / sort;
  const placement& p = etf_run.placement;
  r.simulate =
      bench::median_seconds(repeats, [&] { (void)simulate(g, model, c, p.device, {.priority = p.order}); }) / sort;
  std::printf(
      "%9zu vertices %9zu edges: topological sort %.4f s; m-ETF %5.1fx, HEFT %5.1fx, Critical Path %5.1fx, "
      "simulate %4.1fx\n",
      g.vertex_count(), g.edge_count(), sort, r.m_etf, r.heft, r.critical_path, r.simulate);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--path") == 0) return run_path(argv[2], argv[3], argv[4]);
  std::size_t n = 1'000'000;
  if (argc == 3 && std::strcmp(argv[1], "--vertices") == 0) {
    n = std::strtoull(argv[2], nullptr, 10);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: bench_scale [--vertices N]\n");
    return 2;
  }
  if (n < 100'000) {
    std::fprintf(stderr, "bench_scale: --vertices must be at least 100000\n");
    return 2;
  }
  const fs::path dir = fs::temp_directory_path() / ("gantry_bench_scale_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path graph_path = dir / "graph.json";
  double sort = 0, json_mb = 0;
  std::size_t edges = 0;
  {
    const graph g = generate(n);
    edges = g.edge_count();
    write_graph(graph_path, g);
    json_mb = static_cast<double>(fs::file_size(graph_path)) / 1e6;
    sort = topological_sort_seconds(g);
  }
  std::printf("graph: %zu vertices, %zu edges, %.1f MB of graph JSON; %zu devices, unlimited memory\n", n, edges,
              json_mb, device_count);
  std::printf("boost::topological_sort: %.4f s\n", sort);
  stages s;
  double peak_mb = 0;
  const bool ran = spawn_path(graph_path, dir, s, peak_mb);
  fs::remove_all(dir);
  if (!ran) {
    std::fprintf(stderr, "bench_scale: the path's child process failed\n");
    return 1;
  }
  const auto row = [&](const char* name, double t) {
    std::printf("  %-20s %8.3f s  %5.1f%%  (%6.1fx topological sort)\n", name, t, 100 * t / s.total(), t / sort);
  };
  std::printf("the path, median of %d runs each, in a process of its own (peak RSS %.0f MB):\n", repeats, peak_mb);
  row("read the graph", s.read);
  row("place (m-ETF)", s.place);
  row("simulate", s.simulate);
  row("write the placement", s.write);
  std::printf("  %-20s %8.3f s\n", "total", s.total());
  std::printf("reading: %.0f MB/s of graph JSON, %.2fx m-ETF's time\n", json_mb / s.read, s.read / s.place);

  const scaling small = scale_row(100'000), large = scale_row(n);
  bench::print_target("path_1m_read_place_simulate_write_seconds", s.total(), 2.0);
  bench::print_target("path_1m_peak_rss_mb", peak_mb, 1536);
  bench::print_target("read_over_m_etf_1m", s.read / s.place, 1.0);
  bench::print_target_at_least("read_MB_per_s_1m_at_least", json_mb / s.read, 1000);
  bench::print_target("m_etf_over_topological_sort_100k", small.m_etf, 10);
  bench::print_target("m_etf_over_topological_sort_1m", large.m_etf, 10);
  bench::print_target("heft_over_topological_sort_100k", small.heft, 10);
  bench::print_target("heft_over_topological_sort_1m", large.heft, 10);
  bench::print_target("critical_path_over_topological_sort_100k", small.critical_path, 10);
  bench::print_target("critical_path_over_topological_sort_1m", large.critical_path, 10);
  bench::print_target("simulate_over_topological_sort_100k", small.simulate, 2);
  bench::print_target("simulate_over_topological_sort_1m", large.simulate, 2);
  return 0;
}
