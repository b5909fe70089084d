// ETF and m-ETF (Baechi §2.3; Hwang, Chow, Anger & Lee 1989): repeatedly place the (ready vertex,
// device) pair that can start earliest (etf_policy, place/etf_policy.hpp); m-ETF skips devices
// whose memory cannot hold the vertex (and its colocation group), counted over time as Baechi's
// simulator does (§4.2) or by the static rule (options.accounting). Options add colocation,
// co-placement, sequential transfers and forward-only placement (Baechi §3.1-3.4).
// O((n + e) · m · log n).
#pragma once

#include <gantry/place/etf_policy.hpp>
#include <gantry/place/list_scheduler.hpp>

#include <string>
#include <utility>

namespace gantry {

using etf_options = list_options;

// ETF. Every list placer takes (graph, model, devices, list_options) and honours every option:
// memory is respected when options.respect_memory is set (m-ETF), as heft(), cpop(), peft(),
// critical_path_schedule() and sct() do, and each has an m_ function that sets it.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result etf(const G& graph, const M& model, const D& devices, etf_options options = {},
                                       etf_tie_break tie_break = etf_tie_break::static_level) {
  return list_schedule(graph, model, devices, etf_policy(options.respect_memory ? "m-ETF" : "ETF", tie_break),
                       std::move(options));
}

// m-ETF: etf() with options.respect_memory set, by default with memory_accounting::dynamic;
// memory_accounting::reserved is Baechi's static rule. When no ready vertex fits on any device the
// result says so, naming the vertex, its need and each device's free memory.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result m_etf(const G& graph, const M& model, const D& devices, etf_options options = {},
                                         etf_tie_break tie_break = etf_tie_break::static_level) {
  options.respect_memory = true;
  return etf(graph, model, devices, std::move(options), tie_break);
}

#if defined(GANTRY_SEPARATE_COMPILATION)
// Compiled once for gantry's own types, in the unit that includes place/instances.hpp.
extern template list_schedule_result etf(const graph&, const graph_model&, const cluster&, etf_options, etf_tie_break);
extern template list_schedule_result m_etf(const graph&, const graph_model&, const cluster&, etf_options,
                                           etf_tie_break);
#endif

}  // namespace gantry
