// One entry per reader for the libFuzzer targets (fuzz_<reader>.cpp) and for the doctest that
// replays the seed corpora and the regression inputs under ASan (test_fuzz_regressions.cpp). An
// entry reads the bytes as a file would be read (gzip data is inflated, with a small cap) and
// returns whether the reader accepted them; a reader may throw parse_error or invalid_input and
// nothing else, so any other exception, crash or sanitizer report is a finding.
#pragma once

#include <gantry/io/import_dot.hpp>
#include <gantry/io/import_pipedream.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/io/json_placement.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace gantry::fuzz {

enum class outcome { accepted, rejected };

// Small limits keep each run fast: the regression inputs include a gzip bomb.
inline constexpr read_limits limits{.max_nesting = 256, .max_inflated_bytes = std::size_t{16} << 20};

template <class Read>
outcome run_reader(std::string_view bytes, Read&& read) {
  try {
    const std::string text =
        is_gzip(bytes) ? gzip_decompress(bytes, "fuzz", limits.max_inflated_bytes) : std::string(bytes);
    read(std::string_view(text));
    return outcome::accepted;
  } catch (const parse_error&) {
    return outcome::rejected;
  } catch (const invalid_input&) {
    return outcome::rejected;
  }
}

// A graph that reads must write and read back to the same text.
inline outcome graph_json(std::string_view bytes) {
  return run_reader(bytes, [](std::string_view text) {
    const graph_file file = parse_graph_file(text, "fuzz.json", limits);
    const std::string written = graph_to_json_text(file.graph, file.metadata);
    if (graph_to_json_text(parse_graph_file(written, "rewritten.json", limits).graph, file.metadata) != written)
      throw std::logic_error("a graph read from the input does not survive write and read");
  });
}

inline outcome cluster_json(std::string_view bytes) {
  return run_reader(bytes, [](std::string_view text) {
    const cluster c = read_cluster_json(text, "fuzz.json", limits);
    const std::string written = cluster_to_json_text(c);
    if (cluster_to_json_text(read_cluster_json(written, "rewritten.json", limits)) != written)
      throw std::logic_error("a cluster read from the input does not survive write and read");
  });
}

// Placements are read against a fixed graph a -> b -> c, a -> c and two devices, the names the
// seed uses; the embedded cluster is read too.
inline outcome placement_json(std::string_view bytes) {
  static const graph g = [] {
    graph built;
    built.add_vertex("a", 1.0);
    built.add_vertex("b", 2.0);
    built.add_vertex("c", 1.0);
    built.add_edge(0, 1, 100);
    built.add_edge(1, 2, 100);
    built.add_edge(0, 2, 10);
    return built;
  }();
  static const cluster devices = cluster::uniform(2, 1 << 20, {.latency = 1e-5, .bandwidth = 1e9});
  return run_reader(bytes, [](std::string_view text) {
    const auto document = detail::parse_json_text(text, "fuzz.json", limits.max_nesting);
    const placement_file file = placement_from_json(document, g, devices, "fuzz.json");
    if (file.placement.outcome.code == status::ok) require_complete_placement(file, "fuzz.json");
    (void)placement_cluster_from_json(document, "fuzz.json");
  });
}

inline outcome dot(std::string_view bytes) {
  return run_reader(bytes, [](std::string_view text) {
    const graph g = parse_graph_dot(text, "fuzz.dot", limits);
    (void)graph_to_json_text(g);  // what the importer accepts, the JSON writer can write
  });
}

inline outcome pipedream(std::string_view bytes) {
  return run_reader(bytes, [](std::string_view text) {
    const graph g = parse_graph_pipedream(text, "graph.txt");
    (void)graph_to_json_text(g);
  });
}

}  // namespace gantry::fuzz
