// gantry::graph, the library's own compact dataflow graph: vertices with compute time and memory,
// edges with tensor bytes. Storage is a set of flat arrays (no allocation per vertex or edge), and
// out/in lists are intrusive singly linked lists, so adding a vertex or an edge is O(1).
// Algorithms never walk it directly: they take a CSR snapshot (graph/snapshot.hpp).
#pragma once

#include <gantry/core/types.hpp>

#include <cmath>
#include <concepts>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gantry {

struct vertex_properties {
  std::string name{};
  seconds compute = 0;       // device-independent compute time (at speed 1)
  byte_count persistent = 0; // weights and other state held for the whole step
  byte_count output = 0;     // bytes of the vertex's output, held until its last consumer ran
  byte_count temporary = 0;  // scratch, freed when the vertex finishes
  std::string group{};       // colocation group; empty for none
  std::string op{};          // operator type, informational
  double flops = 0;          // FLOP estimate, informational
};

class graph {
 public:
  graph() = default;

  vertex_id add_vertex(vertex_properties properties) {
    check_time(properties.compute, properties.name);
    const auto v = static_cast<vertex_id>(vertices_.size());
    vertices_.push_back(std::move(properties));
    first_out_.push_back(no_edge);
    last_out_.push_back(no_edge);
    first_in_.push_back(no_edge);
    last_in_.push_back(no_edge);
    forward_of_.push_back(no_vertex);
    return v;
  }

  // A template, so that add_vertex({.name = "a", .compute = 1.0}) picks the overload above.
  template <std::convertible_to<std::string> Name>
  vertex_id add_vertex(Name&& name, seconds compute = 0) {
    return add_vertex(vertex_properties{.name = std::string(std::forward<Name>(name)), .compute = compute});
  }

  // Adds u -> v carrying `bytes`. Parallel edges are allowed (two tensors between the same pair).
  edge_id add_edge(vertex_id u, vertex_id v, byte_count bytes = 0) {
    check_vertex(u, "add_edge source");
    check_vertex(v, "add_edge target");
    const auto e = static_cast<edge_id>(source_.size());
    source_.push_back(u);
    target_.push_back(v);
    bytes_.push_back(bytes);
    next_out_.push_back(no_edge);
    next_in_.push_back(no_edge);
    append(first_out_[u], last_out_[u], next_out_, e);
    append(first_in_[v], last_in_[v], next_in_, e);
    return e;
  }

  // Records that backward vertex `backward` is the gradient of forward vertex `forward`.
  void set_forward(vertex_id backward, vertex_id forward) {
    check_vertex(backward, "set_forward backward");
    check_vertex(forward, "set_forward forward");
    forward_of_[backward] = forward;
  }
  // The forward vertex of a backward vertex, or no_vertex.
  [[nodiscard]] vertex_id forward_of(vertex_id v) const { return forward_of_[v]; }

  // Compute time of v on devices of `kind`, overriding the device-independent time.
  void set_compute(vertex_id v, std::string_view kind, seconds time) {
    check_vertex(v, "set_compute");
    check_time(time, vertices_[v].name);
    kind_compute_[key(v, intern_kind(kind))] = time;
  }
  // Compute time of v on a device of `kind` at speed 1: the kind's own time if set, else compute.
  [[nodiscard]] seconds compute_on(vertex_id v, std::string_view kind) const {
    if (!kind_compute_.empty()) {
      if (const auto k = find_kind(kind); k != npos) {
        if (const auto it = kind_compute_.find(key(v, k)); it != kind_compute_.end()) return it->second;
      }
    }
    return vertices_[v].compute;
  }
  // The per-kind compute times set for v, as (kind, time) pairs.
  [[nodiscard]] std::vector<std::pair<std::string, seconds>> kind_times(vertex_id v) const {
    std::vector<std::pair<std::string, seconds>> out;
    for (std::size_t k = 0; k < kinds_.size(); ++k)
      if (const auto it = kind_compute_.find(key(v, k)); it != kind_compute_.end())
        out.emplace_back(kinds_[k], it->second);
    return out;
  }

  [[nodiscard]] std::size_t vertex_count() const noexcept { return vertices_.size(); }
  [[nodiscard]] std::size_t edge_count() const noexcept { return source_.size(); }

  [[nodiscard]] const vertex_properties& operator[](vertex_id v) const { return vertices_[v]; }
  [[nodiscard]] vertex_properties& operator[](vertex_id v) { return vertices_[v]; }
  [[nodiscard]] std::span<const vertex_properties> vertices() const noexcept { return vertices_; }

  [[nodiscard]] vertex_id source(edge_id e) const { return source_[e]; }
  [[nodiscard]] vertex_id target(edge_id e) const { return target_[e]; }
  [[nodiscard]] byte_count bytes(edge_id e) const { return bytes_[e]; }
  void set_bytes(edge_id e, byte_count b) { bytes_[e] = b; }

  // Calls f(edge_id) for each out-edge (in-edge) of v, in insertion order.
  template <class F>
  void for_each_out_edge(vertex_id v, F&& f) const {
    for (auto e = first_out_[v]; e != no_edge; e = next_out_[e]) f(e);
  }
  template <class F>
  void for_each_in_edge(vertex_id v, F&& f) const {
    for (auto e = first_in_[v]; e != no_edge; e = next_in_[e]) f(e);
  }

  void reserve(std::size_t vertices, std::size_t edges) {
    vertices_.reserve(vertices);
    for (auto* a : {&first_out_, &last_out_, &first_in_, &last_in_, &forward_of_}) a->reserve(vertices);
    for (auto* a : {&source_, &target_, &next_out_, &next_in_}) a->reserve(edges);
    bytes_.reserve(edges);
  }

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  static void append(edge_id& first, edge_id& last, std::vector<edge_id>& next, edge_id e) {
    if (first == no_edge) first = e;
    else next[last] = e;
    last = e;
  }
  void check_vertex(vertex_id v, const char* what) const {
    if (v >= vertices_.size())
      throw invalid_input(std::string(what) + ": vertex id " + std::to_string(v) +
                          " is out of range (the graph has " + std::to_string(vertices_.size()) +
                          " vertices)");
  }
  static void check_time(seconds t, const std::string& name) {
    if (!std::isfinite(t) || t < 0)
      throw invalid_input("compute time of vertex '" + name + "' must be finite and >= 0, got " +
                          std::to_string(t));
  }
  std::size_t intern_kind(std::string_view kind) {
    if (const auto k = find_kind(kind); k != npos) return k;
    kinds_.emplace_back(kind);
    return kinds_.size() - 1;
  }
  [[nodiscard]] std::size_t find_kind(std::string_view kind) const {
    for (std::size_t k = 0; k < kinds_.size(); ++k)
      if (kinds_[k] == kind) return k;
    return npos;
  }
  [[nodiscard]] static std::uint64_t key(vertex_id v, std::size_t kind) {
    return (std::uint64_t{v} << 16) | kind;
  }

  std::vector<vertex_properties> vertices_;
  std::vector<edge_id> first_out_, last_out_, first_in_, last_in_;
  std::vector<vertex_id> forward_of_;
  std::vector<vertex_id> source_, target_;
  std::vector<byte_count> bytes_;
  std::vector<edge_id> next_out_, next_in_;
  std::vector<std::string> kinds_;
  std::unordered_map<std::uint64_t, seconds> kind_compute_;
};

}  // namespace gantry
