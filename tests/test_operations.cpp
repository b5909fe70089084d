// The shapes read back from DOPPLER workloads (exec/operations.hpp): every unbatched product of
// ChainMM, FFNN and the Llama block has its own (m, k, n), batched ones keep their FLOPs and inner
// dimension, element-wise ops their element counts; inputs and unknown ops are timed; a product
// whose FLOPs do not fit a shape is named.
#include "support.hpp"

#include <gantry/exec/operations.hpp>
#include <gantry/workloads/doppler.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

using namespace gantry;

namespace {

vertex_id by_name(const graph& g, const std::string& name) {
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (g[v].name == name) return v;
  FAIL("no vertex " << name);
  return no_vertex;
}

// The sides of a product as a set: the derivation puts the larger side first.
std::multiset<std::uint64_t> sides(const operation& o) { return {o.m, o.n}; }

}  // namespace

TEST_CASE("ChainMM's block products and sums have their own shapes, even with uneven blocks") {
  const graph g = chain_mm({.dimension = 11, .blocks_per_side = 2, .inner_split = 2});
  const auto ops = operations_of(g);
  REQUIRE(ops.size() == g.vertex_count());
  std::size_t products = 0;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& o = ops[v];
    if (g[v].op == "input") CHECK(o.kind == operation_kind::timed);
    if (g[v].op != "matmul") continue;
    ++products;
    REQUIRE(o.kind == operation_kind::matmul);
    CHECK(o.flops() == doctest::Approx(g[v].flops));  // exact FLOPs for every block
    CHECK(o.elements * 4 == g[v].output);
  }
  CHECK(products == 24);
  // Block (0, 1), inner group 0: rows 6, columns 5, inner 6 (11 cut 6 + 5).
  const auto& p = ops[by_name(g, "AB.matmul[0,1,0]")];
  CHECK(p.k == 6);
  CHECK(sides(p) == std::multiset<std::uint64_t>{6, 5});
  const auto& q = ops[by_name(g, "AB.matmul[1,1,1]")];
  CHECK(q.k == 5);
  CHECK(sides(q) == std::multiset<std::uint64_t>{5, 5});
  const auto& sum = ops[by_name(g, "AB.sum[0,1]")];
  CHECK(sum.kind == operation_kind::elementwise);
  CHECK(sum.op == elementwise_op::add);
  CHECK(sum.operands == 2);
  CHECK(sum.elements == 30);
  CHECK(sum.reads == 60);
}

TEST_CASE("FFNN's two products per shard, its bias, ReLU and softmax") {
  const graph g = ffnn({.batch = 64, .features = 8, .hidden = 32, .classes = 4, .batch_split = 2, .hidden_split = 4});
  const auto ops = operations_of(g);
  const auto& first = ops[by_name(g, "layer1.matmul[1,2]")];  // X_1 (32 x 8) W1_2 (8 x 8)
  REQUIRE(first.kind == operation_kind::matmul);
  CHECK(first.k == 8);
  CHECK(sides(first) == std::multiset<std::uint64_t>{32, 8});
  const auto& second = ops[by_name(g, "layer2.matmul[0,3]")];  // relu (32 x 8) W2_3 (8 x 4)
  REQUIRE(second.kind == operation_kind::matmul);
  CHECK(second.k == 8);
  CHECK(sides(second) == std::multiset<std::uint64_t>{32, 4});
  const auto& bias = ops[by_name(g, "layer1.bias_add[1,2]")];
  CHECK(bias.kind == operation_kind::elementwise);
  CHECK(bias.op == elementwise_op::add);
  CHECK(bias.elements == 256);
  CHECK(bias.reads == 256 + 8);  // the product and the bias shard
  CHECK(ops[by_name(g, "layer1.relu[1,2]")].op == elementwise_op::relu);
  CHECK(ops[by_name(g, "softmax[1]")].op == elementwise_op::softmax);
}

TEST_CASE("the Llama block's projections have their shapes; per-head products keep FLOPs and inner size") {
  const graph g = llama_block({.sequence = 16, .hidden = 32, .heads = 4, .ffn_hidden = 40, .shards = 2});
  const auto ops = operations_of(g);
  const auto& q = ops[by_name(g, "attention.q[0]")];  // x (16 x 32) Wq_0 (32 x 16)
  REQUIRE(q.kind == operation_kind::matmul);
  CHECK(q.k == 32);
  CHECK(sides(q) == std::multiset<std::uint64_t>{16, 16});
  const auto& up = ops[by_name(g, "ffn.up[1]")];  // (16 x 32) W3_1 (32 x 20)
  CHECK(up.k == 32);
  CHECK(sides(up) == std::multiset<std::uint64_t>{16, 20});
  const vertex_id scores = by_name(g, "attention.scores[0]");  // 2 heads of 16 x 16, head size 8
  CHECK(ops[scores].kind == operation_kind::matmul);
  CHECK(ops[scores].k == 8);
  CHECK(ops[scores].flops() == doctest::Approx(g[scores].flops));
  const vertex_id context = by_name(g, "attention.context[1]");
  CHECK(ops[context].k == 16);
  CHECK(ops[context].flops() == doctest::Approx(g[context].flops));
  CHECK(ops[by_name(g, "attention.rmsnorm")].op == elementwise_op::rmsnorm);
  CHECK(ops[by_name(g, "attention.rope_q[1]")].op == elementwise_op::rope);
  CHECK(ops[by_name(g, "ffn.silu[0]")].op == elementwise_op::silu);
  CHECK(ops[by_name(g, "ffn.mul[0]")].op == elementwise_op::mul);
  CHECK(ops[by_name(g, "ffn.mul[0]")].operands == 2);
  // Every product of every workload keeps its FLOPs and output elements exactly.
  for (const graph& w :
       {g, llama_layer({.block = {.sequence = 16, .hidden = 32, .heads = 4, .ffn_hidden = 40, .shards = 3},
           .vocabulary = 50})}) {
    const auto all = operations_of(w);
    for (vertex_id v = 0; v < w.vertex_count(); ++v)
      if (all[v].kind == operation_kind::matmul) {
        INFO(w[v].name);
        CHECK(all[v].flops() == doctest::Approx(w[v].flops));
        CHECK(all[v].elements * 4 == w[v].output);
      }
  }
  const auto layer = llama_layer(
      {.block = {.sequence = 16, .hidden = 32, .heads = 4, .ffn_hidden = 40, .shards = 2}, .vocabulary = 50});
  const auto layer_ops = operations_of(layer);
  const auto& stats = layer_ops[by_name(layer, "output.softmax_stats[0]")];
  CHECK(stats.op == elementwise_op::reduce_exp);
  CHECK(stats.elements == 32);    // (max, sum) per token
  CHECK(stats.reads == 16 * 25);  // the shard's logits
  CHECK(layer_ops[by_name(layer, "embedding[1]")].op == elementwise_op::select);
}

TEST_CASE("inputs and ops without a shape are timed; a product whose FLOPs fit no shape is named") {
  graph g;
  const auto a = g.add_vertex({.name = "a", .output = 64, .op = "input"});
  const auto b = g.add_vertex({.name = "b", .output = 64, .op = "input"});
  const auto conv = g.add_vertex({.name = "conv", .compute = 1e-3, .output = 64, .op = "Conv2D", .flops = 1e6});
  g.add_edge(a, conv, 64);
  auto ops = operations_of(g);
  CHECK(ops[a].kind == operation_kind::timed);
  CHECK(ops[conv].kind == operation_kind::timed);

  // 4 x 4 output from two 4 x 4 operands: 2 * 16 * 4 = 128 FLOPs.
  const auto mm = g.add_vertex({.name = "mm", .output = 64, .op = "matmul", .flops = 128});
  g.add_edge(a, mm, 64);
  g.add_edge(b, mm, 64);
  ops = operations_of(g);
  CHECK(ops[mm].kind == operation_kind::matmul);
  CHECK(ops[mm].m == 4);
  CHECK(ops[mm].k == 4);
  CHECK(ops[mm].n == 4);
  CHECK(ops[mm].reads == 32);
  CHECK(ops[mm].operands == 2);

  g[mm].flops = 100;  // 3.125 inner elements
  CHECK_THROWS_WITH_AS((void)operations_of(g), doctest::Contains("vertex 'mm' (matmul)"), invalid_input);
  g[mm].flops = 128;
  g[mm].output = 66;  // not whole floats
  CHECK_THROWS_WITH_AS((void)operations_of(g), doctest::Contains("66 bytes is not whole 4-byte elements"),
                       invalid_input);
  CHECK_THROWS_AS((void)operations_of(g, 0), invalid_input);
  g[mm].output = 64;
  const auto lonely = g.add_vertex({.name = "relu1", .output = 16, .op = "relu", .flops = 4});
  CHECK_THROWS_WITH_AS((void)operations_of(g), doctest::Contains("vertex 'relu1' (relu): has no operands"),
                       invalid_input);
  g.add_edge(conv, lonely, 16);
  CHECK(operations_of(g)[lonely].kind == operation_kind::elementwise);
}
