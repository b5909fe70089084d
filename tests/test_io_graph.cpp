// The "gantry.graph" reader and writer: exact round trips (per-kind compute, forward pairs,
// groups, metadata, gzip), the example file, one test per kind of bad input asserting its own
// message, and a mutation run showing the reader never fails in any other way than parse_error.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/io/json_graph.hpp>

#include <doctest/doctest.h>

#include "support.hpp"
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>

using namespace gantry;
namespace fs = std::filesystem;

using test::require_same_graph;
using test::scratch_directory;

namespace {

// A training-step shaped graph that uses every field, with names that need escaping.
graph every_field_graph() {
  graph g;
  const auto input = g.add_vertex(
      vertex_properties{.name = "input \"x\" <&> \\ \xC3\xBCnicode \xE2\x9C\x93", .compute = 1e-4, .output = 4096});
  const auto conv = g.add_vertex(vertex_properties{.name = "conv1",
                                                   .compute = 0.0012,
                                                   .persistent = 1 << 20,
                                                   .output = 8192,
                                                   .temporary = 512,
                                                   .group = "block/1~a",
                                                   .op = "aten.convolution",
                                                   .flops = 1.2e9});
  const auto relu = g.add_vertex(
      vertex_properties{.name = "relu1\nsecond line", .compute = 1.0 / 3.0, .output = 8192, .group = "block/1~a"});
  const auto relu_grad = g.add_vertex(vertex_properties{.name = "relu1_grad", .compute = 2e-5, .output = 8192});
  const auto conv_grad =
      g.add_vertex(vertex_properties{.name = "conv1_grad", .compute = 0.0024, .output = 1 << 20, .op = "aten.conv_bw"});
  g.set_compute(conv, "gpu", 0.0004);
  g.set_compute(conv, "tpu/v4", 0.0001);
  g.set_compute(conv_grad, "gpu", 0.0008);
  g.set_forward(relu_grad, relu);
  g.set_forward(conv_grad, conv);
  g.add_edge(input, conv, 4096);
  g.add_edge(conv, relu, 8192);
  g.add_edge(relu, relu_grad, 8192);
  g.add_edge(relu, relu_grad, 16);  // a second tensor between the same pair
  g.add_edge(relu_grad, conv_grad, 8192);
  g.add_edge(input, conv_grad, 4611686018427387905ull);  // 2^62 + 1: no double holds it exactly
  return g;
}

std::string graph_error(const std::string& text, const std::string& source = "g.json") {
  try {
    (void)parse_graph_file(text, source);
  } catch (const parse_error& e) {
    return e.what();
  }
  return "no error";
}

// A document around the given vertices and edges arrays.
std::string doc(const std::string& vertices, const std::string& edges = "[]") {
  return R"({"format": "gantry.graph", "version": 1, "vertices": )" + vertices + R"(, "edges": )" + edges + "}";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const fs::path tiny_path = fs::path(GANTRY_SOURCE_DIR) / "examples" / "graphs" / "tiny.json";

}  // namespace

TEST_CASE("a graph with every field survives write and read exactly, metadata included") {
  scratch_directory dir("io_graph_roundtrip");
  const graph g = every_field_graph();
  const nlohmann::json metadata = {{"model", "inception_v3"}, {"batch_size", 32}, {"nested", {{"list", {1, 2, 3}}}}};
  write_graph(dir.path / "g.json", g, metadata);
  const graph_file back = read_graph_file(dir.path / "g.json");
  require_same_graph(g, back.graph);
  CHECK(back.metadata == metadata);
  CHECK(back.graph.compute_on(1, "tpu/v4") == 0.0001);
  CHECK(back.graph.compute_on(1, "cpu") == 0.0012);

  // Writing what was read gives the same text: the writer is deterministic.
  CHECK(graph_to_json_text(back.graph, back.metadata) == slurp(dir.path / "g.json"));
}

TEST_CASE("write_graph compresses .json.gz files and the reader inflates them") {
  scratch_directory dir("io_graph_gz");
  const graph g = every_field_graph();
  write_graph(dir.path / "g.json.gz", g, {{"k", "v"}});
  const std::string raw = slurp(dir.path / "g.json.gz");
  REQUIRE(raw.size() > 2);
  CHECK(static_cast<unsigned char>(raw[0]) == 0x1f);
  CHECK(static_cast<unsigned char>(raw[1]) == 0x8b);
  const auto back = read_graph_file(dir.path / "g.json.gz");
  require_same_graph(g, back.graph);
  CHECK(back.metadata == nlohmann::json{{"k", "v"}});
}

TEST_CASE("gzip is recognised by its magic bytes, not by the file name") {
  scratch_directory dir("io_graph_magic");
  const std::string text = graph_to_json_text(every_field_graph());
  // Compressed with zlib's own gz writer, under a name that does not end in .gz.
  const fs::path compressed = dir.path / "compressed.json";
  gzFile out = gzopen(compressed.c_str(), "wb9");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  REQUIRE(gzclose(out) == Z_OK);
  require_same_graph(read_graph(compressed), every_field_graph());
  // And plain text under a .gz name.
  write_text_file(dir.path / "plain.json.gz", text);
  require_same_graph(read_graph(dir.path / "plain.json.gz"), every_field_graph());
}

TEST_CASE("truncated or corrupt gzip data is a parse_error naming the file") {
  scratch_directory dir("io_graph_badgz");
  const std::string packed = gzip_compress(graph_to_json_text(every_field_graph()));
  write_text_file(dir.path / "cut.json.gz", std::string_view(packed).substr(0, packed.size() / 2));
  const std::string cut = (dir.path / "cut.json.gz").string();
  CHECK_THROWS_WITH_AS((void)read_graph(dir.path / "cut.json.gz"),
                       (cut + ": invalid gzip data: the data ends early (truncated after " +
                        std::to_string(packed.size() / 2) + " compressed bytes)")
                           .c_str(),
                       parse_error);
  std::string corrupt = packed;
  corrupt[3] = static_cast<char>(0xff);  // reserved flag bits
  write_text_file(dir.path / "corrupt.json.gz", corrupt);
  const std::string bad = (dir.path / "corrupt.json.gz").string();
  CHECK_THROWS_WITH_AS((void)read_graph(dir.path / "corrupt.json.gz"),
                       (bad + ": invalid gzip data: unknown header flags set").c_str(), parse_error);
}

TEST_CASE("a missing file is an io_error naming the path") {
  CHECK_THROWS_WITH_AS((void)read_graph("/nonexistent/dir/g.json"),
                       "cannot read '/nonexistent/dir/g.json': no such file", io_error);
  CHECK_THROWS_WITH_AS((void)read_graph(fs::temp_directory_path()),
                       ("cannot read '" + fs::temp_directory_path().string() + "': it is a directory").c_str(),
                       io_error);
}

TEST_CASE("the example training graph reads with its forward pairs, kinds and metadata") {
  const graph_file file = read_graph_file(tiny_path);
  const graph& g = file.graph;
  CHECK(g.vertex_count() == 11);
  CHECK(g.edge_count() == 14);
  CHECK(file.metadata["batch_size"] == 128);
  CHECK(file.metadata["model"] == "mlp-784-512-10");
  const auto find = [&](std::string_view name) {
    for (vertex_id v = 0; v < g.vertex_count(); ++v)
      if (g[v].name == name) return v;
    FAIL("no vertex " << name);
    return no_vertex;
  };
  CHECK(g.forward_of(find("fc1_grad")) == find("fc1"));
  CHECK(g.forward_of(find("loss_grad")) == find("loss"));
  CHECK(g.forward_of(find("fc1")) == no_vertex);
  CHECK(g.compute_on(find("fc1"), "gpu") == 0.0003);
  CHECK(g.compute_on(find("fc1"), "cpu") == 0.0021);
  CHECK(g[find("fc1")].persistent == 1607680);
  CHECK(g[find("fc1")].group == "layer1");
  CHECK(g[find("fc1")].flops == 102760448.0);
  CHECK_NOTHROW((void)snapshot_dag(g));
}

TEST_CASE("optional fields default, comments and size strings are accepted") {
  const auto file = parse_graph_file(R"({
    // a hand-written file
    "format": "gantry.graph", "version": 1, "metadata": {"producer": {"tool": "x"}},
    "vertices": [ {"name": "a"},                /* no compute: 0 */
                  {"name": "b", "compute": "1.5ms", "output": "4 KiB", "persistent": 1e6, "temporary": 2048.0} ],
    "edges": [ {"from": "a", "to": "b"}, {"from": "a", "to": "b", "bytes": "1MiB"} ] })");
  const graph& g = file.graph;
  CHECK(file.metadata == nlohmann::json{{"producer", {{"tool", "x"}}}});
  CHECK(g[0].compute == 0);
  CHECK(g[0].output == 0);
  CHECK(g[0].group.empty());
  CHECK(g[1].compute == doctest::Approx(1.5e-3));
  CHECK(g[1].output == 4096);
  CHECK(g[1].persistent == 1'000'000);
  CHECK(g[1].temporary == 2048);
  CHECK(g.bytes(0) == 0);
  CHECK(g.bytes(1) == 1 << 20);
  // No edges array at all is an edgeless graph; null counts as absent.
  CHECK(parse_graph_file(R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a","group":null}]})")
            .graph.edge_count() == 0);
}

TEST_CASE("an unknown key is refused, naming it and the field it most likely meant") {
  // A misspelt field must not leave the value it meant to set at its default (0 bytes here).
  CHECK(
      graph_error(R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a"},{"name":"b","outputs":"4KiB"}]})") ==
      "g.json: /vertices/1/outputs: unknown field (did you mean \"output\"?); a vertex has name, compute, persistent, "
      "output, temporary, group, forward, op, flops; free-form data belongs under /metadata");
  CHECK(
      graph_error(
          R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a"}],"edges":[{"from":"a","to":"a","weight":3}]})") ==
      "g.json: /edges/0/weight: unknown field; an edge has from, to, bytes; free-form data belongs under /metadata");
  CHECK(graph_error(R"({"format":"gantry.graph","version":1,"vertice":[]})") ==
        "g.json: /vertice: unknown field (did you mean \"vertices\"?); a graph document has format, version, metadata, "
        "vertices, edges; free-form data belongs under /metadata");
  // Under /metadata anything goes, and a per-kind compute object's keys are device kinds.
  const auto file = parse_graph_file(R"({"format":"gantry.graph","version":1,"metadata":{"outputs":1,"x":{"y":[]}},
                                         "vertices":[{"name":"a","compute":{"default":1,"tpu":2}}]})");
  CHECK(file.metadata["outputs"] == 1);
  CHECK(file.graph.kind_count() == 1);
}

TEST_CASE("a large random graph round-trips exactly through text and gzip") {
  const graph g = random_layered_dag(
      {.vertices = 3000, .layers = 60, .max_persistent = 1 << 20, .max_temporary = 1 << 16, .seed = 7});
  require_same_graph(read_graph_json(graph_to_json_text(g), "random"), g);
  require_same_graph(read_graph_json(gzip_decompress(gzip_compress(graph_to_json_text(g)))), g);
}

// Bad input: each case its own message, naming the file, the position and the reason.

TEST_CASE("syntax errors name the line, column and byte offset") {
  CHECK(graph_error("{\"format\": \"gantry.graph\",\n  \"version\": 1\n  \"vertices\": []}") ==
        "g.json: line 3, column 12 (byte offset 53): JSON syntax error: syntax error while parsing object - "
        "unexpected string literal; expected '}'");
  CHECK(graph_error("") ==
        "g.json: line 1, column 1 (byte offset 0): JSON syntax error: syntax error while parsing value - "
        "unexpected end of input; expected '[', '{', or a literal");
  CHECK(graph_error("{\"format\": \"gantry.graph\", \"version\": 1, \"vertices\": [") ==
        "g.json: line 1, column 55 (byte offset 54): JSON syntax error: syntax error while parsing value - "
        "unexpected end of input; expected '[', '{', or a literal");
  CHECK(graph_error("{\"a\": \"\xff\"}")
            .starts_with("g.json: line 1, column 8 (byte offset 7): JSON syntax error: "
                         "syntax error while parsing value - invalid string: ill-formed UTF-8 byte"));
}

TEST_CASE("a number too large for a double is reported at its position") {
  CHECK(graph_error(doc(R"([{"name": "a",
   "compute": 1e999}])")) ==
        "g.json: line 2, column 15 (byte offset 82): invalid JSON: number overflow parsing '1e999'");
}

TEST_CASE("the document must be a gantry.graph object of version 1") {
  CHECK(graph_error("[1, 2]") == "g.json: (document): expected an object, got array [1,2]");
  CHECK(graph_error(R"({"version": 1, "vertices": []})") == "g.json: (document): missing field \"format\"");
  CHECK(graph_error(R"({"format": "gantry.cluster", "version": 1, "vertices": []})") ==
        "g.json: /format: expected \"gantry.graph\", got string \"gantry.cluster\" (this is not a gantry.graph file)");
  CHECK(graph_error(R"({"format": "gantry.graph", "vertices": []})") ==
        "g.json: (document): missing field \"version\"");
  CHECK(graph_error(R"({"format": "gantry.graph", "version": 2, "vertices": []})") ==
        "g.json: /version: unsupported version 2 (this reader reads version 1)");
  CHECK(graph_error(R"({"format": "gantry.graph", "version": "1", "vertices": []})") ==
        "g.json: /version: expected an integer, got string \"1\"");
}

TEST_CASE("missing fields are named with the pointer of the object that lacks them") {
  CHECK(graph_error(R"({"format": "gantry.graph", "version": 1})") == "g.json: (document): missing field \"vertices\"");
  CHECK(graph_error(doc(R"([{"name": "a"}, {"compute": 1}])")) == "g.json: /vertices/1: missing field \"name\"");
  CHECK(graph_error(doc(R"([{"name": "a"}])", R"([{"from": "a"}])")) == "g.json: /edges/0: missing field \"to\"");
  CHECK(graph_error(doc(R"([{"name": "a"}])", R"([{"to": "a"}])")) == "g.json: /edges/0: missing field \"from\"");
}

TEST_CASE("values of the wrong type are named with their pointer and what was found") {
  CHECK(graph_error(doc(R"([{"name": 12}])")) == "g.json: /vertices/0/name: expected a string, got number 12");
  CHECK(graph_error(doc(R"([{"name": ""}])")) == "g.json: /vertices/0/name: a name cannot be empty");
  CHECK(graph_error(doc(R"({"a": 1})")) == "g.json: /vertices: expected an array, got object {\"a\":1}");
  CHECK(graph_error(doc(R"([7])")) == "g.json: /vertices/0: expected an object, got number 7");
  CHECK(graph_error(doc(R"([{"name": "a", "compute": [1]}])")) ==
        "g.json: /vertices/0/compute: expected a compute time in seconds, got array [1]");
  CHECK(graph_error(doc(R"([{"name": "a", "compute": "fast"}])")) ==
        "g.json: /vertices/0/compute: invalid duration 'fast': expected a number, optionally followed by a unit such "
        "as ms or us");
  CHECK(graph_error(doc(R"([{"name": "a", "output": true}])")) ==
        "g.json: /vertices/0/output: expected a byte count (an integer or a size such as \"16GiB\"), got boolean true");
  CHECK(graph_error(doc(R"([{"name": "a", "group": 3}])")) ==
        "g.json: /vertices/0/group: expected a string, got number 3");
  CHECK(graph_error(doc(R"([{"name": "a", "flops": "many"}])")) ==
        "g.json: /vertices/0/flops: expected a number, got string \"many\"");
  CHECK(graph_error(doc(R"([{"name": "a"}])", R"({"from": "a"})")) ==
        "g.json: /edges: expected an array, got object {\"from\":\"a\"}");
  CHECK(graph_error(doc(R"([{"name": "a"}])", R"([{"from": 0, "to": "a"}])")) ==
        "g.json: /edges/0/from: expected a vertex name, got number 0");
  CHECK(graph_error(R"({"format": "gantry.graph", "version": 1, "metadata": [1], "vertices": []})") ==
        "g.json: /metadata: expected an object, got array [1]");
}

TEST_CASE("byte counts must be non-negative whole numbers that fit in 64 bits") {
  CHECK(graph_error(doc(R"([{"name": "a", "output": -1}])")) ==
        "g.json: /vertices/0/output: a byte count must be a non-negative integer, got -1");
  CHECK(graph_error(doc(R"([{"name": "a", "persistent": 4096.5}])")) ==
        "g.json: /vertices/0/persistent: a byte count must be a non-negative integer, got number 4096.5");
  CHECK(graph_error(doc(R"([{"name": "a", "temporary": 1e20}])")) ==
        "g.json: /vertices/0/temporary: a byte count must be a non-negative integer, got number 1e+20");
  CHECK(graph_error(doc(R"([{"name": "a"}, {"name": "b"}])", R"([{"from": "a", "to": "b", "bytes": -2.5}])")) ==
        "g.json: /edges/0/bytes: a byte count must be a non-negative integer, got number -2.5");
  CHECK(graph_error(doc(R"([{"name": "a", "output": "-3 MiB"}])")) ==
        "g.json: /vertices/0/output: invalid byte count '-3 MiB': a byte count cannot be negative");
}

TEST_CASE("NaN and infinite byte counts (possible in a document built in code) are rejected") {
  nlohmann::json document = nlohmann::json::parse(doc(R"([{"name": "a"}])"));
  document["vertices"][0]["output"] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS((void)graph_from_json(document, "built"),
                       "built: /vertices/0/output: a byte count must be a non-negative integer, got NaN", parse_error);
  document["vertices"][0]["output"] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS((void)graph_from_json(document, "built"),
                       "built: /vertices/0/output: a byte count must be a non-negative integer, got infinity",
                       parse_error);
}

TEST_CASE("compute times must be finite and non-negative, per kind too") {
  CHECK(graph_error(doc(R"([{"name": "a", "compute": -0.001}])")) ==
        "g.json: /vertices/0/compute: compute time must be a finite number of seconds >= 0, got number -0.001");
  CHECK(graph_error(doc(R"([{"name": "a", "compute": {"gpu": 1}}])")) ==
        "g.json: /vertices/0/compute: missing field \"default\" (per-kind compute times need a default for other "
        "device kinds)");
  CHECK(graph_error(doc(R"([{"name": "a", "compute": {"default": 1, "gpu": -2}}])")) ==
        "g.json: /vertices/0/compute/gpu: compute time must be a finite number of seconds >= 0, got number -2");
  CHECK(graph_error(doc(R"([{"name": "a", "compute": {"default": 1, "tpu/v4": "x"}}])")) ==
        "g.json: /vertices/0/compute/tpu~1v4: invalid duration 'x': expected a number, optionally followed by a unit "
        "such as ms or us");
  nlohmann::json document = nlohmann::json::parse(doc(R"([{"name": "a"}])"));
  document["vertices"][0]["compute"] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS((void)graph_from_json(document, "built"),
                       "built: /vertices/0/compute: compute time must be a finite number of seconds >= 0, got infinity",
                       parse_error);
  document["vertices"][0]["compute"] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS((void)graph_from_json(document, "built"),
                       "built: /vertices/0/compute: compute time must be a finite number of seconds >= 0, got NaN",
                       parse_error);
  CHECK(graph_error(doc(R"([{"name": "a", "flops": -1}])")) ==
        "g.json: /vertices/0/flops: flops must be a finite number >= 0, got number -1");
}

TEST_CASE("a duplicate vertex name names both places") {
  CHECK(graph_error(doc(R"([{"name": "relu"}, {"name": "conv"}, {"name": "relu"}])")) ==
        "g.json: /vertices/2/name: duplicate vertex name \"relu\" (also at /vertices/0)");
}

TEST_CASE("an edge to or from an unknown vertex names the vertex") {
  CHECK(graph_error(
            doc(R"([{"name": "a"}, {"name": "b"}])", R"([{"from": "a", "to": "b"}, {"from": "b", "to": "c"}])")) ==
        "g.json: /edges/1/to: unknown vertex \"c\" (no vertex has this name)");
  CHECK(graph_error(doc(R"([{"name": "a"}])", R"([{"from": "z", "to": "a"}])")) ==
        "g.json: /edges/0/from: unknown vertex \"z\" (no vertex has this name)");
}

TEST_CASE("an unknown forward name, or a vertex that is its own forward, is rejected") {
  CHECK(graph_error(doc(R"([{"name": "a"}, {"name": "a_grad", "forward": "b"}])")) ==
        "g.json: /vertices/1/forward: unknown vertex \"b\" (no vertex has this name)");
  CHECK(graph_error(doc(R"([{"name": "a", "forward": "a"}])")) ==
        "g.json: /vertices/0/forward: vertex \"a\" names itself as its forward vertex");
  CHECK(graph_error(doc(R"([{"name": "a", "forward": 3}])")) ==
        "g.json: /vertices/0/forward: expected a string, got number 3");
  // A forward vertex may come after its backward vertex in the file.
  const graph g = read_graph_json(doc(R"([{"name": "a_grad", "forward": "a"}, {"name": "a"}])"));
  CHECK(g.forward_of(0) == 1);
}

TEST_CASE("a cycle is rejected naming the vertices on it and the edge that closes it") {
  CHECK(
      graph_error(doc(
          R"([{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}])",
          R"([{"from": "d", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "c"}, {"from": "c", "to": "a"}])")) ==
      "g.json: /edges: the graph has a cycle: b -> c -> a -> b (the edge /edges/1 closes it)");
  CHECK(graph_error(doc(R"([{"name": "a"}])", R"([{"from": "a", "to": "a"}])")) ==
        "g.json: /edges: the graph has a cycle: a -> a (the edge /edges/0 closes it)");
}

TEST_CASE("the writer refuses graphs a file cannot describe") {
  graph g;
  g.add_vertex("a");
  g.add_vertex("a");
  CHECK_THROWS_WITH_AS((void)graph_to_json(g),
                       "graph_to_json: vertices 0 and 1 are both named 'a' (names in a graph file must be unique)",
                       invalid_input);
  graph unnamed;
  unnamed.add_vertex("");
  CHECK_THROWS_WITH_AS((void)graph_to_json(unnamed),
                       "graph_to_json: vertex 0 has no name (a graph file refers to vertices by name)", invalid_input);
  graph bad_utf8;
  bad_utf8.add_vertex("a\xff");
  CHECK_THROWS_AS((void)graph_to_json_text(bad_utf8), invalid_input);
  CHECK_THROWS_WITH_AS((void)graph_to_json(every_field_graph(), nlohmann::json::array()),
                       "graph_to_json: metadata must be a JSON object, got array []", invalid_input);
}

TEST_CASE("mutated files either read or throw parse_error, never anything else") {
  const std::string original = slurp(tiny_path);
  REQUIRE(!original.empty());
  std::mt19937_64 rng(20240501);
  const auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::string alphabet = "{}[]\",:-.0123456789eE \\/abcnrtufl\n\xff\xc3";
  std::size_t rejected = 0, accepted = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string text = original;
    const std::size_t edits = 1 + below(4);
    for (std::size_t k = 0; k < edits && !text.empty(); ++k) {
      const std::size_t at = below(text.size());
      switch (below(4)) {
        case 0:
          text[at] = alphabet[below(alphabet.size())];
          break;
        case 1:
          text.erase(at, 1 + below(8));
          break;
        case 2:
          text.insert(at, 1, alphabet[below(alphabet.size())]);
          break;
        default:
          text.resize(at);
          break;
      }
    }
    try {
      const auto file = parse_graph_file(text, "mutated.json");
      CHECK_NOTHROW((void)snapshot_dag(file.graph));
      ++accepted;
    } catch (const parse_error& e) {
      CHECK(std::string(e.what()).starts_with("mutated.json: "));
      ++rejected;
    }
  }
  CHECK(rejected > 1000);
  MESSAGE(accepted << " mutated files were still valid graphs");
}

TEST_CASE("input nested 100,000 deep is refused with the file, the position and the depth") {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  // As the whole document, a vertex name and a compute value: each crashed the reader (or its
  // message helper) with a stack overflow.
  for (const std::string& text :
       {deep, doc(R"([{"name": )" + deep + "}]"), doc(R"([{"name": "a", "compute": )" + deep + "}]")}) {
    const std::string message = graph_error(text);
    CHECK(message.find("g.json: line 1, column ") == 0);
    CHECK(message.find("nest deeper than 256 levels") != std::string::npos);
  }
  CHECK(graph_error(std::string(100'000, '{')).find("nest deeper than 256") != std::string::npos);  // never closed
  // Brackets inside strings and comments do not count; the limit can be raised.
  const std::string in_string =
      doc(R"([{"name": ")" + std::string(1000, '[') + R"("}] /* )" + std::string(1000, '{') + " */");
  CHECK(parse_graph_file(in_string).graph.vertex_count() == 1);
  const std::string nested_metadata = R"({"format": "gantry.graph", "version": 1, "vertices": [], "metadata": {"x": )" +
                                      std::string(300, '[') + std::string(300, ']') + "}}";
  CHECK(graph_error(nested_metadata).find("nest deeper") != std::string::npos);
  CHECK(parse_graph_file(nested_metadata, "m.json", {.max_nesting = 400}).graph.vertex_count() == 0);
}

TEST_CASE("a huge value in a message is cut short without dumping all of it") {
  const std::string long_array = "[" + std::string(200'000, '1') + std::string(200'000, ',') + "1]";
  std::string names = "[";
  for (int i = 0; i < 100'000; ++i) names += (i ? ",\"" : "\"") + std::to_string(i) + "\"";
  names += "]";
  const std::string message = graph_error(doc(R"([{"name": )" + names + "}]"));
  CHECK(message.find("expected a string, got array [\"0\",\"1\",") != std::string::npos);
  CHECK(message.find("...") != std::string::npos);
  CHECK(message.size() < 200);
}

TEST_CASE("byte counts that add up to 2^63 or more are refused where the sum overflows") {
  // 2^63 + 2^63 wrapped to 0 and passed m-TOPO's memory check.
  CHECK(graph_error(doc(R"([{"name": "a", "persistent": 9223372036854775808, "output": 9223372036854775808}])"))
            .find("g.json: /vertices/0: the graph's byte counts") == 0);
  CHECK(graph_error(doc(R"([{"name": "a", "output": 18446744073709551615}])")).find("/vertices/0: ") !=
        std::string::npos);
  CHECK(graph_error(
            doc(R"([{"name": "a", "output": 4611686018427387904}, {"name": "b", "output": 4611686018427387904}])"))
            .find("/vertices/1: ") != std::string::npos);
  CHECK(graph_error(doc(R"([{"name": "a"}, {"name": "b"}])", R"([{"from": "a", "to": "b", "bytes": "8EiB"}])"))
            .find("/edges/0: ") != std::string::npos);
  CHECK(parse_graph_file(doc(R"([{"name": "a", "output": 4611686018427387904}])")).graph[0].output == byte_count{1}
                                                                                                          << 62);
}

TEST_CASE("a gzip bomb stops at the inflated-size limit with a message naming the file") {
  scratch_directory scratch("gzip_bomb");
  const fs::path bomb = scratch.path / "bomb.json.gz";
  {
    // 64 MiB of spaces inside a valid document compress to about 64 KiB.
    const std::string text =
        R"({"format": "gantry.graph", "version": 1, "vertices": [)" + std::string(64u << 20, ' ') + "]}";
    std::ofstream(bomb, std::ios::binary) << gzip_compress(text, 9);
  }
  CHECK(fs::file_size(bomb) < (1u << 20));
  try {
    (void)read_graph_file(bomb, {.max_inflated_bytes = 8u << 20});
    FAIL("no error");
  } catch (const parse_error& e) {
    const std::string message = e.what();
    CHECK(message.find(bomb.string() + ": the gzip data inflates to more than 8.00 MiB") == 0);
    CHECK(message.find("max_inflated_bytes") != std::string::npos);
  }
  CHECK(read_graph_file(bomb, {.max_inflated_bytes = 128u << 20}).graph.vertex_count() == 0);
}

TEST_CASE("the writer names the vertex whose name is not UTF-8") {
  graph g;
  g.add_vertex("ok", 1.0);
  g.add_vertex("bad\xFFname", 1.0);
  CHECK_THROWS_WITH_AS((void)graph_to_json(g),
                       doctest::Contains("name of vertex 1 is not valid UTF-8 (byte 0xFF at offset 3"), invalid_input);
}

// The fast reader and writer against the checked ones (graph_from_json on a parsed tree, and
// document_text of graph_to_json): the same graph and the same document, on the shipped graphs, on
// random graphs and on documents that exercise every field, units, nulls, comments and keys the
// fast path leaves to the checked reader.
namespace {
graph_file checked_read(const std::string& text) { return graph_from_json(detail::parse_json_text(text, "t"), "t"); }
std::string checked_write(const graph& g, const nlohmann::json& metadata = nlohmann::json::object()) {
  return detail::document_text(graph_to_json(g, metadata), "graph_to_json");
}
// The same JSON values and the same layout: lines of the same count, numbers perhaps written with
// fewer digits (the fast writer takes the shortest that read back exactly; nlohmann's Grisu2
// sometimes one more).
bool same_document(const std::string& fast, const std::string& checked) {
  return nlohmann::json::parse(fast) == nlohmann::json::parse(checked) &&
         std::count(fast.begin(), fast.end(), '\n') == std::count(checked.begin(), checked.end(), '\n');
}
}  // namespace

TEST_CASE("fast graph writing gives the checked writer's document") {
  const graph g = every_field_graph();
  CHECK(graph_to_json_text(g) == checked_write(g));
  const nlohmann::json metadata = {{"model", "m"}, {"sizes", {{"a", 1.5}, {"b", {1, 2}}}}};
  CHECK(graph_to_json_text(g, metadata) == checked_write(g, metadata));
  CHECK(graph_to_json_text(graph{}) == checked_write(graph{}));
  graph numbers;
  // Every notation nlohmann's writer uses: fixed with ".0", fixed, "0.000...", and exponents.
  for (const double x : {0.0, 1.0, 2.5, 100.0, 1e15, 1e16, 1.5e17, 1e-4, 1.2345e-5, 1e-300, 1.0 / 3.0, 123456.789,
                         4.9e-324, 1.7976931348623157e308, 0.1, 0.30000000000000004})
    numbers.add_vertex(
        vertex_properties{.name = "v" + std::to_string(numbers.vertex_count()), .compute = x, .flops = x});
  numbers.add_vertex(vertex_properties{.name = "negative zero flops", .flops = -0.0});
  CHECK(graph_to_json_text(numbers) == checked_write(numbers));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    graph r = random_layered_dag({.vertices = 200,
                                  .layers = 8,
                                  .mean_out_degree = 2.0,
                                  .min_compute = 1e-6,
                                  .max_compute = 1e-1,
                                  .min_bytes = 1,
                                  .max_bytes = 1 << 30,
                                  .seed = seed});
    r.set_compute(3, "gpu", 1e-7 * static_cast<double>(seed));
    CHECK(same_document(graph_to_json_text(r), checked_write(r)));
    require_same_graph(read_graph_json(graph_to_json_text(r)), r);
  }
  for (const char* name : {"inception_v3", "resnet50", "gpt2", "gnmt"}) {
    CAPTURE(name);
    const auto file = read_graph_file(std::string(GANTRY_SOURCE_DIR) + "/examples/graphs/" + name + ".json.gz");
    CHECK(same_document(graph_to_json_text(file.graph, file.metadata), checked_write(file.graph, file.metadata)));
  }
  // Values the file cannot hold still fail with the checked writer's message.
  graph bad;
  bad.add_vertex(vertex_properties{.name = "a", .op = "\xff"});
  CHECK_THROWS_WITH_AS((void)graph_to_json_text(bad), doctest::Contains("UTF-8"), invalid_input);
}

TEST_CASE("fast graph reading gives the checked reader's graph") {
  const auto same = [](const std::string& text, bool fast) {
    CAPTURE(text.substr(0, 200));
    CHECK(detail::fast_graph_reader(text, 256).read().has_value() == fast);
    const graph_file checked = checked_read(text);
    const graph_file read = parse_graph_file(text, "t");
    require_same_graph(read.graph, checked.graph);
    CHECK(read.metadata == checked.metadata);
    for (vertex_id v = 0; v < read.graph.vertex_count(); ++v)
      CHECK(read.graph.kind_times(v) == checked.graph.kind_times(v));
  };
  for (const char* name : {"inception_v3", "resnet50", "gpt2", "gnmt"}) {
    CAPTURE(name);
    same(read_text_file(std::string(GANTRY_SOURCE_DIR) + "/examples/graphs/" + name + ".json.gz"), true);
  }
  same(read_text_file(std::string(GANTRY_SOURCE_DIR) + "/examples/graphs/tiny.json"), true);
  graph plain = every_field_graph();
  plain[0].name = "input";
  plain[2].name = "relu1";
  same(graph_to_json_text(plain, {{"note", "µs and \"quotes\" in metadata are fine"}}), true);
  // Names with escapes or non-ASCII bytes: read by the checked reader.
  same(graph_to_json_text(every_field_graph()), false);
  // Hand-written forms: comments, units, nulls, per-kind times given out of order, nested
  // metadata, and integers written as whole floats.
  same(R"(// a comment
    {"version": 1, "format": "gantry.graph", /* inline */ "metadata": {"deep": [1, {"x": null}, true, false, -1.5e3]},
     "vertices": [
       {"name": "a", "compute": "1.5ms", "persistent": "2KiB", "output": 1e3, "temporary": 4096.0, "group": null, "op": null},
       {"name": "b", "compute": {"zpu": 2, "default": 1, "gpu": "3us", "npu": null}, "forward": "a", "flops": 7},
       {"name": "c"}
     ],
     "edges": [{"from": "a", "to": "b", "bytes": null}, {"to": "c", "from": "b", "bytes": "1MiB"}]})",
       true);
  same(R"({"format":"gantry.graph","version":1,"metadata":null,"vertices":[],"edges":null})", true);
  same(R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a","name":"b"}]})", false);        // a key twice
  same(R"({"format":"gantry.graph","version":1,"edges":[],"vertices":[{"name":"a"}]})", false);        // edges first
  same(R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a","op":"caf\u00e9"}]})", false);  // an escape
  same(R"({"format":"gantry.graph","version":1,"vertices":[{"name":"-0","persistent":-0}]})", false);
  // Errors are the checked reader's, whichever path met them.
  for (const std::string bad :
       {R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a","compute":-1}]})",
        R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a"},{"name":"a"}]})",
        R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a"}],"edges":[{"from":"a","to":"z"}]})",
        R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a"}]} trailing)",
        R"({"format":"gantry.graph","version":2,"vertices":[]})",
        R"({"format":"gantry.graph","version":1,"extra":1,"vertices":[]})",
        R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a","outputs":1}]})",
        R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a"}],"edges":[{"from":"a","to":"a","w":1}]})",
        R"({"format":"gantry.graph","version":1,"vertices":[{"name":"a","persistent":18446744073709551616}]})"}) {
    CAPTURE(bad);
    CHECK(!detail::fast_graph_reader(bad, 256).read().has_value());
    std::string checked, read;
    try {
      (void)checked_read(bad);
    } catch (const parse_error& e) {
      checked = e.what();
    }
    try {
      (void)parse_graph_file(bad, "t");
    } catch (const parse_error& e) {
      read = e.what();
    }
    CHECK(!read.empty());
    CHECK(read == checked);
  }
}

// The fast reader looks an edge's ends up a few edges after reading it and indexes the names once
// the vertex list is read: edges are added in the document's order whatever their count, and an
// unknown or a repeated name anywhere still leaves the document to the checked reader.
TEST_CASE("the fast reader's deferred lookups keep the document's order and find every bad name") {
  const auto document = [](std::size_t vertices, std::size_t edges, std::size_t bad_edge, std::size_t twin) {
    std::string text = R"({"format":"gantry.graph","version":1,"vertices":[)";
    for (std::size_t v = 0; v < vertices; ++v)
      text += (v ? "," : "") + std::string(R"({"name":"n)") + std::to_string(v == twin ? 0 : v) + R"("})";
    text += R"(],"edges":[)";
    // Edge e joins the e-th pair (from < to) in lexicographic order; its bytes say which edge it is.
    for (std::size_t e = 0, from = 0, to = 1; e < edges; ++e, to = to + 1 < vertices ? to + 1 : ++from + 1) {
      text += (e ? "," : "") + std::string(R"({"from":"n)") + std::to_string(from) + R"(","to":")" +
              (e == bad_edge ? std::string("ghost") : "n" + std::to_string(to)) + R"(","bytes":)" +
              std::to_string(e + 1) + "}";
    }
    return text + "]}";
  };
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  for (const std::size_t edges : {0, 1, 7, 8, 9, 16, 17, 40}) {
    CAPTURE(edges);
    const std::string text = document(12, edges, none, none);
    const auto fast = detail::fast_graph_reader(text, 256).read();
    REQUIRE(fast.has_value());
    require_same_graph(fast->graph, checked_read(text).graph);
    for (edge_id e = 0; e < fast->graph.edge_count(); ++e) CHECK(fast->graph.bytes(e) == e + 1);
    for (std::size_t bad = 0; bad < edges; ++bad) {
      CAPTURE(bad);
      CHECK(!detail::fast_graph_reader(document(12, edges, bad, none), 256).read().has_value());
    }
  }
  for (const std::size_t twin : {1, 5, 11}) {
    CAPTURE(twin);
    const std::string text = document(12, 20, none, twin);
    CHECK(!detail::fast_graph_reader(text, 256).read().has_value());
    CHECK_THROWS_WITH_AS((void)parse_graph_file(text, "t"), doctest::Contains("duplicate vertex name \"n0\""),
                         parse_error);
  }
}
