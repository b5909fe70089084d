// The executor: runs a placement for real on a backend (exec/cpu_backend.hpp, or a GPU one) and
// records what happened as a gantry::schedule, so that a measured run is checked by validate() and
// drawn by the same Chrome trace and SVG writers as a simulated one (DOPPLER Appendix H's runtime).
// It is the simulator's event loop (sim/event_loop.hpp) over a measured backend, so it follows the
// simulator's rules decision for decision: the same ready-vertex policy, one vertex at a time per
// device, transfers over the resources of the cluster's topology (model/topology.hpp), tensors sent
// once per device and cached, memory held and freed as in schedule/schedule.hpp, a start that does
// not fit waiting for memory, and no device or channel left idle while work it could start is
// ready. Only the times differ: they are measured. The backend concept (execution_backend) and
// what it is asked to run (vertex_launch, copy_launch, completion) are the loop's.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/sim/event_loop.hpp>
#include <gantry/sim/simulator.hpp>

#include <functional>
#include <span>
#include <string>

namespace gantry {

struct execute_options {
  ready_policy policy = ready_policy::placement_order;
  std::span<const vertex_id> priority = {};  // every vertex once; empty: Kahn order
  bool cache_transfers = true;               // send a tensor to a device once
  bool wait_for_memory = true;               // as simulate_options::wait_for_memory
};

// The options of a simulation that an execution should share, so both follow one rule set.
[[nodiscard]] inline execute_options execute_options_from(const simulate_options& o) {
  return {.policy = o.policy,
          .priority = o.priority,
          .cache_transfers = o.cache_transfers,
          .wait_for_memory = o.wait_for_memory};
}

struct execution_result {
  // ok, or out_of_memory with the device, the time, the vertex, the bytes needed and free.
  gantry::outcome outcome;
  gantry::schedule schedule;  // measured; complete when ok, what ran until the failure otherwise
  // Time the executor spent deciding and launching (not waiting), in seconds: its overhead. Wall
  // time between a wake-up and the next wait; and the CPU time its thread used over the whole run,
  // which leaves out time it was preempted and adds what waiting itself costs (the system calls).
  seconds host_seconds = 0;
  seconds host_cpu_seconds = 0;

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

// The executor as a class, to step through a run completion by completion:
//   executor ex(g, model, devices, placement, backend, options); while (ex.step()) watch(ex);
// init(), step(), run(), done(), finished_count(), in_flight(), memory_in_use(d) and result() are
// the loop's; a failed run ends once what was launched has finished. Holds references to its
// arguments: they must outlive it.
template <placement_model M, device_set D, execution_backend B>
class executor : public event_loop<M, D, B, execution_result> {
 public:
  executor(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement, B& backend,
           execute_options options = {}, std::function<std::string(vertex_id)> names = {})
      : event_loop<M, D, B, execution_result>(g, model, devices, placement, backend,
                                              {.policy = options.policy,
                                               .priority = options.priority,
                                               .cache_transfers = options.cache_transfers,
                                               .wait_for_memory = options.wait_for_memory},
                                              "execute", std::move(names)) {}
};

// Runs `placement` of g on `backend`. Bad arguments throw invalid_input (a cycle: not_a_dag);
// running out of memory is the result's outcome.
template <adapted_graph G, placement_model M, device_set D, execution_backend B>
[[nodiscard]] execution_result execute(const G& graph, const M& model, const D& devices,
                                       std::span<const device_id> placement, B& backend, execute_options options = {}) {
  const detail::csr_view<G> g(graph);
  if (const auto cycle = g->find_cycle(); !cycle.empty())
    throw not_a_dag("execute: the graph has a cycle: " + describe_cycle(graph, cycle));
  executor<M, D, B> ex(*g, model, devices, placement, backend, options,
                       [&graph](vertex_id v) { return quoted_vertex_name(graph, v); });
  return std::move(ex.run());
}

}  // namespace gantry
