// Forward-backward improvement, or justification (Li & Willis 1992; Valls, Ballestín & Quintanilla
// 2005), for any list schedule: schedule the reversed graph taking vertices in order of decreasing
// finish time (each pushed as late as it can go), then the graph forward taking them in order of
// increasing start time in that backward schedule (each pulled as early as it can go), each vertex
// on the device where it finishes first, with idle-gap insertion; keep the forward schedule while
// it is shorter, and repeat. A pass never reorders what precedence orders, so it closes the idle
// gaps a greedy list scheduler leaves: on STG instances (identical processors, no communication)
// the best of gantry's list placers is 8.6% above the optimum of rand0114 on 4 processors (76
// against 70), and ETF justified 2.9% (72; tests/test_stg.cpp). Each round is two list-scheduling
// runs.
#pragma once

#include <gantry/place/backward.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <string>
#include <utility>
#include <vector>

namespace gantry {

struct justification_options {
  // The forward passes' engine options (memory, groups, transfers); the backward passes ignore
  // memory, which the forward pass after them checks.
  list_options list{};
  unsigned max_rounds = 64;  // a round is one backward and one forward pass
};

struct justification_result {
  list_schedule_result scheduled;  // the shortest forward schedule found (the start when none was shorter)
  unsigned rounds = 0;             // rounds run
  unsigned improvements = 0;       // rounds whose forward schedule was shorter than the best before it
};

// Improves `start` (a schedule of `graph`, e.g. any list placer's) by forward-backward passes until
// a round no longer shortens it or max_rounds ran. The result is never longer than `start`; a
// failed start is returned as it is.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] justification_result justify(const G& graph, const M& model, const D& devices, list_schedule_result start,
                                           justification_options options = {}) {
  justification_result out{std::move(start)};
  if (!out.scheduled.ok()) return out;
  list_options backward = options.list;
  backward.respect_memory = false;
  backward.best_effort = false;
  using rule = detail::given_priority_rule;
  while (out.rounds < options.max_rounds) {
    ++out.rounds;
    // Backward: the vertex that finishes last goes first, from the exits.
    list_schedule_result back = list_schedule(
        reversed_graph<G>{&graph}, reversed_model<M>{&model}, devices,
        priority_list_policy<rule>("justification, backward", rule{out.scheduled.schedule.finish}), backward);
    if (!back.ok()) break;
    // Forward: the vertex that finished last backward starts first.
    list_schedule_result forward = list_schedule(
        graph, model, devices,
        priority_list_policy<rule>("justification, forward", rule{std::move(back.schedule.finish)}), options.list);
    if (!forward.ok() || !(forward.schedule.makespan < out.scheduled.schedule.makespan)) break;
    out.scheduled = std::move(forward);
    ++out.improvements;
  }
  return out;
}

}  // namespace gantry
