// Checking a pipeline pattern the way every gantry schedule is checked: unroll it over enough
// batches into a training graph (one vertex per F_l and B_l of each batch), a cluster (processors,
// then one device per link stage) and a schedule, and run validate() on them. A period is only a
// claim until this holds (Euro-Par 2021 §3: a pattern is valid if the schedule it repeats is).
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/pattern.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/schedule/validate.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace gantry {

struct unroll_options {
  std::size_t batches = 0;                 // 0: enough for several periods of steady state, k·(ceil(span/k)+3)
                                           // for a k-periodic pattern whose shifts span `span` batches
  byte_count capacity = unlimited_memory;  // memory of each processor (links hold none)
};

// The unrolled schedule. Vertex names are "F<l>:<layer>#<batch>" and "B<l>:<layer>#<batch>" for
// layers, and "send<s>#<batch>" / "return<s>#<batch>" for the forward and backward of link stage
// s. A layer takes its share of its stage's per-batch time (its own time unless the stage is
// replicated or pays transfers on its processor). Weights W_l are the persistent bytes of F_l of batch 0; the
// activation a_l is the output of every F_l, held until B_l of the same batch finishes (schedule.hpp's output rule).
// Edges carry no bytes: the chain model counts activations, not the copies in flight, and cross-device edges get an
// instant zero-byte transfer (communication is what link stages model).
struct unrolled_pipeline {
  graph training;
  cluster devices;
  schedule timeline;
  std::size_t batches = 0;
};

namespace detail {

// A zero-length operation (Dropout, View, an input layer) occupies no time, so it never overlaps
// anything; but folding and unfolding a pattern computes its start as k·T + start, which may land
// a rounding error after the start of the operation that follows it on its processor, and
// validate() would then see it inside that operation. Each such start is moved back to the start
// it ties with (a move smaller than validate()'s tolerance, so no dependency changes).
inline void snap_zero_length_operations(schedule& s, std::size_t resources) {
  seconds horizon = 0;
  for (const auto f : s.finish) horizon = std::max(horizon, f);
  const double tie = pipeline_tolerance * std::max(1.0, horizon);
  std::vector<std::vector<std::size_t>> timed(resources);  // positive-length operations per resource
  for (std::size_t v = 0; v < s.device.size(); ++v)
    if (s.finish[v] > s.start[v]) timed[s.device[v]].push_back(v);
  for (auto& list : timed)
    std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) { return s.start[a] < s.start[b]; });
  for (std::size_t v = 0; v < s.device.size(); ++v) {
    if (s.finish[v] > s.start[v]) continue;
    const auto& list = timed[s.device[v]];
    // The last positive-length operation starting at or before v (within the tie).
    auto it = std::upper_bound(list.begin(), list.end(), s.start[v] + tie,
                               [&](seconds t, std::size_t a) { return t < s.start[a]; });
    if (it == list.begin()) continue;
    const auto a = *std::prev(it);
    if (s.start[v] > s.start[a] && s.start[v] - s.start[a] <= tie) s.start[v] = s.finish[v] = s.start[a];
  }
}

// Each layer's share of its stage's block: the layers' own times, scaled to the stage's per-batch
// time, which differs when the stage runs on r workers (1/r of the time) or pays transfers on its
// processor; time a stage of zero-time layers pays goes to the layer that runs first.
inline std::vector<seconds> block_durations(const chain& c, const stage& st, pass kind) {
  std::vector<seconds> took(st.end_layer - st.first_layer, 0);
  seconds sum = 0;
  for (auto l = st.first_layer; l < st.end_layer; ++l) sum += kind == pass::forward ? c[l].forward : c[l].backward;
  const seconds block = kind == pass::forward ? st.forward : st.backward;
  if (took.empty()) return took;
  if (!(sum > 0)) {
    (kind == pass::forward ? took.front() : took.back()) = block;
    return took;
  }
  for (auto l = st.first_layer; l < st.end_layer; ++l)
    took[l - st.first_layer] = (kind == pass::forward ? c[l].forward : c[l].backward) * (block / sum);
  return took;
}

}  // namespace detail

// Throws invalid_input when the pattern does not give every stage's forward and backward for every
// batch (a k-periodic pattern needs shifts covering all residues mod k), or its period is negative or
// not finite. A period of 0 (stages that take no time) unrolls every batch at time 0.
[[nodiscard]] inline unrolled_pipeline unroll(const chain& c, const pipeline_pattern& p, unroll_options options = {}) {
  if (!(p.period >= 0) || !std::isfinite(p.period))
    throw invalid_input("unroll: the pattern's period must be finite and >= 0, got " + std::to_string(p.period));
  const auto k = static_cast<std::int64_t>(std::max<std::size_t>(1, p.batches_per_period));
  const std::size_t stage_count = p.stages.size();
  std::int64_t low = std::numeric_limits<std::int64_t>::max(), high = std::numeric_limits<std::int64_t>::min();
  for (const auto& op : p.operations) {
    if (op.stage >= stage_count)
      throw invalid_input("unroll: an operation names stage " + std::to_string(op.stage) + " of " +
                          std::to_string(stage_count));
    low = std::min(low, op.shift);
    high = std::max(high, op.shift);
  }
  const std::size_t span = p.operations.empty() ? 1 : static_cast<std::size_t>(high - low + 1);
  // One batch runs over about span / k periods; three periods more give at least two in which every
  // operation of the pattern runs, each beside its neighbours: k·(ceil(span / k) + 3) batches, so
  // GPipe's m micro-batches unroll to 4m batches, O(m·L) vertices.
  const std::size_t periods = (span + static_cast<std::size_t>(k) - 1) / static_cast<std::size_t>(k) + 3;
  const std::size_t batches = options.batches > 0 ? options.batches : static_cast<std::size_t>(k) * periods;

  unrolled_pipeline out;
  out.batches = batches;
  // Block start of (batch, stage, pass): the instance whose shift matches the batch mod k.
  std::vector<seconds> block(batches * stage_count * 2, std::numeric_limits<double>::quiet_NaN());
  const auto slot = [&](std::size_t b, std::size_t s, pass kind) {
    return (b * stage_count + s) * 2 + (kind == pass::backward ? 1 : 0);
  };
  seconds earliest = std::numeric_limits<double>::infinity();
  for (const auto& op : p.operations)
    for (std::size_t b = 0; b < batches; ++b) {
      const std::int64_t distance = static_cast<std::int64_t>(b) - op.shift;
      if (distance % k != 0) continue;
      const seconds time = static_cast<double>(distance / k) * p.period + op.start;
      block[slot(b, op.stage, op.kind)] = time;
      earliest = std::min(earliest, time);
    }
  for (std::size_t b = 0; b < batches; ++b)
    for (std::size_t s = 0; s < stage_count; ++s)
      for (const pass kind : {pass::forward, pass::backward})
        if (std::isnan(block[slot(b, s, kind)]))
          throw invalid_input("unroll: the pattern has no " + std::string(to_string(kind)) + " of stage " +
                              std::to_string(s) + " for batch " + std::to_string(b) +
                              " (shifts must cover every "
                              "residue mod k = " +
                              std::to_string(k) + ")");

  // Devices: processors, then links.
  const std::size_t resources = p.resource_count();
  std::vector<device> devices(resources);
  for (std::size_t d = 0; d < resources; ++d) {
    devices[d].name = d < p.processor_count ? "p" + std::to_string(d) : "link" + std::to_string(d - p.processor_count);
    devices[d].capacity = d < p.processor_count ? options.capacity : unlimited_memory;
  }
  out.devices = cluster(std::move(devices));

  auto& g = out.training;
  auto& s = out.timeline;
  const std::size_t layers = c.size();
  g.reserve(batches * (2 * layers + 2 * stage_count), batches * (4 * layers + 4 * stage_count));
  const auto add = [&](std::string name, seconds compute, byte_count persistent, byte_count output, device_id d,
                       seconds start) {
    const auto v = g.add_vertex(
        vertex_properties{.name = std::move(name), .compute = compute, .persistent = persistent, .output = output});
    s.device.push_back(d);
    s.start.push_back(start - earliest);
    s.finish.push_back(start - earliest + compute);
    return v;
  };
  for (std::size_t b = 0; b < batches; ++b) {
    const std::string batch = "#" + std::to_string(b);
    std::vector<vertex_id> forward_of_layer(layers, no_vertex), backward_of_layer(layers, no_vertex);
    std::vector<vertex_id> forward_sequence, backward_sequence;
    for (std::size_t si = 0; si < stage_count; ++si) {
      const auto& st = p.stages[si];
      seconds t = block[slot(b, si, pass::forward)];
      if (st.link) {
        forward_sequence.push_back(add("send" + std::to_string(si) + batch, st.forward, 0, 0, st.resource, t));
        continue;
      }
      const auto forward = detail::block_durations(c, st, pass::forward);
      for (auto l = st.first_layer; l < st.end_layer; ++l) {
        const seconds took = forward[l - st.first_layer];
        const auto v = add("F" + std::to_string(l) + ":" + c[l].name + batch, took, b == 0 ? c[l].weights : 0,
                           c[l].activation, st.resource, t);
        t += took;
        forward_of_layer[l] = v;
        forward_sequence.push_back(v);
      }
    }
    for (std::size_t si = stage_count; si-- > 0;) {
      const auto& st = p.stages[si];
      seconds t = block[slot(b, si, pass::backward)];
      if (st.link) {
        backward_sequence.push_back(add("return" + std::to_string(si) + batch, st.backward, 0, 0, st.resource, t));
        continue;
      }
      const auto backward = detail::block_durations(c, st, pass::backward);
      for (auto l = st.end_layer; l-- > st.first_layer;) {
        const seconds took = backward[l - st.first_layer];
        const auto v = add("B" + std::to_string(l) + ":" + c[l].name + batch, took, 0, 0, st.resource, t);
        t += took;
        g.set_forward(v, forward_of_layer[l]);
        backward_of_layer[l] = v;
        backward_sequence.push_back(v);
      }
    }
    for (std::size_t i = 1; i < forward_sequence.size(); ++i) g.add_edge(forward_sequence[i - 1], forward_sequence[i]);
    if (!forward_sequence.empty() && !backward_sequence.empty())
      g.add_edge(forward_sequence.back(), backward_sequence.front());
    for (std::size_t i = 1; i < backward_sequence.size(); ++i)
      g.add_edge(backward_sequence[i - 1], backward_sequence[i]);
    // The stored activation; the last layer's is already the F_L -> B_L edge above.
    for (std::size_t l = 0; l + 1 < layers; ++l)
      if (forward_of_layer[l] != no_vertex && backward_of_layer[l] != no_vertex)
        g.add_edge(forward_of_layer[l], backward_of_layer[l]);
  }
  detail::snap_zero_length_operations(s, resources);
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const auto u = g.source(e), v = g.target(e);
    if (s.device[u] != s.device[v])
      s.transfers.push_back({u, e, s.device[u], s.device[v], s.finish[u], s.finish[u], 0});
  }
  const graph_model model(g, out.devices);
  summarize(s, snapshot(g), model, resources);
  return out;
}

// Unrolls the pattern and validates the schedule: dependencies, one operation at a time per
// processor and link, and memory against options.capacity with the activations held as the NCA
// says. report.peak_memory[p] is the memory processor p really reaches, at most pattern.memory[p]
// (equal when each processor's layers run as one block, as in contiguous patterns).
[[nodiscard]] inline validation_report check_pattern(const chain& c, const pipeline_pattern& p,
                                                     unroll_options options = {}) {
  const auto unrolled = unroll(c, p, options);
  const graph_model model(unrolled.training, unrolled.devices);
  return validate(unrolled.timeline, unrolled.training, model, unrolled.devices);
}

}  // namespace gantry
