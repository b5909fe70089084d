// What including gantry costs a user: the compiler's CPU time and peak memory on three programs,
// each compiled (-std=c++20 -O2 -c) by the compiler that built this benchmark, median of 3 runs:
//  - a minimal m-ETF program (a three-vertex graph placed on two devices), against
//  - Boost's Dijkstra on a small adjacency_list, the reference: a header-only graph library's
//    smallest useful program, compiled in the same run;
//  - the README's ten-line program (`## In ten lines`, read from README.md as it stands).
// The gantry programs are compiled twice: header-only (the default) and with
// GANTRY_SEPARATE_COMPILATION, where the algorithms' default instances and the graph reader are
// declared only (gantry/compiled.hpp, compiled once per program: its cost is printed, once). The
// targets are on both: each program's CPU as a ratio to Dijkstra's, and the README program's peak
// memory.
//   bench_compile [--source DIR] [--tool]   (DIR: the gantry checkout; default where it was built)
// --tool also compiles each of the gantry tool's own sources (tools/gantry/*.cpp) once and reports
// the heaviest translation unit.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_support.hpp"

namespace {

namespace fs = std::filesystem;

using cost = bench::child_cost;

// Median CPU time and peak memory of `repeats` compilations of `source`.
cost compile(const fs::path& source, const std::vector<std::string>& flags, int repeats) {
  std::vector<double> cpu, peak;
  cost last;
  for (int i = 0; i < repeats; ++i) {
    std::vector<std::string> args{GANTRY_BENCH_CXX};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"-c", source.string(), "-o", "/dev/null"});
    last = bench::run_child(args);
    if (!last.ok) return last;
    cpu.push_back(last.cpu_seconds);
    peak.push_back(last.peak_mb);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(peak.begin(), peak.end());
  return {.cpu_seconds = cpu[cpu.size() / 2], .peak_mb = peak[peak.size() / 2], .ok = true};
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// The first ```cpp block after the README's "## In ten lines".
std::string readme_program(const fs::path& readme) {
  std::ifstream in(readme);
  std::string line, code;
  bool section = false, inside = false;
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) section = line == "## In ten lines";
    if (!section) continue;
    if (!inside && line == "```cpp") {
      inside = true;
    } else if (inside && line == "```") {
      return code;
    } else if (inside) {
      code += line + "\n";
    }
  }
  return {};
}

const char* minimal_m_etf = R"(#include <gantry/place/etf.hpp>

int main() {
  gantry::graph g;
  const auto a = g.add_vertex({.name = "a", .compute = 1.0, .output = 1 << 20});
  const auto b = g.add_vertex({.name = "b", .compute = 2.0});
  const auto c = g.add_vertex({.name = "c", .compute = 1.0});
  g.add_edge(a, b, 1 << 20);
  g.add_edge(a, c, 1 << 20);
  const auto devices = gantry::cluster::uniform(2, 1 << 30, {.latency = 1e-5, .bandwidth = 1e10});
  const gantry::graph_model model(g, devices);
  return gantry::m_etf(g, model, devices).ok() ? 0 : 1;
}
)";

const char* boost_dijkstra = R"(#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>

#include <vector>

int main() {
  using graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                      boost::property<boost::edge_weight_t, double>>;
  graph g(3);
  boost::add_edge(0, 1, 1.0, g);
  boost::add_edge(0, 2, 4.0, g);
  boost::add_edge(1, 2, 2.0, g);
  std::vector<double> distance(boost::num_vertices(g));
  boost::dijkstra_shortest_paths(g, 0, boost::distance_map(distance.data()));
  return distance[2] == 3.0 ? 0 : 1;
}
)";

}  // namespace

int main(int argc, char** argv) {
  fs::path source = GANTRY_SOURCE_DIR;
  bool tool = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--source") == 0 && i + 1 < argc) {
      source = argv[++i];
    } else if (std::strcmp(argv[i], "--tool") == 0) {
      tool = true;
    } else {
      std::fprintf(stderr, "usage: bench_compile [--source DIR] [--tool]\n");
      return 2;
    }
  }
  if (!fs::exists(source / "include" / "gantry" / "gantry.hpp")) {
    std::fprintf(stderr, "bench_compile: %s is not a gantry checkout (no include/gantry/gantry.hpp)\n", source.c_str());
    return 2;
  }
  const std::string readme = readme_program(source / "README.md");
  if (readme.empty()) {
    std::fprintf(stderr, "bench_compile: no ```cpp block under \"## In ten lines\" in %s\n",
                 (source / "README.md").c_str());
    return 2;
  }
  const fs::path dir = fs::temp_directory_path() / ("gantry_bench_compile_" + std::to_string(getpid()));
  fs::create_directories(dir);
  write(dir / "minimal_m_etf.cpp", minimal_m_etf);
  write(dir / "boost_dijkstra.cpp", boost_dijkstra);
  write(dir / "readme.cpp", readme);
  const std::vector<std::string> flags{"-std=c++20", "-O2", "-I" + (source / "include").string()};
  std::printf("compiler: %s, flags: -std=c++20 -O2 -c; median of 3 compilations each; load average %s\n",
              GANTRY_BENCH_CXX, [] {
                static char text[32] = "?";
                double load[1];
                if (getloadavg(load, 1) == 1) std::snprintf(text, sizeof text, "%.2f", load[0]);
                return text;
              }());

  std::vector<std::string> separate = flags;
  separate.push_back("-DGANTRY_SEPARATE_COMPILATION");
  write(dir / "compiled.cpp", "#include <gantry/compiled.hpp>\n");
  const cost dijkstra = compile(dir / "boost_dijkstra.cpp", flags, 3);
  const cost m_etf_inline = compile(dir / "minimal_m_etf.cpp", flags, 3);
  const cost ten_lines_inline = compile(dir / "readme.cpp", flags, 3);
  const cost m_etf = compile(dir / "minimal_m_etf.cpp", separate, 3);
  const cost ten_lines = compile(dir / "readme.cpp", separate, 3);
  const cost compiled_part = compile(dir / "compiled.cpp", separate, 1);
  fs::remove_all(dir);
  if (!dijkstra.ok || !m_etf_inline.ok || !ten_lines_inline.ok || !m_etf.ok || !ten_lines.ok || !compiled_part.ok) {
    std::fprintf(stderr,
                 "bench_compile: a program did not compile (Boost Dijkstra %s; header-only: minimal m-ETF %s, README "
                 "%s; separate: minimal m-ETF %s, README %s, gantry/compiled.hpp %s)\n",
                 dijkstra.ok ? "ok" : "failed", m_etf_inline.ok ? "ok" : "failed",
                 ten_lines_inline.ok ? "ok" : "failed", m_etf.ok ? "ok" : "failed", ten_lines.ok ? "ok" : "failed",
                 compiled_part.ok ? "ok" : "failed");
    return 1;
  }
  const auto show = [](const char* name, const cost& c, const cost& reference) {
    std::printf("%-44s %6.2f s CPU (%5.2fx Boost's Dijkstra)  peak %6.0f MB\n", name, c.cpu_seconds,
                c.cpu_seconds / reference.cpu_seconds, c.peak_mb);
  };
  show("Boost Dijkstra program", dijkstra, dijkstra);
  show("minimal m-ETF program, header-only", m_etf_inline, dijkstra);
  show("README ten-line program, header-only", ten_lines_inline, dijkstra);
  show("minimal m-ETF program, separate compilation", m_etf, dijkstra);
  show("README ten-line program, separate compilation", ten_lines, dijkstra);
  std::printf("%-44s %6.2f s CPU, once per program         peak %6.0f MB\n",
              "gantry/compiled.hpp (every compiled part)", compiled_part.cpu_seconds, compiled_part.peak_mb);

  double heaviest_mb = 0;
  if (tool) {
    std::vector<std::string> tool_flags = flags;
    tool_flags[1] = "-O3";
    // As the tool's build compiles them with GLPK and Eigen found (tools/CMakeLists.txt).
    for (const char* flag : {"-I/usr/include/eigen3", "-DGANTRY_SEPARATE_COMPILATION", "-DGANTRY_CLI_HAS_GLPK=1",
                             "-DGANTRY_CLI_HAS_LEARN=1", "-DGANTRY_CLI_HAS_CUDA=0"})
      tool_flags.push_back(flag);
    std::vector<fs::path> units;
    for (const auto& entry : fs::directory_iterator(source / "tools" / "gantry"))
      if (entry.path().extension() == ".cpp") units.push_back(entry.path());
    std::sort(units.begin(), units.end());
    std::string heaviest;
    for (const auto& unit : units) {
      const cost c = compile(unit, tool_flags, 1);
      std::printf("  tool unit %-28s %6.2f s CPU  peak %6.0f MB%s\n", unit.filename().c_str(), c.cpu_seconds, c.peak_mb,
                  c.ok ? "" : "  (did not compile here)");
      if (c.ok && c.peak_mb > heaviest_mb) {
        heaviest_mb = c.peak_mb;
        heaviest = unit.filename().string();
      }
    }
    std::printf("heaviest tool unit: %s, %.0f MB\n", heaviest.c_str(), heaviest_mb);
  }

  const auto over_dijkstra = [&](const cost& c) { return c.cpu_seconds / dijkstra.cpu_seconds; };
  bench::print_target("minimal_m_etf_header_only_over_boost_dijkstra_cpu", over_dijkstra(m_etf_inline), 2.0);
  bench::print_target("readme_program_header_only_over_boost_dijkstra_cpu", over_dijkstra(ten_lines_inline), 3.0);
  bench::print_target("readme_program_header_only_peak_mb", ten_lines_inline.peak_mb, 1024);
  bench::print_target("minimal_m_etf_separate_over_boost_dijkstra_cpu", over_dijkstra(m_etf), 1.5);
  bench::print_target("readme_program_separate_over_boost_dijkstra_cpu", over_dijkstra(ten_lines), 3.0);
  bench::print_target("readme_program_separate_peak_mb", ten_lines.peak_mb, 500);
  if (tool) bench::print_target("heaviest_tool_unit_peak_mb", heaviest_mb, 1024);
  return 0;
}
