// Vocabulary shared by every gantry header: dense ids, units, the status of an algorithm's
// outcome and the exception types for bad input.
#pragma once

#include <gantry/core/enum_names.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace gantry {

// Dense ids. A snapshot numbers vertices 0..n-1 and edges 0..e-1; 32 bits keep the hot arrays
// small (graphs of up to 4 billion vertices and edges).
using vertex_id = std::uint32_t;
using edge_id = std::uint32_t;
using device_id = std::uint32_t;
inline constexpr vertex_id no_vertex = std::numeric_limits<vertex_id>::max();
inline constexpr edge_id no_edge = std::numeric_limits<edge_id>::max();
inline constexpr device_id no_device = std::numeric_limits<device_id>::max();

// Memory is counted in whole bytes so that sums are exact in any order; time is in seconds.
using byte_count = std::uint64_t;
inline constexpr byte_count unlimited_memory = std::numeric_limits<byte_count>::max();
using seconds = double;

namespace detail {
// a + b, or unlimited_memory when the sum does not fit: byte sums never wrap.
[[nodiscard]] constexpr byte_count saturating_add(byte_count a, byte_count b) noexcept {
  return a > unlimited_memory - b ? unlimited_memory : a + b;
}
}  // namespace detail

// Why an algorithm's run failed. Expected failures are answers, not exceptions: a result carries an
// `outcome` (below) with one of these. Broken preconditions (a graph with a cycle where a DAG is
// needed, sizes that do not match) throw invalid_input or not_a_dag; readers throw parse_error.
enum class status {
  ok,
  out_of_memory,  // no device can hold a vertex (or its group)
  over_capacity,  // placed best effort: a vertex went where it does not fit; the message names it
  infeasible,     // an optimisation problem has no solution
  solver_error,   // an external solver failed
};

inline constexpr enum_name<status> status_names[] = {{status::ok, "ok"},
                                                     {status::out_of_memory, "out of memory"},
                                                     {status::over_capacity, "over capacity"},
                                                     {status::infeasible, "infeasible"},
                                                     {status::solver_error, "solver error"}};
[[nodiscard]] constexpr std::span<const enum_name<status>> enum_names(status) noexcept { return status_names; }
[[nodiscard]] constexpr const char* to_string(status s) noexcept { return name_of(s); }

// What an algorithm says of its run: `code` is ok or why it failed, and the fields name what a
// program needs to react (which vertex, which device, when, how many bytes were needed and how many
// were free there); `message` says the same in words for a person. Fields that do not apply keep
// their defaults (no_vertex, no_device, no time, 0 bytes).
struct outcome {
  status code = status::ok;
  vertex_id vertex = no_vertex;
  device_id device = no_device;
  std::optional<seconds> time{};
  byte_count needed = 0;
  byte_count available = 0;
  std::string message{};

  [[nodiscard]] bool ok() const noexcept { return code == status::ok; }
  explicit operator bool() const noexcept { return ok(); }
};

// Bad input from a caller (sizes that do not match, ids out of range, negative times).
class invalid_input : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A graph that must be acyclic has a cycle; what() names vertices on it.
class not_a_dag : public invalid_input {
 public:
  using invalid_input::invalid_input;
};

// Bad input from a file: what() says which file, where in it and what was wrong.
class parse_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file could not be read or written.
class io_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gantry
