// The whole path a user runs on a large graph, as the gantry tool's place and simulate run it:
// read the graph file, place with m-ETF, simulate the placement, write the placement. The graph is
// a seeded random layered DAG generated in the same run (1M vertices, 100 per layer, about two
// edges out of each), written once as gantry's graph JSON; 8 devices, unlimited memory. The path
// runs in a child process of its own (this program again, --path), so that its peak resident set
// is the path's alone and not the generator's; each stage is timed there, median of 3 runs, and
// printed with its share, with the heap bytes it holds (counted by this program's operator new):
// the graph, its CSR snapshot, and what m-ETF and simulate() hold at their peaks beyond them.
// Beside it, the gantry tool's `place` on the same file (when the tool was built), median of 3.
// Baseline, in the same run: boost::topological_sort on an adjacency_list<vecS, vecS, directedS>
// copy of the same graph. Then m-ETF, HEFT, Critical Path and simulate() as ratios to that sort at
// 100k and at 1M vertices, to show whether the ratio grows; and memory-aware m-ETF at 60% of the
// one-device peak, alone and with colocation groups of 10 vertices, against unlimited memory.
//   bench_scale [--vertices N]   (default 1000000; the scaling rows use 100k and N)
#include <gantry/graph/snapshot.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/io/json_placement.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/random_dag.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "bench_support.hpp"

// Heap bytes in use and their peak, counted by this program's operator new and delete (the usable
// size of each block), so that the child can say what each stage holds.
namespace {
std::atomic<std::size_t> heap_live{0}, heap_peak{0};

void* counted(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  const std::size_t size = malloc_usable_size(p);
  const std::size_t now = heap_live.fetch_add(size, std::memory_order_relaxed) + size;
  std::size_t peak = heap_peak.load(std::memory_order_relaxed);
  while (now > peak && !heap_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return p;
}
void* counted_aligned(std::size_t n, std::align_val_t alignment) {
  const auto a = static_cast<std::size_t>(alignment);
  return counted(std::aligned_alloc(a, (std::max<std::size_t>(n, 1) + a - 1) / a * a));
}
void uncounted(void* p) noexcept {
  if (p == nullptr) return;
  heap_live.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}
}  // namespace

void* operator new(std::size_t n) { return counted(std::malloc(std::max<std::size_t>(n, 1))); }
void* operator new[](std::size_t n) { return counted(std::malloc(std::max<std::size_t>(n, 1))); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_aligned(n, a); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t) noexcept { uncounted(p); }
void operator delete(void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { uncounted(p); }

namespace {

namespace fs = std::filesystem;
using namespace gantry;

constexpr std::size_t device_count = 8;
constexpr int repeats = 3;

// The gantry tool's defaults for -d 8: 10 us and 12 GB/s between any two devices, in parallel.
cluster devices(byte_count memory = unlimited_memory) {
  return cluster::uniform(device_count, memory, {.latency = 1e-5, .bandwidth = 12e9});
}

graph generate(std::size_t n) {
  return random_layered_dag({.vertices = n,
                             .layers = std::max<std::size_t>(1, n / 100),
                             .mean_out_degree = 2.0,
                             .max_layer_skip = 1,
                             .seed = 7});
}

// The stages' median seconds, and the heap bytes they hold, as the child measures them.
struct stages {
  double read = 0, place = 0, simulate = 0, write = 0;
  double graph_bytes = 0;     // the gantry::graph read (names, properties, adjacency)
  double snapshot_bytes = 0;  // its CSR snapshot (csr_graph)
  double engine_peak = 0;     // the most m-ETF holds at once beyond the graph, its result included
  double simulator_peak = 0;  // the most simulate() holds at once beyond the graph and placement
  [[nodiscard]] double total() const { return read + place + simulate + write; }
};

// The heap bytes `f` holds at its peak beyond what was in use before it.
template <class F>
double peak_beyond(F&& f) {
  const std::size_t before = heap_live.load();
  heap_peak.store(before);
  f();
  return static_cast<double>(heap_peak.load() - before);
}

// The child: reads `graph_path`, places, simulates and writes the placement to `out_path`, each
// stage `repeats` times; writes the four medians and the heap figures to `times_path`. Exits 1 on
// a failed stage.
int run_path(const char* graph_path, const char* out_path, const char* times_path) {
  const cluster c = devices();
  graph g;
  stages s;
  s.read = bench::median_seconds(repeats, [&] { g = read_graph(graph_path); });
  {
    const std::size_t before = heap_live.load();
    graph held = read_graph(graph_path);
    s.graph_bytes = static_cast<double>(heap_live.load() - before);
    const csr_graph csr = snapshot(held);
    s.snapshot_bytes = static_cast<double>(heap_live.load() - before) - s.graph_bytes;
  }
  const graph_model model(g, c);
  list_schedule_result placed;
  s.place = bench::median_seconds(repeats, [&] { placed = m_etf(g, model, c); });
  if (!placed.ok()) {
    std::fprintf(stderr, "bench_scale: m-ETF failed: %s\n", placed.placement.outcome.message.c_str());
    return 1;
  }
  {
    list_schedule_result again;
    s.engine_peak = peak_beyond([&] { again = m_etf(g, model, c); });
  }
  const placement& p = placed.placement;
  simulation_result run;
  s.simulate = bench::median_seconds(repeats, [&] { run = simulate(g, model, c, p.device, {.priority = p.order}); });
  if (!run.ok()) {
    std::fprintf(stderr, "bench_scale: the simulation failed: %s\n", run.outcome.message.c_str());
    return 1;
  }
  run = {};
  s.simulator_peak = peak_beyond([&] { run = simulate(g, model, c, p.device, {.priority = p.order}); });
  s.write = bench::median_seconds(repeats, [&] { write_placement(out_path, g, c, p); });
  std::ofstream(times_path) << s.read << ' ' << s.place << ' ' << s.simulate << ' ' << s.write << ' ' << s.graph_bytes
                            << ' ' << s.snapshot_bytes << ' ' << s.engine_peak << ' ' << s.simulator_peak << '\n';
  return 0;
}

// Runs this program with --path; its stage times and heap figures, and its peak resident set in MB.
bool spawn_path(const fs::path& graph_path, const fs::path& dir, stages& s, double& peak_mb) {
  const std::string times = (dir / "times.txt").string();
  const bench::child_cost child = bench::run_child({fs::read_symlink("/proc/self/exe").string(), "--path",
                                                    graph_path.string(), (dir / "placement.json").string(), times});
  if (!child.ok) return false;
  peak_mb = child.peak_mb;
  std::ifstream in(times);
  return static_cast<bool>(in >> s.read >> s.place >> s.simulate >> s.write >> s.graph_bytes >> s.snapshot_bytes >>
                           s.engine_peak >> s.simulator_peak);
}

// The gantry tool's `place` on the graph file with its defaults for -d 8 (m-ETF, the links of
// devices()): median wall seconds of `repeats` runs; 0 when the tool was not built or failed.
double tool_place_seconds([[maybe_unused]] const fs::path& graph_path, [[maybe_unused]] const fs::path& dir) {
#if defined(GANTRY_BENCH_TOOL)
  std::vector<double> walls;
  for (int i = 0; i < repeats; ++i) {
    const bench::child_cost child =
        bench::run_child({GANTRY_BENCH_TOOL, "place", "-g", graph_path.string(), "-d", std::to_string(device_count),
                          "-o", (dir / "tool_placement.json").string()},
                         /*quiet=*/true);
    if (!child.ok) return 0;
    walls.push_back(child.wall_seconds);
  }
  std::sort(walls.begin(), walls.end());
  return walls[walls.size() / 2];
#else
  return 0;
#endif
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

// Memory-aware m-ETF on a graph of n vertices, 8 devices of 60% of the peak of the graph run in
// Kahn order on one device, alone and with colocation groups of 10 consecutive vertices (ten per
// layer), against m-ETF with unlimited memory: seconds (one run each; the unlimited one a median),
// and whether each fitted.
struct memory_aware {
  double unlimited = 0, tight = 0, grouped = 0;
  bool tight_ok = false, grouped_ok = false;
};
memory_aware memory_row(std::size_t n) {
  const graph g = generate(n);
  const cluster one = cluster::uniform(1, unlimited_memory);
  const placement alone = single_device(g, one);
  const auto run = simulate(g, graph_model(g, one), one, std::span<const device_id>(alone.device),
                            {.policy = ready_policy::strict_order, .priority = alone.order});
  const byte_count peak = run.ok() ? run.schedule.peak_memory[0] : 0;
  const cluster roomy = devices(), tight = devices(peak * 6 / 10);
  const graph_model roomy_model(g, roomy), tight_model(g, tight);
  std::vector<std::uint32_t> group(g.vertex_count());
  for (vertex_id v = 0; v < g.vertex_count(); ++v) group[v] = v / 10;
  memory_aware r;
  r.unlimited = bench::median_seconds(repeats, [&] { (void)m_etf(g, roomy_model, roomy); });
  list_schedule_result fitted, grouped;
  r.tight = bench::median_seconds(1, [&] { fitted = m_etf(g, tight_model, tight); });
  r.grouped = bench::median_seconds(1, [&] { grouped = m_etf(g, tight_model, tight, {.group = group}); });
  r.tight_ok = fitted.ok();
  r.grouped_ok = grouped.ok();
  const auto said = [](const list_schedule_result& x) {
    return x.ok() ? std::string("fits") : "fails: " + x.placement.outcome.message.substr(0, 160) + "...";
  };
  std::printf("memory-aware m-ETF, %zu vertices, 8 devices of %.1f MB (60%% of the one-device peak %.1f MB):\n", n,
              static_cast<double>(peak) * 0.6 / 1e6, static_cast<double>(peak) / 1e6);
  std::printf("  unlimited memory      %8.3f s\n", r.unlimited);
  std::printf("  60%%                   %8.3f s  (%.2fx unlimited) %s\n", r.tight, r.tight / r.unlimited,
              said(fitted).c_str());
  std::printf("  60%%, groups of 10     %8.3f s  (%.2fx unlimited) %s\n", r.grouped, r.grouped / r.unlimited,
              said(grouped).c_str());
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
  const double tool_seconds = ran ? tool_place_seconds(graph_path, dir) : 0;
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
  const double items = static_cast<double>(n + edges);
  const double model_bytes = s.graph_bytes + s.snapshot_bytes;
  std::printf(
      "heap, per vertex + edge: the graph %.1f B, its CSR snapshot %.1f B (together %.1f B); per vertex: m-ETF's "
      "peak beyond them %.1f B, simulate()'s %.1f B\n",
      s.graph_bytes / items, s.snapshot_bytes / items, model_bytes / items, s.engine_peak / static_cast<double>(n),
      s.simulator_peak / static_cast<double>(n));
  if (tool_seconds > 0)
    std::printf("the gantry tool's place on the same file: %.3f s (median of %d), %.2fx the library path\n",
                tool_seconds, repeats, tool_seconds / s.total());
  else std::printf("the gantry tool's place: not measured (the tool was not built with this benchmark)\n");

  const scaling small = scale_row(100'000), large = scale_row(n);
  const memory_aware memory = memory_row(n);
  // Target names carry the size: 1m by default, else the vertex count.
  const std::string size = n == 1'000'000 ? "1m" : std::to_string(n);
  const auto target = [&](const std::string& name, double measured, double limit) {
    bench::print_target((name + "_" + size).c_str(), measured, limit);
  };
  target("path_read_place_simulate_write_seconds", s.total(), 2.0);
  target("path_peak_rss_mb", peak_mb, 1536);
  if (tool_seconds > 0) target("tool_place_over_library_path", tool_seconds / s.total(), 1.3);
  target("read_over_m_etf", s.read / s.place, 1.0);
  bench::print_target_at_least(("read_MB_per_s_" + size + "_at_least").c_str(), json_mb / s.read, 1000);
  target("graph_and_snapshot_bytes_per_vertex_and_edge", model_bytes / items, 64);
  bench::print_target("m_etf_over_topological_sort_100k", small.m_etf, 10);
  target("m_etf_over_topological_sort", large.m_etf, 10);
  bench::print_target("heft_over_topological_sort_100k", small.heft, 10);
  target("heft_over_topological_sort", large.heft, 10);
  bench::print_target("critical_path_over_topological_sort_100k", small.critical_path, 10);
  target("critical_path_over_topological_sort", large.critical_path, 10);
  bench::print_target("simulate_over_topological_sort_100k", small.simulate, 2);
  target("simulate_over_topological_sort", large.simulate, 2);
  // A run that does not fit counts as infinitely slow.
  target("m_etf_60pct_over_unlimited",
         memory.tight_ok ? memory.tight / memory.unlimited : std::numeric_limits<double>::infinity(), 2);
  target("m_etf_60pct_groups_over_unlimited",
         memory.grouped_ok ? memory.grouped / memory.unlimited : std::numeric_limits<double>::infinity(), 2);
  return 0;
}
