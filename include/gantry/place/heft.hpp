// HEFT, Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, IEEE TPDS 2002): vertices by
// decreasing upward rank (mean compute time plus the longest mean-cost path to an exit), each on
// the device where it finishes earliest, inserted into an idle gap when one is long enough.
// Device speeds and per-kind times make compute times differ per device. O((n + e) · m + n log n)
// plus the gap search.
#pragma once

#include <gantry/order/levels.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <string>

namespace gantry {

// rank_u(v) = mean p(v) + max over successors s of (mean c(v, s) + rank_u(s)): the bottom level.
template <adapted_graph G, cost_model M, device_set D>
[[nodiscard]] std::vector<seconds> upward_rank(const G& graph, const M& model, const D& devices) {
  return bottom_level(graph, model, devices);
}

// Priority: the upward rank; device: the earliest finish, inserted into an idle gap when one is
// long enough. Among ready vertices, so equal ranks (zero-time vertices) still respect precedence.
struct heft_rule {
  static constexpr bool insertion = true;
  template <class View>
  [[nodiscard]] std::vector<seconds> priorities(const View& view) const {
    std::vector<seconds> rank(view.vertex_count());
    for (vertex_id v = 0; v < rank.size(); ++v) rank[v] = view.bottom_level(v);
    return rank;
  }
  template <class View>
  [[nodiscard]] device_id device(const View& view, vertex_id v) const {
    return best_device(view, v, [&](device_id d) { return view.earliest_finish(v, d); });
  }
};

class heft_policy : public priority_list_policy<heft_rule> {
 public:
  explicit heft_policy(std::string name = "HEFT") : priority_list_policy(std::move(name)) {}
};

// Memory is respected when options.respect_memory is set (m-HEFT).
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result heft(const G& graph, const M& model, const D& devices, list_options options = {}) {
  return list_schedule(graph, model, devices, heft_policy(options.respect_memory ? "m-HEFT" : "HEFT"),
                       std::move(options));
}

// m-HEFT: heft() with options.respect_memory set, as every m_ function of a list placer is.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result m_heft(const G& graph, const M& model, const D& devices, list_options options = {}) {
  options.respect_memory = true;
  return heft(graph, model, devices, std::move(options));
}

#if defined(GANTRY_SEPARATE_COMPILATION)
// Compiled once for gantry's own types, in the unit that includes place/instances.hpp.
extern template list_schedule_result heft(const graph&, const graph_model&, const cluster&, list_options);
#endif

}  // namespace gantry
