// ETF and m-ETF (Baechi §2.3; Hwang, Chow, Anger & Lee 1989): repeatedly place the (ready vertex,
// device) pair that can start earliest; m-ETF skips devices whose memory cannot hold the vertex
// (and its colocation group), counted over time as Baechi's simulator does (§4.2) or by the static
// rule (options.accounting). Options add colocation, co-placement, sequential transfers and
// forward-only placement (Baechi §3.1-3.4). O((n + e) · m · log n).
#pragma once

#include <gantry/place/list_scheduler.hpp>

namespace gantry {

using etf_options = list_options;

// Earliest schedulable time of v on d: max(when d is free, when every input can be on d).
// Ties: earliest time, then Kahn order of the vertex, then lowest device id.
[[nodiscard]] inline list_policy etf_policy(bool memory_aware = false) {
  return {.name = memory_aware ? "m-ETF" : "ETF",
          .selection = vertex_selection::earliest_start_pair,
          .device = device_selection::earliest_start,
          .insertion = false,
          .priority = {}};
}

// ETF ignores memory (options.respect_memory is treated as false).
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result etf(const G& graph, const M& model, const D& devices, etf_options options = {}) {
  options.respect_memory = false;
  return list_schedule(graph, model, devices, etf_policy(false), std::move(options));
}

// m-ETF: ETF within device memory (options.respect_memory is treated as true), by default with
// memory_accounting::dynamic; memory_accounting::reserved is Baechi's static rule. When no ready
// vertex fits on any device the result says so, naming the vertex, its need and each device's
// free memory.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result m_etf(const G& graph, const M& model, const D& devices, etf_options options = {}) {
  options.respect_memory = true;
  return list_schedule(graph, model, devices, etf_policy(true), std::move(options));
}

}  // namespace gantry
