// Celeritas's Adjusting Placement (Celeritas §5.2) as a list-scheduling policy: vertices in CPD-TOPO
// order (order/topological.hpp); each stays on the device of the vertex placed before it unless
// it could start there later than on the best device by more than its largest outgoing transfer:
//   est(v, d) = earliest start with insertion (an idle gap long enough after the inputs arrive);
//   d_prev = device of the previous vertex; back_cost = max over v's out-edges of c(v, s), the
//   model's representative transfer time;
//   est(v, d_prev) - min_d est(v, d) > back_cost ? argmin_d est (lowest id on ties) : d_prev.
// A device that v may not use or that cannot hold it counts as est = infinity. A vertex that fits
// nowhere now waits while later ready vertices are placed (their placement may free memory); with
// list_options::best_effort, when nothing fits at all the engine places a vertex on the device
// with the most free memory and reports status::over_capacity. O(m) est queries per vertex.
// Beyond the paper, adjusting_placement_earliest_policy walks the graph as a work-conserving run
// does (see there).
#pragma once

#include <gantry/order/topological.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gantry {

namespace detail {
// Priorities that make ready_by_priority pick the ready vertex earliest in `order` (CPD-TOPO of the
// view's graph when empty). Throws invalid_input when the order is not a permutation of the vertices.
template <class View>
[[nodiscard]] std::vector<seconds> order_priorities(const View& view, const std::vector<vertex_id>& order,
                                                    std::string_view who) {
  const std::size_t n = view.vertex_count();
  const std::vector<vertex_id> computed =
      order.empty() ? cpd_topo_order(view.graph(), view.model(), view.devices()) : std::vector<vertex_id>{};
  const std::vector<vertex_id>& walk = order.empty() ? computed : order;
  if (walk.size() != n)
    throw invalid_input(std::string(who) + ": the order has " + std::to_string(walk.size()) + " entries for " +
                        std::to_string(n) + " vertices");
  std::vector<seconds> priority(n, -1.0);
  for (std::size_t k = 0; k < n; ++k) {
    if (walk[k] >= n || priority[walk[k]] >= 0)
      throw invalid_input(std::string(who) + ": order[" + std::to_string(k) + "] = " + std::to_string(walk[k]) +
                          (walk[k] >= n ? " is not a vertex" : " appears twice"));
    priority[walk[k]] = static_cast<seconds>(n - k);  // earlier in the order: higher priority
  }
  return priority;
}
}  // namespace detail

struct adjusting_placement_rule {
  static constexpr bool insertion = true;
  std::vector<vertex_id> order{};  // the walk; empty: CPD-TOPO of the graph being placed

  template <class View>
  [[nodiscard]] std::vector<seconds> priorities(const View& view) const {
    return detail::order_priorities(view, order, view.name());
  }

  template <class View>
  [[nodiscard]] device_id device(const View& view, vertex_id v) const {
    constexpr seconds never = std::numeric_limits<seconds>::infinity();
    const std::size_t m = view.device_count();
    device_id argmin = no_device;
    seconds least = never;
    const vertex_id previous = view.last_placed();
    const device_id stay = previous == no_vertex ? no_device : view.device_of(previous);
    seconds at_stay = never;
    for (device_id d = 0; d < m; ++d) {
      if (!view.allowed(v, d) || !view.fits(v, d)) continue;
      const seconds est = view.earliest_start(v, d);
      if (est < least) {
        least = est;
        argmin = d;
      }
      if (d == stay) at_stay = est;
    }
    if (argmin == no_device) return no_device;
    if (at_stay == never) return argmin;
    seconds back_cost = 0;
    for (const edge_id e : view.graph().out_edges(v))
      back_cost = std::max(back_cost, static_cast<seconds>(mean_transfer_time(view.model(), e, m)));
    return at_stay - least > back_cost ? argmin : stay;
  }
};

class adjusting_placement_policy : public priority_list_policy<adjusting_placement_rule> {
 public:
  explicit adjusting_placement_policy(std::string name = "Adjusting Placement", std::vector<vertex_id> order = {})
      : priority_list_policy(std::move(name), adjusting_placement_rule{std::move(order)}) {}
};

// Beyond the paper: Adjusting Placement's device rule with the walk a work-conserving run makes.
// The paper's walk follows a fixed order and inserts into idle gaps, a schedule no runtime keeps:
// a device that the plan leaves idle runs whatever is ready, and the vertex planned there waits.
// On gnmt_80 (4 devices of 60% of the one-device peak) the walk's own schedule takes 101 s and its
// work-conserving run 119 s, against m-ETF's 81 s. Here the next vertex v is the one that can start
// earliest on some device (ETF's choice; the policy wraps etf_policy as m-SCT does, ties by static
// level), d_best that device, and the paper's rule decides between d_best and d_k, the device of
// the vertex placed just before v, when that vertex is one of v's inputs (v continues its chain):
//   est(v, d_k) - est(v, d_best) > back_cost ? d_best : d_k,
// back_cost as in the paper. In the paper's CPD-TOPO walk v_{i-1} is mostly v_i's parent; in this
// walk the vertex placed before v is often unrelated to it, and keeping v beside an unrelated vertex
// saves no transfer (GNMT: 6.90 s against 6.42 s with the restriction). Nor is the device of v's
// last input a better d_k: it pulls every consumer of the inputs placed at time 0 to their device
// (DOPPLER's FFNN on 4 devices: 27.9 ms against 7.3 ms). Without such a d_k, or where v may not use
// it or does not fit there, v goes to d_best. No insertion: a work-conserving run of the placement
// keeps to the engine's schedule (exactly, on the five shipped graphs at 60% of the one-device
// peak). O((n + e) · m · log n), as ETF.
class adjusting_placement_earliest_policy {
 public:
  explicit adjusting_placement_earliest_policy(std::string name = "Adjusting Placement (earliest start)")
      : name_(name), walk_(std::move(name)) {}
  [[nodiscard]] std::string_view name() const { return name_; }

  template <class View>
  void start(const View& view) {
    walk_.start(view);
  }
  template <class View>
  void on_ready(const View& view, vertex_id v) {
    walk_.on_ready(view, v);
  }
  // The walk keeps, per device, the best candidate; it learns the device chosen here from this hook.
  template <class View>
  void on_placed(const View& view, vertex_id v, device_id d) {
    walk_.on_placed(view, v, d);
  }

  template <class View>
  [[nodiscard]] std::optional<list_choice> choose(const View& view) {
    const std::optional<list_choice> earliest = walk_.choose(view);
    if (!earliest) return earliest;
    const vertex_id v = earliest->vertex;
    const csr_graph& g = view.graph();
    const vertex_id previous = view.last_placed();
    device_id stay = no_device;
    if (previous != no_vertex)
      for (const vertex_id u : g.predecessors(v))
        if (u == previous) stay = view.device_of(previous);
    if (stay == no_device || stay == earliest->device || !view.allowed(v, stay) || !view.fits(v, stay)) return earliest;
    seconds back_cost = 0;
    for (const edge_id e : g.out_edges(v))
      back_cost = std::max(back_cost, static_cast<seconds>(mean_transfer_time(view.model(), e, view.device_count())));
    const seconds gain = view.earliest_start(v, stay) - view.earliest_start(v, earliest->device);
    return gain > back_cost ? earliest : std::optional<list_choice>(list_choice{v, stay});
  }

 private:
  std::string name_;
  etf_policy walk_;
};

// Adjusting Placement of any graph, walking `order` (empty: CPD-TOPO). Memory counts when
// options.respect_memory is set; set options.best_effort too for Celeritas's rule that a vertex no
// device can hold still goes somewhere (reported as status::over_capacity).
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result adjusting_placement(const G& graph, const M& model, const D& devices,
                                                       list_options options = {}, std::vector<vertex_id> order = {}) {
  return list_schedule(graph, model, devices, adjusting_placement_policy("Adjusting Placement", std::move(order)),
                       std::move(options));
}

// Adjusting Placement with the earliest-start walk (adjusting_placement_earliest_policy); memory
// and best effort as adjusting_placement().
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result adjusting_placement_earliest(const G& graph, const M& model, const D& devices,
                                                                list_options options = {}) {
  return list_schedule(graph, model, devices, adjusting_placement_earliest_policy(), std::move(options));
}

}  // namespace gantry
