// gantry::graph, the library's own compact dataflow graph: vertices with compute time and memory,
// edges with tensor bytes. Storage is a set of flat arrays (no allocation per vertex or edge), and
// out/in lists are intrusive singly linked lists, so adding a vertex or an edge is O(1).
// Algorithms never walk it directly: they take a CSR snapshot (graph/snapshot.hpp).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/adaptor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
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
  seconds compute = 0;        // device-independent compute time (at speed 1)
  byte_count persistent = 0;  // weights and other state held for the whole step
  byte_count output = 0;      // bytes of the vertex's output, held until its last consumer ran
  byte_count temporary = 0;   // scratch, freed when the vertex finishes
  std::string group{};        // colocation group; empty for none
  std::string op{};           // operator type, informational
  double flops = 0;           // FLOP estimate, informational
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
    const std::uint32_t k = intern_kind(kind);
    if (const auto it = kind_entry_of_.find(kind_key(v, k)); it != kind_entry_of_.end()) {
      kind_entries_[it->second].time = time;
      return;
    }
    if (kind_entries_.size() >= max_kind_entries)
      throw invalid_input("set_compute: more than " + std::to_string(max_kind_entries) + " per-kind compute times");
    if (first_kind_entry_.size() < vertices_.size()) first_kind_entry_.resize(vertices_.size(), no_entry);
    const auto entry = static_cast<std::uint32_t>(kind_entries_.size());
    kind_entries_.push_back({k, time, first_kind_entry_[v]});
    first_kind_entry_[v] = entry;
    kind_entry_of_.emplace(kind_key(v, k), entry);
  }
  // Compute time of v on a device of `kind` at speed 1: the kind's own time if set, else compute.
  // O(1): one hash lookup of the kind, one of the (vertex, kind) pair.
  [[nodiscard]] seconds compute_on(vertex_id v, std::string_view kind) const {
    if (!kind_entries_.empty()) {
      if (const auto k = kind_index_.find(kind); k != kind_index_.end()) {
        if (const auto it = kind_entry_of_.find(kind_key(v, k->second)); it != kind_entry_of_.end())
          return kind_entries_[it->second].time;
      }
    }
    return vertices_[v].compute;
  }
  // The dense id of a device kind that has compute times in the graph (ids 0..kind_count()-1, in
  // order of first use), or no_kind. A model resolves its devices' kinds once with this and then
  // calls compute_on(v, id) without hashing strings.
  static constexpr std::uint32_t no_kind = 0xffffffffu;
  [[nodiscard]] std::uint32_t kind_id(std::string_view kind) const {
    const auto k = kind_index_.find(kind);
    return k == kind_index_.end() ? no_kind : k->second;
  }
  // Compute time of v on a device of kind id k (no_kind: the device-independent time). Walks v's
  // own per-kind times, usually none or one.
  [[nodiscard]] seconds compute_on(vertex_id v, std::uint32_t k) const {
    if (k != no_kind && v < first_kind_entry_.size())
      for (auto i = first_kind_entry_[v]; i != no_entry; i = kind_entries_[i].next)
        if (kind_entries_[i].kind == k) return kind_entries_[i].time;
    return vertices_[v].compute;
  }
  // The per-kind compute times set for v, as (kind, time) pairs in the order the kinds were first
  // used in the graph. O(k log k) for k kinds set on v.
  [[nodiscard]] std::vector<std::pair<std::string, seconds>> kind_times(vertex_id v) const {
    std::vector<std::pair<std::uint32_t, seconds>> found;
    if (v < first_kind_entry_.size())
      for (auto i = first_kind_entry_[v]; i != no_entry; i = kind_entries_[i].next)
        found.emplace_back(kind_entries_[i].kind, kind_entries_[i].time);
    std::sort(found.begin(), found.end());
    std::vector<std::pair<std::string, seconds>> out;
    out.reserve(found.size());
    for (const auto& [k, time] : found) out.emplace_back(kinds_[k], time);
    return out;
  }
  // The number of distinct device kinds that have compute times in the graph.
  [[nodiscard]] std::size_t kind_count() const noexcept { return kinds_.size(); }

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
  static void append(edge_id& first, edge_id& last, std::vector<edge_id>& next, edge_id e) {
    if (first == no_edge) first = e;
    else next[last] = e;
    last = e;
  }
  void check_vertex(vertex_id v, const char* what) const {
    if (v >= vertices_.size())
      throw invalid_input(std::string(what) + ": vertex id " + std::to_string(v) + " is out of range (the graph has " +
                          std::to_string(vertices_.size()) + " vertices)");
  }
  static void check_time(seconds t, const std::string& name) {
    if (!std::isfinite(t) || t < 0)
      throw invalid_input("compute time of vertex '" + name + "' must be finite and >= 0, got " + std::to_string(t));
  }
  std::uint32_t intern_kind(std::string_view kind) {
    if (const auto k = kind_index_.find(kind); k != kind_index_.end()) return k->second;
    if (kinds_.size() >= max_kinds)
      throw invalid_input("set_compute: more than " + std::to_string(max_kinds) + " device kinds");
    const auto k = static_cast<std::uint32_t>(kinds_.size());
    kinds_.emplace_back(kind);
    kind_index_.emplace(kinds_.back(), k);
    return k;
  }
  // Vertex and kind ids are both 32 bits, so the key cannot collide.
  [[nodiscard]] static std::uint64_t kind_key(vertex_id v, std::uint32_t kind) noexcept {
    return (std::uint64_t{v} << 32) | kind;
  }

  // Heterogeneous lookup: compute_on(v, "gpu") hashes the view without building a string.
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
  };
  static constexpr std::uint32_t no_entry = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_kinds = no_entry;
  static constexpr std::size_t max_kind_entries = no_entry;
  // One per-kind time; the entries of a vertex form a singly linked list from first_kind_entry_.
  struct kind_entry {
    std::uint32_t kind;
    seconds time;
    std::uint32_t next;
  };

  std::vector<vertex_properties> vertices_;
  std::vector<edge_id> first_out_, last_out_, first_in_, last_in_;
  std::vector<vertex_id> forward_of_;
  std::vector<vertex_id> source_, target_;
  std::vector<byte_count> bytes_;
  std::vector<edge_id> next_out_, next_in_;
  std::vector<std::string> kinds_;
  std::unordered_map<std::string, std::uint32_t, string_hash, std::equal_to<>> kind_index_;
  std::vector<kind_entry> kind_entries_;
  std::vector<std::uint32_t> first_kind_entry_;                     // per vertex; sized on the first set_compute
  std::unordered_map<std::uint64_t, std::uint32_t> kind_entry_of_;  // kind_key -> index in kind_entries_
};

// gantry::graph through the adaptor layer (graph/adaptor.hpp): its own edge ids and vertex names.
template <>
struct graph_adaptor<graph> {
  static std::size_t vertex_count(const graph& g) { return g.vertex_count(); }
  static std::size_t edge_count(const graph& g) { return g.edge_count(); }
  template <class F>
  static void for_each_edge(const graph& g, F&& f) {
    for (edge_id e = 0; e < g.edge_count(); ++e) f(g.source(e), g.target(e), e);
  }
  static std::string vertex_name(const graph& g, std::size_t v) { return g[static_cast<vertex_id>(v)].name; }
};

}  // namespace gantry
