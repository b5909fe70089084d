// Training graphs shaped like two image models, for tests of placement under tight memory: a
// ViT-like encoder (attention and MLP blocks with residuals) and an EfficientNet-like network
// (MBConv blocks with squeeze-and-excitation, activations shrinking as channels grow). Each is a
// forward pass, a loss and a backward pass in which every gradient reads the activations its
// forward vertex read, so that activations live until the backward pass reaches them, as in a
// real training step. Sizes follow the models' shapes (batch 2 and 4, fp32); compute times are
// proportional to the FLOPs.
#pragma once

#include <gantry/graph/graph.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace gantry::test {

// One forward vertex: its inputs (earlier vertices; none reads the batch), output and weight bytes
// and FLOPs.
struct forward_op {
  std::string name;
  std::vector<std::size_t> inputs;
  byte_count output = 0;
  byte_count weight = 0;
  double flops = 0;
};

// The forward vertices, a loss after the last, and per forward vertex (in reverse) its gradient:
// it reads the gradients of its consumers (or the loss), the activations its forward vertex read
// and that vertex's output, holds its weight's gradient while it runs and outputs the gradient of
// its largest input. Compute: 1 ns per 1,000 FLOPs forward, twice that backward.
[[nodiscard]] inline graph training_graph(const std::vector<forward_op>& ops) {
  graph g;
  const std::size_t n = ops.size();
  const auto time = [](double flops) { return flops * 1e-12; };
  std::vector<std::vector<std::size_t>> consumers(n);
  for (std::size_t i = 0; i < n; ++i) {
    g.add_vertex(vertex_properties{.name = ops[i].name,
                                   .compute = time(ops[i].flops),
                                   .persistent = ops[i].weight,
                                   .output = ops[i].output,
                                   .flops = ops[i].flops});
    for (const std::size_t j : ops[i].inputs) {
      g.add_edge(static_cast<vertex_id>(j), static_cast<vertex_id>(i), ops[j].output);
      consumers[j].push_back(i);
    }
  }
  const vertex_id loss = g.add_vertex(vertex_properties{.name = "loss", .compute = 1e-6, .output = 4});
  g.add_edge(static_cast<vertex_id>(n - 1), loss, ops[n - 1].output);
  std::vector<vertex_id> grad(n, no_vertex);
  for (std::size_t i = n; i-- > 0;) {
    byte_count largest = ops[i].output;
    for (const std::size_t j : ops[i].inputs) largest = std::max(largest, ops[j].output);
    grad[i] = g.add_vertex(vertex_properties{.name = ops[i].name + ".grad",
                                             .compute = 2 * time(ops[i].flops),
                                             .output = largest,
                                             .temporary = ops[i].weight});
    g.set_forward(grad[i], static_cast<vertex_id>(i));
    if (consumers[i].empty()) g.add_edge(loss, grad[i], 4);
    for (const std::size_t c : consumers[i]) g.add_edge(grad[c], grad[i], ops[i].output);
    for (const std::size_t j : ops[i].inputs) g.add_edge(static_cast<vertex_id>(j), grad[i], ops[j].output);
    g.add_edge(static_cast<vertex_id>(i), grad[i], ops[i].output);
  }
  return g;
}

// A ViT-B/16-like encoder: patch embedding, `blocks` blocks of (layer norm, QKV, scores, softmax,
// attention, projection, residual, layer norm, MLP up, GELU, MLP down, residual) and a head;
// width 768, 197 tokens, 12 heads, batch 2.
[[nodiscard]] inline graph vit_like(std::size_t blocks = 12) {
  const double b = 2, s = 197, d = 768, h = 12;
  const auto bytes = [](double x) { return static_cast<byte_count>(x * 4); };
  std::vector<forward_op> ops;
  const auto add = [&](std::string name, std::vector<std::size_t> in, double out, double weight, double flops) {
    ops.push_back({std::move(name), std::move(in), bytes(out), bytes(weight), flops});
    return ops.size() - 1;
  };
  std::size_t x = add("embed", {}, b * s * d, 16 * 16 * 3 * d, 2 * b * s * 16 * 16 * 3 * d);
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::string p = "block" + std::to_string(k) + ".";
    const std::size_t ln1 = add(p + "ln1", {x}, b * s * d, 2 * d, 5 * b * s * d);
    const std::size_t qkv = add(p + "qkv", {ln1}, 3 * b * s * d, 3 * d * d, 2 * b * s * d * 3 * d);
    const std::size_t scores = add(p + "scores", {qkv}, b * h * s * s, 0, 2 * b * s * s * d);
    const std::size_t softmax = add(p + "softmax", {scores}, b * h * s * s, 0, 5 * b * h * s * s);
    const std::size_t attention = add(p + "attention", {softmax, qkv}, b * s * d, 0, 2 * b * s * s * d);
    const std::size_t proj = add(p + "proj", {attention}, b * s * d, d * d, 2 * b * s * d * d);
    const std::size_t add1 = add(p + "add1", {x, proj}, b * s * d, 0, b * s * d);
    const std::size_t ln2 = add(p + "ln2", {add1}, b * s * d, 2 * d, 5 * b * s * d);
    const std::size_t fc1 = add(p + "fc1", {ln2}, 4 * b * s * d, 4 * d * d, 2 * b * s * d * 4 * d);
    const std::size_t gelu = add(p + "gelu", {fc1}, 4 * b * s * d, 0, 8 * b * s * d);
    const std::size_t fc2 = add(p + "fc2", {gelu}, b * s * d, 4 * d * d, 2 * b * s * 4 * d * d);
    x = add(p + "add2", {add1, fc2}, b * s * d, 0, b * s * d);
  }
  const std::size_t norm = add("norm", {x}, b * s * d, 2 * d, 5 * b * s * d);
  add("head", {norm}, b * 1000, d * 1000, 2 * b * d * 1000);
  return training_graph(ops);
}

// An EfficientNet-B0-like network: a stem, then per stage MBConv blocks of (expand, swish,
// depthwise, swish, squeeze-and-excitation pool, reduce, expand, scale, project, residual where
// the shape stays), each stage halving the resolution or keeping it, and a head; batch 4.
[[nodiscard]] inline graph efficientnet_like() {
  const double b = 4;
  const auto bytes = [](double x) { return static_cast<byte_count>(x * 4); };
  std::vector<forward_op> ops;
  const auto add = [&](std::string name, std::vector<std::size_t> in, double out, double weight, double flops) {
    ops.push_back({std::move(name), std::move(in), bytes(out), bytes(weight), flops});
    return ops.size() - 1;
  };
  double r = 112, c = 32;
  std::size_t x = add("stem", {}, b * r * r * c, 3 * 3 * 3 * c, 2 * b * r * r * 27 * c);
  struct stage {
    int blocks;
    double channels, expand, stride;
  };
  std::size_t k = 0;
  for (const stage st : {stage{1, 16, 1, 1}, stage{2, 24, 6, 2}, stage{2, 40, 6, 2}, stage{3, 80, 6, 2},
                         stage{3, 112, 6, 1}, stage{4, 192, 6, 2}, stage{1, 320, 6, 1}}) {
    for (int i = 0; i < st.blocks; ++i, ++k) {
      const std::string p = "mb" + std::to_string(k) + ".";
      const double stride = i == 0 ? st.stride : 1, wide = c * st.expand, out_r = r / stride;
      const std::size_t expand = add(p + "expand", {x}, b * r * r * wide, c * wide, 2 * b * r * r * c * wide);
      const std::size_t swish1 = add(p + "swish1", {expand}, b * r * r * wide, 0, 4 * b * r * r * wide);
      const std::size_t depthwise =
          add(p + "depthwise", {swish1}, b * out_r * out_r * wide, 9 * wide, 18 * b * out_r * out_r * wide);
      const std::size_t swish2 =
          add(p + "swish2", {depthwise}, b * out_r * out_r * wide, 0, 4 * b * out_r * out_r * wide);
      const std::size_t pool = add(p + "se_pool", {swish2}, b * wide, 0, b * out_r * out_r * wide);
      const std::size_t reduce =
          add(p + "se_reduce", {pool}, b * wide / 24, wide * wide / 24, 2 * b * wide * wide / 24);
      const std::size_t excite = add(p + "se_expand", {reduce}, b * wide, wide * wide / 24, 2 * b * wide * wide / 24);
      const std::size_t scale =
          add(p + "se_scale", {swish2, excite}, b * out_r * out_r * wide, 0, b * out_r * out_r * wide);
      const std::size_t project = add(p + "project", {scale}, b * out_r * out_r * st.channels, wide * st.channels,
                                      2 * b * out_r * out_r * wide * st.channels);
      x = stride == 1 && c == st.channels
              ? add(p + "residual", {x, project}, b * out_r * out_r * st.channels, 0, b * out_r * out_r * st.channels)
              : project;
      r = out_r;
      c = st.channels;
    }
  }
  const std::size_t head = add("head_conv", {x}, b * r * r * 1280, c * 1280, 2 * b * r * r * c * 1280);
  const std::size_t pool = add("pool", {head}, b * 1280, 0, b * r * r * 1280);
  add("classifier", {pool}, b * 1000, 1280 * 1000, 2 * b * 1280 * 1000);
  return training_graph(ops);
}

}  // namespace gantry::test
