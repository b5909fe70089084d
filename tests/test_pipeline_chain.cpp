// The chain model: JSON round trip and errors naming file and pointer, chains from training
// graphs, link stages, and the SVG picture.
#include <gantry/io/json_chain.hpp>
#include <gantry/io/pipeline_svg.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/one_f_one_b_star.hpp>
#include <gantry/pipeline/order_search.hpp>
#include <gantry/pipeline/plan.hpp>

#include <doctest/doctest.h>

using namespace gantry;

namespace {
std::string error_of(std::string_view text) {
  try {
    (void)parse_chain(text, "net.json");
  } catch (const parse_error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("Chain JSON: round trip, sizes and durations as strings") {
  const chain c{{{"embed", 0.01, 0.02, 1048576, 524288}, {"head", 0.5, 1.25, 7, 0}}};
  const auto back = parse_chain(chain_text(c));
  REQUIRE(back.size() == 2);
  CHECK(back[0].name == "embed");
  CHECK(back[0].forward == 0.01);
  CHECK(back[1].backward == 1.25);
  CHECK(back[0].weights == 1048576);
  CHECK(back[0].activation == 524288);
  const auto text = parse_chain(R"({"format": "gantry.chain", "version": 1,
    "layers": [{"forward": "2ms", "backward": 0.004, "weights": "1MiB", "activation": "2 KiB"}]})");
  CHECK(text[0].name == "layer0");
  CHECK(text[0].forward == doctest::Approx(0.002));
  CHECK(text[0].weights == 1048576);
  CHECK(text[0].activation == 2048);
}

TEST_CASE("Chain JSON errors name the file, the JSON pointer and the reason") {
  CHECK(error_of(R"({"format": "gantry.graph", "version": 1, "layers": []})").find("net.json: /format") == 0);
  CHECK(error_of(R"({"format": "gantry.chain", "version": 2, "layers": []})").find("/version") != std::string::npos);
  const auto negative = error_of(
      R"({"format": "gantry.chain", "version": 1, "layers": [{"forward": 1, "backward": 1}, {"forward": -1, "backward": 1}]})");
  CHECK(negative.find("/layers/1/forward") != std::string::npos);
  const auto missing = error_of(R"({"format": "gantry.chain", "version": 1, "layers": [{"forward": 1}]})");
  CHECK(missing.find("/layers/0") != std::string::npos);
  CHECK(missing.find("backward") != std::string::npos);
  const auto unknown =
      error_of(R"({"format": "gantry.chain", "version": 1, "layers": [{"forward": 1, "backward": 1, "weight": 3}]})");
  CHECK(unknown.find("/layers/0/weight") != std::string::npos);
  CHECK(
      error_of(R"({"format": "gantry.chain", "version": 1, "layers": [{"forward": 1, "backward": 1, "weights": -4}]})")
          .find("/layers/0/weights") != std::string::npos);
  CHECK(error_of("{ nope").find("net.json: line 1") == 0);
  CHECK_THROWS_AS((void)read_chain("/nonexistent/chain.json"), io_error);
}

TEST_CASE("A chain from a training graph keeps forward/backward pairs in one layer") {
  // f0 -> f1 -> f2 -> loss -> b2 -> b1 -> b0, with b_i the backward of f_i.
  graph g;
  std::vector<vertex_id> f, b;
  for (int i = 0; i < 3; ++i)
    f.push_back(g.add_vertex(vertex_properties{
        .name = "f" + std::to_string(i), .compute = 1.0 + i, .persistent = 100u * (i + 1), .output = 10u * (i + 1)}));
  const auto loss = g.add_vertex(vertex_properties{.name = "loss", .compute = 0.5, .output = 1});
  for (int i = 0; i < 3; ++i)
    b.push_back(
        g.add_vertex(vertex_properties{.name = "b" + std::to_string(i), .compute = 2.0 * (i + 1), .output = 5}));
  for (int i = 0; i < 3; ++i) g.set_forward(b[i], f[i]);
  g.add_edge(f[0], f[1]);
  g.add_edge(f[1], f[2]);
  g.add_edge(f[2], loss);
  g.add_edge(loss, b[2]);
  g.add_edge(b[2], b[1]);
  g.add_edge(b[1], b[0]);
  for (int i = 0; i < 3; ++i) g.add_edge(f[i], b[i]);

  const auto per_vertex = chain_from_graph(g);
  REQUIRE(per_vertex.size() == 4);  // f0, f1, f2, loss
  CHECK(per_vertex[0].name == "f0");
  CHECK(per_vertex[1].forward == 2.0);
  CHECK(per_vertex[1].backward == 4.0);
  CHECK(per_vertex[2].weights == 300);
  CHECK(per_vertex[2].activation == 30);
  CHECK(per_vertex[3].activation == 1);

  const auto two = chain_from_graph(g, {.layers = 2});
  REQUIRE(two.size() == 2);
  CHECK(two.total_cost() == doctest::Approx(per_vertex.total_cost()));
  CHECK(two[0].weights + two[1].weights == 600);
  // Times add up and each layer keeps its forwards' backwards.
  CHECK(two[0].forward + two[1].forward == doctest::Approx(6.5));
  CHECK(two[0].backward + two[1].backward == doctest::Approx(12.0));

  graph cyclic;
  const auto x = cyclic.add_vertex("x"), y = cyclic.add_vertex("y");
  cyclic.add_edge(x, y);
  cyclic.add_edge(y, x);
  CHECK_THROWS_AS((void)chain_from_graph(cyclic), not_a_dag);
}

TEST_CASE("A weight travels with the first vertex that reads it, not in the first layer") {
  // x, w1 -> a -> b <- w2, with a's and b's backward vertices; w2 also read by b's backward, w3 only by it.
  graph g;
  const auto x = g.add_vertex(vertex_properties{.name = "x", .output = 64});
  const auto w1 = g.add_vertex(vertex_properties{.name = "w1", .persistent = 10});
  const auto w2 = g.add_vertex(vertex_properties{.name = "w2", .persistent = 20});
  const auto w3 = g.add_vertex(vertex_properties{.name = "w3", .persistent = 40});
  const auto a = g.add_vertex(vertex_properties{.name = "a", .compute = 1.0, .output = 8});
  const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 1.0, .output = 8});
  const auto a_grad = g.add_vertex(vertex_properties{.name = "a_grad", .compute = 2.0});
  const auto b_grad = g.add_vertex(vertex_properties{.name = "b_grad", .compute = 2.0});
  g.set_forward(a_grad, a);
  g.set_forward(b_grad, b);
  for (const auto& [from, to] :
       {std::pair{x, a}, {w1, a}, {a, b}, {w2, b}, {b, b_grad}, {w2, b_grad}, {w3, b_grad}, {b_grad, a_grad}})
    g.add_edge(from, to);
  const auto anchor = forward_anchors(g);
  CHECK(anchor[x] == a);
  CHECK(anchor[w1] == a);
  CHECK(anchor[w2] == b);
  CHECK(anchor[w3] == b);  // read by b's backward only: with b
  for (const auto v : {a, b, a_grad, b_grad}) CHECK(anchor[v] == no_vertex);

  const chain c = chain_from_graph(g);
  REQUIRE(c.size() == 2);  // a and b: the weights and the input are no layers of their own
  CHECK(c[0].name == "a");
  CHECK(c[0].weights == 10);
  CHECK(c[1].weights == 60);
  CHECK(c[0].forward + c[1].forward == doctest::Approx(2.0));
  CHECK(c.crossing[0] == 8);  // a's output; x's stays in layer 0
  // A given order may list the weights (they are skipped) or leave them out.
  CHECK(chain_from_graph(g, {.order = {w3, x, a, w1, w2, b}}).size() == 2);
  CHECK(chain_from_graph(g, {.order = {a, b}})[1].weights == 60);
  CHECK_THROWS_AS((void)chain_from_graph(g, {.order = {a}}), invalid_input);

  // A vertex with compute time on some device kind does work, so it stays a layer.
  graph h = g;
  h.set_compute(w1, "gpu", 1e-3);
  CHECK(forward_anchors(h)[w1] == no_vertex);
  CHECK(chain_from_graph(h).size() == 3);
}

TEST_CASE("An unpaired vertex that reads the backward pass belongs to it, not to stage 0") {
  // f0 -> f1 -> loss -> b1 -> {b0, s}, b0 -> s: s sums gradients but names no forward vertex.
  graph g;
  const auto f0 = g.add_vertex("f0", 1.0), f1 = g.add_vertex("f1", 1.0), loss = g.add_vertex("loss", 0.5);
  const auto b1 = g.add_vertex("b1", 2.0), b0 = g.add_vertex("b0", 2.0), s = g.add_vertex("s", 0.25);
  g.set_forward(b1, f1);
  g.set_forward(b0, f0);
  for (const auto& [from, to] : {std::pair{f0, f1}, {f1, loss}, {loss, b1}, {b1, b0}, {b1, s}, {b0, s}})
    g.add_edge(from, to);
  const auto owners = backward_owners(g);
  CHECK(owners[s] == f0);  // of its inputs' forwards (f1, f0), the first in Kahn's order
  CHECK(owners[b1] == f1);
  CHECK(owners[f0] == no_vertex);
  CHECK(owners[loss] == no_vertex);
  const chain c = chain_from_graph(g);
  REQUIRE(c.size() == 3);  // f0, f1, loss: s is no layer of its own
  CHECK(c[0].name == "f0");
  CHECK(c[0].backward == doctest::Approx(2.25));
  for (const auto& order : candidate_orders(g)) CHECK(order.size() == 3);
}

TEST_CASE("Partitions and stages") {
  const chain c{{{"a", 1, 2, 3, 4}, {"b", 1, 1, 5, 6}, {"c", 2, 2, 7, 8}}};
  const auto part = partition_from_sizes({2, 1});
  CHECK(part.first == std::vector<std::uint32_t>{0, 2});
  const auto stages = contiguous_stages(c, part);
  REQUIRE(stages.size() == 2);
  CHECK(stages[0].load() == 5.0);
  CHECK(stages[0].weights == 8);
  CHECK(stages[0].activation == 10);
  CHECK(stages[1].resource == 1);
  CHECK_THROWS_AS((void)partition_from_sizes({1, 0}), invalid_input);
  CHECK_THROWS_AS(check_partition(chain_partition{{1}}, 3), invalid_input);
}

TEST_CASE("The SVG shows every operation, wrapped ones in two pieces, with names escaped") {
  const chain c{{{"a<b", 1, 2, 0, 1}, {"c&d", 2, 1, 0, 1}}};
  const auto p = one_f_one_b_star(c, partition_from_sizes({1, 1}), 3.0);
  const auto svg = pattern_svg(c, p);
  CHECK(svg.find("<svg") == 0);
  CHECK(svg.find("a&lt;b") != std::string::npos);
  CHECK(svg.find("c&amp;d") != std::string::npos);
  CHECK(svg.find("processor 1") != std::string::npos);
  CHECK(svg.find("1F1B*") != std::string::npos);
  // A time axis with units, a legend and the stages each row runs.
  CHECK(svg.find("time within one period") != std::string::npos);
  CHECK(svg.find(">3.00 s</text>") != std::string::npos);
  CHECK(svg.find("forward (F)") != std::string::npos);
  CHECK(svg.find("backward (B)") != std::string::npos);
  CHECK(svg.find("stage 0 &apos;a&lt;b&apos;") != std::string::npos);
}

TEST_CASE("The SVG numbers stages as the plan's table does, links apart, and labels only boxes wide enough") {
  // Two layers on two workers joined by a link: the pattern's stages are compute, link, compute;
  // the picture calls them stage 0, L0 and stage 1, as the table does, never stage 2.
  const chain c{{{"a", 1, 2, 0, 4000}, {"b", 1, 2, 0, 4000}}};
  const auto plan =
      plan_pipeline(c, 2, unlimited_memory, {.comm = {.link = link_model{.latency = 1e-3, .bandwidth = 1e6}}});
  REQUIRE(plan.ok());
  const auto svg = pattern_svg(c, plan.chosen);
  CHECK(svg.find("stage 0 &apos;a&apos;") != std::string::npos);
  CHECK(svg.find("stage 1 &apos;b&apos;") != std::string::npos);
  CHECK(svg.find("stage 2") == std::string::npos);
  CHECK(svg.find(">F1^") != std::string::npos);
  CHECK(svg.find(">F2^") == std::string::npos);
  CHECK(svg.find("L0") != std::string::npos);
}

TEST_CASE("Chain sums that would not fit are refused, naming the field or the layer") {
  // Three bytes fields of 2^63 - 1: their sum wraps a 64-bit count.
  const auto wrapping = error_of(R"({"format": "gantry.chain", "version": 1, "layers": [
    {"forward": 1, "backward": 1, "weights": 9223372036854775807, "activation": 9223372036854775807},
    {"forward": 1, "backward": 1, "weights": 9223372036854775807}]})");
  CHECK(wrapping.find("net.json: /layers/0/activation: the weights and activations of layers 0 to 0 add up to 2^63") ==
        0);
  const auto infinite = error_of(R"({"format": "gantry.chain", "version": 1, "layers": [
    {"forward": 1e308, "backward": 1e308}, {"forward": 1e308, "backward": 1e308}]})");
  CHECK(infinite.find("net.json: /layers/0/backward: the forward and backward times of layers 0 to 0") == 0);
  // A chain built in code is checked by every planner.
  const chain big{{{"a", 1, 1, byte_count{1} << 62, byte_count{1} << 62}, {"b", 1, 1, 1, 0}}};
  CHECK(chain_problem(big).find("layer 1 ('b')") == std::string::npos);
  CHECK(chain_problem(big).find("layer 0 ('a')") != std::string::npos);
  CHECK_THROWS_AS(check_chain(big), invalid_input);
  const chain slow{{{"a", 1e308, 0, 0, 0}, {"b", 1e308, 0, 0, 0}}};
  CHECK(chain_problem(slow).find("up to layer 1 ('b') add up to more than the largest finite number") !=
        std::string::npos);
}
