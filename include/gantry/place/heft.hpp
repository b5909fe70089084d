// HEFT, Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, IEEE TPDS 2002): vertices by
// decreasing upward rank (mean compute time plus the longest mean-cost path to an exit), each on
// the device where it finishes earliest, inserted into an idle gap when one is long enough.
// Device speeds and per-kind times make compute times differ per device. O((n + e) · m + n log n)
// plus the gap search.
#pragma once

#include <gantry/order/levels.hpp>
#include <gantry/place/list_scheduler.hpp>

namespace gantry {

// rank_u(v) = mean p(v) + max over successors s of (mean c(v, s) + rank_u(s)): the bottom level.
template <adapted_graph G, cost_model M, device_set D>
[[nodiscard]] std::vector<seconds> upward_rank(const G& graph, const M& model, const D& devices) {
  return bottom_level(graph, model, devices);
}

// Among ready vertices, so equal ranks (zero-time vertices) still respect precedence.
[[nodiscard]] inline list_policy heft_policy(std::vector<seconds> upward_ranks) {
  return {.name = "HEFT",
          .selection = vertex_selection::highest_priority,
          .device = device_selection::earliest_finish,
          .insertion = true,
          .priority = std::move(upward_ranks)};
}

// Memory is respected when options.respect_memory is set.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result heft(const G& graph, const M& model, const D& devices, list_options options = {}) {
  return list_schedule(graph, model, devices, heft_policy(upward_rank(graph, model, devices)), std::move(options));
}

}  // namespace gantry
