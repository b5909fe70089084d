// DOPPLER workload generators: vertex and edge counts and total FLOPs against the hand
// calculations in workloads/doppler.hpp, byte and time conventions, and simulated schedules.
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>
#include <gantry/workloads/doppler_published.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace gantry;

namespace {

double total_flops(const graph& g) {
  double sum = 0;
  for (const auto& v : g.vertices()) sum += v.flops;
  return sum;
}

std::map<std::string, std::size_t> ops(const graph& g) {
  std::map<std::string, std::size_t> count;
  for (const auto& v : g.vertices()) ++count[v.op];
  return count;
}

// Every edge carries its source's output; inputs have no compute, everything else has FLOPs and
// compute = flops / rate + overhead; names are unique; the graph is a DAG.
void check_conventions(const graph& g, const workload_device& device) {
  for (edge_id e = 0; e < g.edge_count(); ++e) CHECK(g.bytes(e) == g[g.source(e)].output);
  std::map<std::string, int> names;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& p = g[v];
    CHECK(++names[p.name] == 1);
    CHECK(p.output > 0);
    CHECK(p.output % device.element_bytes == 0);
    if (p.op == "input") {
      CHECK(p.flops == 0);
      CHECK(p.compute == 0);
    } else {
      CHECK(p.flops > 0);
      CHECK(p.compute == doctest::Approx(p.flops / device.flops_per_second + device.op_overhead));
      for (const auto& rate : device.kinds)
        CHECK(g.compute_on(v, rate.kind) == doctest::Approx(p.flops / rate.flops_per_second + device.op_overhead));
    }
  }
  CHECK_NOTHROW((void)snapshot_dag(g));
}

// Places the graph with m-TOPO on `devices` identical devices, simulates it and validates the schedule.
void check_schedules(const graph& g, std::size_t devices) {
  const auto s = test::require_places_and_validates(
      g, cluster::uniform(devices, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e11}));
  CHECK(s.makespan > 0);
}

}  // namespace

TEST_CASE("ChainMM, Fig. 1 sharding (4-way matrices, 8-way multiplies): counts and FLOPs") {
  const graph g = chain_mm();  // n = 10000, p = 2, q = 2
  // Vertices: 5 matrices x 4 blocks + 3 multiplies x (8 products + 4 sums) + 4 final adds.
  CHECK(g.vertex_count() == 20 + 3 * 12 + 4);
  // Edges: per multiply 8 products x 2 operands + 4 sums x 2 partials; 4 adds x 2 operands.
  CHECK(g.edge_count() == 3 * (16 + 8) + 8);
  const double n = 10000;
  CHECK(total_flops(g) == doctest::Approx(3 * 2 * n * n * n + 3 * n * n + n * n).epsilon(1e-12));
  const auto count = ops(g);
  CHECK(count.at("input") == 20);
  CHECK(count.at("matmul") == 24);
  CHECK(count.at("sum") == 12);
  CHECK(count.at("add") == 4);
  // A 5000 x 5000 fp32 block is 100 MB; one block product is 2 * 5000^3 FLOPs.
  CHECK(g[0].output == 5000ull * 5000 * 4);
  for (const auto& v : g.vertices())
    if (v.op == "matmul") CHECK(v.flops == 2.0 * 5000 * 5000 * 5000);
  check_conventions(g, {});
}

TEST_CASE("ChainMM, 4-way multiplies and uneven blocks") {
  const graph four = chain_mm({.blocks_per_side = 2, .inner_split = 1});
  CHECK(four.vertex_count() == 20 + 3 * 4 + 4);
  CHECK(four.edge_count() == 3 * 16 + 8);  // each product reads two blocks of X and two of Y
  CHECK(ops(four).count("sum") == 0);
  const double n = 10000;
  CHECK(total_flops(four) == doctest::Approx(6 * n * n * n + n * n).epsilon(1e-12));

  // n = 10 in 3 x 3 blocks (sizes 4, 3, 3), every multiply split 3 ways: FLOPs stay exact.
  const graph odd = chain_mm({.dimension = 10, .blocks_per_side = 3, .inner_split = 3});
  CHECK(odd.vertex_count() == 5 * 9 + 3 * (27 + 9) + 9);
  CHECK(odd.edge_count() == 3 * (2 * 27 + 27) + 2 * 9);
  CHECK(total_flops(odd) == 3 * 2 * 1000 + 3 * 2 * 100 + 100);
  check_conventions(odd, {});
}

TEST_CASE("FFNN of Appendix C.2: counts and FLOPs") {
  const graph g = ffnn();  // B = 2^15, F = 2^5, H = 2^16, C = 2^5, r = 2, h = 4
  // Inputs: 2 X + 4 W1 + 4 b1 + 4 W2 + b2 = 15; per (i, j) 4 ops = 32; per i sum, bias, softmax = 6.
  CHECK(g.vertex_count() == 15 + 32 + 6);
  // Per (i, j): 2 + 2 + 1 + 2 = 7 -> 56, sums 8, per i bias 2 + softmax 1 -> 6.
  CHECK(g.edge_count() == 56 + 8 + 6);
  const double B = 32768, F = 32, H = 65536, C = 32;
  CHECK(total_flops(g) ==
        doctest::Approx(2 * B * F * H + 2 * B * H + 2 * B * H * C + 3 * B * C + B * C + 5 * B * C).epsilon(1e-12));
  const auto count = ops(g);
  CHECK(count.at("matmul") == 16);
  CHECK(count.at("relu") == 8);
  CHECK(count.at("softmax") == 2);

  const graph unsharded = ffnn({.batch_split = 1, .hidden_split = 1});
  CHECK(unsharded.vertex_count() == 5 + 4 + 2);
  CHECK(unsharded.edge_count() == 7 + 3);
}

TEST_CASE("Llama block of Appendix C.3: counts and FLOPs") {
  const graph g = llama_block();  // T = 4096 tokens, d = 4096, H = 32, f = 11008, s = 4
  CHECK(g.vertex_count() == 5 + 21 * 4 + 2);
  CHECK(g.edge_count() == 24 * 4 + 6 + 2 * 4);
  const double T = 4096, d = 4096, L = 4096, f = 11008, heads = 32, s = 4;
  const double expected = 8 * T * d * d + 4 * T * L * d + 6 * T * d * f + 8 * T * d + 6 * T * d + 5 * heads * L * L +
                          5 * T * f + 2 * T * d + 2 * (s - 1) * T * d;
  CHECK(total_flops(g) == doctest::Approx(expected).epsilon(1e-12));
  const auto count = ops(g);
  CHECK(count.at("input") == 1 + 7 * 4);
  CHECK(count.at("matmul") == 9 * 4);
  CHECK(count.at("softmax") == 4);
  CHECK(count.at("rmsnorm") == 2);
  // RMSNorm keeps its weight vector as persistent memory.
  for (const auto& v : g.vertices())
    if (v.op == "rmsnorm") CHECK(v.persistent == 4096u * 4);

  const graph single = llama_block({.sequence = 16, .hidden = 64, .heads = 4, .ffn_hidden = 96, .shards = 1});
  CHECK(single.vertex_count() == 5 + 21);
  CHECK(single.edge_count() == 24 + 6);
}

TEST_CASE("Llama layer of Appendix C.3: the block between an embedding and the vocabulary projection") {
  const graph g = llama_layer();  // the block above, V = 32000, s = 4
  // Block without x: 4 + 21 * 4 + 2 = 90. Inputs tokens, 4 E, 4 Wout; 4 lookups + their sum;
  // final norm; per shard logits, statistics, softmax; the statistics' sum.
  CHECK(g.vertex_count() == 90 + 9 + 5 + 1 + 12 + 1);
  // Block 110; lookups 2 x 4, their sum 4; norm 1; logits 2 x 4, statistics 4, their sum 4, softmax 2 x 4.
  CHECK(g.edge_count() == 110 + 8 + 4 + 1 + 8 + 4 + 4 + 8);
  const double T = 4096, d = 4096, L = 4096, f = 11008, heads = 32, s = 4, V = 32000;
  const double block = 8 * T * d * d + 4 * T * L * d + 6 * T * d * f + 8 * T * d + 6 * T * d + 5 * heads * L * L +
                       5 * T * f + 2 * T * d + 2 * (s - 1) * T * d;
  const double head = s * T * d + (s - 1) * T * d + 4 * T * d + 2 * T * d * V + 5 * T * V + 2 * (s - 1) * T;
  CHECK(total_flops(g) == doctest::Approx(block + head).epsilon(1e-12));
  const auto count = ops(g);
  CHECK(count.at("input") == 7 * 4 + 1 + 4 + 4);  // weights, tokens, E, Wout (no x)
  CHECK(count.at("matmul") == 9 * 4 + 4);
  CHECK(count.at("rmsnorm") == 3);
  CHECK(count.at("embedding") == 4);
  CHECK(count.at("sum") == 2 + 2);
  CHECK(count.at("softmax") == 4 + 4);
  // One shard's logits: 4096 tokens x 8000 words, each a dot product of length 4096.
  const auto logits = std::find_if(g.vertices().begin(), g.vertices().end(),
                                   [](const vertex_properties& v) { return v.name == "output.logits[0]"; });
  REQUIRE(logits != g.vertices().end());
  CHECK(logits->flops == 2.0 * 4096 * 8000 * 4096);
  CHECK(logits->output == 4096ull * 8000 * 4);
  check_conventions(g, {});

  // Meta-ops: the vocabulary-parallel ops are 4-shard meta-ops, the two joins reduce ops.
  const auto labels = doppler_meta_ops(g);
  std::map<std::string, std::size_t> shards, reduces;
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    ++(labels.role[v] == meta_op_role::reduce ? reduces : shards)[labels.names[labels.meta_op[v]]];
  for (const char* name :
       {"embedding", "output.logits", "output.softmax_stats", "output.softmax", "attention.q", "E", "Wout"})
    CHECK_MESSAGE(shards[name] == 4, name);
  for (const char* name : {"embedding.sum", "output.softmax_sum", "attention.sum", "ffn.sum"})
    CHECK_MESSAGE(reduces[name] == 1, name);
  CHECK(shards["output.rmsnorm"] == 1);

  // One shard: no joins. Vocabulary 10 in 3 shards (4, 3, 3): the projection's FLOPs stay exact.
  const graph single = llama_layer(
      {.block = {.sequence = 16, .hidden = 64, .heads = 4, .ffn_hidden = 96, .shards = 1}, .vocabulary = 100});
  CHECK(single.vertex_count() == 6 + 27);
  CHECK(single.edge_count() == 31 + 7);
  const graph odd =
      llama_layer({.block = {.sequence = 4, .hidden = 12, .heads = 3, .ffn_hidden = 9, .shards = 3}, .vocabulary = 10});
  CHECK(odd.vertex_count() == 6 + 27 * 3 + 4);
  double projection = 0;
  for (const auto& v : odd.vertices())
    if (v.name.starts_with("output.logits")) projection += v.flops;
  CHECK(projection == 2.0 * 4 * 12 * 10);
  check_conventions(odd, {});
}

TEST_CASE("device description: per-kind times, overhead and element size") {
  const workload_device device{
      .flops_per_second = 1e12,
      .kinds = {{.kind = "gpu", .flops_per_second = 1e14}, {.kind = "cpu", .flops_per_second = 1e11}},
      .op_overhead = 1e-5,
      .element_bytes = 2};
  const graph g = ffnn(
      {.batch = 64, .features = 8, .hidden = 32, .classes = 4, .batch_split = 2, .hidden_split = 2, .device = device});
  check_conventions(g, device);
  CHECK(g[0].output == 32u * 8 * 2);  // X[0]: 32 x 8 half-precision elements
}

TEST_CASE("bad options are rejected with what was wrong") {
  CHECK_THROWS_WITH_AS((void)chain_mm({.blocks_per_side = 4, .inner_split = 3}),
                       doctest::Contains("inner_split must divide blocks_per_side (4), got 3"), invalid_input);
  CHECK_THROWS_WITH_AS((void)chain_mm({.dimension = 3, .blocks_per_side = 4}),
                       doctest::Contains("blocks_per_side must be between 1 and dimension (3)"), invalid_input);
  CHECK_THROWS_WITH_AS((void)ffnn({.hidden_split = 0}), doctest::Contains("hidden_split"), invalid_input);
  CHECK_THROWS_WITH_AS((void)llama_block({.heads = 5}), doctest::Contains("must divide hidden"), invalid_input);
  CHECK_THROWS_WITH_AS((void)llama_block({.shards = 64}), doctest::Contains("shards must be between 1 and heads (32)"),
                       invalid_input);
  CHECK_THROWS_WITH_AS((void)llama_layer({.vocabulary = 2}),
                       doctest::Contains("llama_layer: shards must be between 1 and vocabulary (2), got 4"),
                       invalid_input);
  CHECK_THROWS_WITH_AS((void)llama_layer({.block = {.heads = 5}}),
                       doctest::Contains("llama_layer: heads (5) must divide hidden (4096)"), invalid_input);
  CHECK_THROWS_WITH_AS((void)chain_mm({.device = {.flops_per_second = 0}}),
                       doctest::Contains("flops_per_second must be finite and > 0"), invalid_input);
  CHECK_THROWS_WITH_AS((void)chain_mm({.device = {.kinds = {{.kind = "tpu", .flops_per_second = -1}}}}),
                       doctest::Contains("kind 'tpu'"), invalid_input);
}

TEST_CASE("sizes that overflow 64 bits and graphs past max_graph_size are refused, not wrapped") {
  // 2^32 + 1 split in one block: the block has (2^32 + 1)^2 elements.
  CHECK_THROWS_WITH_AS((void)chain_mm({.dimension = 4294967297, .blocks_per_side = 1, .inner_split = 1}),
                       doctest::Contains("chain_mm: a tensor of 4294967297 x 4294967297 elements has more elements"),
                       invalid_input);
  // Two blocks per side: (2^31 + 1)^2 elements fit, their 4-byte bytes do not.
  CHECK_THROWS_WITH_AS((void)chain_mm({.dimension = 4294967297}), doctest::Contains("chain_mm: a tensor of"),
                       invalid_input);
  CHECK_THROWS_WITH_AS((void)llama_block({.sequence = 4294967296, .hidden = 4294967296}),
                       doctest::Contains("llama_block: a tensor of 1 x 4294967296 x 4294967296 elements"),
                       invalid_input);
  CHECK_THROWS_WITH_AS((void)llama_layer({.block = {.sequence = 4294967296, .hidden = 4294967296}}),
                       doctest::Contains("llama_layer: a tensor of"), invalid_input);
  CHECK_THROWS_WITH_AS((void)ffnn({.batch = 18446744073709551615ull}), doctest::Contains("ffnn: a tensor of"),
                       invalid_input);
  // Element counts that fit one by one but add up past what a reader accepts (2^63 bytes).
  CHECK_THROWS_WITH_AS((void)ffnn({.batch = std::uint64_t{1} << 58,
                                   .features = 2,
                                   .hidden = 4,
                                   .classes = 2,
                                   .batch_split = 1,
                                   .hidden_split = 1}),
                       doctest::Contains("ffnn: the graph's tensors add up to 2^63 bytes"), invalid_input);
  // FLOPs are products in floating point: a 2^22-wide product does not wrap its 2 n^3 count.
  const graph big = chain_mm({.dimension = std::uint64_t{1} << 22, .blocks_per_side = 1, .inner_split = 1});
  CHECK(big[5].flops == doctest::Approx(2.0 * std::pow(2.0, 66)));
  // The size is known before anything is built: p = 300, q = 1 is 162 million edges.
  CHECK_THROWS_WITH_AS((void)chain_mm({.blocks_per_side = 300, .inner_split = 1}),
                       doctest::Contains("chain_mm: these options make a graph of 810000 vertices and 162180000 edges, "
                                         "more than max_graph_size (16777216 vertices plus edges)"),
                       invalid_input);
  CHECK_THROWS_WITH_AS(
      (void)chain_mm({.dimension = std::uint64_t{1} << 40, .blocks_per_side = 4000000000u, .inner_split = 1}),
      doctest::Contains("more than max_graph_size"), invalid_input);
  CHECK_THROWS_WITH_AS((void)chain_mm({.max_graph_size = 59}), doctest::Contains("60 vertices and 80 edges"),
                       invalid_input);
  CHECK(chain_mm({.max_graph_size = 140}).edge_count() == 80);
  CHECK_THROWS_AS((void)ffnn({.max_graph_size = 122}), invalid_input);
  CHECK(ffnn({.max_graph_size = 123}).vertex_count() == 53);
  CHECK_THROWS_AS((void)llama_block({.max_graph_size = 200}), invalid_input);
  CHECK(llama_block({.max_graph_size = 201}).vertex_count() == 91);
  CHECK_THROWS_AS((void)llama_layer({.block = {.max_graph_size = 264}}), invalid_input);
  CHECK(llama_layer({.block = {.max_graph_size = 265}}).vertex_count() == 118);
}

TEST_CASE("generated graphs place, simulate and validate on 4 and 8 devices") {
  check_schedules(chain_mm(), 8);
  check_schedules(chain_mm({.inner_split = 1}), 4);
  check_schedules(ffnn(), 4);
  check_schedules(llama_block(), 4);
  check_schedules(llama_block({.shards = 8}), 8);
  check_schedules(llama_layer(), 4);
}

namespace {

// The longest path in seconds, edges costing bytes / bandwidth (infinite: compute only). Vertex
// ids of the published graphs are topological, as in the files.
double longest_path(const graph& g, double bandwidth) {
  std::vector<double> finish(g.vertex_count());
  double longest = 0;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    double ready = 0;
    g.for_each_in_edge(v, [&](edge_id e) {
      REQUIRE(g.source(e) < v);
      ready = std::max(ready, finish[g.source(e)] + static_cast<double>(g.bytes(e)) / bandwidth);
    });
    finish[v] = ready + g[v].compute;
    longest = std::max(longest, finish[v]);
  }
  return longest;
}

struct published_figures {
  doppler_graph which;
  std::size_t vertices, edges, sources, sinks;
  double comp, bytes, critical_comp, critical_comp_comm;  // in the files' units: comp, bytes
};

}  // namespace

TEST_CASE("DOPPLER's published graphs: the files' own counts, costs and critical paths") {
  // Read off compute_graph/*.txt of DOPPLER's repository the way its reader does (every node with a
  // cost line is an operator; edge bytes = the source's comm); critical paths over comp, and over
  // comp plus each edge's bytes (both in the file's units, so / 1e10 gives seconds here).
  const published_figures files[] = {
      {doppler_graph::chain_mm, 76, 80, 31, 8, 48002800000000., 192012800000000., 3000300000000., 15001100000000.},
      {doppler_graph::ffnn, 180, 208, 16, 16, 2267831861248., 9071444885504., 141740277760., 708697194496.},
      {doppler_graph::transformer_block, 182, 234, 4, 1, 3886778191872., 15566844903424., 649581584384.,
       3247840813056.},
      {doppler_graph::transformer_layer, 229, 284, 7, 5, 3889769690112., 15579014905856., 650350243072.,
       3251751087360.},
  };
  for (const auto& f : files) {
    CAPTURE(to_string(f.which));
    const graph g = doppler_published(f.which);
    const csr_graph dag = snapshot_dag(g);
    CHECK(g.vertex_count() == f.vertices);
    CHECK(g.edge_count() == f.edges);
    std::size_t sources = 0, sinks = 0;
    double comp = 0, bytes = 0;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
      sources += dag.in_degree(v) == 0 ? 1 : 0;
      sinks += dag.out_degree(v) == 0 ? 1 : 0;
      comp += g[v].flops;
      CHECK(g[v].compute == doctest::Approx(g[v].flops / 1e10).epsilon(1e-15));
      CHECK(static_cast<double>(g[v].output) == 4 * g[v].flops);  // comm = 4 comp in every file
    }
    for (edge_id e = 0; e < g.edge_count(); ++e) {
      CHECK(g.bytes(e) == g[g.source(e)].output);
      bytes += static_cast<double>(g.bytes(e));
    }
    CHECK(sources == f.sources);
    CHECK(sinks == f.sinks);
    CHECK(comp == f.comp);
    CHECK(bytes == f.bytes);
    CHECK(longest_path(g, std::numeric_limits<double>::infinity()) ==
          doctest::Approx(f.critical_comp / 1e10).epsilon(1e-12));
    CHECK(longest_path(g, 1e10) == doctest::Approx(f.critical_comp_comm / 1e10).epsilon(1e-12));
    check_schedules(g, 4);
  }

  // ChainMM's destination line reads "16,6, 16, 16": the second edge is 1 -> 6, kept as published.
  const csr_graph chain = snapshot_dag(doppler_published(doppler_graph::chain_mm));
  CHECK(chain.in_degree(6) == 1);
  CHECK(chain.in_degree(16) == 3);
  CHECK(chain.in_degree(17) == 4);

  // Each row of the tables reads back as one meta-op.
  const auto labels = doppler_meta_ops(doppler_published(doppler_graph::ffnn));
  CHECK(labels.names.size() == 12);
  CHECK(labels.names[labels.meta_op[70]] == "ffnn.r5");

  // The rate scales compute, never bytes; a bad rate is refused with its name.
  const graph slow = doppler_published(doppler_graph::ffnn, {.cost_per_second = 1e9});
  CHECK(slow[0].compute == doctest::Approx(68719476736. / 1e9));
  CHECK(slow[0].output == 4ull * 68719476736);
  CHECK_THROWS_WITH_AS(doppler_published(doppler_graph::ffnn, {.cost_per_second = 0}),
                       doctest::Contains("cost_per_second"), invalid_input);
  CHECK(parse_enum<doppler_graph>("block") == doppler_graph::transformer_block);
}
