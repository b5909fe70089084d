// Cost and memory models. A cost model answers "how long does v take on d" and "how long does
// edge e take from d1 to d2"; a memory model gives persistent, output and temporary bytes per vertex
// and the bytes each edge carries. Any type with those member functions works; gantry ships
// graph_model (reads a gantry::graph and a cluster), array_model (per-vertex and per-edge vectors,
// e.g. from Boost property maps) and model_from() for callables.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>

#include <concepts>
#include <limits>
#include <unordered_map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace gantry {

template <class M>
concept cost_model = requires(const M& m, vertex_id v, edge_id e, device_id d) {
  { m.compute_time(v, d) } -> std::convertible_to<seconds>;
  { m.transfer_time(e, d, d) } -> std::convertible_to<seconds>;
};

template <class M>
concept memory_model = requires(const M& m, vertex_id v, edge_id e) {
  { m.persistent_bytes(v) } -> std::convertible_to<byte_count>;
  { m.output_bytes(v) } -> std::convertible_to<byte_count>;
  { m.temporary_bytes(v) } -> std::convertible_to<byte_count>;
  { m.edge_bytes(e) } -> std::convertible_to<byte_count>;
};

// Both: what the simulator, validate() and the memory-aware placers take.
template <class M>
concept placement_model = cost_model<M> && memory_model<M>;

// Everything a vertex needs on a device if nothing is ever freed: what the static memory checks
// of m-TOPO and m-ETF count.
// Saturates at the largest byte count instead of wrapping, so a vertex too large for any device
// never looks small.
template <memory_model M>
[[nodiscard]] byte_count total_bytes(const M& m, vertex_id v) {
  return detail::saturating_add(detail::saturating_add(static_cast<byte_count>(m.persistent_bytes(v)),
                                                       static_cast<byte_count>(m.output_bytes(v))),
                                static_cast<byte_count>(m.temporary_bytes(v)));
}

// Representative costs used by levels and orders: a model may provide them itself
// (mean_compute_time(v), mean_transfer_time(e)); otherwise the mean over devices (over ordered
// pairs of distinct devices for transfers) is taken.
template <cost_model M>
[[nodiscard]] seconds mean_compute_time(const M& m, vertex_id v, std::size_t devices) {
  if constexpr (requires {
                  { m.mean_compute_time(v) } -> std::convertible_to<seconds>;
                }) {
    return m.mean_compute_time(v);
  } else {
    seconds sum = 0;
    for (device_id d = 0; d < devices; ++d) sum += m.compute_time(v, d);
    return devices == 0 ? 0.0 : sum / static_cast<double>(devices);
  }
}
template <cost_model M>
[[nodiscard]] seconds mean_transfer_time(const M& m, edge_id e, std::size_t devices) {
  if constexpr (requires {
                  { m.mean_transfer_time(e) } -> std::convertible_to<seconds>;
                }) {
    return m.mean_transfer_time(e);
  } else {
    if (devices < 2) return 0.0;
    seconds sum = 0;
    for (device_id a = 0; a < devices; ++a)
      for (device_id b = 0; b < devices; ++b)
        if (a != b) sum += m.transfer_time(e, a, b);
    return sum / static_cast<double>(devices * (devices - 1));
  }
}

namespace detail {
// Mean link over ordered pairs of distinct devices, for mean transfer times in O(1) per edge.
inline link_model mean_link(const cluster& c) { return c.mean_link(); }
}  // namespace detail

// The default model: reads compute times, memory and edge bytes from a gantry::graph, speeds,
// kinds and links from a cluster. Holds references: both must outlive it.
class graph_model {
 public:
  graph_model(const graph& g, const cluster& c) : graph_(&g), cluster_(&c), mean_link_(detail::mean_link(c)) {
    // Devices grouped by kind, so that a mean compute time costs O(kinds), not O(devices).
    std::unordered_map<std::string_view, std::size_t> group_of;
    for (const auto& dev : c.devices()) {
      const auto [it, inserted] = group_of.try_emplace(dev.kind, kind_groups_.size());
      if (inserted) kind_groups_.push_back({dev.kind, 0.0});
      kind_groups_[it->second].inverse_speed_sum += 1.0 / dev.speed;
    }
    // Device kinds become the graph's dense kind ids once, here.
    kinds_seen_ = g.kind_count();
    device_kind_.reserve(c.device_count());
    speed_.reserve(c.device_count());
    for (const auto& dev : c.devices()) {
      device_kind_.push_back(g.kind_id(dev.kind));
      speed_.push_back(dev.speed);
    }
    for (auto& group : kind_groups_) group.id = g.kind_id(group.kind);
  }

  // O(kinds set on v) without hashing; a graph given new kinds after the model was built is
  // looked up by name.
  [[nodiscard]] seconds compute_time(vertex_id v, device_id d) const {
    if (graph_->kind_count() != kinds_seen_) [[unlikely]] {
      const auto& dev = (*cluster_)[d];
      return graph_->compute_on(v, std::string_view(dev.kind)) / dev.speed;
    }
    return graph_->compute_on(v, device_kind_[d]) / speed_[d];
  }
  [[nodiscard]] seconds transfer_time(edge_id e, device_id from, device_id to) const {
    return cluster_->transfer_time(graph_->bytes(e), from, to);
  }
  [[nodiscard]] seconds mean_compute_time(vertex_id v) const {
    const std::size_t m = cluster_->device_count();
    seconds sum = 0;
    const bool fresh = graph_->kind_count() == kinds_seen_;
    for (const auto& group : kind_groups_)
      sum += (fresh ? graph_->compute_on(v, group.id) : graph_->compute_on(v, std::string_view(group.kind))) *
             group.inverse_speed_sum;
    return m == 0 ? 0.0 : sum / static_cast<double>(m);
  }
  [[nodiscard]] seconds mean_transfer_time(edge_id e) const {
    return cluster_->device_count() < 2 ? 0.0 : mean_link_.time(graph_->bytes(e));
  }
  [[nodiscard]] byte_count persistent_bytes(vertex_id v) const { return (*graph_)[v].persistent; }
  [[nodiscard]] byte_count output_bytes(vertex_id v) const { return (*graph_)[v].output; }
  [[nodiscard]] byte_count temporary_bytes(vertex_id v) const { return (*graph_)[v].temporary; }
  [[nodiscard]] byte_count edge_bytes(edge_id e) const { return graph_->bytes(e); }

  [[nodiscard]] const graph& graph_ref() const noexcept { return *graph_; }
  [[nodiscard]] const cluster& devices() const noexcept { return *cluster_; }

 private:
  struct kind_group {
    std::string kind;
    double inverse_speed_sum;  // sum of 1 / speed over the kind's devices
    std::uint32_t id = graph::no_kind;
  };

  const graph* graph_;
  const cluster* cluster_;
  link_model mean_link_;
  std::vector<kind_group> kind_groups_;
  std::size_t kinds_seen_ = 0;              // the graph's kind count when the ids were taken
  std::vector<std::uint32_t> device_kind_;  // per device: the graph's kind id, or no_kind
  std::vector<double> speed_;               // per device
};

// A model from dense vectors: compute time per vertex (at speed 1) and bytes per edge, with
// optional memory vectors (empty means zero). Speeds and links come from the cluster, which must
// outlive the model. This is the bridge for Boost users: fill the vectors with vertex_values() and
// edge_values() from graph/boost.hpp.
struct array_model {
  const cluster* devices = nullptr;
  std::vector<seconds> compute;
  std::vector<byte_count> edge_bytes_;
  std::vector<byte_count> persistent, output, temporary;

  array_model(const cluster& c, std::vector<seconds> compute_times, std::vector<byte_count> edge_bytes,
              std::vector<byte_count> persistent_bytes = {}, std::vector<byte_count> output_bytes = {},
              std::vector<byte_count> temporary_bytes = {})
      : devices(&c), compute(std::move(compute_times)), edge_bytes_(std::move(edge_bytes)),
        persistent(std::move(persistent_bytes)), output(std::move(output_bytes)),
        temporary(std::move(temporary_bytes)) {
    const auto check = [&](std::size_t size, const char* what) {
      if (size != 0 && size != compute.size())
        throw invalid_input(std::string("array_model: ") + what + " has " + std::to_string(size) +
                            " entries but compute has " + std::to_string(compute.size()));
    };
    check(persistent.size(), "persistent");
    check(output.size(), "output");
    check(temporary.size(), "temporary");
  }

  [[nodiscard]] seconds compute_time(vertex_id v, device_id d) const { return compute[v] / (*devices)[d].speed; }
  [[nodiscard]] seconds transfer_time(edge_id e, device_id from, device_id to) const {
    return devices->transfer_time(edge_bytes_[e], from, to);
  }
  [[nodiscard]] byte_count persistent_bytes(vertex_id v) const { return persistent.empty() ? 0 : persistent[v]; }
  [[nodiscard]] byte_count output_bytes(vertex_id v) const { return output.empty() ? 0 : output[v]; }
  [[nodiscard]] byte_count temporary_bytes(vertex_id v) const { return temporary.empty() ? 0 : temporary[v]; }
  [[nodiscard]] byte_count edge_bytes(edge_id e) const { return edge_bytes_[e]; }
};

// A cost model from two callables: compute(v, d) and transfer(e, from, to).
template <class Compute, class Transfer>
requires std::is_invocable_r_v<seconds, const Compute&, vertex_id, device_id> &&
    std::is_invocable_r_v<seconds, const Transfer&, edge_id, device_id, device_id>
struct cost_functions {
  Compute compute;
  Transfer transfer;
  [[nodiscard]] seconds compute_time(vertex_id v, device_id d) const { return compute(v, d); }
  [[nodiscard]] seconds transfer_time(edge_id e, device_id from, device_id to) const {
    return from == to ? 0.0 : transfer(e, from, to);
  }
};

// A memory model with nothing to hold: every byte count is zero.
struct no_memory {
  [[nodiscard]] byte_count persistent_bytes(vertex_id) const { return 0; }
  [[nodiscard]] byte_count output_bytes(vertex_id) const { return 0; }
  [[nodiscard]] byte_count temporary_bytes(vertex_id) const { return 0; }
  [[nodiscard]] byte_count edge_bytes(edge_id) const { return 0; }
};

// Joins a cost model and a memory model into one placement_model.
template <cost_model Cost, memory_model Memory>
struct combined_model {
  Cost cost;
  Memory memory;
  [[nodiscard]] seconds compute_time(vertex_id v, device_id d) const { return cost.compute_time(v, d); }
  [[nodiscard]] seconds transfer_time(edge_id e, device_id a, device_id b) const { return cost.transfer_time(e, a, b); }
  [[nodiscard]] byte_count persistent_bytes(vertex_id v) const { return memory.persistent_bytes(v); }
  [[nodiscard]] byte_count output_bytes(vertex_id v) const { return memory.output_bytes(v); }
  [[nodiscard]] byte_count temporary_bytes(vertex_id v) const { return memory.temporary_bytes(v); }
  [[nodiscard]] byte_count edge_bytes(edge_id e) const { return memory.edge_bytes(e); }
};

// model_from(compute, transfer) is a placement model with no memory; add a memory model as a
// third argument to get both.
template <class Compute, class Transfer>
[[nodiscard]] auto model_from(Compute compute, Transfer transfer) {
  return combined_model<cost_functions<Compute, Transfer>, no_memory>{{std::move(compute), std::move(transfer)}, {}};
}
template <class Compute, class Transfer, memory_model Memory>
[[nodiscard]] auto model_from(Compute compute, Transfer transfer, Memory memory) {
  return combined_model<cost_functions<Compute, Transfer>, Memory>{{std::move(compute), std::move(transfer)},
                                                                   std::move(memory)};
}

static_assert(placement_model<graph_model>);
static_assert(placement_model<array_model>);

}  // namespace gantry
