// SCT and m-SCT (Baechi §2.4; Hanen & Munier 1995): ETF guided by favorite children from an LP
// relaxation (place/sct_lp.hpp). sct_policy is a policy of the list-scheduling engine
// (place/list_policy.hpp) over ETF's: when ETF would give device d a vertex while the favorite
// child of the vertex d ran last is ready and d is where that child's inputs arrive first, d takes
// the favorite child instead, unless ETF's vertex is urgent (its inputs could be on every device it
// may use by the time it would start). m-SCT also takes a device out of further placements once it
// ran out of memory for a vertex that would have started there first (Baechi's code).
// sct_options::dispatch = sct_dispatch::time_driven runs the same favorites as Baechi's code
// dispatches them instead, with a clock and devices that wait (place/sct_time_driven.hpp).
#pragma once

#include <gantry/lp/glpk.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/sct_lp.hpp>
#include <gantry/place/sct_time_driven.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

// The SCT policy: ETF with favorite-child preference. Reports, through full_devices(), each device
// on which a vertex did not fit although it would have started there earlier than where it went;
// m_sct() excludes those from the engine (list_scheduler::exclude) as they are reported.
class sct_policy {
 public:
  // favorite_child: per vertex, its favorite child or no_vertex (favorite_children::child);
  // tie_break: how the ETF choice underneath breaks ties (sct_options::tie_break).
  explicit sct_policy(std::vector<vertex_id> favorite_child, std::string name = "SCT",
                      etf_tie_break tie_break = etf_tie_break::static_level)
      : favorite_(std::move(favorite_child)), name_(std::move(name)), etf_(name_, tie_break) {}

  [[nodiscard]] std::string_view name() const { return name_; }
  // Devices found out of memory so far, in the order found (a device may repeat).
  [[nodiscard]] const std::vector<device_id>& full_devices() const noexcept { return full_; }
  // Placements in which a favorite child displaced ETF's choice.
  [[nodiscard]] std::size_t favorite_placements() const noexcept { return preferred_; }

  template <class View>
  void start(const View& view) {
    detail::check_favorites(view, favorite_, name_);
    etf_.start(view);
    excluded_seen_.assign(view.device_count(), 0);
    full_.clear();
    preferred_ = 0;
  }
  template <class View>
  void on_ready(const View& view, vertex_id v) {
    etf_.on_ready(view, v);
  }
  template <class View>
  void on_placed(const View& view, vertex_id v, device_id d) {
    etf_.on_placed(view, v, d);
  }

  template <class View>
  [[nodiscard]] std::optional<list_choice> choose(const View& view) {
    refresh_after_exclusion(view);
    std::optional<list_choice> choice = etf_.choose(view);
    if (!choice) return std::nullopt;
    const device_id d = choice->device;
    const vertex_id last = view.last_on(d);
    const vertex_id favorite = last == no_vertex ? no_vertex : favorite_[last];
    if (favorite != no_vertex && favorite != choice->vertex && view.is_ready(favorite) && view.allowed(favorite, d) &&
        view.fits(favorite, d) && first_host(view, favorite) == d &&
        !urgent(view, choice->vertex, view.earliest_start_appended(choice->vertex, d))) {
      choice->vertex = favorite;
      ++preferred_;
    }
    if (view.options().respect_memory) detail::note_full_devices(view, *choice, full_);
    return choice;
  }

 private:
  // The device (lowest id among equals) where v's inputs would be first, of those it may use and fits on.
  template <class View>
  [[nodiscard]] device_id first_host(const View& view, vertex_id v) const {
    device_id best = no_device;
    seconds best_ready = 0;
    for (device_id d = 0; d < view.device_count(); ++d) {
      if (!view.allowed(v, d) || !view.fits(v, d)) continue;
      const seconds ready = view.data_ready(v, d);
      if (best == no_device || ready < best_ready) {
        best = d;
        best_ready = ready;
      }
    }
    return best;
  }
  // Whether v's inputs could be on every device it may use (and fits on) by `when`.
  template <class View>
  [[nodiscard]] bool urgent(const View& view, vertex_id v, seconds when) const {
    for (device_id d = 0; d < view.device_count(); ++d)
      if (view.allowed(v, d) && view.fits(v, d) && view.data_ready(v, d) > when) return false;
    return true;
  }
  // A device excluded since the last call: ETF's cached candidates may name it, so ETF starts
  // again from the current ready set (at most once per device).
  template <class View>
  void refresh_after_exclusion(const View& view) {
    bool changed = false;
    for (device_id d = 0; d < view.device_count(); ++d) {
      const std::uint8_t now = view.excluded(d) ? 1 : 0;
      changed = changed || now != excluded_seen_[d];
      excluded_seen_[d] = now;
    }
    if (!changed) return;
    etf_.start(view);
    for (const vertex_id v : view.ready()) etf_.on_ready(view, v);
  }

  std::vector<vertex_id> favorite_;
  std::string name_;
  etf_policy etf_;
  std::vector<std::uint8_t> excluded_seen_;
  std::vector<device_id> full_;
  std::size_t preferred_ = 0;
};

// How SCT's rule is run: on an ETF list scheduler (sct_policy) or as Baechi's time-driven placer
// (sct_time_driven_policy, place/sct_time_driven.hpp).
enum class sct_dispatch {
  // ETF picks (vertex, device) by earliest start and a favorite child may take ETF's place; no
  // device ever waits. The default: the shorter schedules under gantry's judges (docs/algorithms.md).
  list,
  // Baechi's m_sct: a clock, vertices ready once their inputs finish, devices that wait for their
  // favorite child unless an urgent vertex comes; ties in Kahn order (tie_break is not read).
  time_driven,
};

struct sct_options {
  list_options list{};  // the engine's options; sct() and m_sct() set respect_memory
  favorite_child_options favorites{};
  // m-SCT: a device found out of memory takes no further vertices (except its bound groups) while
  // another device can hold the next vertex; the last device still open is never excluded, and
  // when nothing fits on the open ones, every excluded device is open again (sct_result::reopened),
  // so exclusion alone never fails a run.
  bool exclude_full_devices = true;
  // Which vertex the ETF choice underneath takes among those that start equally early: by default
  // as m_etf() does (static level), so that m-SCT and m-ETF differ only by the favorites;
  // kahn_order is Baechi's code (its ready list in Kahn order). Kahn ties suit a judge that runs
  // each device's vertices first come, first served (ready_policy::fifo, as Baechi's simulator
  // does) and static-level ties one that keeps the placement's order: see docs/algorithms.md.
  etf_tie_break tie_break = etf_tie_break::static_level;
  sct_dispatch dispatch = sct_dispatch::list;
};

struct sct_result {
  gantry::outcome outcome;          // ok, the LP's failure, or the engine's (naming the vertex)
  list_schedule_result scheduled;   // placement and schedule, as every list scheduler returns them
  favorite_children favorites;      // the favorites and how the LP was solved
  std::vector<device_id> excluded;  // devices m-SCT excluded, in order (again after a reopening)
  std::size_t favorite_placements = 0;
  // How often every excluded device was opened again because the next vertex fitted on none of
  // the others (list_scheduler::exclude): m-SCT then chooses as m-ETF does, and excludes anew.
  std::size_t reopened = 0;

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
};

namespace detail {
template <adapted_graph G, placement_model M, device_set D, lp_backend B>
sct_result run_sct(const G& graph, const M& model, const D& devices, sct_options options, const B& backend,
                   std::string name) {
  sct_result out;
  const csr_view<G> view(graph);
  out.favorites = solve_favorite_children(*view, model, devices.device_count(), backend, options.favorites);
  if (!out.favorites.ok()) {
    out.outcome = out.favorites.outcome;
    out.outcome.message = name + ": " + out.outcome.message;
    out.scheduled.placement.outcome = out.outcome;
    return out;
  }
  const bool exclude = options.list.respect_memory && options.exclude_full_devices;
  std::size_t favorite_placements = 0, reopened = 0;
  // One run of `policy` on any device set (memory_fallback() runs it again within less memory).
  const auto run_policy = [&]<class P, class S>(P policy, const S& on, list_options list,
                                                std::vector<device_id>* excluded) {
    list_scheduler<G, M, S, P> scheduler(graph, model, on, std::move(policy), std::move(list));
    std::size_t reported = 0;
    while (scheduler.step()) {
      const auto& full = scheduler.policy().full_devices();
      for (; exclude && reported < full.size(); ++reported) {
        std::size_t open = 0;
        for (device_id d = 0; d < on.device_count(); ++d) open += scheduler.excluded(d) ? 0 : 1;
        if (!scheduler.excluded(full[reported]) && open > 1) {
          scheduler.exclude(full[reported]);
          if (excluded) excluded->push_back(full[reported]);
        }
      }
    }
    favorite_placements = scheduler.policy().favorite_placements();
    reopened = scheduler.reopened();
    return std::move(scheduler).result();
  };
  const auto run = [&]<class S>(const S& on, list_options list, std::vector<device_id>* excluded) {
    if (options.dispatch == sct_dispatch::time_driven)
      return run_policy(sct_time_driven_policy(out.favorites.child, name), on, std::move(list), excluded);
    return run_policy(sct_policy(out.favorites.child, name, options.tie_break), on, std::move(list), excluded);
  };
  list_options strict = options.list;
  strict.best_effort = false;
  const capped_t<D> on = capped(devices);  // the first run as its retries run: one instance
  out.scheduled = memory_fallback(graph, model, on, options.list, run(on, options.list, &out.excluded), name,
                                  [&](const auto& smaller) { return run(smaller, strict, nullptr); });
  out.favorite_placements = favorite_placements;
  out.reopened = reopened;
  out.outcome = out.scheduled.placement.outcome;
  return out;
}
}  // namespace detail

// SCT; within device memory (m-SCT, below) when options.list.respect_memory is set, as every list
// placer honours it (place/etf.hpp). Its options hold the list scheduler's (`list`) beside the
// LP's. The LP is solved by `backend` (GLPK's dual simplex by default).
template <adapted_graph G, placement_model M, device_set D, lp_backend B = glpk_backend>
[[nodiscard]] sct_result sct(const G& graph, const M& model, const D& devices, sct_options options = {},
                             const B& backend = {}) {
  const char* name = options.list.respect_memory ? "m-SCT" : "SCT";
  return detail::run_sct(graph, model, devices, std::move(options), backend, name);
}

// m-SCT: sct() with options.list.respect_memory set: SCT within device memory, excluding devices
// that ran out of memory. When no ready vertex fits anywhere the result says so, naming the
// vertex; with options.list.best_effort it places it where most memory is free and goes on.
template <adapted_graph G, placement_model M, device_set D, lp_backend B = glpk_backend>
[[nodiscard]] sct_result m_sct(const G& graph, const M& model, const D& devices, sct_options options = {},
                               const B& backend = {}) {
  options.list.respect_memory = true;
  return sct(graph, model, devices, std::move(options), backend);
}

}  // namespace gantry
