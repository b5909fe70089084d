// Graphviz DOT import and export: a hand-written file with comments, quoting, chains, defaults
// and subgraphs; exact round-trips of generated graphs; malformed files rejected with the file,
// the line and the reason.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/io/import_dot.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <random>
#include <string>

using namespace gantry;

namespace {

const std::string data_dir = std::string(GANTRY_TEST_DATA_DIR) + "/import/";

std::string error_of(std::string_view text) {
  try {
    (void)parse_graph_dot(text, "test.dot");
  } catch (const parse_error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a hand-written DOT file: attributes, units, defaults, chains, subgraphs") {
  const graph g = read_graph_dot(data_dir + "annotated.dot");
  REQUIRE(g.vertex_count() == 6);
  REQUIRE(g.edge_count() == 7);
  const auto& input = g[0];
  CHECK(input.name == "input");
  CHECK(input.output == 4096);  // its own attribute beats the node default
  CHECK(input.op == "input");
  const auto& conv = g[1];
  CHECK(conv.name == "conv 1");
  CHECK(conv.compute == doctest::Approx(1.5e-3));
  CHECK(conv.persistent == 2048);
  CHECK(conv.output == 1024);  // node [output=1KiB]
  CHECK(conv.flops == 1.2e9);
  CHECK(g[2].name == "relu");
  CHECK(g[2].compute == doctest::Approx(2e-4));
  CHECK(g[2].op == "aten.relu");
  CHECK(g[3].name == "loss");
  CHECK(g[3].compute == doctest::Approx(1e-4));
  CHECK(g[3].group == "head");
  CHECK(g.compute_on(3, "gpu") == doctest::Approx(1e-5));
  CHECK(g.compute_on(3, "cpu") == doctest::Approx(1e-4));
  CHECK(g[4].name == "relu.backward");
  CHECK(g[4].group == "backward");  // the subgraph's node default
  CHECK(g[4].output == 1024);       // the outer default still applies inside
  CHECK(g.forward_of(4) == 2);
  CHECK(g[5].name == "conv 1.backward");
  CHECK(g[5].temporary == 8192);
  CHECK(g.forward_of(5) == 1);
  CHECK(g.forward_of(3) == no_vertex);

  const std::pair<vertex_id, vertex_id> expected_edges[] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {2, 5}, {1, 5}};
  const byte_count expected_bytes[] = {4096, 4096, 1024, 1024, 1024, 512, 512};
  for (edge_id e = 0; e < 7; ++e) {
    CAPTURE(e);
    CHECK(g.source(e) == expected_edges[e].first);
    CHECK(g.target(e) == expected_edges[e].second);
    CHECK(g.bytes(e) == expected_bytes[e]);
  }
}

TEST_CASE("write_graph_dot then read_graph_dot gives back the same graph") {
  SUBCASE("a DOPPLER workload: bracketed names, ops, FLOPs and per-kind times") {
    const graph g =
        chain_mm({.dimension = 12,
                  .blocks_per_side = 2,
                  .inner_split = 2,
                  .device = {.flops_per_second = 3e9, .kinds = {{.kind = "gpu 2", .flops_per_second = 7e11}}}});
    test::require_same_graph(g, parse_graph_dot(write_graph_dot(g), "chain_mm.dot"));
  }
  SUBCASE("random graphs with memory fields") {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const graph g = random_layered_dag(
          {.vertices = 60, .layers = 8, .max_persistent = 1 << 20, .max_temporary = 1 << 12, .seed = seed});
      test::require_same_graph(g, parse_graph_dot(write_graph_dot(g)));
    }
  }
  SUBCASE("names and strings that need quoting and escaping") {
    graph g;
    const auto a = g.add_vertex(vertex_properties{.name = "say \"hi\"", .compute = 0.1, .group = "g\\1", .op = "node"});
    const auto b = g.add_vertex(vertex_properties{.name = "ends with \\", .compute = 1.0 / 3.0});
    const auto c = g.add_vertex(vertex_properties{.name = "digraph", .compute = 1e-300, .op = "-1"});
    const auto d = g.add_vertex(vertex_properties{.name = "multi\nline \xC3\xA9", .compute = 2});
    g.add_edge(a, b, 7);
    g.add_edge(b, c, 0);
    g.add_edge(a, c, 1ull << 40);
    g.add_edge(c, d, 3);
    g.set_forward(d, a);
    const std::string text = write_graph_dot(g);
    test::require_same_graph(g, parse_graph_dot(text));
  }
  SUBCASE("the exported Inception-V3 training graph") {
    const graph g = read_graph(std::string(GANTRY_SOURCE_DIR) + "/examples/graphs/inception_v3.json.gz");
    test::require_same_graph(g, parse_graph_dot(write_graph_dot(g), "inception_v3.dot"));
  }
  SUBCASE("duplicate names cannot be written") {
    graph g;
    g.add_vertex("x");
    g.add_vertex("x");
    CHECK_THROWS_WITH_AS((void)write_graph_dot(g), doctest::Contains("share the name \"x\""), invalid_input);
  }
}

TEST_CASE("an imported DOT graph places, simulates and validates") {
  const graph g = read_graph_dot(data_dir + "annotated.dot");
  (void)test::require_places_and_validates(g,
                                           cluster::uniform(2, unlimited_memory, {.latency = 1e-6, .bandwidth = 1e9}));
}

TEST_CASE("malformed DOT is rejected with file, line and reason") {
  CHECK(error_of("graph { a -- b }") ==
        "test.dot:1: undirected graphs are not dataflow graphs: write 'digraph' and '->' edges");
  CHECK(error_of("digraph {\n a -- b\n}") == "test.dot:2: '--' is an undirected edge; a digraph uses '->'");
  CHECK(error_of("digraph {\n a -> b\n") ==
        "test.dot:3: missing '}' at the end of the file (the '{' at line 1 is never closed)");
  CHECK(error_of("digraph {\n a [label=\"open\n\n]\n}") == "test.dot:2: unterminated quoted string");
  CHECK(error_of("digraph { /* never closed") == "test.dot:1: unterminated /* comment");
  CHECK(error_of("digraph { a -> }") == "test.dot:1: expected a vertex or subgraph after '->', found '}'");
  CHECK(error_of("digraph { a [compute] }") == "test.dot:1: expected '=' after attribute 'compute', found ']'");
  CHECK(error_of("digraph {\n a [op=aten.relu]\n}") ==
        "test.dot:2: 'aten....' is not a DOT ID: quote IDs that contain '.' (\"aten.relu\", say)");
  CHECK(error_of("digraph { a @ b }") == "test.dot:1: unexpected character '@'");
  CHECK(error_of("digraph { a } digraph { b }") ==
        "test.dot:1: unexpected 'digraph' after the closing '}' (one digraph per file)");
  CHECK(error_of("{ a }") == "test.dot:1: expected 'digraph' at the start of the file, found '{'");
  CHECK(error_of("digraph {\n a -> a\n}") == "test.dot:2: edge \"a\" -> itself: a dataflow graph has no self-loops");
  CHECK(error_of("digraph {\n\n a [compute=-2]\n}")
            .starts_with("test.dot:3: attribute 'compute' of vertex \"a\": invalid duration '-2'"));
  CHECK(error_of("digraph {\n a -> b [bytes=1.5]\n}")
            .starts_with("test.dot:2: attribute 'bytes' of edge \"a\" -> \"b\": invalid byte count '1.5'"));
  CHECK(error_of("digraph {\n a [flops=lots]\n}") ==
        "test.dot:2: attribute 'flops' of vertex \"a\": expected a finite number >= 0, got 'lots'");
  CHECK(error_of("digraph {\n b [forward=zz]\n}") ==
        "test.dot:2: attribute 'forward' of vertex \"b\" names \"zz\", which is not a vertex of the graph");

  const std::string bad_value = data_dir + "bad_value.dot";
  CHECK_THROWS_WITH_AS(
      (void)read_graph_dot(bad_value),
      doctest::Contains(
          (bad_value + ":4: attribute 'output' of vertex \"b\": invalid byte count '12 parsecs'").c_str()),
      parse_error);
  CHECK_THROWS_WITH_AS((void)read_graph_dot(data_dir + "cycle.dot"),
                       doctest::Contains("the graph has a cycle: b -> c -> a -> b"), parse_error);
  CHECK_THROWS_AS((void)read_graph_dot(data_dir + "no_such_file.dot"), io_error);
}

TEST_CASE("every prefix and seeded byte mutations of a DOT file parse or throw parse_error") {
  const std::string text = read_text_file(data_dir + "annotated.dot");
  const auto outcome = [](std::string_view t) {
    try {
      (void)parse_graph_dot(t, "mutated.dot");
      return 0;
    } catch (const parse_error&) {
      return 1;
    }
  };
  int parsed = 0;
  const std::size_t closing = text.rfind('}');
  for (std::size_t n = 0; n <= closing; ++n) parsed += outcome(std::string_view(text).substr(0, n)) == 0;
  CHECK(parsed == 0);  // no prefix without the closing '}' is a whole digraph
  CHECK(outcome(std::string_view(text).substr(0, closing + 1)) == 0);
  std::mt19937_64 rng(7);
  const std::string_view alphabet = "{}[]=;,:->\"\\/*#<>+ \nab0.";
  for (int round = 0; round < 2000; ++round) {
    std::string t = text;
    for (int k = 0; k < 3; ++k) t[rng() % t.size()] = alphabet[rng() % alphabet.size()];
    (void)outcome(t);  // must not crash or throw anything else
  }
}

TEST_CASE("subgraphs nested 100,000 deep, closed or not, are refused with the line and the depth") {
  const std::string closed = "digraph g {\n" + std::string(100'000, '{') + " a " + std::string(100'000, '}') + "\n}\n";
  CHECK(error_of(closed) == "test.dot:2: subgraphs nest deeper than 256 levels (the limit, read_limits::max_nesting)");
  CHECK(error_of("digraph g {\n" + std::string(100'000, '{')).find("test.dot:2: subgraphs nest deeper than 256") == 0);
  CHECK(error_of("digraph g {\n{ a -> b\n") ==
        "test.dot:3: missing '}' at the end of the file (the '{' at line 2 is never closed)");
  const std::string ten = "digraph g { " + std::string(10, '{') + " a -> b " + std::string(10, '}') + " }";
  CHECK(parse_graph_dot(ten).edge_count() == 1);
  CHECK(error_of("digraph g { " + std::string(300, '{') + " a " + std::string(300, '}') + " }").find("nest deeper") !=
        std::string::npos);
  CHECK(parse_graph_dot("digraph g { " + std::string(300, '{') + " a " + std::string(300, '}') + " }", "x.dot",
                        {.max_nesting = 400})
            .vertex_count() == 1);
}

TEST_CASE("names and strings that are not UTF-8 are refused at import with the line") {
  CHECK(error_of("digraph g {\n  a -> \"b\xFF\"\n}") ==
        "test.dot:2: the name of a vertex: byte 0xFF at offset 1 is not valid UTF-8");
  CHECK(error_of("digraph g {\n  a;\n  a [op=\"x\xC0\xAF\"]\n}")
            .find("test.dot:3: attribute 'op' of vertex \"a\": byte 0xC0") == 0);
  CHECK(error_of("digraph g {\n  a [\"compute_\xED\xA0\x80\"=1]\n}")
            .find("test.dot:2: an attribute name of vertex \"a\"") == 0);
  CHECK(parse_graph_dot("digraph g { \"\xC3\xBC\xE2\x9C\x93\xF0\x9F\x98\x80\" }")[0].name ==
        "\xC3\xBC\xE2\x9C\x93\xF0\x9F\x98\x80");
}

TEST_CASE("DOT byte counts that add up to 2^63 or more are refused at the vertex or edge") {
  CHECK(error_of("digraph g {\n a [output=\"8EiB\"]\n}").find("test.dot:2: the graph's byte counts") == 0);
  CHECK(error_of("digraph g {\n a [persistent=\"4EiB\"]\n b [output=\"4EiB\"]\n}").find("test.dot:3: ") == 0);
  // An edge without bytes carries its source's output: 5 EiB on the vertex and 5 on the edge.
  CHECK(error_of("digraph g {\n a [output=\"5EiB\"]\n a -> b\n}").find("test.dot:3: ") == 0);
}
