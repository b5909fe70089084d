// SCT as Baechi's placer runs it (Baechi §2.4 and its published m_sct): a clock moves from one
// event to the next (a device finishing its vertex, inputs arriving), a vertex is ready once its
// inputs have *finished*, and at each instant every free device offers the vertex it would start
// now; the offer that starts earliest goes first (ties: Kahn order, then the lower device id).
// A free device whose last vertex's favorite child is ready and would start on it no later than
// anywhere else is *awake*: it waits for that child, and takes another vertex only if that one is
// urgent (it could start now on every device it fits on). sct_policy (place/sct.hpp) is the same
// rule on an ETF list scheduler instead, which never lets a device wait.
//
// It is a list-scheduling policy (place/list_policy.hpp) that keeps its own clock: the engine
// still appends each chosen vertex at its earliest start, so where a device waited for a favorite
// that went elsewhere, the vertex it takes instead may start before the clock (Baechi's device
// would start it at the clock). That is the one place where the two schedules differ.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/place/list_policy.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

namespace detail {
// Favorite children checked against the graph: one per vertex, each no_vertex or in range.
template <class View>
void check_favorites(const View& view, const std::vector<vertex_id>& favorite, const std::string& name) {
  if (favorite.size() != view.vertex_count())
    throw invalid_input(name + ": " + std::to_string(favorite.size()) + " favorite children for " +
                        std::to_string(view.vertex_count()) + " vertices");
  for (vertex_id v = 0; v < favorite.size(); ++v)
    if (favorite[v] != no_vertex && favorite[v] >= view.vertex_count())
      throw invalid_input(name + ": the favorite child of vertex " + std::to_string(v) + " is " +
                          std::to_string(favorite[v]) + ", out of range");
}

// m-SCT's exclusion: the devices on which `choice`'s vertex did not fit although it would have
// started there earlier than where it goes, appended to `full`.
template <class View>
void note_full_devices(const View& view, const list_choice& choice, std::vector<device_id>& full) {
  const seconds there = view.earliest_start_appended(choice.vertex, choice.device);
  for (device_id d = 0; d < view.device_count(); ++d)
    if (d != choice.device && view.allowed(choice.vertex, d) && !view.fits(choice.vertex, d) &&
        view.earliest_start_appended(choice.vertex, d) < there)
      full.push_back(d);
}
}  // namespace detail

// The time-driven SCT policy. Each choice costs O(r m k) for r vertices ready at the clock (k
// inputs each, m devices), once per instant the clock visits; a run is O(n r m k).
class sct_time_driven_policy {
 public:
  // favorite_child: per vertex, its favorite child or no_vertex (favorite_children::child).
  explicit sct_time_driven_policy(std::vector<vertex_id> favorite_child, std::string name = "SCT")
      : favorite_(std::move(favorite_child)), name_(std::move(name)) {}

  [[nodiscard]] std::string_view name() const { return name_; }
  // Devices found out of memory so far, in the order found (a device may repeat): see sct_policy.
  [[nodiscard]] const std::vector<device_id>& full_devices() const noexcept { return full_; }
  // Placements of a favorite child by the device that waited for it.
  [[nodiscard]] std::size_t favorite_placements() const noexcept { return preferred_; }
  // Placements of an urgent vertex by a device that was waiting for a favorite child.
  [[nodiscard]] std::size_t urgent_placements() const noexcept { return urgent_; }
  // The clock: when the last choice starts, in Baechi's schedule.
  [[nodiscard]] seconds clock() const noexcept { return now_; }

  template <class View>
  void start(const View& view) {
    detail::check_favorites(view, favorite_, name_);
    inputs_done_.assign(view.vertex_count(), 0);
    slot_.assign(view.vertex_count(), none);
    ready_.clear();
    m_ = view.device_count();
    full_.clear();
    now_ = 0;
    preferred_ = urgent_ = 0;
  }
  // v's inputs are all placed: it becomes ready when the last of them finishes.
  template <class View>
  void on_ready(const View& view, vertex_id v) {
    seconds done = 0;
    for (const vertex_id u : view.graph().predecessors(v)) done = std::max(done, view.finish_of(u));
    inputs_done_[v] = done;
  }

  template <class View>
  [[nodiscard]] std::optional<list_choice> choose(const View& view) {
    for (;;) {
      collect(view);
      struct offer {
        seconds at = never;
        std::uint32_t rank = 0;
        list_choice choice;
        bool favorite = false, urgent = false;
      } best;
      // Offers i on d if it goes before the best so far (each device offers one vertex).
      const auto offer_on = [&](std::size_t i, device_id d, bool favorite, bool urgent) {
        if (before(at(i, d), rank_[i], best.at, best.rank))
          best = {at(i, d), rank_[i], {ready_[i], d}, favorite, urgent};
      };
      seconds next = never;
      for (device_id d = 0; d < m_; ++d) {
        if (view.available_at(d) > now_) {  // busy: its vertex finishes then
          next = std::min(next, view.available_at(d));
          continue;
        }
        const std::size_t f = awaited(view, d);
        if (f != none) {
          // The earliest urgent vertex that may go to d, by when it could start everywhere.
          std::size_t u = none;
          for (std::size_t i = 0; i < ready_.size(); ++i)
            if (at(i, d) != never && (u == none || before(urgent_at_[i], rank_[i], urgent_at_[u], rank_[u]))) u = i;
          if (u != none && urgent_at_[u] <= now_) {
            offer_on(u, d, false, true);
          } else if (at(f, d) <= now_) {
            offer_on(f, d, true, false);
          } else {
            next = std::min(next, at(f, d));
            if (u != none) next = std::min(next, urgent_at_[u]);
          }
          continue;
        }
        std::size_t e = none;  // the vertex that could start on d first
        for (std::size_t i = 0; i < ready_.size(); ++i)
          if (at(i, d) != never && (e == none || before(at(i, d), rank_[i], at(e, d), rank_[e]))) e = i;
        if (e == none) continue;
        if (at(e, d) <= now_) {
          offer_on(e, d, false, false);
        } else {
          next = std::min(next, at(e, d));
        }
      }
      if (best.at != never) {
        preferred_ += best.favorite ? 1 : 0;
        urgent_ += best.urgent ? 1 : 0;
        if (view.options().respect_memory) detail::note_full_devices(view, best.choice, full_);
        return best.choice;
      }
      // Nothing starts now; with no event to come, no ready vertex fits anywhere.
      if (next == never || next <= now_) return std::nullopt;
      now_ = next;
    }
  }

 private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  static constexpr seconds never = std::numeric_limits<seconds>::infinity();

  // Whether (at, rank) goes before (than_at, than_rank): earlier, then first in Kahn order.
  [[nodiscard]] static bool before(seconds at, std::uint32_t rank, seconds than_at, std::uint32_t than_rank) {
    return at < than_at || (at == than_at && rank < than_rank);
  }

  // The vertices ready at the clock (inputs finished), and when each could start on each device:
  // max(clock, its earliest start there), `never` where it may not go or does not fit.
  template <class View>
  void collect(const View& view) {
    for (const vertex_id v : ready_) slot_[v] = none;
    ready_.clear();
    rank_.clear();
    for (const vertex_id v : view.ready())
      if (inputs_done_[v] <= now_) {
        slot_[v] = ready_.size();
        ready_.push_back(v);
        rank_.push_back(view.kahn_rank(v));
      }
    at_.assign(ready_.size() * m_, never);
    urgent_at_.assign(ready_.size(), never);
    for (std::size_t i = 0; i < ready_.size(); ++i) {
      seconds latest = never;
      for (device_id d = 0; d < m_; ++d) {
        if (!view.allowed(ready_[i], d) || !view.fits(ready_[i], d)) continue;
        const seconds t = std::max(now_, view.earliest_start_appended(ready_[i], d));
        at_[i * m_ + d] = t;
        latest = latest == never ? t : std::max(latest, t);
      }
      urgent_at_[i] = latest;
    }
  }
  [[nodiscard]] seconds at(std::size_t i, device_id d) const { return at_[i * m_ + d]; }

  // The slot of the favorite child free device d waits for, or none: the child of the vertex d ran
  // last, ready at the clock, may go to d and would start there no later than anywhere else.
  template <class View>
  [[nodiscard]] std::size_t awaited(const View& view, device_id d) const {
    const vertex_id last = view.last_on(d);
    if (last == no_vertex || favorite_[last] == no_vertex) return none;
    const std::size_t f = slot_[favorite_[last]];
    if (f == none || at(f, d) == never) return none;
    for (device_id o = 0; o < view.device_count(); ++o)
      if (at(f, o) < at(f, d)) return none;
    return f;
  }

  std::vector<vertex_id> favorite_;
  std::string name_;
  std::vector<seconds> inputs_done_;  // per vertex: when its last input finishes (once it is ready)
  std::vector<std::size_t> slot_;     // per vertex: its index in ready_, or none
  std::vector<vertex_id> ready_;      // ready at the clock
  std::vector<std::uint32_t> rank_;   // their Kahn ranks
  std::vector<seconds> at_;           // ready_.size() x m: when each could start on each device
  std::vector<seconds> urgent_at_;    // when each could start on every device it may use
  std::vector<device_id> full_;
  std::size_t m_ = 0;
  seconds now_ = 0;
  std::size_t preferred_ = 0, urgent_ = 0;
};

}  // namespace gantry
