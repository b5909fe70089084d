// ETF's choice as a list-scheduling policy (place/list_policy.hpp): the (ready vertex, device) pair
// that can start earliest goes next. etf() and m_etf() (place/etf.hpp) run it on the engine; SCT
// builds on it, and memory_fallback() (place/list_scheduler.hpp) hands a run to it.
#pragma once

#include <gantry/core/index_set.hpp>
#include <gantry/core/radix_sort.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/list_policy.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gantry {

// Which pair wins when several can start at the same earliest time.
enum class etf_tie_break {
  // The vertex with the larger static level (the longest path of mean compute times to an exit),
  // then Kahn order: the textbook rule.
  static_level,
  kahn_order,  // the vertex earlier in Kahn order (Baechi's code)
};

// ETF as a policy: est(v, d) = max(when d is free, when every input can be on d); the pair with the
// smallest est goes next, ties by the tie-break, then the lowest device id.
// Per device, a heap of candidates keyed by when their inputs can be there and the set of those
// that could start as soon as the device is free, by tie rank; a device's best candidate is kept
// until a placement can change it. Where keys can change while a vertex waits (channels, a group
// not bound yet: view.ready_may_change), they are checked again before use, and a vertex is keyed
// again where its inputs may now arrive earlier (a copy just cached there, its group just bound).
class etf_policy {
 public:
  explicit etf_policy(std::string name = "ETF", etf_tie_break tie_break = etf_tie_break::static_level)
      : name_(std::move(name)), tie_break_(tie_break) {}

  [[nodiscard]] std::string_view name() const { return name_; }

  template <class View>
  void start(const View& view) {
    const std::size_t m = view.device_count(), n = view.vertex_count();
    pending_.assign(m, {});
    startable_.resize(m);
    for (auto& set : startable_) set.reset(n);
    blocked_.assign(m, {});
    best_.assign(m, std::nullopt);
    best_known_.assign(m, 0);
    recheck_ = view.channels_shared();
    // Without groups and fixed devices, an unplaced vertex may go to any device not excluded and
    // its keys change only with channels: checks that need no look-up of the vertex.
    simple_ = true;
    for (vertex_id v = 0; v < n && simple_; ++v)
      simple_ = view.group_members(v).size() < 2 && view.bound_device(v) == no_device;
    placed_.assign(n, 0);
    transfers_seen_ = 0;
    tie_.resize(n);
    // The tie-break order, sorted as contiguous keys; the Kahn rank is unique, so the order is too.
    std::vector<vertex_id> by_rank(n), by(n);
    for (vertex_id v = 0; v < n; ++v) by_rank[view.kahn_rank(v)] = v;
    if (tie_break_ == etf_tie_break::static_level) {
      by = by_level(static_levels(view), by_rank);
    } else {
      by = std::move(by_rank);
    }
    for (std::uint32_t i = 0; i < n; ++i) tie_[by[i]] = i;
    by_tie_ = std::move(by);
  }

  template <class View>
  void on_ready(const View& view, vertex_id v) {
    ready_at_.resize(view.device_count());
    view.data_ready_all(v, ready_at_);
    for (device_id d = 0; d < view.device_count(); ++d)
      if (allowed(view, v, d)) push(view, d, {ready_at_[d], tie_[v], v});
  }

  template <class View>
  void on_placed(const View& view, vertex_id v, device_id d) {
    // v leaves every startable set now, which best_on() would otherwise do one device at a time.
    for (auto& startable : startable_) startable.erase(tie_[v]);
    placed_[tie_[v]] = 1;
    for (device_id other = 0; other < best_.size(); ++other) {
      if (!best_known_[other]) continue;
      if (other == d || recheck_ || !best_[other] || may_change(view, best_[other]->vertex)) {
        best_known_[other] = 0;
        continue;
      }
      // Transfers made for v go into d only, so other devices' memory and arrivals stay as they were.
      const vertex_id candidate = best_[other]->vertex;
      if (candidate == v || !allowed(view, candidate, other)) best_known_[other] = 0;
    }
    for (device_id x = 0; x < blocked_.size(); ++x) {
      if (!view.memory_changed(x)) continue;
      for (const entry& e : blocked_[x]) push(view, x, e);
      blocked_[x].clear();
    }
    // A group just bound to d: its waiting members' keys there lose the group's other inputs.
    if (view.last_bound_group())
      for (const vertex_id w : view.group_members(v))
        if (view.is_ready(w)) push(view, d, {view.data_ready(w, d), tie_[w], w});
    // A copy just sent to d may bring another consumer's inputs there sooner than its key says.
    const auto& transfers = view.transfers();
    if (recheck_ && view.options().cache_transfers) {
      const csr_graph& g = view.graph();
      for (; transfers_seen_ < transfers.size(); ++transfers_seen_)
        for (const vertex_id w : g.successors(transfers[transfers_seen_].tensor))
          if (view.is_ready(w) && view.allowed(w, d)) push(view, d, {view.data_ready(w, d), tie_[w], w});
    }
    transfers_seen_ = transfers.size();
  }

  template <class View>
  [[nodiscard]] std::optional<list_choice> choose(const View& view) {
    std::optional<std::tuple<seconds, std::uint32_t, device_id>> best;
    vertex_id chosen = no_vertex;
    for (device_id d = 0; d < best_.size(); ++d) {
      if (!best_known_[d]) {
        best_[d] = best_on(view, d);
        best_known_[d] = 1;
      }
      const auto& candidate = best_[d];
      if (candidate && (!best || std::tuple(candidate->ready, candidate->tie, d) < *best)) {
        best = std::tuple(candidate->ready, candidate->tie, d);
        chosen = candidate->vertex;
      }
    }
    if (!best) return std::nullopt;
    return list_choice{chosen, std::get<2>(*best)};
  }

 private:
  struct entry {
    seconds ready;  // when the inputs can be on the device; the start time for a device's best
    std::uint32_t tie;
    vertex_id vertex;
    bool operator>(const entry& o) const { return std::tie(ready, tie) > std::tie(o.ready, o.tie); }
  };

  // Longest path of mean compute times from v to an exit, v included (no communication).
  template <class View>
  static std::vector<seconds> static_levels(const View& view) {
    const csr_graph& g = view.graph();
    const std::size_t n = view.vertex_count();
    std::vector<vertex_id> order(n);
    for (vertex_id v = 0; v < n; ++v) order[view.kahn_rank(v)] = v;
    std::vector<seconds> level(n, 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      seconds tail = 0;
      for (const vertex_id s : g.successors(*it)) tail = std::max(tail, level[s]);
      level[*it] = mean_compute_time(view.model(), *it, view.device_count()) + tail;
    }
    return level;
  }

  // The vertices by larger static level, then Kahn order. Levels are sums of compute times, so
  // non-negative: their bit patterns, inverted, sort as the levels do in reverse, and a stable
  // radix sort of Kahn order by them settles ties by rank. Other levels (a negative or NaN time)
  // take a comparison sort with the same order.
  static std::vector<vertex_id> by_level(const std::vector<seconds>& level, std::vector<vertex_id> order) {
    const std::size_t n = order.size();
    const bool plain = std::all_of(level.begin(), level.end(), [](seconds x) { return x >= 0; });
    if (!plain || n < 256) {
      std::vector<std::uint32_t> rank(n);
      for (std::uint32_t i = 0; i < n; ++i) rank[order[i]] = i;
      std::sort(order.begin(), order.end(), [&](vertex_id a, vertex_id b) {
        return std::pair(-level[a], rank[a]) < std::pair(-level[b], rank[b]);
      });
      return order;
    }
    struct item {
      std::uint64_t key;
      vertex_id v;
    };
    std::vector<item> items(n), scratch;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = level[order[i]] + 0.0;  // -0.0 becomes +0.0
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      items[i] = {~bits, order[i]};
    }
    detail::radix_sort_by_key(items.data(), n, scratch);
    for (std::size_t i = 0; i < n; ++i) order[i] = items[i].v;
    return order;
  }

  // view.allowed() and view.ready_may_change() for an unplaced vertex; without a look-up when simple_.
  template <class View>
  bool allowed(const View& view, vertex_id v, device_id d) const {
    return simple_ ? !view.excluded(d) : view.allowed(v, d);
  }
  template <class View>
  bool may_change(const View& view, vertex_id v) const {
    return simple_ ? recheck_ : view.ready_may_change(v);
  }

  // An entry whose inputs are there by the time d is free goes straight to the startable set, where
  // best_on() would move it (d's free time only grows).
  template <class View>
  void push(const View& view, device_id d, const entry& e) {
    if (e.ready <= view.available_at(d)) startable_[d].insert(e.tie);
    else pending_[d].push(e);
    if (best_known_[d] && (!best_[d] || std::tie(e.ready, e.tie) < std::tie(best_[d]->ready, best_[d]->tie)))
      best_known_[d] = 0;
  }

  // The best candidate of d as (start, tie, vertex). Drops candidates placed or bound to another
  // device; sets aside those that do not fit (until memory on d changes).
  template <class View>
  std::optional<entry> best_on(const View& view, device_id d) {
    auto& pending = pending_[d];
    auto& startable = startable_[d];
    for (;;) {
      const seconds free_at = view.available_at(d);
      while (!pending.empty() && pending.top().ready <= free_at) {
        startable.insert(pending.top().tie);
        pending.pop();
      }
      const bool from_startable = !startable.empty();
      if (!from_startable && pending.empty()) return std::nullopt;
      // A startable vertex's inputs are there by free_at, so free_at stands in for its ready time.
      const std::uint32_t first = from_startable ? startable.min() : 0;
      const entry top = from_startable ? entry{free_at, first, by_tie_[first]} : pending.top();
      const auto drop = [&] {
        if (from_startable) startable.erase(top.tie);
        else pending.pop();
      };
      const vertex_id v = top.vertex;
      if (simple_ ? placed_[top.tie] || view.excluded(d) : view.is_placed(v) || !view.allowed(v, d)) {
        drop();
        continue;
      }
      if (recheck_ || may_change(view, v)) {
        const seconds now_ready = view.data_ready(v, d);
        if (from_startable ? now_ready > free_at : now_ready != top.ready) {
          drop();
          pending.push({now_ready, top.tie, v});
          continue;
        }
      }
      if (!view.fits(v, d)) {
        drop();
        blocked_[d].push_back(top);
        continue;
      }
      // It stays at the top, the device's candidate, until placed.
      return entry{std::max(top.ready, free_at), top.tie, v};
    }
  }

  std::string name_;
  etf_tie_break tie_break_;
  bool recheck_ = false;
  std::size_t transfers_seen_ = 0;
  std::vector<std::uint32_t> tie_;  // per vertex: its place in the tie-break order
  std::vector<vertex_id> by_tie_;   // the tie-break order
  std::vector<std::priority_queue<entry, std::vector<entry>, std::greater<>>> pending_;
  std::vector<detail::index_set> startable_;  // per device: tie ranks of vertices whose inputs are there
  std::vector<std::vector<entry>> blocked_;
  std::vector<std::optional<entry>> best_;
  std::vector<std::uint8_t> best_known_;
  bool simple_ = false;               // no groups, no fixed devices
  std::vector<std::uint8_t> placed_;  // per tie rank: placed (read near the ranks best_on() reads)
  std::vector<seconds> ready_at_;     // scratch: a vertex's data_ready per device
};

}  // namespace gantry
