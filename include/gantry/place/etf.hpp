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

namespace detail {
// One run of m-ETF within `devices` with ties by static level, and where that runs out of memory,
// the run again with ties in Kahn order (etf_tie_break::kahn_order, the rule of Baechi's code). By
// static level, a vertex on a long path wins every tie with one on a short path, so the long paths
// run ahead layer after layer while a vertex of an early layer (a source whose consumers lead
// nowhere long, say) waits; every tensor read by its descendants is then held until they run, and
// memory fills with them until the waiting vertex fits nowhere. In Kahn order the earlier layers
// go first. Measured on random layered DAGs (100 vertices a layer, two edges out of each, 8
// devices): by static level alone m-ETF ran out of memory with each device holding the whole
// one-device peak (10k vertices); in Kahn order it fitted down to 30% of it, at the unlimited run's
// makespan within 0.01%. The first failure's words stay in the message.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result m_etf_run(const G& graph, const M& model, const D& devices,
                                             const list_options& options) {
  const auto run = [&](etf_tie_break tie_break) {
    list_scheduler<G, M, D, etf_policy> scheduler(graph, model, devices, etf_policy("m-ETF", tie_break), options);
    while (scheduler.step()) {
    }
    return std::move(scheduler).result();
  };
  list_schedule_result first = run(etf_tie_break::static_level);
  const status code = first.placement.outcome.code;
  if (code != status::out_of_memory && code != status::over_capacity) return first;
  list_schedule_result kahn = run(etf_tie_break::kahn_order);
  if (!kahn.ok()) return first;
  kahn.placement.outcome.message = first.placement.outcome.message + "; placed with ties in Kahn order instead";
  return kahn;
}
}  // namespace detail

// ETF. Every list placer takes (graph, model, devices, list_options) and honours every option:
// memory is respected when options.respect_memory is set (m-ETF), as heft(), cpop(), peft(),
// critical_path_schedule() and sct() do, and each has an m_ function that sets it.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result etf(const G& graph, const M& model, const D& devices, etf_options options = {},
                                       etf_tie_break tie_break = etf_tie_break::static_level) {
  if (!options.respect_memory || tie_break != etf_tie_break::static_level)
    return list_schedule(graph, model, devices, etf_policy(options.respect_memory ? "m-ETF" : "ETF", tie_break),
                         std::move(options));
  // m-ETF by static level: each run, the first and those within less memory (memory_fallback()),
  // tries Kahn order where static level runs out of memory (detail::m_etf_run), so that fitting
  // within some memory still means fitting within more. One engine instance for them all.
  const capped_t<D> on = capped(devices);
  list_options strict = options;
  strict.best_effort = false;
  list_schedule_result first = detail::m_etf_run(graph, model, on, options);
  return memory_fallback(
      graph, model, on, std::move(options), std::move(first), "m-ETF",
      [&]<class S>(const S& smaller) { return detail::m_etf_run(graph, model, smaller, strict); },
      etf_hand_off<false, false>{});
}

// m-ETF: etf() with options.respect_memory set, by default with memory_accounting::dynamic;
// memory_accounting::reserved is Baechi's static rule. With static-level ties (the default), a run
// that runs out of memory is made again with ties in Kahn order (detail::m_etf_run above). When no
// ready vertex fits on any device the result says so, naming the vertex, its need and each
// device's free memory.
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
