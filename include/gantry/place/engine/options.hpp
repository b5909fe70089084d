// What a list-scheduling run is asked to do and what it returns: list_options (memory, groups,
// co-placement, forward-only placement, fixed devices, best effort) and list_schedule_result.
// The engine that reads them is place/engine/scheduler.hpp.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/schedule/schedule.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gantry {

struct list_schedule_result {
  gantry::placement placement;  // order: vertices by (start, finish, placement step), a topological order
  gantry::schedule schedule;    // complete and summarized when ok; empty after a failure
  bool forward_only = false;    // placed by forward vertices first (Baechi §3.3)
  // When the run did not fit (not ok): the vertices it placed, in the order it placed them, which
  // memory_fallback() replays before handing the rest to m-ETF. Empty otherwise.
  std::vector<vertex_id> steps;
  // Set where memory_fallback() handed the run to m-ETF: how many of the placer's own placements
  // (the first ones) it kept; m-ETF chose the others.
  std::optional<std::size_t> etf_from_step;

  [[nodiscard]] bool ok() const noexcept { return placement.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

// How memory-aware placement counts a device's memory.
enum class memory_accounting {
  // Baechi's static rule: placing v on d takes total_bytes(v) (the whole group's for a group's first
  // member) plus the tensors d receives for it, for the rest of the run.
  reserved,
  // Memory over time by the rules in schedule/schedule.hpp (Baechi §4.2): temporary bytes are freed
  // when the vertex finishes, an output once its consumers and transfers are done, a received copy
  // once the consumers it serves there are done; persistent bytes (a group's, at its first member)
  // are held from time 0. A hold whose consumers are not all placed yet lasts to infinity until
  // they are. v fits on d when its new holds keep d at or below capacity at every time from each
  // hold's start on, so the engine's schedule stays within memory by construction. A vertex that
  // fits nowhere now waits while other vertices can be placed (their placement may free memory);
  // the run fails only when no ready vertex fits anywhere.
  // A colocation group bound to d keeps room there for its members still to come: the most they
  // hold at once, beyond what the group holds already, when they run one after another in Kahn
  // order with each output freed after its last reader (group_reserve()). The room is held from
  // d's end of work on, where those members will run, and shrinks as they are placed.
  dynamic,
};

struct list_options {
  // Memory-aware placement (the "m-" algorithms): fits() says no for a device that cannot hold the vertex.
  bool respect_memory = false;
  // How memory is counted when it is respected.
  memory_accounting accounting = memory_accounting::dynamic;
  // A tensor is sent to a device once; later consumers there use the copy (Baechi's code).
  bool cache_transfers = true;
  // Colocation group per vertex (no_group: alone); empty for none. See place/colocation.hpp.
  std::vector<std::uint32_t> group{};
  // Co-placement (Baechi §3.2): a vertex whose output has exactly one consumer joins its group.
  bool co_place_single_consumer = false;
  // Forward vertex per vertex (no_vertex for forward vertices); empty for none.
  std::vector<vertex_id> forward_of{};
  // Each backward vertex joins its forward vertex's group (Baechi §3.2).
  bool co_place_forward_backward = false;
  // Place forward vertices first; each backward vertex then follows its forward vertex's device
  // (Baechi §3.3). Used when one device could hold the whole graph (or memory is not respected);
  // otherwise every vertex is placed with the pairs co-placed, as Baechi does when memory is short.
  bool forward_only = false;
  // A device per vertex that the vertex (and its group) must use; no_device leaves it free.
  std::vector<device_id> fixed_device{};
  // When no ready vertex fits on any device it may use: false fails the run (status::out_of_memory);
  // true places the first such vertex (Kahn order) on the device it may use with the most free
  // memory and goes on, ending with status::over_capacity and a message naming the first vertex
  // placed so (Celeritas's Adjusting Placement; placers that must return a complete placement).
  bool best_effort = false;
  // When a memory-aware run ends out of memory (memory_fallback()): how many points of
  // capacity_grid below the devices' memory it tries again within, and whether every vertex on one
  // device comes last.
  unsigned memory_retries = 64;
  bool one_device_answer = true;
};

namespace detail {
// Throws invalid_input, naming `who`, for option vectors that are neither empty nor one entry per
// vertex (n), for a vertex fixed to a device out of range (named by quote(v)), and for vertices
// without devices.
template <class Quote>
void check_list_options(const list_options& options, std::size_t n, std::size_t m, std::string_view who_,
                        Quote&& quote) {
  const std::string who(who_);
  const auto size = [&](std::size_t got, const char* what) {
    if (got != 0 && got != n)
      throw invalid_input(who + ": " + what + " has " + std::to_string(got) + " entries for " + std::to_string(n) +
                          " vertices");
  };
  size(options.group.size(), "the group vector");
  size(options.forward_of.size(), "the forward vector");
  size(options.fixed_device.size(), "the fixed-device vector");
  for (vertex_id v = 0; v < options.fixed_device.size(); ++v)
    if (options.fixed_device[v] != no_device && options.fixed_device[v] >= m)
      throw invalid_input(who + ": vertex " + quote(v) + " is fixed to device " +
                          std::to_string(options.fixed_device[v]) + " but there are " + std::to_string(m) + " devices");
  if (n > 0 && m == 0)
    throw invalid_input(who + ": there are no devices to place " + std::to_string(n) + " vertices on");
}

template <class D>
std::string list_device_label(const D& devices, device_id d) {
  if constexpr (requires { devices[d].name; }) {
    if (!devices[d].name.empty()) return devices[d].name;
  }
  return "device " + std::to_string(d);
}
}  // namespace detail

}  // namespace gantry
