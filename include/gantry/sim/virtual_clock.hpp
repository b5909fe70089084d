// The simulator's backend (sim/simulator.hpp): a clock that jumps from one modelled finish to the
// next, and that stretches the activities of devices sharing memory bandwidth or cores
// (sim/shared_bandwidth.hpp).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/sim/backend.hpp>
#include <gantry/sim/shared_bandwidth.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <span>
#include <tuple>
#include <vector>

namespace gantry {

// The virtual clock: a priority queue of modelled finishes, ties in launch order. Given devices
// that share memory bandwidth or processors (share(), sim/shared_bandwidth.hpp) it runs rates
// instead of fixed durations: an activity in a shared domain progresses at its speed, and whenever
// an activity starts or ends in a domain the speeds there are recomputed and the finishes that move
// are queued again (the old entries are skipped). An activity that touches no shared domain keeps
// its modelled finish exactly.
class virtual_clock {
 public:
  // Devices that share bandwidth or cores; call before begin(). An empty sharing (the default)
  // keeps every modelled duration.
  void share(bandwidth_sharing sharing) {
    sharing_ = std::move(sharing);
    shared_ = sharing_.engaged();
  }
  [[nodiscard]] bool stretches() const noexcept { return shared_; }

  void begin(std::size_t /*devices*/) {
    now_ = 0;
    sequence_ = 0;
    events_ = {};
    activities_.clear();
    free_.clear();
    running_.assign(2 * sharing_.bandwidth.size(), {});
  }
  void launch_vertex(const vertex_launch& v) {
    if (!shared_) return push(now_ + v.duration, false, v.vertex);
    pending_ = {};
    const std::uint32_t domain = sharing_.domain(v.device);
    if (domain != no_domain && v.duration > 0) {
      add_flow(bandwidth_pool(domain), static_cast<double>(v.traffic) / v.duration);
      add_flow(core_pool(domain), 1);
    }
    launch(false, v.vertex, v.duration);
  }
  void launch_copy(const copy_launch& c) {
    if (!shared_) return push(now_ + c.duration, true, c.id);
    pending_ = {};
    if (c.duration > 0) {
      const double rate = static_cast<double>(c.bytes) / c.duration;
      for (const device_id d : {c.from, c.to}) {
        const std::uint32_t domain = sharing_.domain(d);
        if (domain == no_domain || !sharing_.copies[domain]) continue;
        add_flow(bandwidth_pool(domain), rate);  // read in the sender's, written in the receiver's
        if (d == c.from || sharing_.domain(c.from) != domain) add_flow(core_pool(domain), 1, true);
      }
    }
    launch(true, c.id, c.duration);
  }
  void advance() {
    skip_stale();
    now_ = events_.top().time;
  }
  bool pop_due(completion& c) {
    skip_stale();
    if (events_.empty() || events_.top().time > now_) return false;
    const event e = events_.top();
    events_.pop();
    c = {e.is_copy, e.id, e.start, e.time};
    if (e.slot != no_slot) end(e.slot);
    return true;
  }
  void wait(std::vector<completion>& out) {
    skip_stale();
    if (events_.empty()) return;
    advance();
    for (completion c; pop_due(c);) out.push_back(c);
  }
  [[nodiscard]] seconds now() const noexcept { return now_; }

 private:
  static constexpr std::uint32_t no_slot = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t no_pool = std::numeric_limits<std::uint32_t>::max();
  struct event {
    seconds time;
    seconds start;
    std::uint64_t sequence;
    std::uint32_t id;
    bool is_copy;
    std::uint32_t slot = no_slot;  // the activity in a shared domain, or no_slot
    std::uint64_t version = 0;     // the activity's version when queued (older ones are stale)
    bool operator>(const event& o) const { return std::tie(time, sequence) > std::tie(o.time, o.sequence); }
  };
  // What an activity draws from a pool (a domain's bandwidth, in bytes per second, or its cores).
  struct flow {
    std::uint32_t pool = no_pool;
    double demand = 0;      // at full speed
    double allocation = 0;  // granted
  };
  // At most a bandwidth and a core pool in each of two domains.
  struct flows {
    flow of[4];
    std::uint32_t count = 0;
  };
  // An activity running in shared pools: its work left (seconds at full speed) as of `since`.
  struct activity {
    std::uint32_t id = 0;
    bool is_copy = false;
    seconds start = 0, since = 0, left = 0, finish = 0;
    double speed = 1;
    std::uint64_t version = 0;
    flows draws;
  };

  // Pool 2k is domain k's bandwidth, 2k + 1 its cores; no_pool where the domain shares none.
  [[nodiscard]] std::uint32_t bandwidth_pool(std::uint32_t domain) const {
    return std::isfinite(sharing_.bandwidth[domain]) ? 2 * domain : no_pool;
  }
  [[nodiscard]] std::uint32_t core_pool(std::uint32_t domain) const {
    return sharing_.cores[domain] > 0 ? 2 * domain + 1 : no_pool;
  }
  [[nodiscard]] double capacity(std::uint32_t pool) const {
    return pool % 2 == 0 ? sharing_.bandwidth[pool / 2] : static_cast<double>(sharing_.cores[pool / 2]);
  }
  // Adds demand to the launch being prepared (merged with an earlier draw on the same pool, unless
  // `once`: a copy within one domain takes one core, not two).
  void add_flow(std::uint32_t pool, double demand, bool once = false) {
    if (pool == no_pool || !(demand > 0)) return;
    for (std::uint32_t k = 0; k < pending_.count; ++k)
      if (pending_.of[k].pool == pool) {
        if (!once) pending_.of[k].demand += demand;
        return;
      }
    pending_.of[pending_.count++] = {pool, demand, demand};
  }

  void push(seconds time, bool is_copy, std::uint32_t id) { events_.push({time, now_, sequence_++, id, is_copy}); }

  void launch(bool is_copy, std::uint32_t id, seconds duration) {
    if (pending_.count == 0 || !(duration > 0)) return push(now_ + duration, is_copy, id);
    std::uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<std::uint32_t>(activities_.size());
      activities_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    activity& a = activities_[slot];
    const std::uint64_t version = a.version;  // events of the slot's last activity stay stale
    a = {};
    a.version = version;
    a.id = id;
    a.is_copy = is_copy;
    a.start = a.since = now_;
    a.left = duration;
    a.finish = now_ + duration;
    a.draws = pending_;
    for (std::uint32_t k = 0; k < a.draws.count; ++k) running_[a.draws.of[k].pool].push_back(slot);
    queue(slot);
    for (std::uint32_t k = 0; k < pending_.count; ++k) reshare(pending_.of[k].pool);
  }
  void queue(std::uint32_t slot) {
    const activity& a = activities_[slot];
    events_.push({a.finish, a.start, sequence_++, a.id, a.is_copy, slot, a.version});
  }
  void end(std::uint32_t slot) {
    const flows draws = activities_[slot].draws;
    for (std::uint32_t k = 0; k < draws.count; ++k) {
      auto& list = running_[draws.of[k].pool];
      list.erase(std::find(list.begin(), list.end(), slot));
    }
    ++activities_[slot].version;
    free_.push_back(slot);
    for (std::uint32_t k = 0; k < draws.count; ++k) reshare(draws.of[k].pool);
  }
  // Shares a pool among what runs in it, and queues again every activity there whose speed
  // changes (one finishing now keeps its finish).
  void reshare(std::uint32_t pool) {
    const auto& list = running_[pool];
    demand_.clear();
    for (const std::uint32_t slot : list) demand_.push_back(draw_on(slot, pool).demand);
    allocation_.assign(demand_.size(), 0);
    detail::share_fairly(capacity(pool), demand_, allocation_, order_);
    for (std::size_t i = 0; i < list.size(); ++i) {
      activity& a = activities_[list[i]];
      draw_on(list[i], pool).allocation = allocation_[i];
      double speed = 1;
      for (std::uint32_t k = 0; k < a.draws.count; ++k)
        if (a.draws.of[k].allocation < a.draws.of[k].demand)
          speed = std::min(speed, a.draws.of[k].allocation / a.draws.of[k].demand);
      if (speed == a.speed || a.finish <= now_) continue;
      a.left = std::max(0.0, a.left - (now_ - a.since) * a.speed);
      a.since = now_;
      a.speed = speed;
      a.finish = now_ + a.left / speed;
      ++a.version;
      queue(list[i]);
    }
  }
  [[nodiscard]] flow& draw_on(std::uint32_t slot, std::uint32_t pool) {
    flows& draws = activities_[slot].draws;
    std::uint32_t k = 0;
    while (draws.of[k].pool != pool) ++k;
    return draws.of[k];
  }
  void skip_stale() {
    while (!events_.empty()) {
      const event& e = events_.top();
      if (e.slot == no_slot || activities_[e.slot].version == e.version) return;
      events_.pop();
    }
  }

  seconds now_ = 0;
  std::uint64_t sequence_ = 0;
  std::priority_queue<event, std::vector<event>, std::greater<>> events_;
  bandwidth_sharing sharing_;
  bool shared_ = false;
  std::vector<activity> activities_;
  std::vector<std::uint32_t> free_;                  // slots of activities_ to reuse
  std::vector<std::vector<std::uint32_t>> running_;  // per pool: the slots running in it
  flows pending_;                                    // the draws of the launch being prepared
  std::vector<double> demand_, allocation_;
  std::vector<std::uint32_t> order_;
};
static_assert(virtual_time_backend<virtual_clock>);

}  // namespace gantry
