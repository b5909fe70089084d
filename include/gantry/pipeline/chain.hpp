// The chain model of pipelined model parallelism (Beaumont, Eyraud-Dubois & Shilova, Euro-Par 2021,
// §3.1): layers with forward and backward time, weight and activation bytes; contiguous partitions
// into stages; stages for communication links (§3.1: a link adds a stage of time 2·a_l/β); and a
// chain built from a gantry training graph.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/order/topological.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

struct layer {
  std::string name;
  seconds forward = 0;        // u_F
  seconds backward = 0;       // u_B
  byte_count weights = 0;     // W: weights, gradients and optimizer state, held all the time
  byte_count activation = 0;  // a: the output of the forward, held until the backward ran
  // Bytes of trainable parameters, all-reduced once per batch when the stage is replicated
  // (PipeDream's parameter_size); 0 takes `weights`.
  byte_count parameters = 0;

  [[nodiscard]] byte_count gradient_bytes() const noexcept { return parameters > 0 ? parameters : weights; }
};

// A chain of layers: F_1 -> ... -> F_L -> B_L -> ... -> B_1, and F_l -> B_l for the stored activation.
struct chain {
  std::vector<layer> layers;
  // crossing[l]: bytes a cut after layer l sends forward (and their gradients back): every output
  // of layers <= l that a layer > l reads. Empty in a plain chain, where it is layer l's activation;
  // a chain cut from a DAG (chain_from_graph) fills it, so skip connections are paid for.
  std::vector<byte_count> crossing{};

  [[nodiscard]] byte_count crossing_bytes(std::size_t l) const {
    return l < crossing.size() ? crossing[l] : layers[l].activation;
  }
  [[nodiscard]] std::size_t size() const noexcept { return layers.size(); }
  [[nodiscard]] const layer& operator[](std::size_t l) const { return layers[l]; }
  [[nodiscard]] seconds cost(std::size_t l) const { return layers[l].forward + layers[l].backward; }
  [[nodiscard]] seconds total_cost() const {
    seconds sum = 0;
    for (std::size_t l = 0; l < size(); ++l) sum += cost(l);
    return sum;
  }
};

// A chain's weights and activations must add up to less than this (as a graph's bytes must, see
// io/limits.hpp), so that prefix sums of bytes never wrap; a stage's memory W + NCA·a may still
// exceed 2^64 and then saturates at unlimited_memory (pattern.hpp).
inline constexpr byte_count max_chain_bytes = byte_count{1} << 63;

// What is wrong with a chain, or "": a negative or non-finite time, times whose sum is not finite
// (every period, prefix sum and candidate period is such a sum), or bytes adding up to
// max_chain_bytes or more (parameter bytes too, summed apart). Names the first layer where it
// happens.
[[nodiscard]] inline std::string chain_problem(const chain& c) {
  seconds total_time = 0;
  byte_count total_bytes = 0, total_parameters = 0;
  for (std::size_t l = 0; l < c.size(); ++l) {
    const auto& x = c.layers[l];
    const auto where = [&] { return "layer " + std::to_string(l) + " ('" + x.name + "')"; };
    for (const auto& [time, what] : {std::pair{x.forward, "forward"}, std::pair{x.backward, "backward"}})
      if (!std::isfinite(time) || time < 0)
        return where() + ": " + what + " time must be finite and >= 0, got " + std::to_string(time);
    total_time += x.forward + x.backward;
    if (!std::isfinite(total_time))
      return "the forward and backward times up to " + where() +
             " add up to more than the largest finite number "
             "of seconds, so no period can be computed";
    for (const byte_count bytes : {x.weights, x.activation}) {
      if (bytes >= max_chain_bytes - total_bytes)
        return "the weights and activations up to " + where() +
               " add up to 2^63 bytes (8 EiB) or more, which "
               "gantry's memory sums cannot hold";
      total_bytes += bytes;
    }
    if (x.parameters >= max_chain_bytes - total_parameters)
      return "the parameter bytes up to " + where() + " add up to 2^63 bytes (8 EiB) or more";
    total_parameters += x.parameters;
  }
  return {};
}

// Throws invalid_input with chain_problem()'s text when there is one.
inline void check_chain(const chain& c) {
  if (std::string problem = chain_problem(c); !problem.empty()) throw invalid_input(std::move(problem));
}

// The workers a contiguous plan of a chain of `layers` layers can use out of `workers`: at most one
// stage per layer, each on at most max_replicas workers. Planners consider no more, which bounds
// their work whatever P is given.
[[nodiscard]] constexpr std::size_t useful_workers(std::size_t layers, std::size_t workers,
                                                   std::size_t max_replicas = 1) noexcept {
  const std::size_t replicas = std::clamp<std::size_t>(max_replicas, 1, std::max<std::size_t>(workers, 1));
  return layers > workers / replicas ? workers : layers * replicas;
}

// Contiguous partition: stage s holds layers [first[s], first[s+1]) (the last one up to the end).
struct chain_partition {
  std::vector<std::uint32_t> first;  // ascending, first[0] == 0

  [[nodiscard]] std::size_t stage_count() const noexcept { return first.size(); }
  [[nodiscard]] std::uint32_t end(std::size_t s, std::size_t layers) const {
    return s + 1 < first.size() ? first[s + 1] : static_cast<std::uint32_t>(layers);
  }
  friend bool operator==(const chain_partition&, const chain_partition&) = default;
};

// Throws invalid_input unless p is a partition of a chain of `layers` layers.
inline void check_partition(const chain_partition& p, std::size_t layers) {
  if (p.first.empty() || p.first[0] != 0) throw invalid_input("partition: the first stage must start at layer 0");
  for (std::size_t s = 1; s < p.first.size(); ++s)
    if (p.first[s] <= p.first[s - 1] || p.first[s] >= layers)
      throw invalid_input("partition: stage " + std::to_string(s) + " starts at layer " + std::to_string(p.first[s]) +
                          ", which is not after stage " + std::to_string(s - 1) + "'s start " +
                          std::to_string(p.first[s - 1]) + " and inside the chain of " + std::to_string(layers) +
                          " layers");
}

// A partition from stage sizes, handy by hand: sizes {2, 3, 1} = stages of 2, 3
// and 1 layers.
[[nodiscard]] inline chain_partition partition_from_sizes(const std::vector<std::uint32_t>& sizes) {
  chain_partition p;
  std::uint32_t at = 0;
  for (const auto size : sizes) {
    if (size == 0) throw invalid_input("partition_from_sizes: a stage cannot be empty");
    p.first.push_back(at);
    at += size;
  }
  return p;
}

// A stage is a run of layers executed as one forward block and one backward block on one
// resource. A link stage stands for the transfer of activation a_l forward and of gradient b_l
// backward between two processors; its resource is a link, not a processor, and holds no memory.
struct stage {
  std::uint32_t first_layer = 0, end_layer = 0;  // layers [first, end); for a link, the sending layer is end-1
  bool link = false;
  device_id resource = 0;             // processor for a compute stage; P + i for the i-th link
  seconds forward = 0, backward = 0;  // per batch; a stage on r replicas counts 1/r of its time
  byte_count weights = 0, activation = 0;
  // Workers running this stage, each taking every r-th batch (PipeDream's data parallelism inside
  // the pipeline); each holds all the stage's weights and 1/r of its activations in flight.
  std::uint32_t replicas = 1;

  [[nodiscard]] seconds load() const noexcept { return forward + backward; }  // U(s)
};

// The stages of a contiguous partition, stage s on processor s, communication free. Stages with
// link stages between them and replicated stages: pipeline_stages() in pipeline/comm_partition.hpp.
[[nodiscard]] inline std::vector<stage> contiguous_stages(const chain& c, const chain_partition& p) {
  check_partition(p, c.size());
  std::vector<stage> stages;
  const std::size_t count = p.stage_count();
  for (std::size_t s = 0; s < count; ++s) {
    stage st;
    st.first_layer = p.first[s];
    st.end_layer = p.end(s, c.size());
    st.resource = static_cast<device_id>(s);
    for (auto l = st.first_layer; l < st.end_layer; ++l) {
      st.forward += c[l].forward;
      st.backward += c[l].backward;
      st.weights += c[l].weights;
      st.activation += c[l].activation;
    }
    stages.push_back(st);
  }
  return stages;
}

// One stage per layer on the processors given per layer (a non-contiguous allocation, §6).
[[nodiscard]] inline std::vector<stage> allocation_stages(const chain& c, const std::vector<device_id>& processor) {
  if (processor.size() != c.size())
    throw invalid_input("allocation has " + std::to_string(processor.size()) + " entries for a chain of " +
                        std::to_string(c.size()) + " layers");
  std::vector<stage> stages(c.size());
  for (std::uint32_t l = 0; l < c.size(); ++l) {
    if (processor[l] == no_device) throw invalid_input("allocation: layer " + std::to_string(l) + " has no processor");
    stages[l] = {l, l + 1, false, processor[l], c[l].forward, c[l].backward, c[l].weights, c[l].activation, 1};
  }
  return stages;
}

// The forward vertex whose layer each vertex of the backward pass joins, no_vertex for forward
// vertices. A vertex paired with a forward one (graph::set_forward) joins it. A vertex without a
// pair that reads one of the backward pass (an exporter's unpaired gradient sum, an optimizer
// step) is of the backward pass too: it joins the forward vertex of such an input that comes first
// in Kahn's order (smallest id first), the layer the backward pass reaches last. Otherwise an
// unpaired gradient sum counts as a forward vertex without forward inputs, leads every order and
// lands in stage 0 (ResNet-50's exported graph has 16). O(n + e).
[[nodiscard]] inline std::vector<vertex_id> backward_owners(const graph& g) {
  const std::size_t n = g.vertex_count();
  std::vector<vertex_id> owner(n, no_vertex);
  const std::vector<vertex_id> order = kahn_order(g);
  std::vector<std::uint32_t> position(n, 0);
  for (std::uint32_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  for (const vertex_id v : order) {
    if (g.forward_of(v) != no_vertex) {
      owner[v] = g.forward_of(v);
      continue;
    }
    g.for_each_in_edge(v, [&](edge_id e) {
      const vertex_id f = owner[g.source(e)];
      if (f != no_vertex && (owner[v] == no_vertex || position[f] < position[owner[v]])) owner[v] = f;
    });
  }
  return owner;
}

// The forward vertex each work-free source travels with, no_vertex for every other vertex. A
// forward vertex without inputs and without compute time on any device kind (a weight, a bias,
// the batch's input) does no work: where it goes decides only where its bytes are held and sent,
// so it belongs with the first forward vertex that reads it (first in Kahn's order, smallest id
// first), or, read by backward vertices only, with the first one's forward vertex. The orders, the
// ideals and the chains of a training graph leave such vertices out and charge their bytes to
// that vertex's layer: otherwise every weight sits in the first layer, before any real work.
// O(n + e); `backward_of` is backward_owners(g), for callers that hold it already.
[[nodiscard]] inline std::vector<vertex_id> forward_anchors(const graph& g, const std::vector<vertex_id>& backward_of) {
  const std::size_t n = g.vertex_count();
  std::vector<vertex_id> anchor(n, no_vertex);
  const auto is_backward = [&](vertex_id v) { return backward_of[v] != no_vertex; };
  const auto work_free_source = [&](vertex_id v) {
    if (is_backward(v) || g[v].compute != 0) return false;
    bool inputs = false;
    g.for_each_in_edge(v, [&](edge_id) { inputs = true; });
    if (inputs) return false;
    for (const auto& [kind, time] : g.kind_times(v))
      if (time != 0) return false;
    return true;
  };
  std::vector<std::uint32_t> position(n, 0);
  std::uint32_t i = 0;
  for (const auto v : kahn_order(g)) position[v] = i++;
  for (vertex_id v = 0; v < n; ++v) {
    if (!work_free_source(v)) continue;
    vertex_id first = no_vertex, first_backward = no_vertex;
    g.for_each_out_edge(v, [&](edge_id e) {
      const vertex_id w = g.target(e);
      vertex_id& best = is_backward(w) ? first_backward : first;
      if (best == no_vertex || position[w] < position[best]) best = w;
    });
    if (first != no_vertex) anchor[v] = first;
    else if (first_backward != no_vertex && !work_free_source(backward_of[first_backward]))
      anchor[v] = backward_of[first_backward];
  }
  return anchor;
}
[[nodiscard]] inline std::vector<vertex_id> forward_anchors(const graph& g) {
  return forward_anchors(g, backward_owners(g));
}

struct chain_from_graph_options {
  // Number of layers to form; 0 makes one layer per forward vertex.
  std::size_t layers = 0;
  // Compute times of this device kind (graph::compute_on).
  std::string kind = "default";
  // Forward vertices in this topological order (each once; all but those forward_anchors() ties
  // to another vertex, which may be listed and are then skipped); empty: Kahn order.
  std::vector<vertex_id> order{};
};

// Groups a training graph into a chain. Forward vertices (those not of the backward pass, see
// backward_owners) are taken in Kahn order and cut into `layers` runs of about equal
// forward+backward time; a backward vertex joins its forward's layer, and a work-free
// source (a weight: forward_anchors) the layer of the vertex that reads it first. A layer's weights
// (and parameters) are the persistent bytes of all its vertices; its activation is the output of its forward
// vertices that a backward vertex or a later layer reads (what must be kept or sent on).
// Throws not_a_dag when the graph has a cycle.
[[nodiscard]] inline chain chain_from_graph(const graph& g, chain_from_graph_options options = {}) {
  const std::size_t n = g.vertex_count();
  const std::vector<vertex_id> backward_of = backward_owners(g);
  const auto is_backward = [&](vertex_id v) { return backward_of[v] != no_vertex; };
  const std::vector<vertex_id> anchor = forward_anchors(g, backward_of);
  // The forward vertex whose layer v joins: its own, its forward's, or its anchor's.
  const auto owner = [&](vertex_id v) {
    const vertex_id f = is_backward(v) ? backward_of[v] : v;
    return anchor[f] != no_vertex ? anchor[f] : f;
  };
  std::vector<vertex_id> forwards;
  if (options.order.empty()) {
    for (const auto v : kahn_order(g))
      if (owner(v) == v) forwards.push_back(v);
  } else {
    std::vector<std::uint32_t> position(n, std::numeric_limits<std::uint32_t>::max());
    for (std::uint32_t i = 0; i < options.order.size(); ++i) {
      const auto v = options.order[i];
      if (v >= n || is_backward(v) || position[v] != std::numeric_limits<std::uint32_t>::max())
        throw invalid_input("chain_from_graph: the order's entry " + std::to_string(i) +
                            " is not a forward vertex, or is one given twice");
      position[v] = i;
      if (owner(v) == v) forwards.push_back(v);
    }
    for (vertex_id v = 0; v < n; ++v) {
      if (owner(v) != v) continue;
      if (position[v] == std::numeric_limits<std::uint32_t>::max())
        throw invalid_input("chain_from_graph: the order leaves out forward vertex '" + g[v].name + "'");
      g.for_each_out_edge(v, [&](edge_id e) {
        const auto w = g.target(e);
        if (!is_backward(w) && position[w] < position[v])
          throw invalid_input("chain_from_graph: the order puts '" + g[w].name + "' before its input '" + g[v].name +
                              "'");
      });
    }
  }
  if (forwards.empty()) return {};
  // A forward vertex's cost includes the backward vertices that point to it and its anchored sources.
  std::vector<seconds> cost(n, 0);
  for (vertex_id v = 0; v < n; ++v) cost[owner(v)] += g.compute_on(v, options.kind);
  const std::size_t count = options.layers == 0 ? forwards.size() : std::min(options.layers, forwards.size());
  seconds total = 0;
  for (const auto v : forwards) total += cost[v];
  std::vector<std::uint32_t> layer_of(n, 0);
  std::size_t current = 0, taken = 0;
  seconds running = 0;
  for (std::size_t i = 0; i < forwards.size(); ++i) {
    const auto v = forwards[i];
    // Move to the next layer once this one reached its share of the time, keeping at least one
    // vertex for each layer still to come.
    const std::size_t left = forwards.size() - i;
    if (taken > 0 && current + 1 < count &&
        (running >= total * static_cast<double>(current + 1) / static_cast<double>(count) ||
         left <= count - current - 1)) {
      ++current;
      taken = 0;
    }
    layer_of[v] = static_cast<std::uint32_t>(current);
    running += cost[v];
    ++taken;
  }
  // A work-free source joins the first layer that reads it (its anchor's, in Kahn's order), a
  // backward vertex its forward's.
  for (vertex_id v = 0; v < n; ++v) {
    if (is_backward(v) || anchor[v] == no_vertex) continue;
    std::uint32_t first = layer_of[anchor[v]];
    g.for_each_out_edge(v, [&](edge_id e) {
      if (const auto w = g.target(e); !is_backward(w)) first = std::min(first, layer_of[w]);
    });
    layer_of[v] = first;
  }
  for (vertex_id v = 0; v < n; ++v)
    if (is_backward(v)) layer_of[v] = layer_of[backward_of[v]];
  chain c;
  c.layers.resize(count);
  for (std::size_t l = 0; l < count; ++l) c.layers[l].name = "layer" + std::to_string(l);
  // A layer is named after its first forward vertex that has a name.
  std::vector<bool> named(count, false);
  for (const auto v : forwards)
    if (!named[layer_of[v]] && !g[v].name.empty()) {
      c.layers[layer_of[v]].name = g[v].name;
      named[layer_of[v]] = true;
    }
  for (vertex_id v = 0; v < n; ++v) {
    auto& x = c.layers[layer_of[v]];
    const seconds t = g.compute_on(v, options.kind);
    if (is_backward(v)) x.backward += t;
    else x.forward += t;
    x.weights += g[v].persistent;
    x.parameters += g[v].persistent;
    if (is_backward(v)) continue;
    bool kept = false;
    g.for_each_out_edge(v, [&](edge_id e) {
      const auto w = g.target(e);
      if (is_backward(w) || layer_of[w] > layer_of[v]) kept = true;
    });
    if (kept) x.activation += g[v].output;
  }
  // A forward output crosses every cut between its layer and the last later layer that reads it.
  std::vector<std::int64_t> change(count + 1, 0);
  for (vertex_id v = 0; v < n; ++v) {
    if (is_backward(v)) continue;
    std::uint32_t last = layer_of[v];
    g.for_each_out_edge(v, [&](edge_id e) {
      const auto w = g.target(e);
      if (!is_backward(w)) last = std::max(last, layer_of[w]);
    });
    if (last == layer_of[v]) continue;
    change[layer_of[v]] += static_cast<std::int64_t>(g[v].output);
    change[last] -= static_cast<std::int64_t>(g[v].output);
  }
  c.crossing.assign(count, 0);
  std::int64_t running_bytes = 0;
  for (std::size_t l = 0; l < count; ++l) {
    running_bytes += change[l];
    c.crossing[l] = static_cast<byte_count>(running_bytes);
  }
  return c;
}

}  // namespace gantry
