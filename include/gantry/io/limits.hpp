// What every reader checks so that adversarial input fails with a message instead of a crash, a
// hang or a wrong answer: read_limits (nesting depth, inflated size of gzip data), names that are
// valid UTF-8, and byte counts that add up without overflow.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace gantry {

struct read_limits {
  // Arrays and objects (JSON) or subgraphs (DOT) inside each other. gantry's own files need 5;
  // the limit keeps recursive code, ours and nlohmann's, far from the end of the stack.
  std::size_t max_nesting = 256;
  // gzip data that inflates to more is refused before it is parsed (a 1 MB file can inflate to
  // 1 GiB). 512 MiB holds a graph of a few million vertices.
  std::size_t max_inflated_bytes = std::size_t{512} << 20;
};

// The bytes of a graph (every vertex's persistent, output and temporary bytes plus every edge's
// bytes) must add up to less than this, so that sums such as m-TOPO's cap (total / m + largest)
// and a device's peak memory stay below 2^64.
inline constexpr byte_count max_graph_bytes = byte_count{1} << 63;

namespace detail {

// The offset of the first byte that does not belong to well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or npos when all of it does.
[[nodiscard]] inline std::size_t invalid_utf8_offset(std::string_view text) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) length = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    if (byte(i + 1) < low || byte(i + 1) > high) return i;
    for (std::size_t k = 2; k < length; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    i += length;
  }
  return std::string_view::npos;
}

// "" when text is valid UTF-8, else why not: "byte 0xFF at offset 3 is not valid UTF-8".
[[nodiscard]] inline std::string utf8_problem(std::string_view text) {
  const std::size_t at = invalid_utf8_offset(text);
  if (at == std::string_view::npos) return {};
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[at])));
  return "byte " + std::string(hex) + " at offset " + std::to_string(at) + " is not valid UTF-8";
}

// Where the bytes of g first reach max_graph_bytes: a vertex (vertices are counted first) or an
// edge; nullopt when they stay below.
struct byte_overflow {
  bool at_vertex = true;
  std::size_t index = 0;
};
[[nodiscard]] inline std::optional<byte_overflow> find_byte_overflow(const graph& g) {
  byte_count total = 0;
  // Each term is checked before it is added, so the running total never wraps.
  const auto add = [&](byte_count bytes) {
    if (bytes >= max_graph_bytes - total) return false;
    total += bytes;
    return true;
  };
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (!add(g[v].persistent) || !add(g[v].output) || !add(g[v].temporary)) return byte_overflow{true, v};
  for (edge_id e = 0; e < g.edge_count(); ++e)
    if (!add(g.bytes(e))) return byte_overflow{false, e};
  return std::nullopt;
}

inline std::string byte_overflow_reason() {
  return "the graph's byte counts (persistent, output and temporary bytes of every vertex, bytes of every edge) "
         "add up to 2^63 bytes (8 EiB) or more, which gantry's memory sums cannot hold";
}

}  // namespace detail
}  // namespace gantry
