// What placers and the simulator return: a placement (a device per vertex), and a schedule
// (start and finish of every vertex, every transfer, and a summary). The memory rules below are
// the single definition shared by the simulator, validate() and the memory-aware placers:
// detail::memory_ledger (schedule/memory_ledger.hpp) counts who still reads each output and copy
// for the list-scheduling engine and the event loop, and detail::memory_events()
// (schedule/memory_profile.hpp) turns a finished schedule into per-device memory events.
//
// Memory held on a device d over a schedule:
//   persistent(v), for v on d: the whole step, [0, makespan];
//   temporary(v), for v on d: [start(v), finish(v));
//   output(v), for v on d: from start(v) until its last consumer on d and its last transfer out of
//     d have finished (at finish(v) when it has neither);
//   a transfer into d: its bytes, from the transfer's start until the last consumer it serves on d
//     has finished.
// Memory is held over half-open intervals, so frees at a time t happen before allocations at t
// and a zero-length hold takes nothing.
// Tensors: the edges out of u that carry the same bytes carry one tensor; edges of different sizes
// carry different tensors (a multi-output operation). A copy is timed with its own edge's bytes.
// With caching, a tensor is sent to a device once and the copy serves every consumer there.
// A cross-device edge u -> v is served by the transfer sent for that edge if there is one, else by
// the earliest-finishing copy of u's tensor (same bytes) on v's device, else by the
// earliest-finishing larger copy of u on that device.
#pragma once

#include <gantry/core/types.hpp>

#include <string>
#include <vector>

namespace gantry {

struct placement {
  gantry::outcome outcome;        // ok, or why it failed: code, vertex, device, bytes and words
  std::vector<device_id> device;  // per vertex; no_device for vertices a failed run did not place
  std::vector<vertex_id> order;   // the order in which the placer placed the vertices
  seconds placement_time = 0;     // wall-clock seconds the placer took, when measured by a caller

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

struct transfer {
  vertex_id tensor = no_vertex;  // the vertex whose output moves
  edge_id edge = no_edge;        // the edge it was sent for (its size and time come from it)
  device_id from = no_device, to = no_device;
  seconds start = 0, finish = 0;
  byte_count bytes = 0;
};

struct schedule {
  std::vector<device_id> device;              // per vertex
  std::vector<seconds> start, finish;         // per vertex
  std::vector<std::vector<vertex_id>> order;  // per device, vertices in start order
  std::vector<transfer> transfers;

  // Summary, filled by summarize() (the simulator and placers call it).
  seconds makespan = 0;
  std::vector<seconds> busy;              // per device: total compute time
  std::vector<byte_count> peak_memory;    // per device
  std::vector<seconds> peak_memory_time;  // per device: when the peak was first reached
  byte_count bytes_moved = 0;

  [[nodiscard]] std::size_t vertex_count() const noexcept { return start.size(); }
  [[nodiscard]] std::size_t device_count() const noexcept { return order.size(); }
};

}  // namespace gantry
