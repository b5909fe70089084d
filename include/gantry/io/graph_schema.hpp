// The fields of a graph file's vertices and edges, listed once. The JSON reader and writers
// (io/json_graph.hpp), the DOT reader and writer (io/import_dot.hpp) and the tests all walk these
// tables, so a field added here is read, written and round-trip tested everywhere.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>

namespace gantry {

// How a field's value is written and read.
enum class field_type {
  name,              // the vertex's unique, non-empty name (in DOT: the node ID, not an attribute)
  time,              // seconds >= 0, or a duration string ("1.2ms", core/units.hpp)
  bytes,             // whole bytes, or a size string ("16MiB")
  number,            // a finite number >= 0
  text,              // any UTF-8 string
  vertex_reference,  // the name of another vertex
};

// One field of a vertex. Exactly one member pointer matches the type (none for vertex_reference,
// whose value is graph-level: graph::forward_of).
struct vertex_field {
  std::string_view key;
  field_type type;
  std::string_view unit{};                         // for documents and messages: "s", "B", "FLOP" or empty
  bool required = false;                           // a file without it is refused
  bool always_written = false;                     // written even at its default value
  bool per_kind = false;                           // also "<key>_<kind>" in DOT / {"default": .., "<kind>": ..} in JSON
  std::string vertex_properties::*text = nullptr;  // name, text
  double vertex_properties::*real = nullptr;       // time, number
  byte_count vertex_properties::*whole = nullptr;  // bytes
};

// The vertex fields, in the order writers put them.
inline constexpr vertex_field vertex_fields[] = {
    {.key = "name",
     .type = field_type::name,
     .required = true,
     .always_written = true,
     .text = &vertex_properties::name},
    {.key = "compute",
     .type = field_type::time,
     .unit = "s",
     .always_written = true,
     .per_kind = true,
     .real = &vertex_properties::compute},
    {.key = "persistent", .type = field_type::bytes, .unit = "B", .whole = &vertex_properties::persistent},
    {.key = "output", .type = field_type::bytes, .unit = "B", .whole = &vertex_properties::output},
    {.key = "temporary", .type = field_type::bytes, .unit = "B", .whole = &vertex_properties::temporary},
    {.key = "group", .type = field_type::text, .text = &vertex_properties::group},
    {.key = "forward", .type = field_type::vertex_reference},
    {.key = "op", .type = field_type::text, .text = &vertex_properties::op},
    {.key = "flops", .type = field_type::number, .unit = "FLOP", .real = &vertex_properties::flops},
};
inline constexpr std::size_t vertex_field_count = std::size(vertex_fields);
static_assert(vertex_field_count <= 32, "readers track the fields seen in a 32-bit mask");

// One field of an edge: its two ends (vertex references) and the bytes it carries.
struct edge_field {
  std::string_view key;
  field_type type;
  std::string_view unit{};
  bool required = false;
};
inline constexpr edge_field edge_fields[] = {
    {.key = "from", .type = field_type::vertex_reference, .required = true},
    {.key = "to", .type = field_type::vertex_reference, .required = true},
    {.key = "bytes", .type = field_type::bytes, .unit = "B"},
};
inline constexpr std::size_t edge_from_field = 0, edge_to_field = 1, edge_bytes_field = 2;

// The keys of the fields above, and of a graph document's top level: what a reader accepts, and
// all it accepts (io/json_support.hpp, only_known_keys).
inline constexpr auto vertex_field_keys = [] {
  std::array<std::string_view, vertex_field_count> keys{};
  for (std::size_t i = 0; i < vertex_field_count; ++i) keys[i] = vertex_fields[i].key;
  return keys;
}();
inline constexpr auto edge_field_keys = [] {
  std::array<std::string_view, std::size(edge_fields)> keys{};
  for (std::size_t i = 0; i < std::size(edge_fields); ++i) keys[i] = edge_fields[i].key;
  return keys;
}();
inline constexpr std::array<std::string_view, 5> graph_document_keys = {"format", "version", "metadata", "vertices",
                                                                        "edges"};

namespace detail {
// a == b for short keys, compared inline: readers look a key up for every field they read, and
// a call to memcmp per candidate key cost more than the comparison.
[[nodiscard]] constexpr bool same_key(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}
}  // namespace detail

// The index of the vertex field named `key`, or vertex_field_count.
[[nodiscard]] constexpr std::size_t find_vertex_field(std::string_view key) noexcept {
  std::size_t i = 0;
  while (i < vertex_field_count && !detail::same_key(vertex_fields[i].key, key)) ++i;
  return i;
}

// The index of the edge field named `key`, or std::size(edge_fields).
[[nodiscard]] constexpr std::size_t find_edge_field(std::string_view key) noexcept {
  std::size_t i = 0;
  while (i < std::size(edge_fields) && !detail::same_key(edge_fields[i].key, key)) ++i;
  return i;
}

// True when field f of vertex v holds its default value (writers leave such fields out unless
// the field is always written).
[[nodiscard]] inline bool at_default(const graph& g, vertex_id v, const vertex_field& f) {
  const vertex_properties& p = g[v];
  switch (f.type) {
    case field_type::name:
    case field_type::text:
      return (p.*f.text).empty();
    case field_type::time:
    case field_type::number:
      return p.*f.real == 0 && (!f.per_kind || g.kind_count() == 0 || g.kind_times(v).empty());
    case field_type::bytes:
      return p.*f.whole == 0;
    case field_type::vertex_reference:
      return g.forward_of(v) == no_vertex;
  }
  return true;
}

// True when field f has the same value on vertex a of g and vertex b of h (per-kind times and
// references compared by name): what a round trip through a file must keep.
[[nodiscard]] inline bool same_field(const graph& g, vertex_id a, const graph& h, vertex_id b, const vertex_field& f) {
  switch (f.type) {
    case field_type::name:
    case field_type::text:
      return g[a].*f.text == h[b].*f.text;
    case field_type::time:
    case field_type::number:
      return g[a].*f.real == h[b].*f.real && (!f.per_kind || g.kind_times(a) == h.kind_times(b));
    case field_type::bytes:
      return g[a].*f.whole == h[b].*f.whole;
    case field_type::vertex_reference: {
      const vertex_id x = g.forward_of(a), y = h.forward_of(b);
      return (x == no_vertex) == (y == no_vertex) && (x == no_vertex || g[x].name == h[y].name);
    }
  }
  return false;
}

}  // namespace gantry
