// The rules of a run of the event loop (sim/event_loop.hpp): which ready vertex an idle device runs
// next, the priority order, caching, drawn durations, a replayed transfer order and whether a
// start waits for memory; and the checks a run makes of its arguments before it starts.
#pragma once

#include <gantry/core/enum_names.hpp>
#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/schedule.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gantry {

// Which ready vertex an idle device runs next.
enum class ready_policy {
  placement_order,  // the ready vertex earliest in the priority order (work-conserving)
  strict_order,     // exactly the priority order per device, waiting for the next one's inputs
  fifo,             // the vertex that became ready first (ties: priority order)
  bottom_level,     // the vertex with the largest bottom level (ties: priority order)
};

inline constexpr enum_name<ready_policy> ready_policy_names[] = {{ready_policy::placement_order, "placement-order"},
                                                                 {ready_policy::strict_order, "strict-order"},
                                                                 {ready_policy::fifo, "fifo"},
                                                                 {ready_policy::bottom_level, "bottom-level"}};
[[nodiscard]] constexpr std::span<const enum_name<ready_policy>> enum_names(ready_policy) noexcept {
  return ready_policy_names;
}
[[nodiscard]] constexpr const char* to_string(ready_policy p) noexcept { return name_of(p); }

// The rules of a run (the executor takes the subset a real run uses: execute_options).
struct simulate_options {
  ready_policy policy = ready_policy::placement_order;
  // The placement order: every vertex once. Empty means Kahn order.
  std::span<const vertex_id> priority = {};
  // Send a tensor to a device at most once and let every consumer there use the copy.
  bool cache_transfers = true;
  // Coefficient of variation of the lognormal factor (mean 1) applied to each duration; 0 keeps the
  // model's durations. Draws come from `seed` and are the same on every platform.
  double cv = 0;
  std::uint64_t seed = 0;
  bool vary_transfers = true;  // with cv > 0, draw transfer durations too
  // With strict_order: the transfers of the schedule being replayed, in the order their channels
  // were reserved (a list scheduler's schedule.transfers is in that order). Each resource of the
  // topology then serves its transfers in this order, so a strict replay of a list scheduler's
  // schedule reproduces it in every communication mode, memory included. A transfer of the replay
  // that is not listed (another cache setting) is served when its resources are free. Empty: every
  // transfer is served by readiness, as in a work-conserving run.
  std::span<const transfer> transfer_order = {};
  // A vertex or transfer whose bytes do not fit on its device now waits until memory is freed
  // (meanwhile the device runs the next ready vertex that fits, and other transfers go ahead); the
  // run fails with out_of_memory only when nothing can go on. A start that fits is held back when it
  // would leave the priority order no room to finish (sim/admission.hpp). false: the first
  // allocation that does not fit ends the run (a runtime without memory-aware dispatch, as Baechi's
  // simulator).
  bool wait_for_memory = true;
};

namespace detail {

// A measured run needs every duration finite and >= 0; a model may say anything.
template <class What>
void check_run_time(const char* who, seconds t, What what, const std::string& where) {
  if (!std::isfinite(t) || t < 0)
    throw invalid_input(std::string(who) + ": " + what() + " " + std::to_string(t) + where +
                        "; a run needs a finite time >= 0");
}

// invalid_input for a placement or priority of the wrong size or with out-of-range entries, a
// negative or non-finite cv, and (`measured`) a compute time that is negative or not finite.
template <placement_model M, class Name>
void check_run_arguments(const char* who_in, const csr_graph& g, const M& model, std::size_t devices,
                         std::span<const device_id> placement, const simulate_options& options, bool measured,
                         Name name) {
  const std::string who(who_in);
  const std::size_t n = g.vertex_count();
  if (placement.size() != n)
    throw invalid_input(who + ": the placement has " + std::to_string(placement.size()) + " entries for " +
                        std::to_string(n) + " vertices");
  for (vertex_id v = 0; v < n; ++v) {
    if (placement[v] >= devices)
      throw invalid_input(who + ": vertex " + name(v) + " is placed on device " + std::to_string(placement[v]) +
                          " but there are " + std::to_string(devices) + " devices");
    if (measured)
      check_run_time(
          who_in, model.compute_time(v, placement[v]), [&] { return "vertex " + name(v) + " has compute time"; },
          " on device " + std::to_string(placement[v]));
  }
  if (!options.priority.empty()) {
    if (options.priority.size() != n)
      throw invalid_input(who + ": the priority order has " + std::to_string(options.priority.size()) +
                          " entries for " + std::to_string(n) + " vertices");
    std::vector<std::uint8_t> seen(n, 0);
    for (const vertex_id v : options.priority) {
      if (v >= n || seen[v])
        throw invalid_input(who + ": the priority order lists vertex " + std::to_string(v) +
                            (v >= n ? " which does not exist" : " twice"));
      seen[v] = 1;
    }
  }
  if (!std::isfinite(options.cv) || options.cv < 0)
    throw invalid_input(who + ": cv must be finite and >= 0, got " + std::to_string(options.cv));
}

}  // namespace detail
}  // namespace gantry
