// The four sharded workloads of DOPPLER (Fig. 1, §7 and Appendix C) as generators: ChainMM,
// FFNN, a Llama block and a Llama layer, built as fine-grained dataflow graphs of block operations with FLOP
// counts, compute time = FLOPs / the caller's device rate, and edge bytes = tensor bytes.
//
// Conventions shared by the four graphs:
//  * Every input tensor (data or weight shard) is a vertex of op "input" with no compute, whose
//    output is the tensor's bytes; its out-edges carry those bytes. Only RMSNorm's weight vector,
//    a few KB, is folded into its vertex as persistent memory.
//  * Every other vertex has flops > 0, compute = flops / flops_per_second + op_overhead (and the
//    same per device kind through graph::set_compute), output = bytes of the tensor it produces,
//    and one in-edge per operand tensor, carrying that tensor's bytes.
//  * A dimension n cut into p parts gives parts of n/p rounded, the first n % p parts one larger,
//    so FLOPs sum exactly to those of the unsharded operation for any n and p.
//  * Multiply-add = 2 FLOPs; elementwise add, bias add, ReLU and multiply: 1 FLOP per output
//    element; softmax 5 (max, subtract, exp, sum, divide); RMSNorm 4 (square, sum, scale,
//    weight); SiLU 4 (negate-exp, add, divide, multiply); rotary embedding 3 (two multiplies, an add).
//
//  * Names say which meta-op (the shards of one original operation, DOPPLER Appendix A) a vertex
//    belongs to: "<meta-op>[i,j,...]" is shard (i, j, ...) of <meta-op>; a name without a block
//    index is a meta-op of one vertex. Vertices of op "sum" aggregate partial results: they are the
//    reduce ops, every other vertex a shard op. doppler_meta_ops() reads these labels back.
//
// Appendix C gives node counts (112, 192, 215) for the graphs the paper's own sharding compiler
// produced; that decomposition is not published, so the counts here are the ones derived below.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/io/limits.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gantry {

// A rate for one device kind: vertices get graph::set_compute(v, kind, flops / flops_per_second).
struct flop_rate {
  std::string kind{};
  double flops_per_second = 0;
};

// Every generator refuses options that would make a graph of more vertices plus edges than its
// max_graph_size (16.7 M by default: about 2 GB in memory; the sizes are known before anything is
// built), tensors whose element counts or bytes do not fit in 64 bits, and graphs whose bytes add up
// to max_graph_bytes or more (what every reader refuses): invalid_input, naming the generator.
inline constexpr std::uint64_t default_max_workload_size = std::uint64_t{1} << 24;

// The device description the generated times are computed for.
struct workload_device {
  double flops_per_second = 1e13;  // device-independent compute = flops / flops_per_second
  std::vector<flop_rate> kinds{};  // optional per-kind rates
  seconds op_overhead = 0;         // added to every non-input vertex (kernel launch, say)
  unsigned element_bytes = 4;      // bytes per tensor element
};

// ChainMM, (A x B) + (C x (D x E)) with n x n matrices (Appendix C.1).
//
// Sharding: every matrix is cut into p x p blocks (p = blocks_per_side), so each input matrix is
// p^2 input vertices. A multiply X x Y is sharded into p^2 * q block products (q = inner_split,
// which must divide p): product (i, j, g) computes the partial sum over the g-th group of p/q
// inner blocks, X[i,k] x Y[k,j] for k in the group, so it has 2p/q in-edges. When q > 1 a "sum"
// vertex per output block (i, j) adds its q partials (q in-edges). The final + is p^2 elementwise
// "add" vertices (2 in-edges each). Fig. 1 is p = 2, q = 2: each matrix sharded 4 ways and each
// multiply 8 ways, 8 block products and 4 additions per multiply; p = 2, q = 1 is the 4-way
// multiply (no reduction).
//   vertices = 5p^2 (inputs) + 3(p^2 q + [q > 1] p^2) (three multiplies) + p^2 (final add)
//   edges    = 3(2p^3 + [q > 1] p^2 q) + 2p^2
//   FLOPs    = 3 * 2n^3 + 3(q - 1)n^2 + n^2
//   p = 2, q = 2: 60 vertices, 80 edges.  p = 2, q = 1: 36 vertices, 56 edges.
struct chain_mm_options {
  std::uint64_t dimension = 10000;  // n
  unsigned blocks_per_side = 2;     // p
  unsigned inner_split = 2;         // q, a divisor of p
  workload_device device{};
  std::uint64_t max_graph_size = default_max_workload_size;  // vertices + edges; more is refused
};

// FFNN, Y = softmax(relu(X W1 + b1) W2 + b2) with X: batch x features, W1: features x hidden,
// W2: hidden x classes (Appendix C.2: 2^15 x 2^5 input, 2^16 hidden, 2^5 classes).
//
// Sharding (r = batch_split, h = hidden_split): X is cut by rows into r shards, W1 and b1 by
// columns and W2 by rows into h shards (b2 whole), giving r + 3h + 1 input vertices. For every
// (i, j): "matmul" X_i W1_j, "bias_add" + b1_j, "relu", and "matmul" relu_ij W2_j, a partial
// batch_i x classes product. For every batch shard i: a "sum" of the h partials (when h > 1),
// "bias_add" + b2 and "softmax".
//   vertices = (r + 3h + 1) + 4rh + [h > 1] r + 2r
//   edges    = 7rh + [h > 1] rh + 3r
//   FLOPs    = 2BH(F + C) + 2BH + (h - 1)BC + BC + 5BC   (B batch, F features, H hidden, C classes)
//   r = 2, h = 4: 53 vertices, 70 edges.
struct ffnn_options {
  std::uint64_t batch = std::uint64_t{1} << 15;
  std::uint64_t features = std::uint64_t{1} << 5;
  std::uint64_t hidden = std::uint64_t{1} << 16;
  std::uint64_t classes = std::uint64_t{1} << 5;
  unsigned batch_split = 2;   // r
  unsigned hidden_split = 4;  // h
  workload_device device{};
  std::uint64_t max_graph_size = default_max_workload_size;  // vertices + edges; more is refused
};

// A Llama block (Appendix C.3, Fig. 5: Llama-7B sizes): x + attention(rmsnorm(x)), then
// h + swiglu_ffn(rmsnorm(h)), sharded s ways in the Megatron style.
//
// Sharding (s = shards): the heads are cut into s groups and the FFN hidden width into s parts.
// Inputs: x, and per shard Wq_j, Wk_j, Wv_j (hidden x width_j), Wo_j (width_j x hidden), W1_j,
// W3_j (hidden x ffn_j) and W2_j (ffn_j x hidden): 1 + 7s vertices. Unsharded: "rmsnorm" before
// attention and before the FFN, two residual "add"s, and, when s > 1, a "sum" of the s partial
// outputs of the attention projection and of the FFN: 4 + 2[s > 1] vertices. Per shard, 14
// vertices: "matmul" q, k, v; "rope" on q and k; "matmul" scores = q k^T per head; "softmax"
// (scale, causal mask, softmax); "matmul" context = P v; "matmul" partial output context Wo_j;
// "matmul" gate and up; "silu"(gate); "mul" silu * up; "matmul" partial output (.) W2_j.
//   vertices = 5 + 21s + 2[s > 1]
//   edges    = 24s + 6 + 2s[s > 1]
//   FLOPs (T = batch * sequence tokens, d hidden, L sequence, f ffn_hidden, H heads)
//            = 8Td^2 + 4TLd + 6Tdf + 8Td (norms) + 6Td (rope) + 5 B H L^2 (softmax)
//              + 5Tf (silu, mul) + 2Td (residuals) + 2(s - 1)Td (sums)
//   s = 4: 91 vertices, 110 edges. The attention is counted in full (no causal halving).
struct llama_block_options {
  std::uint64_t batch = 1;
  std::uint64_t sequence = 4096;
  std::uint64_t hidden = 4096;
  std::uint64_t heads = 32;
  std::uint64_t ffn_hidden = 11008;
  unsigned shards = 4;  // s, at most heads
  workload_device device{};
  std::uint64_t max_graph_size = default_max_workload_size;  // vertices + edges; more is refused
};

// The complete Llama layer of DOPPLER's experiments (Appendix C.3, Fig. 5, one layer): the token
// embedding lookup, the block above, the final RMSNorm, the output projection to the vocabulary
// and the softmax over it (Fig. 5 ends at the softmax; no loss), all sharded s ways (s = the
// block's shards) along the vocabulary, Megatron style.
//
// Added to the block (whose input x becomes the embedding's output): inputs "tokens" (batch *
// sequence token ids, one element each), E_j (vocab_j x hidden) and Wout_j (hidden x vocab_j);
// per shard "embedding" (a masked lookup writing tokens x hidden: 1 FLOP per element), "matmul"
// logits, "softmax_stats" (per-token max and sum of exp of its logits: 3 FLOPs per logit, 2
// elements per token) and "softmax" (rescale and divide: 2 FLOPs per logit); unsharded: a "sum"
// of the lookups and a "sum" of the statistics (2 elements per token) when s > 1, and "rmsnorm".
//   vertices = 6 + 27s + 4[s > 1]
//   edges    = 31s + 7 + 4s[s > 1]
//   FLOPs    = FLOPs(block) + sTd (lookups) + (s - 1)Td + 4Td (norm) + 2TdV + 5TV + 2(s - 1)T
//              (V vocabulary; the block's other symbols)
//   s = 4: 118 vertices, 147 edges.
struct llama_layer_options {
  llama_block_options block{};
  std::uint64_t vocabulary = 32000;  // V, at least the block's shards
};

namespace detail {

// Size of part `index` when n is cut into `parts` nearly equal parts.
[[nodiscard]] inline std::uint64_t part_size(std::uint64_t n, std::uint64_t parts, std::uint64_t index) {
  return n / parts + (index < n % parts ? 1 : 0);
}

class workload_builder {
 public:
  workload_builder(const workload_device& device, std::string who, std::uint64_t max_size)
      : device_(device), who_(std::move(who)), max_size_(max_size) {
    check_rate(device.flops_per_second, "flops_per_second");
    for (const auto& k : device.kinds) check_rate(k.flops_per_second, "rate of kind '" + k.kind + "'");
    if (!std::isfinite(device.op_overhead) || device.op_overhead < 0)
      throw invalid_input("workload_device: op_overhead must be finite and >= 0, got " +
                          std::to_string(device.op_overhead));
    if (device.element_bytes == 0) throw invalid_input("workload_device: element_bytes must be > 0");
  }

  vertex_id input(std::string name, std::uint64_t elements) {
    return g_.add_vertex(vertex_properties{.name = std::move(name), .output = counted(bytes(elements)), .op = "input"});
  }

  // A compute vertex producing `elements` elements from the listed operand vertices.
  vertex_id op(std::string name, std::string kind, double flops, std::uint64_t elements,
               std::initializer_list<vertex_id> operands, byte_count persistent = 0) {
    const auto v = g_.add_vertex(vertex_properties{.name = std::move(name),
                                                   .compute = time(flops, device_.flops_per_second),
                                                   .persistent = counted(persistent),
                                                   .output = counted(bytes(elements)),
                                                   .op = std::move(kind),
                                                   .flops = flops});
    for (const auto& k : device_.kinds) g_.set_compute(v, k.kind, time(flops, k.flops_per_second));
    for (const auto u : operands) connect(u, v);
    return v;
  }

  // u -> v carrying u's output tensor.
  void connect(vertex_id u, vertex_id v) { g_.add_edge(u, v, counted(g_[u].output)); }

  // The product of a tensor's dimensions; invalid_input when it does not fit in 64 bits.
  [[nodiscard]] std::uint64_t elements(std::initializer_list<std::uint64_t> dimensions) const {
    std::uint64_t product = 1;
    bool overflow = false;
    for (const auto n : dimensions) overflow = overflow || __builtin_mul_overflow(product, n, &product);
    if (overflow) {
      std::string shape;
      for (const auto n : dimensions) shape += (shape.empty() ? "" : " x ") + std::to_string(n);
      throw invalid_input(who_ + ": a tensor of " + shape + " elements has more elements than 64 bits count");
    }
    return product;
  }
  [[nodiscard]] byte_count bytes(std::uint64_t elements) const {
    byte_count out = 0;
    if (__builtin_mul_overflow(elements, byte_count{device_.element_bytes}, &out))
      throw invalid_input(who_ + ": a tensor of " + std::to_string(elements) + " elements of " +
                          std::to_string(device_.element_bytes) + " bytes has more bytes than 64 bits count");
    return out;
  }
  [[nodiscard]] graph take() { return std::move(g_); }
  // Checks the graph's size, computed by the caller in floating point so that it cannot wrap, against
  // max_size before anything is built, and reserves it.
  void reserve(double vertices, double edges) {
    if (!(vertices + edges <= static_cast<double>(max_size_)))
      throw invalid_input(who_ + ": these options make a graph of " + count_text(vertices) + " vertices and " +
                          count_text(edges) + " edges, more than max_graph_size (" + std::to_string(max_size_) +
                          " vertices plus edges)");
    g_.reserve(static_cast<std::size_t>(vertices), static_cast<std::size_t>(edges));
  }

 private:
  static void check_rate(double rate, const std::string& what) {
    if (!std::isfinite(rate) || rate <= 0)
      throw invalid_input("workload_device: " + what + " must be finite and > 0, got " + std::to_string(rate));
  }
  [[nodiscard]] seconds time(double flops, double rate) const { return flops / rate + device_.op_overhead; }
  static std::string count_text(double n) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, n < 1e15 ? "%.0f" : "%.3g", n);
    return buffer;
  }
  // Adds a vertex's or edge's bytes to the graph's total, which must stay below max_graph_bytes.
  byte_count counted(byte_count bytes) {
    if (bytes >= max_graph_bytes - total_bytes_)
      throw invalid_input(who_ +
                          ": the graph's tensors add up to 2^63 bytes (8 EiB) or more, which no reader of "
                          "gantry's graphs accepts");
    total_bytes_ += bytes;
    return bytes;
  }

  workload_device device_;
  std::string who_;
  std::uint64_t max_size_;
  byte_count total_bytes_ = 0;
  graph g_;
};

inline std::string block_name(const std::string& prefix, std::initializer_list<std::uint64_t> index) {
  std::string out = prefix + "[";
  bool first = true;
  for (const auto i : index) {
    if (!first) out += ",";
    out += std::to_string(i);
    first = false;
  }
  return out + "]";
}

inline void check_split(std::uint64_t n, std::uint64_t parts, const char* what, const char* dimension) {
  if (parts == 0 || parts > n)
    throw invalid_input(std::string(what) + " must be between 1 and " + dimension + " (" + std::to_string(n) +
                        "), got " + std::to_string(parts));
}

// p x p grid of block vertices of an n x n matrix, row-major.
using block_grid = std::vector<vertex_id>;

// X x Y for n x n matrices held as p x p blocks; the product sharded p^2 q ways (see chain_mm).
inline block_grid sharded_matmul(workload_builder& b, const std::string& name, const block_grid& x, const block_grid& y,
                                 std::uint64_t n, std::uint64_t p, std::uint64_t q) {
  const std::uint64_t group = p / q;
  block_grid out(p * p);
  for (std::uint64_t i = 0; i < p; ++i) {
    for (std::uint64_t j = 0; j < p; ++j) {
      const std::uint64_t rows = part_size(n, p, i), cols = part_size(n, p, j);
      std::vector<vertex_id> partials;
      for (std::uint64_t g = 0; g < q; ++g) {
        std::uint64_t inner = 0;
        for (std::uint64_t k = g * group; k < (g + 1) * group; ++k) inner += part_size(n, p, k);
        const auto v = b.op(block_name(name + ".matmul", {i, j, g}), "matmul",
                            2.0 * static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(inner),
                            b.elements({rows, cols}), {});
        for (std::uint64_t k = g * group; k < (g + 1) * group; ++k) {
          b.connect(x[i * p + k], v);
          b.connect(y[k * p + j], v);
        }
        partials.push_back(v);
      }
      if (q == 1) {
        out[i * p + j] = partials.front();
        continue;
      }
      const auto sum = b.op(block_name(name + ".sum", {i, j}), "sum",
                            static_cast<double>(q - 1) * static_cast<double>(rows) * static_cast<double>(cols),
                            b.elements({rows, cols}), {});
      for (const auto v : partials) b.connect(v, sum);
      out[i * p + j] = sum;
    }
  }
  return out;
}

}  // namespace detail

[[nodiscard]] inline graph chain_mm(const chain_mm_options& options = {}) {
  const std::uint64_t n = options.dimension, p = options.blocks_per_side, q = options.inner_split;
  detail::check_split(n, p, "chain_mm: blocks_per_side", "dimension");
  if (q == 0 || p % q != 0)
    throw invalid_input("chain_mm: inner_split must divide blocks_per_side (" + std::to_string(p) + "), got " +
                        std::to_string(q));
  detail::workload_builder b(options.device, "chain_mm", options.max_graph_size);
  const auto pd = static_cast<double>(p), qd = static_cast<double>(q);
  b.reserve(5 * pd * pd + 3 * (pd * pd * qd + (q > 1 ? pd * pd : 0)) + pd * pd,
            3 * (2 * pd * pd * pd + (q > 1 ? pd * pd * qd : 0)) + 2 * pd * pd);
  const auto matrix = [&](const std::string& name) {
    detail::block_grid blocks(p * p);
    for (std::uint64_t i = 0; i < p; ++i)
      for (std::uint64_t j = 0; j < p; ++j)
        blocks[i * p + j] = b.input(detail::block_name(name, {i, j}),
                                    b.elements({detail::part_size(n, p, i), detail::part_size(n, p, j)}));
    return blocks;
  };
  const auto a = matrix("A"), bm = matrix("B"), c = matrix("C"), d = matrix("D"), e = matrix("E");
  const auto ab = detail::sharded_matmul(b, "AB", a, bm, n, p, q);
  const auto de = detail::sharded_matmul(b, "DE", d, e, n, p, q);
  const auto cde = detail::sharded_matmul(b, "CDE", c, de, n, p, q);
  for (std::uint64_t i = 0; i < p; ++i)
    for (std::uint64_t j = 0; j < p; ++j) {
      const auto elements = b.elements({detail::part_size(n, p, i), detail::part_size(n, p, j)});
      b.op(detail::block_name("out.add", {i, j}), "add", static_cast<double>(elements), elements,
           {ab[i * p + j], cde[i * p + j]});
    }
  return b.take();
}

[[nodiscard]] inline graph ffnn(const ffnn_options& options = {}) {
  const std::uint64_t batch = options.batch, features = options.features, hidden = options.hidden,
                      classes = options.classes, r = options.batch_split, h = options.hidden_split;
  if (features == 0 || classes == 0) throw invalid_input("ffnn: features and classes must be > 0");
  detail::check_split(batch, r, "ffnn: batch_split", "batch");
  detail::check_split(hidden, h, "ffnn: hidden_split", "hidden");
  detail::workload_builder b(options.device, "ffnn", options.max_graph_size);
  const auto rd = static_cast<double>(r), hd = static_cast<double>(h);
  b.reserve(rd + 3 * hd + 1 + 4 * rd * hd + (h > 1 ? rd : 0) + 2 * rd, 7 * rd * hd + (h > 1 ? rd * hd : 0) + 3 * rd);
  using detail::block_name;
  using detail::part_size;
  std::vector<vertex_id> x(r), w1(h), b1(h), w2(h);
  for (std::uint64_t i = 0; i < r; ++i)
    x[i] = b.input(block_name("X", {i}), b.elements({part_size(batch, r, i), features}));
  for (std::uint64_t j = 0; j < h; ++j) {
    const auto width = part_size(hidden, h, j);
    w1[j] = b.input(block_name("W1", {j}), b.elements({features, width}));
    b1[j] = b.input(block_name("b1", {j}), width);
    w2[j] = b.input(block_name("W2", {j}), b.elements({width, classes}));
  }
  const auto b2 = b.input("b2", classes);
  for (std::uint64_t i = 0; i < r; ++i) {
    const auto rows = part_size(batch, r, i);
    const auto out_cells = b.elements({rows, classes});
    const auto out_flops = static_cast<double>(rows) * static_cast<double>(classes);
    std::vector<vertex_id> partials;
    for (std::uint64_t j = 0; j < h; ++j) {
      const auto width = part_size(hidden, h, j);
      const auto cells = b.elements({rows, width});
      const auto mm = b.op(block_name("layer1.matmul", {i, j}), "matmul",
                           2.0 * static_cast<double>(cells) * static_cast<double>(features), cells, {x[i], w1[j]});
      const auto bias =
          b.op(block_name("layer1.bias_add", {i, j}), "bias_add", static_cast<double>(cells), cells, {mm, b1[j]});
      const auto relu = b.op(block_name("layer1.relu", {i, j}), "relu", static_cast<double>(cells), cells, {bias});
      partials.push_back(b.op(block_name("layer2.matmul", {i, j}), "matmul",
                              2.0 * static_cast<double>(cells) * static_cast<double>(classes), out_cells,
                              {relu, w2[j]}));
    }
    auto logits = partials.front();
    if (h > 1) {
      logits = b.op(block_name("layer2.sum", {i}), "sum", static_cast<double>(h - 1) * out_flops, out_cells, {});
      for (const auto v : partials) b.connect(v, logits);
    }
    const auto bias = b.op(block_name("layer2.bias_add", {i}), "bias_add", out_flops, out_cells, {logits, b2});
    b.op(block_name("softmax", {i}), "softmax", 5.0 * out_flops, out_cells, {bias});
  }
  return b.take();
}

namespace detail {

// Checks a Llama block's options; `who` names the generator in the message.
inline void check_llama_block(const llama_block_options& options, const std::string& who) {
  const std::uint64_t d = options.hidden, heads = options.heads;
  if (options.batch == 0 || options.sequence == 0 || d == 0 || options.ffn_hidden == 0)
    throw invalid_input(who + ": batch, sequence, hidden and ffn_hidden must be > 0");
  if (heads == 0 || d % heads != 0)
    throw invalid_input(who + ": heads (" + std::to_string(heads) + ") must divide hidden (" + std::to_string(d) + ")");
  check_split(heads, options.shards, (who + ": shards").c_str(), "heads");
  check_split(options.ffn_hidden, options.shards, (who + ": shards").c_str(), "ffn_hidden");
}

// Adds the block of llama_block() reading the activation x (tokens x hidden); returns the vertex
// holding its output (the FFN residual). Adds 4 + 21s + 2[s > 1] vertices and 24s + 6 + 2s[s > 1]
// edges (two of them leave x).
inline vertex_id add_llama_block(workload_builder& b, vertex_id x, const llama_block_options& options) {
  const std::uint64_t batch = options.batch, length = options.sequence, d = options.hidden, heads = options.heads,
                      f = options.ffn_hidden, s = options.shards;
  const std::uint64_t tokens = b.elements({batch, length}), head_dim = d / heads;
  const std::uint64_t tokens_d = b.elements({tokens, d});
  const auto td = static_cast<double>(tokens_d);
  const byte_count norm_weight = b.bytes(d);

  const auto norm1 = b.op("attention.rmsnorm", "rmsnorm", 4 * td, tokens_d, {x}, norm_weight);
  std::vector<vertex_id> attention_parts, ffn_parts;
  std::vector<vertex_id> wq(s), wk(s), wv(s), wo(s), w1(s), w3(s), w2(s);
  for (std::uint64_t j = 0; j < s; ++j) {
    const auto width = part_size(heads, s, j) * head_dim, ffn = part_size(f, s, j);
    wq[j] = b.input(block_name("Wq", {j}), b.elements({d, width}));
    wk[j] = b.input(block_name("Wk", {j}), b.elements({d, width}));
    wv[j] = b.input(block_name("Wv", {j}), b.elements({d, width}));
    wo[j] = b.input(block_name("Wo", {j}), b.elements({width, d}));
    w1[j] = b.input(block_name("W1", {j}), b.elements({d, ffn}));
    w3[j] = b.input(block_name("W3", {j}), b.elements({d, ffn}));
    w2[j] = b.input(block_name("W2", {j}), b.elements({ffn, d}));
  }
  for (std::uint64_t j = 0; j < s; ++j) {
    const auto shard_heads = part_size(heads, s, j);
    const auto width = shard_heads * head_dim;
    const auto tokens_width = b.elements({tokens, width});
    const auto projection = 2.0 * td * static_cast<double>(width);
    const auto q = b.op(block_name("attention.q", {j}), "matmul", projection, tokens_width, {norm1, wq[j]});
    const auto k = b.op(block_name("attention.k", {j}), "matmul", projection, tokens_width, {norm1, wk[j]});
    const auto v = b.op(block_name("attention.v", {j}), "matmul", projection, tokens_width, {norm1, wv[j]});
    const auto rope = 3.0 * static_cast<double>(tokens_width);
    const auto q_rot = b.op(block_name("attention.rope_q", {j}), "rope", rope, tokens_width, {q});
    const auto k_rot = b.op(block_name("attention.rope_k", {j}), "rope", rope, tokens_width, {k});
    const auto score_cells = b.elements({batch, shard_heads, length, length});
    const auto score_flops = 2.0 * static_cast<double>(score_cells) * static_cast<double>(head_dim);
    const auto scores = b.op(block_name("attention.scores", {j}), "matmul", score_flops, score_cells, {q_rot, k_rot});
    const auto probabilities = b.op(block_name("attention.softmax", {j}), "softmax",
                                    5.0 * static_cast<double>(score_cells), score_cells, {scores});
    const auto context =
        b.op(block_name("attention.context", {j}), "matmul", score_flops, tokens_width, {probabilities, v});
    attention_parts.push_back(
        b.op(block_name("attention.output", {j}), "matmul", projection, tokens_d, {context, wo[j]}));
  }
  const auto reduce = [&](const std::string& name, const std::vector<vertex_id>& parts) {
    if (parts.size() == 1) return parts.front();
    const auto sum = b.op(name, "sum", static_cast<double>(parts.size() - 1) * td, tokens_d, {});
    for (const auto v : parts) b.connect(v, sum);
    return sum;
  };
  const auto residual1 = b.op("attention.residual", "add", td, tokens_d, {x, reduce("attention.sum", attention_parts)});
  const auto norm2 = b.op("ffn.rmsnorm", "rmsnorm", 4 * td, tokens_d, {residual1}, norm_weight);
  for (std::uint64_t j = 0; j < s; ++j) {
    const auto ffn = part_size(f, s, j);
    const auto cells = b.elements({tokens, ffn});
    const auto up_flops = 2.0 * static_cast<double>(cells) * static_cast<double>(d);
    const auto gate = b.op(block_name("ffn.gate", {j}), "matmul", up_flops, cells, {norm2, w1[j]});
    const auto up = b.op(block_name("ffn.up", {j}), "matmul", up_flops, cells, {norm2, w3[j]});
    const auto silu = b.op(block_name("ffn.silu", {j}), "silu", 4.0 * static_cast<double>(cells), cells, {gate});
    const auto product = b.op(block_name("ffn.mul", {j}), "mul", static_cast<double>(cells), cells, {silu, up});
    ffn_parts.push_back(b.op(block_name("ffn.down", {j}), "matmul", up_flops, tokens_d, {product, w2[j]}));
  }
  return b.op("ffn.residual", "add", td, tokens_d, {residual1, reduce("ffn.sum", ffn_parts)});
}

}  // namespace detail

[[nodiscard]] inline graph llama_block(const llama_block_options& options = {}) {
  detail::check_llama_block(options, "llama_block");
  const std::uint64_t s = options.shards;
  detail::workload_builder b(options.device, "llama_block", options.max_graph_size);
  const auto sd = static_cast<double>(s);
  b.reserve(5 + 21 * sd + (s > 1 ? 2 : 0), 24 * sd + 6 + (s > 1 ? 2 * sd : 0));
  const auto x = b.input("x", b.elements({options.batch, options.sequence, options.hidden}));
  (void)detail::add_llama_block(b, x, options);
  return b.take();
}

[[nodiscard]] inline graph llama_layer(const llama_layer_options& options = {}) {
  const auto& block = options.block;
  detail::check_llama_block(block, "llama_layer");
  const std::uint64_t s = block.shards, vocabulary = options.vocabulary, d = block.hidden;
  detail::check_split(vocabulary, s, "llama_layer: shards", "vocabulary");
  detail::workload_builder b(block.device, "llama_layer", block.max_graph_size);
  const auto sd = static_cast<double>(s);
  b.reserve(6 + 27 * sd + (s > 1 ? 4 : 0), 31 * sd + 7 + (s > 1 ? 4 * sd : 0));
  const std::uint64_t tokens = b.elements({block.batch, block.sequence});
  const std::uint64_t tokens_d = b.elements({tokens, d});
  const auto td = static_cast<double>(tokens_d);
  using detail::block_name;
  using detail::part_size;

  const auto ids = b.input("tokens", tokens);
  std::vector<vertex_id> table(s), projection(s);
  for (std::uint64_t j = 0; j < s; ++j)
    table[j] = b.input(block_name("E", {j}), b.elements({part_size(vocabulary, s, j), d}));
  for (std::uint64_t j = 0; j < s; ++j)
    projection[j] = b.input(block_name("Wout", {j}), b.elements({d, part_size(vocabulary, s, j)}));
  // Vocabulary-parallel lookup: shard j writes the rows of the tokens in its vocabulary range and
  // zeros elsewhere, so every shard produces tokens x hidden and a "sum" joins them.
  std::vector<vertex_id> lookups;
  for (std::uint64_t j = 0; j < s; ++j)
    lookups.push_back(b.op(block_name("embedding", {j}), "embedding", td, tokens_d, {ids, table[j]}));
  auto x = lookups.front();
  if (s > 1) {
    x = b.op("embedding.sum", "sum", static_cast<double>(s - 1) * td, tokens_d, {});
    for (const auto v : lookups) b.connect(v, x);
  }
  const auto h = detail::add_llama_block(b, x, block);
  const auto norm = b.op("output.rmsnorm", "rmsnorm", 4 * td, tokens_d, {h}, b.bytes(d));
  const auto statistics_cells = b.elements({2, tokens});
  // Vocabulary-parallel projection and softmax: each shard's logits, its per-token (max, sum of
  // exp) statistics, a "sum" combining the statistics, and each shard normalised by them.
  std::vector<vertex_id> logits(s), statistics(s);
  for (std::uint64_t j = 0; j < s; ++j) {
    const auto cells = b.elements({tokens, part_size(vocabulary, s, j)});
    logits[j] = b.op(block_name("output.logits", {j}), "matmul",
                     2.0 * static_cast<double>(cells) * static_cast<double>(d), cells, {norm, projection[j]});
    statistics[j] = b.op(block_name("output.softmax_stats", {j}), "softmax_stats", 3.0 * static_cast<double>(cells),
                         statistics_cells, {logits[j]});
  }
  auto combined = statistics;
  if (s > 1) {
    const auto sum = b.op("output.softmax_sum", "sum",
                          static_cast<double>(s - 1) * static_cast<double>(statistics_cells), statistics_cells, {});
    for (const auto v : statistics) b.connect(v, sum);
    combined.assign(s, sum);
  }
  for (std::uint64_t j = 0; j < s; ++j) {
    const auto cells = b.elements({tokens, part_size(vocabulary, s, j)});
    b.op(block_name("output.softmax", {j}), "softmax", 2.0 * static_cast<double>(cells), cells,
         {logits[j], combined[j]});
  }
  return b.take();
}

// Role of a vertex inside its meta-op (DOPPLER Appendix A): an expensive shard or a cheap reduction.
enum class meta_op_role : std::uint8_t { shard, reduce };

// Meta-op labels of a graph, per vertex.
struct meta_op_labels {
  std::vector<std::string> names;      // one per meta-op, in order of first appearance by vertex id
  std::vector<std::uint32_t> meta_op;  // per vertex: index into names
  std::vector<meta_op_role> role;      // per vertex
};

// Labels from the naming convention above: the meta-op is the name up to its '[' (the whole name
// when it has none; an unnamed vertex is a meta-op of its own), and op "sum" marks a reduce op.
// Works on any graph; a graph not made by these generators gets one meta-op per distinct prefix.
[[nodiscard]] inline meta_op_labels doppler_meta_ops(const graph& g) {
  meta_op_labels out;
  out.meta_op.resize(g.vertex_count());
  out.role.resize(g.vertex_count());
  std::unordered_map<std::string, std::uint32_t> index;
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& name = g[v].name;
    std::string key = name.empty() ? "#" + std::to_string(v) : name.substr(0, name.find('['));
    const auto [it, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(out.names.size()));
    if (inserted) out.names.push_back(std::move(key));
    out.meta_op[v] = it->second;
    out.role[v] = g[v].op == "sum" ? meta_op_role::reduce : meta_op_role::shard;
  }
  return out;
}

}  // namespace gantry
