// Backward list scheduling: any list policy run on the reversed graph (every edge turned round,
// every copy timed from the consumer's device to the producer's), then replayed forward. Read from
// its end back to time 0, the backward schedule is a schedule of the graph; the forward replay
// keeps its devices and takes the vertices in mirrored order, so none starts later than in the
// mirror and, with symmetric links, the makespan is at most the backward run's. Scheduling from
// the exits sees the graph's other end first: on STG-like graphs (identical processors, no
// communication) the best of forward and backward runs has under half the gap to the optimum of
// the forward runs alone (tests/test_stg.cpp). Memory is checked by the forward replay only.
#pragma once

#include <gantry/graph/adaptor.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <concepts>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

// G with every edge turned round; edge ids are G's.
template <adapted_graph G>
struct reversed_graph {
  const G* graph;
};

template <adapted_graph G>
struct graph_adaptor<reversed_graph<G>> {
  using base = graph_adaptor<G>;
  static std::size_t vertex_count(const reversed_graph<G>& r) { return base::vertex_count(*r.graph); }
  static std::size_t edge_count(const reversed_graph<G>& r) {
    if constexpr (adapted_graph_with_edge_ids<G>) {
      return base::edge_count(*r.graph);
    } else {
      std::size_t count = 0;
      base::for_each_edge(*r.graph, [&](std::size_t, std::size_t) { ++count; });
      return count;
    }
  }
  template <class F>
  static void for_each_edge(const reversed_graph<G>& r, F&& f) {
    if constexpr (adapted_graph_with_edge_ids<G>) {
      base::for_each_edge(*r.graph, [&](std::size_t s, std::size_t t, std::size_t e) { f(t, s, e); });
    } else {
      std::size_t e = 0;  // the ids an adaptor without its own gets: visiting order
      base::for_each_edge(*r.graph, [&](std::size_t s, std::size_t t) { f(t, s, e++); });
    }
  }
  static std::string vertex_name(const reversed_graph<G>& r, std::size_t v) { return gantry::vertex_name(*r.graph, v); }
};

// M's costs for the reversed graph: a copy along edge e goes from `to` to `from`.
template <placement_model M>
struct reversed_model {
  const M* model;
  [[nodiscard]] seconds compute_time(vertex_id v, device_id d) const { return model->compute_time(v, d); }
  [[nodiscard]] seconds transfer_time(edge_id e, device_id from, device_id to) const {
    return model->transfer_time(e, to, from);
  }
  [[nodiscard]] seconds mean_compute_time(vertex_id v) const requires requires(const M& m) {
    { m.mean_compute_time(v) } -> std::convertible_to<seconds>;
  }
  { return model->mean_compute_time(v); }
  [[nodiscard]] seconds mean_transfer_time(edge_id e) const requires requires(const M& m) {
    { m.mean_transfer_time(e) } -> std::convertible_to<seconds>;
  }
  { return model->mean_transfer_time(e); }
  [[nodiscard]] byte_count persistent_bytes(vertex_id v) const { return model->persistent_bytes(v); }
  [[nodiscard]] byte_count output_bytes(vertex_id v) const { return model->output_bytes(v); }
  [[nodiscard]] byte_count temporary_bytes(vertex_id v) const { return model->temporary_bytes(v); }
  [[nodiscard]] byte_count edge_bytes(edge_id e) const { return model->edge_bytes(e); }
};

namespace detail {
// Vertices by a priority given up front (larger first), each on the device where it finishes first,
// inserted into an idle gap when one is long enough. The forward replay gives the backward run's
// finish times, with every vertex's device fixed, so the one that finished last backward goes first.
struct given_priority_rule {
  static constexpr bool insertion = true;
  std::vector<seconds> priority;
  template <class View>
  [[nodiscard]] std::vector<seconds> priorities(const View&) const {
    return priority;
  }
  template <class View>
  [[nodiscard]] device_id device(const View& view, vertex_id v) const {
    return best_device(view, v, [&](device_id d) { return view.earliest_finish(v, d); });
  }
};
}  // namespace detail

// Runs `policy` on the reversed graph (memory ignored there), then replays its placement forward
// with `options` (memory respected there when options.respect_memory is set). A failed backward
// run is returned as it is.
template <adapted_graph G, placement_model M, device_set D, class Policy>
[[nodiscard]] list_schedule_result backward_list_schedule(const G& graph, const M& model, const D& devices,
                                                          Policy policy, list_options options = {}) {
  const std::string name = "backward " + std::string(detail::policy_name(policy));
  list_options backward = options;
  backward.respect_memory = false;
  backward.best_effort = false;
  list_schedule_result back = list_schedule(reversed_graph<G>{&graph}, reversed_model<M>{&model}, devices,
                                            std::move(policy), std::move(backward));
  if (!back.ok()) return back;
  options.fixed_device = std::move(back.placement.device);
  return list_schedule(graph, model, devices,
                       priority_list_policy<detail::given_priority_rule>(
                           name, detail::given_priority_rule{std::move(back.schedule.finish)}),
                       std::move(options));
}

}  // namespace gantry
