// List scheduling, the one-call form: list_schedule() runs a policy (place/list_policy.hpp) on the
// engine (place/engine/scheduler.hpp, list_scheduler, which this header also gives) to the end and,
// when a memory-aware run ends out of memory, tries again within less memory per device and at
// last on one device (memory_fallback()), so that a memory-aware placer fails only where one device
// cannot run the graph either.
#pragma once

#include <gantry/model/capacity_scaled.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/engine/scheduler.hpp>
#include <gantry/place/etf_policy.hpp>
#include <gantry/place/kahn_one_device.hpp>
#include <gantry/schedule/memory_profile.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace gantry {

namespace detail {
// Below this capacity per device nothing fits: some device holds the largest vertex (persistent,
// output and temporary bytes) while it runs, and the persistent bytes are held somewhere from the
// start. O(n).
template <adapted_graph G, placement_model M>
[[nodiscard]] byte_count least_capacity(const G& graph, const M& model, std::size_t devices) {
  byte_count least = 0, persistent = 0;
  const std::size_t n = csr_view<G>(graph)->vertex_count();
  for (vertex_id v = 0; v < n; ++v) {
    least = std::max(least, total_bytes(model, v));
    persistent = saturating_add(persistent, static_cast<byte_count>(model.persistent_bytes(v)));
  }
  return devices == 0 ? least : std::max(least, persistent / devices);
}

// Calls try_on(view, cap) with `devices` capped at each point of capacity_grid below the largest
// finite capacity, downwards, until it returns true (then true) or the point is below `least` or
// `retries` points were tried (then false).
template <device_set D, class Try>
bool down_the_grid(const D& devices, byte_count least, unsigned retries, Try&& try_on) {
  byte_count top = 0;
  for (device_id d = 0; d < devices.device_count(); ++d)
    if (devices.capacity(d) != unlimited_memory) top = std::max(top, devices.capacity(d));
  const auto below = capacity_grid::index_below(top);
  if (!below) return false;
  for (unsigned k = *below, tries = 0; tries < retries; --k, ++tries) {
    const byte_count cap = capacity_grid::point(k);
    if (cap < least) return false;
    if (try_on(capped(devices, cap), cap)) return true;
    if (k == 0) return false;
  }
  return false;
}

// Every vertex on `home` under `options` without groups, co-placement or best effort (one device
// never needs a group's reserve), in Kahn order or (skip) the first ready vertex in Kahn order that
// fits going next; nullopt when it does not fit.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] std::optional<list_schedule_result> one_device_run(const G& graph, const M& model, const D& devices,
                                                                 list_options options, std::string_view name,
                                                                 device_id home, bool skip) {
  options.respect_memory = true;
  options.group.clear();
  options.co_place_single_consumer = options.co_place_forward_backward = options.forward_only = false;
  options.fixed_device.assign(csr_view<G>(graph)->vertex_count(), home);
  options.best_effort = false;
  const capped_t<D> on = capped(devices);  // the instance every retry runs
  list_scheduler<G, M, capped_t<D>, kahn_one_device_policy> scheduler(
      graph, model, on, kahn_one_device_policy(std::string(name), home, skip), std::move(options));
  while (scheduler.step()) {
  }
  list_schedule_result alone = std::move(scheduler).result();
  if (!alone.ok()) return std::nullopt;
  return alone;
}

// The device with the most memory, where every vertex may go (fixed devices permitting).
template <device_set D>
[[nodiscard]] std::optional<device_id> one_device_home(const D& devices, const list_options& options) {
  if (devices.device_count() == 0) return std::nullopt;
  device_id home = 0;
  for (device_id d = 1; d < devices.device_count(); ++d)
    if (devices.capacity(d) > devices.capacity(home)) home = d;
  for (const device_id fixed : options.fixed_device)
    if (fixed != no_device && fixed != home) return std::nullopt;
  return home;
}
}  // namespace detail

// Every vertex in Kahn order on the device with the most memory (fixed devices permitting), under
// `options` without groups, co-placement or best effort: fits exactly where the peak of that order
// does, so at any capacity at or above it. nullopt when it does not fit; `name` names the placer in
// messages.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] std::optional<list_schedule_result> place_in_kahn_order(const G& graph, const M& model, const D& devices,
                                                                      list_options options, std::string_view name) {
  const auto home = detail::one_device_home(devices, options);
  if (!home) return std::nullopt;
  auto alone = detail::one_device_run(graph, model, devices, std::move(options), name, *home, false);
  if (alone)
    alone->placement.outcome.message = "placed every vertex on " + detail::list_device_label(devices, *home) +
                                       " in Kahn order instead, which holds the run";
  return alone;
}

// The last answer of a memory-aware placer that found nothing (memory_fallback() below, m-TOPO and
// Celeritas): every vertex on the device with the most memory (fixed devices permitting), in Kahn
// order; else the first ready vertex in Kahn order that fits going next, within that device's
// memory and then within each point of capacity_grid below it (as memory_fallback() steps down),
// so that fitting with some memory means fitting with more. nullopt when none fits.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] std::optional<list_schedule_result> place_on_one_device(const G& graph, const M& model, const D& devices,
                                                                      list_options options, std::string_view name) {
  const auto home = detail::one_device_home(devices, options);
  if (!home) return std::nullopt;
  if (auto in_order = place_in_kahn_order(graph, model, devices, options, name)) return in_order;
  const auto said = [&](list_schedule_result alone, const std::string& within) {
    alone.placement.outcome.message = "placed every vertex on " + detail::list_device_label(devices, *home) + within +
                                      " instead, the first ready vertex in Kahn order that fits going next";
    return alone;
  };
  if (auto alone = detail::one_device_run(graph, model, devices, options, name, *home, true))
    return said(std::move(*alone), "");
  std::optional<list_schedule_result> found;
  const unsigned retries = options.memory_retries;
  const bool any = detail::down_the_grid(
      devices, detail::least_capacity(graph, model, 1), retries, [&](const auto& on, byte_count cap) {
        auto alone = detail::one_device_run(graph, model, on, options, name, *home, true);
        if (alone) found = said(std::move(*alone), " within " + std::to_string(cap) + " bytes");
        return alone.has_value();
      });
  return any ? std::move(found) : std::nullopt;
}

// Whether memory_fallback() hands a run that found no device for a vertex to m-ETF's choices
// (Enabled: not for m-ETF itself, whose own choices these are), and whether the placer's policy
// inserts into idle gaps (Insertion, as policy_inserts says), which the replay of its placements
// must do as it did. A tag: both are known where the placer is instantiated.
template <bool Enabled = true, bool Insertion = false>
struct etf_hand_off {
  static constexpr bool enabled = Enabled;
  static constexpr bool insertion = Insertion;
};

namespace detail {
// The placer's first `keep` placements (`steps`, each to device[v]) as it made them, then m-ETF's
// choices. The replay ends early where a placement is no longer possible or does not fit (a best
// effort run went over capacity there); kept() says where it ended.
template <bool Insertion>
class etf_hand_off_policy {
 public:
  static constexpr bool insertion = Insertion;
  etf_hand_off_policy(std::string name, std::span<const vertex_id> steps, std::span<const device_id> device,
                      std::size_t keep, etf_tie_break tie_break = etf_tie_break::static_level)
      : name_(std::move(name)), steps_(steps), device_(device), keep_(std::min(keep, steps.size())),
        etf_(name_, tie_break) {}

  [[nodiscard]] std::string_view name() const { return name_; }
  [[nodiscard]] std::size_t kept() const noexcept { return keep_; }

  template <class View>
  void start(const View& view) {
    next_ = 0;
    etf_.start(view);
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
    if (next_ < keep_) {
      const vertex_id v = steps_[next_];
      const device_id d = device_[v];
      if (view.is_ready(v) && view.allowed(v, d) && view.fits(v, d)) {
        ++next_;
        return list_choice{v, d};
      }
      keep_ = next_;
    }
    return etf_.choose(view);
  }

 private:
  std::string name_;
  std::span<const vertex_id> steps_;
  std::span<const device_id> device_;
  std::size_t keep_ = 0, next_ = 0;
  etf_policy etf_;
};

// One run of etf_hand_off_policy: its result, and how many of the placer's placements it kept.
template <bool Insertion, adapted_graph G, placement_model M, device_set D>
[[nodiscard]] std::pair<list_schedule_result, std::size_t> run_etf_hand_off(
    const G& graph, const M& model, const D& devices, const list_options& options, std::string_view name,
    std::span<const vertex_id> steps, std::span<const device_id> device, std::size_t keep, etf_tie_break tie_break) {
  const capped_t<D> on = capped(devices);  // the instance every retry runs
  list_scheduler<G, M, capped_t<D>, etf_hand_off_policy<Insertion>> scheduler(
      graph, model, on, etf_hand_off_policy<Insertion>(std::string(name), steps, device, keep, tie_break), options);
  while (scheduler.step()) {
  }
  const std::size_t kept = scheduler.policy().kept();
  return {std::move(scheduler).result(), kept};
}
}  // namespace detail

// A run that found no device for a vertex, handed to m-ETF: where m-ETF alone fits `devices`
// (checked first: one run with static-level ties, and where that runs out of memory one with
// Kahn-order ties, as m_etf() runs; the rest of the search keeps the ties that fitted),
// `failed()` (the placer's run on `devices`, called only then) is
// replayed for its first K placements (list_schedule_result::steps) and m-ETF chooses the rest,
// for K = all S it placed, then S - 1, S - 3, S - 7, ... (never more than the try before could
// replay) down to the first run that fits (m-ETF's own run, K = 0, at last), and then for K
// halfway to the last that did not fit, and so on: the run with the largest K found that fits is
// returned. So the placer fails nowhere m-ETF fits and keeps as many of its own choices as the
// search finds room for; etf_from_step and the message say how many. nullopt where m-ETF alone
// does not fit. O(log n) runs, each ending where it fails; `options` must not place best effort.
template <bool Insertion, adapted_graph G, placement_model M, device_set D, class Failed>
[[nodiscard]] std::optional<list_schedule_result> hand_off_to_etf(const G& graph, const M& model, const D& devices,
                                                                  const list_options& options, std::string_view name,
                                                                  Failed&& failed) {
  etf_tie_break tie_break = etf_tie_break::static_level;
  list_schedule_result alone =
      detail::run_etf_hand_off<false>(graph, model, devices, options, name, {}, {}, 0, tie_break).first;
  if (!alone.ok()) {
    tie_break = etf_tie_break::kahn_order;
    alone = detail::run_etf_hand_off<false>(graph, model, devices, options, name, {}, {}, 0, tie_break).first;
  }
  if (!alone.ok()) return std::nullopt;
  const std::size_t n = alone.placement.device.size();
  const auto handed = [&](list_schedule_result out, std::size_t kept) {
    out.etf_from_step = kept;
    out.placement.outcome.message = "placed the other " + std::to_string(n - kept) +
                                    " vertices as m-ETF would instead, keeping its first " + std::to_string(kept) +
                                    " placements";
    return out;
  };
  const list_schedule_result& own = failed();
  const std::span<const vertex_id> steps(own.steps);
  const std::span<const device_id> device(own.placement.device);
  if (device.size() != n) return handed(std::move(alone), 0);
  const auto attempt = [&](std::size_t keep) {
    return detail::run_etf_hand_off<Insertion>(graph, model, devices, options, name, steps, device, keep, tie_break);
  };
  // K = S, S - 1, S - 3, S - 7, ... down to the first that fits; then halving the gap to the last K
  // that did not, a K closer to it that fits. A try whose replay ended early, at k, is the try for
  // K = k, and so is every try for more: it counts as that. (Every try replays at least the K of
  // a try that fitted, the same placements from the same state.)
  std::pair<list_schedule_result, std::size_t> best{std::move(alone), 0};
  std::size_t fits = 0, fails = steps.size() + 1;
  const auto narrow = [&](std::size_t keep) {
    auto tried = attempt(keep);
    const std::size_t kept = tried.second;
    if (!tried.first.ok()) {
      fails = std::min(fails, kept);
      return false;
    }
    if (kept < keep) fails = std::min(fails, kept + 1);
    fits = kept;
    best = std::move(tried);
    return true;
  };
  for (std::size_t keep = steps.size(), back = 1; keep > 0 && !narrow(keep); back *= 2) {
    keep = std::min(keep, fails);
    keep = keep > back ? keep - back : 0;
  }
  while (fails > fits + 1) narrow(fits + (fails - fits) / 2);
  return handed(std::move(best.first), best.second);
}

// What a memory-aware run does when it ends out of memory (or, placing best effort, over
// capacity): `run(devices)` runs the same placer on any device set. A greedy list scheduler can
// fill every device with tensors whose consumers then fit nowhere, at one capacity and not at a
// smaller one, so the run is tried again with each device's memory capped at the points of
// capacity_grid (model/capacity_scaled.hpp) below the largest capacity, 2.2% apart, down to what
// some device must hold (detail::least_capacity) and at most options.memory_retries of them; and
// where none of those fits, the run is handed to m-ETF (hand_off_to_etf(), as the etf_hand_off
// tag says), within the devices' memory and then within each of the same grid points: the placer's
// first placements kept, m-ETF's choices for the rest; at last (options.one_device_answer) every
// vertex goes on one device (place_on_one_device). The first of these that fits is returned, its
// message saying which it was; else `failed` unchanged. So a memory-aware placer fails only where
// m-ETF and one device fail too; and since a run with more memory tries every grid point a run
// with less memory tries, and the same there, feasibility is monotone over the capacities of the
// grid (the registry's placers, place/placers.hpp, plan within a grid point for that reason).
// Retries run only after a failure.
template <adapted_graph G, placement_model M, device_set D, class Run, bool HandOff = true, bool Insertion = false>
[[nodiscard]] list_schedule_result memory_fallback(const G& graph, const M& model, const D& devices,
                                                   list_options options, list_schedule_result failed,
                                                   std::string_view name, Run&& run,
                                                   etf_hand_off<HandOff, Insertion> = {}) {
  const status code = failed.placement.outcome.code;
  if (!options.respect_memory || (code != status::out_of_memory && code != status::over_capacity)) return failed;
  const std::size_t m = devices.device_count();
  if (m == 0) return failed;
  const auto explained = [&](list_schedule_result ok, const std::string& how) {
    ok.placement.outcome.message = failed.placement.outcome.message + "; " + how;
    return ok;
  };
  std::optional<list_schedule_result> found;
  detail::down_the_grid(
      devices, detail::least_capacity(graph, model, m), options.memory_retries, [&](const auto& on, byte_count cap) {
        list_schedule_result retry = run(on);
        if (retry.ok())
          found = explained(std::move(retry), "placed within " + std::to_string(cap) + " bytes per device instead");
        return found.has_value();
      });
  if (found) return std::move(*found);
  if constexpr (HandOff) {
    list_options strict = options;
    strict.best_effort = false;
    const auto handed = [&](list_schedule_result ok, const std::string& within) {
      std::string how = ok.placement.outcome.message + within;
      return explained(std::move(ok), how);
    };
    // Within the devices' memory, from the run in hand; then within each grid point, from the
    // placer's run there, made again only where m-ETF alone fits.
    if (auto out = hand_off_to_etf<Insertion>(graph, model, devices, strict, name,
                                              [&]() -> const list_schedule_result& { return failed; }))
      return handed(std::move(*out), "");
    detail::down_the_grid(
        devices, detail::least_capacity(graph, model, m), options.memory_retries, [&](const auto& on, byte_count cap) {
          std::optional<list_schedule_result> own;
          auto out = hand_off_to_etf<Insertion>(graph, model, on, strict, name, [&]() -> const list_schedule_result& {
            own = run(on);
            return *own;
          });
          if (out) found = handed(std::move(*out), ", within " + std::to_string(cap) + " bytes per device");
          return found.has_value();
        });
    if (found) return std::move(*found);
  }
  if (!options.one_device_answer) return failed;
  auto alone = place_on_one_device(graph, model, devices, std::move(options), name);
  if (!alone) return failed;
  std::string how = alone->placement.outcome.message;
  return explained(std::move(*alone), how);
}

// Runs a list-scheduling policy to the end. Throws as list_scheduler does; running out of memory
// is a status in the result, given only when memory_fallback() found nothing either (a policy that
// cannot be copied is not run again: its fallbacks are the hand-off to m-ETF from its one run and
// the one-device answer). Every run, the first included, sees the devices as capped(devices)
// (model/capacity_scaled.hpp): a policy's view.devices() is a capacity_scaled<D> view with D's
// capacities, links and names, so that the engine is compiled once for the run and its retries.
template <adapted_graph G, placement_model M, device_set D, class Policy>
[[nodiscard]] list_schedule_result list_schedule(const G& graph, const M& model, const D& devices, Policy policy,
                                                 list_options options = {}) {
  std::optional<Policy> spare;  // for the retries within less memory
  std::optional<list_options> strict;
  if constexpr (std::copy_constructible<Policy>) {
    if (options.respect_memory) {
      spare.emplace(policy);
      strict.emplace(options);
      strict->best_effort = false;
    }
  }
  // Without memory nothing is retried: the options move into the run (memory_fallback() reads only
  // respect_memory, which a move leaves as it was).
  const bool memory = options.respect_memory;
  // The first run on the devices as a capped view (capping nothing), as every retry runs: one
  // instance of the engine for them all.
  const capped_t<D> on = capped(devices);
  list_scheduler<G, M, capped_t<D>, Policy> scheduler(graph, model, on, std::move(policy),
                                                      memory ? options : std::move(options));
  while (scheduler.step()) {
  }
  const std::string name(scheduler.name());
  return memory_fallback(
      graph, model, on, std::move(options), std::move(scheduler).result(), name,
      [&]<class S>(const S& smaller) {
        list_schedule_result none;  // not run again: as out of memory as the first
        none.placement.outcome.code = status::out_of_memory;
        if constexpr (std::copy_constructible<Policy>) {
          if (!spare) return none;
          list_scheduler<G, M, S, Policy> retry(graph, model, smaller, *spare, *strict);
          while (retry.step()) {
          }
          return std::move(retry).result();
        } else {
          return none;
        }
      },
      etf_hand_off<!std::is_same_v<Policy, etf_policy>, detail::policy_inserts<Policy>()>{});
}

}  // namespace gantry
