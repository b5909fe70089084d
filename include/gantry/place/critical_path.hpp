// Critical Path list scheduling, DOPPLER's non-learning baseline (DOPPLER §7; Kwok & Ahmad 1999):
// the ready vertex with the largest bottom level goes first, onto the device where it can start
// earliest. Bottom levels use mean compute and transfer times. O((n + e) · m + n log n).
// Departure from the published baseline: its code selects in FIFO order by mistake; this is the
// intended rule.
#pragma once

#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <string>

namespace gantry {

// Priority: the bottom level (mean costs); device: the earliest start.
struct critical_path_rule {
  static constexpr bool insertion = false;
  template <class View>
  [[nodiscard]] std::vector<seconds> priorities(const View& view) const {
    std::vector<seconds> level(view.vertex_count());
    for (vertex_id v = 0; v < level.size(); ++v) level[v] = view.bottom_level(v);
    return level;
  }
  template <class View>
  [[nodiscard]] device_id device(const View& view, vertex_id v) const {
    return best_device(view, v, [&](device_id d) { return view.earliest_start(v, d); });
  }
};

class critical_path_policy : public priority_list_policy<critical_path_rule> {
 public:
  explicit critical_path_policy(std::string name = "Critical Path") : priority_list_policy(std::move(name)) {}
};

// Named critical_path_schedule because critical_path() (order/levels.hpp) is the path's length.
// Memory is respected when options.respect_memory is set (m-CP).
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result critical_path_schedule(const G& graph, const M& model, const D& devices,
                                                          list_options options = {}) {
  return list_schedule(graph, model, devices,
                       critical_path_policy(options.respect_memory ? "m-Critical Path" : "Critical Path"),
                       std::move(options));
}

// m-Critical Path: critical_path_schedule() with options.respect_memory set, as every m_ function
// of a list placer is.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result m_critical_path_schedule(const G& graph, const M& model, const D& devices,
                                                            list_options options = {}) {
  options.respect_memory = true;
  return critical_path_schedule(graph, model, devices, std::move(options));
}

#if defined(GANTRY_SEPARATE_COMPILATION)
// Compiled once for gantry's own types, in the unit that includes place/instances.hpp.
extern template list_schedule_result critical_path_schedule(const graph&, const graph_model&, const cluster&,
                                                            list_options);
#endif

}  // namespace gantry
