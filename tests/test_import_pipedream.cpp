// PipeDream graph.txt import: forward and backward vertices with pairing, reversed backward
// edges, milliseconds and bytes converted, and malformed files rejected with file, line and reason.
#include <gantry/io/import_pipedream.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <optional>
#include <random>
#include <string>

using namespace gantry;

namespace {

const std::string data_dir = std::string(GANTRY_TEST_DATA_DIR) + "/import/";

std::optional<vertex_id> find(const graph& g, std::string_view name) {
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (g[v].name == name) return v;
  return std::nullopt;
}

std::optional<byte_count> edge_bytes(const graph& g, std::string_view from, std::string_view to) {
  const auto u = find(g, from), v = find(g, to);
  if (!u || !v) return std::nullopt;
  std::optional<byte_count> bytes;
  g.for_each_out_edge(*u, [&](edge_id e) {
    if (g.target(e) == *v) bytes = g.bytes(e);
  });
  return bytes;
}

std::string error_of(std::string_view text) {
  try {
    (void)parse_graph_pipedream(text, "graph.txt");
  } catch (const parse_error& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr std::string_view two_nodes =
    "a -- Linear -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=8.0, parameter_size=4.0\n"
    "b -- Linear -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=8.0, parameter_size=4.0\n";

}  // namespace

TEST_CASE("a PipeDream profile becomes paired forward and backward vertices") {
  const graph g = read_graph_pipedream(data_dir + "graph.txt");
  // 6 forward vertices; node1 is an input (no predecessors, parameters or backward time), so 5 backward.
  CHECK(g.vertex_count() == 6 + 5);
  // 6 forward edges, 5 stash edges n -> n.backward, 5 reversed edges between backward vertices.
  CHECK(g.edge_count() == 6 + 5 + 5);
  CHECK_FALSE(find(g, "node1.backward"));

  const auto conv = *find(g, "node2");
  CHECK(g[conv].compute == doctest::Approx(3.047e-3));
  CHECK(g[conv].persistent == 7168);
  CHECK(g[conv].output == 102760448);
  CHECK(g[conv].op == "Conv2d(3, 64, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
  const auto conv_backward = *find(g, "node2.backward");
  CHECK(g.forward_of(conv_backward) == conv);
  CHECK(g[conv_backward].compute == doctest::Approx(6.213e-3));
  CHECK(g[conv_backward].output == 6291456);  // the gradient sent to node1
  CHECK(g[conv_backward].persistent == 0);

  // node5 adds node2 and node4: its backward sends both gradients.
  CHECK(g[*find(g, "node5.backward")].output == 2 * 102760448ull);
  // activation_size lists are summed; a trailing stage_id is ignored.
  CHECK(g[*find(g, "node6")].output == 3072);

  CHECK(edge_bytes(g, "node1", "node2") == 6291456u);
  CHECK(edge_bytes(g, "node6.backward", "node5.backward") == 102760448u);
  CHECK(edge_bytes(g, "node5.backward", "node2.backward") == 102760448u);
  CHECK(edge_bytes(g, "node5.backward", "node4.backward") == 102760448u);
  CHECK(edge_bytes(g, "node4", "node4.backward") == 102760448u);
  CHECK_FALSE(edge_bytes(g, "node2.backward", "node1"));

  double forward = 0, backward = 0;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) (g.forward_of(v) == no_vertex ? forward : backward) += g[v].compute;
  CHECK(forward == doctest::Approx((3.047 + 0.5 + 12.25 + 0.25 + 0.1) / 1000));
  CHECK(backward == doctest::Approx((6.213 + 0.75 + 25 + 0.125 + 0.2) / 1000));
}

TEST_CASE("PipeDream options: forward only, colocated pairs, another suffix") {
  const graph forward_only = read_graph_pipedream(data_dir + "graph.txt", {.backward = false});
  CHECK(forward_only.vertex_count() == 6);
  CHECK(forward_only.edge_count() == 6);

  const graph grouped =
      read_graph_pipedream(data_dir + "graph.txt", {.colocate_pairs = true, .backward_suffix = "_bwd"});
  const auto b = *find(grouped, "node4_bwd");
  CHECK(grouped[b].group == "node4");
  CHECK(grouped[grouped.forward_of(b)].group == "node4");

  CHECK_THROWS_WITH_AS(
      (void)parse_graph_pipedream(std::string(two_nodes) + "\ta -- b\n", "g.txt", {.backward_suffix = ""}),
      doctest::Contains("g.txt:1: the backward vertex of node 'a' would be named 'a'"), parse_error);
}

TEST_CASE("an imported PipeDream graph places, simulates and validates") {
  const graph g = read_graph_pipedream(data_dir + "graph.txt");
  (void)test::require_places_and_validates(g,
                                           cluster::uniform(2, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e10}));
}

TEST_CASE("malformed PipeDream files are rejected with file, line and reason") {
  CHECK(error_of("") ==
        "graph.txt: the file is empty (expected PipeDream node lines 'node1 -- description -- "
        "forward_compute_time=...')");
  CHECK(error_of(" \n\r\n").starts_with("graph.txt: the file is empty"));
  CHECK(error_of("\ta -- b\n") ==
        "graph.txt:2: no node lines (expected 'node1 -- description -- forward_compute_time=...')");
  CHECK(error_of("a -- Linear\n").starts_with("graph.txt:1: expected 'id -- description -- forward_compute_time=..."));
  CHECK(error_of("a -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=1\n") ==
        "graph.txt:1: missing key 'parameter_size'");
  CHECK(
      error_of("a -- L -- forward_compute_time=fast, backward_compute_time=1, activation_size=1, parameter_size=0\n") ==
      "graph.txt:1: forward_compute_time is not a number: 'fast'");
  CHECK(error_of("a -- L -- forward_compute_time=-1, backward_compute_time=1, activation_size=1, parameter_size=0\n") ==
        "graph.txt:1: forward_compute_time must be finite and >= 0, got '-1'");
  CHECK(error_of(
            "a -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=[1; 2, parameter_size=0\n") ==
        "graph.txt:1: activation_size list is missing its closing ']'");
  CHECK(error_of(
            "a -- L -- forward_compute_time=1, speed=2, backward_compute_time=1, activation_size=1, parameter_size=0\n")
            .starts_with("graph.txt:1: unknown key 'speed'"));
  CHECK(error_of(std::string(two_nodes) + std::string(two_nodes.substr(0, two_nodes.find('\n') + 1))) ==
        "graph.txt:3: node 'a' is defined twice (first at line 1)");
  CHECK(error_of(std::string(two_nodes) + "\ta -> b\n") ==
        "graph.txt:3: expected an edge line '<TAB>from -- to', found 'a -> b'");
  CHECK(error_of(std::string(two_nodes) + "\ta -- a\n") == "graph.txt:3: edge from node 'a' to itself");
  CHECK(error_of(std::string(two_nodes) + "\ta -- b\n\tb -- a\n").starts_with("graph.txt: the graph has a cycle: "));
  CHECK(error_of(std::string(two_nodes) + "a -- L -- x=1 -- stage_id=0 -- more\n")
            .starts_with("graph.txt:3: expected 'id -- "));

  const std::string bad = data_dir + "bad_graph.txt";
  CHECK_THROWS_WITH_AS((void)read_graph_pipedream(bad),
                       doctest::Contains((bad + ":4: edge to unknown node 'node9'").c_str()), parse_error);
  CHECK_THROWS_AS((void)read_graph_pipedream(data_dir + "missing.txt"), io_error);
}

TEST_CASE("every prefix and seeded byte mutations of a graph.txt parse or throw parse_error") {
  const std::string text = read_text_file(data_dir + "graph.txt");
  const auto outcome = [](std::string_view t) {
    try {
      (void)parse_graph_pipedream(t, "mutated.txt");
      return 0;
    } catch (const parse_error&) {
      return 1;
    }
  };
  for (std::size_t n = 0; n < text.size(); ++n) (void)outcome(std::string_view(text).substr(0, n));
  std::mt19937_64 rng(11);
  const std::string_view alphabet = "-=,;[] \t\n.e9x";
  for (int round = 0; round < 2000; ++round) {
    std::string t = text;
    for (int k = 0; k < 3; ++k) t[rng() % t.size()] = alphabet[rng() % alphabet.size()];
    (void)outcome(t);
  }
}

TEST_CASE("PipeDream sizes of 2^63 bytes or more are refused with the line, not rounded") {
  // llround() of 1e19 is out of range: the size silently became 2^63.
  CHECK(
      error_of("a -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=1e19, parameter_size=0\n") ==
      "graph.txt:1: activation_size '1e19' is 2^63 bytes (8 EiB) or more");
  CHECK(
      error_of("a -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=9.3e18\n")
          .find("graph.txt:1: parameter_size") == 0);
  const std::string big =
      "a -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=4e18, parameter_size=0\n"
      "b -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=0\n"
      "\ta -- b\n";
  CHECK(error_of(big).find("graph.txt:1: the graph's byte counts") == 0);
  const graph g = parse_graph_pipedream(
      "a -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=1e18, parameter_size=7\n");
  CHECK(g[0].output == 1'000'000'000'000'000'000ull);
}

TEST_CASE("PipeDream node ids and descriptions must be UTF-8, named with the line") {
  CHECK(error_of(std::string(two_nodes) + "c\xFF -- L -- forward_compute_time=1, backward_compute_time=1, "
                                          "activation_size=1, parameter_size=0\n") ==
        "graph.txt:3: node id: byte 0xFF at offset 1 is not valid UTF-8");
  CHECK(
      error_of(
          "x -- Conv\xE2\x82 -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=0\n")
          .find("graph.txt:1: description of node 'x': byte 0xE2 at offset 4") == 0);
}

TEST_CASE("A weight factor whose product reaches 2^63 bytes is refused with the line") {
  const std::string text =
      "a -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=500\n";
  CHECK_THROWS_WITH_AS((void)parse_graph_pipedream(text, "g.txt", {.weight_factor = 1e300}),
                       "g.txt:1: parameter_size 500 x weight_factor 1e+300 is 2^63 bytes (8 EiB) or more", parse_error);
  CHECK(parse_graph_pipedream(text, "g.txt", {.weight_factor = 4})[0].persistent == 2000);
}
