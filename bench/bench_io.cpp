// Reading and writing the shipped graphs (examples/graphs/*.json.gz) against placing them: a user
// of the tool should wait for the placer, not the parser. Baseline, measured in the same run on the
// same graph: m-ETF on 4 devices of unlimited memory. Reported per graph: the inflated JSON size,
// read (inflate + parse + build + checks) and write (document text, no compression) times as
// ratios to m-ETF and as throughput in MB/s of JSON text; the phases of a read (inflate, parse).
#include <gantry/io/io.hpp>
#include <gantry/place/etf.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench_support.hpp"

#ifndef GANTRY_SOURCE_DIR
#define GANTRY_SOURCE_DIR "."
#endif

int main() {
  using namespace gantry;
  const std::vector<std::string> names{"inception_v3", "resnet50", "gpt2", "gnmt"};
  double worst_read_ratio = 0, worst_write_ratio = 0, least_read_rate = 1e300, least_write_rate = 1e300;
  std::printf("%-14s %9s %9s %8s %9s %9s %9s %11s %11s %9s %9s\n", "graph", "vertices", "JSON MB", "m-ETF", "inflate",
              "read", "write", "read/m-ETF", "write/m-ETF", "read MB/s", "write MB/s");
  for (const auto& name : names) {
    const std::string path = std::string(GANTRY_SOURCE_DIR) + "/examples/graphs/" + name + ".json.gz";
    std::ifstream file(path, std::ios::binary);
    const std::string compressed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const std::string text = gzip_decompress(compressed, path);
    const graph g = read_graph(path);
    const auto devices = cluster::uniform(4, unlimited_memory, {.latency = 1e-5, .bandwidth = 12e9});
    const graph_model model(g, devices);
    const int repeats = g.vertex_count() > 10000 ? 7 : 21;
    const double place = bench::median_seconds(repeats, [&] { (void)m_etf(g, model, devices); });
    const double inflate = bench::median_seconds(repeats, [&] { (void)gzip_decompress(compressed, path); });
    const double read = bench::median_seconds(repeats, [&] { (void)read_graph(path); });
    const double parse = bench::median_seconds(repeats, [&] { (void)parse_graph_file(text, path); });
    const double write = bench::median_seconds(repeats, [&] { (void)graph_to_json_text(g); });
    const double megabytes = static_cast<double>(text.size()) / 1e6;
    std::printf("%-14s %9zu %9.2f %6.2fms %7.2fms %7.2fms %7.2fms %10.2fx %10.2fx %9.0f %9.0f\n", name.c_str(),
                g.vertex_count(), megabytes, place * 1e3, inflate * 1e3, read * 1e3, write * 1e3, read / place,
                write / place, megabytes / parse, megabytes / write);
    worst_read_ratio = std::max(worst_read_ratio, read / place);
    worst_write_ratio = std::max(worst_write_ratio, write / place);
    least_read_rate = std::min(least_read_rate, megabytes / parse);
    least_write_rate = std::min(least_write_rate, megabytes / write);
  }
  std::printf("read MB/s parses inflated text (no gzip); read/m-ETF includes reading the file and inflating it\n");
#if defined(GANTRY_HAS_LIBDEFLATE)
  std::printf("inflating with libdeflate (gantry::io found it at build time)\n");
#else
  std::printf("inflating with zlib (libdeflate not found at build time)\n");
#endif
  bench::print_target("read_over_m_etf_worst_graph", worst_read_ratio, 2.0);
  bench::print_target("write_over_m_etf_worst_graph", worst_write_ratio, 2.0);
  bench::print_target_at_least("read_MB_per_s_slowest_graph_at_least", least_read_rate, 100.0);
  bench::print_target_at_least("write_MB_per_s_slowest_graph_at_least", least_write_rate, 100.0);
  return 0;
}
