// PEFT, Predict Earliest Finish Time (Arabnejad & Barbosa, IEEE TPDS 2014): an optimistic cost
// table OCT(v, d), the shortest remaining path to an exit if v runs on d and every later vertex on
// its best device, ranks vertices (mean over devices of OCT) and looks one step ahead when choosing
// the device: v goes where eft(v, d) + OCT(v, d) is smallest, with insertion.
// OCT costs O(e · m) (the inner minimum over devices is the smaller of staying and the best
// anywhere plus the mean transfer); scheduling O((n + e) · m + n log n) plus the gap search.
#pragma once

#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/ready_by_priority.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace gantry {

// OCT(v, d) = max over successors s of min over d' of [OCT(s, d') + p(s, d') + (d' != d ? mean c(v, s) : 0)],
// 0 at exits. Row-major: n rows of m entries.
template <cost_model M>
[[nodiscard]] std::vector<seconds> optimistic_cost_table(const csr_graph& g, std::span<const vertex_id> topological,
                                                         const M& model, std::size_t m) {
  const std::size_t n = g.vertex_count();
  std::vector<seconds> oct(n * m, 0), through(m);
  for (auto it = topological.rbegin(); it != topological.rend(); ++it) {
    const vertex_id v = *it;
    const auto succ = g.successors(v);
    const auto out = g.out_edges(v);
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const vertex_id s = succ[i];
      seconds best_anywhere = std::numeric_limits<seconds>::infinity();
      for (device_id d = 0; d < m; ++d) {
        through[d] = oct[s * m + d] + model.compute_time(s, d);
        best_anywhere = std::min(best_anywhere, through[d]);
      }
      const seconds moved = best_anywhere + mean_transfer_time(model, out[i], m);
      for (device_id d = 0; d < m; ++d) oct[v * m + d] = std::max(oct[v * m + d], std::min(through[d], moved));
    }
  }
  return oct;
}

struct peft_rule {
  static constexpr bool insertion = true;

  template <class View>
  [[nodiscard]] std::vector<seconds> priorities(const View& view) {
    const std::size_t n = view.vertex_count();
    m = view.device_count();
    std::vector<vertex_id> order(n);
    for (vertex_id v = 0; v < n; ++v) order[view.kahn_rank(v)] = v;
    table = optimistic_cost_table(view.graph(), order, view.model(), m);
    std::vector<seconds> rank(n, 0);  // mean over devices of OCT
    for (vertex_id v = 0; v < n; ++v) {
      for (device_id d = 0; d < m; ++d) rank[v] += oct(v, d);
      rank[v] /= static_cast<double>(std::max<std::size_t>(m, 1));
    }
    return rank;
  }
  template <class View>
  [[nodiscard]] device_id device(const View& view, vertex_id v) const {
    return best_device(view, v, [&](device_id d) { return view.earliest_finish(v, d) + oct(v, d); });
  }

  [[nodiscard]] seconds oct(vertex_id v, device_id d) const { return table[v * m + d]; }

  std::size_t m = 0;
  std::vector<seconds> table;  // OCT, row-major, after priorities()
};

class peft_policy : public priority_list_policy<peft_rule> {
 public:
  explicit peft_policy(std::string name = "PEFT") : priority_list_policy(std::move(name)) {}
};

// Memory is respected when options.respect_memory is set.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result peft(const G& graph, const M& model, const D& devices, list_options options = {}) {
  return list_schedule(graph, model, devices, peft_policy(options.respect_memory ? "m-PEFT" : "PEFT"),
                       std::move(options));
}

// m-PEFT: peft() with options.respect_memory set, as every m_ function of a list placer is.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result m_peft(const G& graph, const M& model, const D& devices, list_options options = {}) {
  options.respect_memory = true;
  return peft(graph, model, devices, std::move(options));
}

#if defined(GANTRY_SEPARATE_COMPILATION)
// Compiled once for gantry's own types, in the unit that includes place/instances.hpp.
extern template list_schedule_result peft(const graph&, const graph_model&, const cluster&, list_options);
#endif

}  // namespace gantry
