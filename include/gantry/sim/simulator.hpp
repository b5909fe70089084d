// The work-conserving, event-driven simulator that judges every placement the same way (Baechi
// §4.2's execution simulator; DOPPLER §2-3, Algorithm 1). Devices run one vertex at a time; a
// tensor (a producer's edges of equal bytes) moves over a link once its producer is done and a
// channel is free, and is cached on the receiving device; memory is allocated and freed as the run
// goes (rules in schedule/schedule.hpp); a start that does not fit waits for memory while others go
// ahead, and running out (nothing can go on) is an outcome naming device, time, vertex and bytes.
// Resources transfers share come from the cluster's topology (model/topology.hpp). Durations may be
// drawn around the model's values (seeded lognormal) to turn a makespan into a distribution.
// O((n + e) log n + t log t) for t transfers in parallel mode.
#pragma once

#include <gantry/core/enum_names.hpp>
#include <gantry/core/random.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace gantry {

// Which ready vertex an idle device runs next.
enum class ready_policy {
  placement_order,  // the ready vertex earliest in the priority order (work-conserving)
  strict_order,     // exactly the priority order per device, waiting for the next one's inputs
  fifo,             // the vertex that became ready first (ties: priority order)
  bottom_level,     // the vertex with the largest bottom level (ties: priority order)
};

inline constexpr enum_name<ready_policy> ready_policy_names[] = {{ready_policy::placement_order, "placement-order"},
                                                                 {ready_policy::strict_order, "strict-order"},
                                                                 {ready_policy::fifo, "fifo"},
                                                                 {ready_policy::bottom_level, "bottom-level"}};
[[nodiscard]] constexpr std::span<const enum_name<ready_policy>> enum_names(ready_policy) noexcept {
  return ready_policy_names;
}
[[nodiscard]] constexpr const char* to_string(ready_policy p) noexcept { return name_of(p); }

struct simulate_options {
  ready_policy policy = ready_policy::placement_order;
  // The placement order: every vertex once. Empty means Kahn order.
  std::span<const vertex_id> priority = {};
  // Send a tensor to a device at most once and let every consumer there use the copy.
  bool cache_transfers = true;
  // Coefficient of variation of the lognormal factor (mean 1) applied to each duration; 0 keeps the
  // model's durations. Draws come from `seed` and are the same on every platform.
  double cv = 0;
  std::uint64_t seed = 0;
  bool vary_transfers = true;  // with cv > 0, draw transfer durations too
  // With strict_order: the transfers of the schedule being replayed, in the order their channels
  // were reserved (a list scheduler's schedule.transfers is in that order). Each resource of the
  // topology then serves its transfers in this order, so a strict replay of a list scheduler's
  // schedule reproduces it in every communication mode, memory included. A transfer of the replay
  // that is not listed (another cache setting) is served when its resources are free. Empty: every
  // transfer is served by readiness, as in a work-conserving run.
  std::span<const transfer> transfer_order = {};
  // A vertex or transfer whose bytes do not fit on its device now waits until memory is freed
  // (meanwhile the device runs the next ready vertex that fits, and other transfers go ahead); the
  // run fails with out_of_memory only when nothing can go on. false: the first allocation that does
  // not fit ends the run (a runtime without memory-aware dispatch, as Baechi's simulator).
  bool wait_for_memory = true;
};

struct simulation_result {
  // ok, or out_of_memory with the device, the time, the vertex whose bytes did not fit, the bytes
  // it needed and those free there.
  gantry::outcome outcome;
  gantry::schedule schedule;    // complete when ok; what ran until the failure otherwise

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

// The simulator as a class, to step through a run event time by event time:
//   simulator sim(g, model, devices, placement, options); while (sim.step()) inspect(sim.now());
// Holds references to its arguments: they must outlive it.
template <placement_model M, device_set D>
class simulator {
 public:
  simulator(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement,
            simulate_options options = {}, std::function<std::string(vertex_id)> names = {})
      : g_(g), model_(model), devices_(devices), placement_(placement), options_(options), names_(std::move(names)) {
    init();
  }

  // Resets to time 0. Throws invalid_input for a placement or priority of the wrong size or with
  // out-of-range entries, and for a negative or non-finite cv.
  void init() {
    const std::size_t n = g_.vertex_count();
    m_ = devices_.device_count();
    check_arguments(n);
    result_ = {};
    auto& s = result_.schedule;
    s.device.assign(placement_.begin(), placement_.end());
    s.start.assign(n, 0);
    s.finish.assign(n, 0);
    now_ = 0;
    finished_ = 0;
    done_ = false;
    has_zero_duration_ = false;
    sequence_ = 0;
    events_ = {};
    rank_.assign(n, 0);
    if (options_.priority.empty()) {
      const auto order = detail::kahn_on(g_);
      if (order.size() != n) throw not_a_dag("simulate: the graph has a cycle");
      for (std::size_t i = 0; i < n; ++i) rank_[order[i]] = static_cast<std::uint32_t>(i);
    } else {
      for (std::size_t i = 0; i < n; ++i) rank_[options_.priority[i]] = static_cast<std::uint32_t>(i);
    }
    if (options_.policy == ready_policy::bottom_level) {
      const auto order = detail::kahn_on(g_);
      if (order.size() != n) throw not_a_dag("simulate: the graph has a cycle");
      bottom_ = detail::compute_levels(g_, order, model_, m_).bottom;
    }
    rng_ = detail::portable_random(options_.seed);
    sigma_ = std::sqrt(std::log1p(options_.cv * options_.cv));
    duration_.resize(n);
    for (vertex_id v = 0; v < n; ++v) duration_[v] = model_.compute_time(v, placement_[v]) * draw();
    pending_.resize(n);
    for (vertex_id v = 0; v < n; ++v) pending_[v] = static_cast<std::uint32_t>(g_.in_degree(v));
    output_holders_.assign(n, 0);
    edge_transfer_.assign(g_.edge_count(), detail::no_transfer);
    transfer_duration_.clear();
    transfer_holders_.clear();
    busy_.assign(m_, 0);
    topology_ = detail::topology_of(devices_);
    channel_busy_.assign(topology_.resource_count(), 0);
    transfer_queue_.clear();
    booking_of_.clear();
    booked_.assign(topology_.resource_count(), {});
    booked_next_.assign(topology_.resource_count(), 0);
    transfer_booking_.clear();
    if (options_.policy == ready_policy::strict_order && topology_.shared()) {
      const auto& order = options_.transfer_order;
      for (std::uint32_t i = 0; i < order.size(); ++i) {
        const transfer& t = order[i];
        if (t.tensor >= n || t.from >= m_ || t.to >= m_ || t.from == t.to)
          throw invalid_input("simulate: transfer_order entry " + std::to_string(i) + " names a vertex or device out of range");
        if (!booking_of_.emplace(std::tuple(t.tensor, t.to, t.bytes), i).second)
          throw invalid_input("simulate: transfer_order lists the tensor of " + name(t.tensor) + " to device " +
                              std::to_string(t.to) + " twice");
        for (const resource_id r : topology_.route_of(t.from, t.to)) booked_[r].push_back(i);
      }
    }
    ready_.assign(m_, {});
    strict_next_.assign(m_, 0);
    strict_list_.assign(m_, {});
    if (options_.policy == ready_policy::strict_order) {
      std::vector<vertex_id> by_rank(n);
      for (vertex_id v = 0; v < n; ++v) by_rank[rank_[v]] = v;
      for (const vertex_id v : by_rank) strict_list_[placement_[v]].push_back(v);
    }
    memory_now_.assign(m_, 0);
    s.order.assign(m_, {});
    s.busy.assign(m_, 0);
    s.peak_memory.assign(m_, 0);
    s.peak_memory_time.assign(m_, 0);
    for (vertex_id v = 0; v < n && result_.ok(); ++v) allocate(placement_[v], model_.persistent_bytes(v), v, "persistent");
    if (!result_.ok()) return finish_run();
    for (vertex_id v = 0; v < n; ++v)
      if (pending_[v] == 0) make_ready(v);
    dispatch();
    if (!result_.ok() || n == 0) finish_run();  // memory can run out at time 0
  }

  // Processes every event at the next event time, then starts what can start. Returns false when
  // the run is over (every vertex finished, or memory ran out).
  bool step() {
    if (done_) return false;
    if (events_.empty()) {
      stall();
      return false;
    }
    now_ = events_.top().time;
    while (!events_.empty() && events_.top().time <= now_ && result_.ok()) {
      const event ev = events_.top();
      events_.pop();
      if (ev.is_transfer) finish_transfer(ev.id);
      else finish_vertex(ev.id);
    }
    if (result_.ok()) dispatch();
    if (!result_.ok() || finished_ == g_.vertex_count()) {
      finish_run();
      return false;
    }
    return true;
  }

  // Runs to the end and returns the result.
  simulation_result& run() {
    while (step()) {
    }
    return result_;
  }

  [[nodiscard]] seconds now() const noexcept { return now_; }
  [[nodiscard]] bool done() const noexcept { return done_; }
  [[nodiscard]] std::size_t finished_count() const noexcept { return finished_; }
  [[nodiscard]] byte_count memory_in_use(device_id d) const { return memory_now_[d]; }
  [[nodiscard]] const simulation_result& result() const noexcept { return result_; }

 private:
  struct event {
    seconds time;
    std::uint64_t sequence;
    bool is_transfer;
    std::uint32_t id;
    bool operator>(const event& o) const { return std::tie(time, sequence) > std::tie(o.time, o.sequence); }
  };
  using ready_key = std::tuple<double, std::uint32_t, vertex_id>;  // policy key, rank, vertex

  void check_arguments(std::size_t n) const {
    if (placement_.size() != n)
      throw invalid_input("simulate: the placement has " + std::to_string(placement_.size()) +
                          " entries for " + std::to_string(n) + " vertices");
    for (vertex_id v = 0; v < n; ++v)
      if (placement_[v] >= m_)
        throw invalid_input("simulate: vertex " + name(v) + " is placed on device " + std::to_string(placement_[v]) +
                            " but there are " + std::to_string(m_) + " devices");
    if (!options_.priority.empty()) {
      if (options_.priority.size() != n)
        throw invalid_input("simulate: the priority order has " + std::to_string(options_.priority.size()) +
                            " entries for " + std::to_string(n) + " vertices");
      std::vector<std::uint8_t> seen(n, 0);
      for (const vertex_id v : options_.priority) {
        if (v >= n || seen[v])
          throw invalid_input("simulate: the priority order lists vertex " + std::to_string(v) +
                              (v >= n ? " which does not exist" : " twice"));
        seen[v] = 1;
      }
    }
    if (!std::isfinite(options_.cv) || options_.cv < 0)
      throw invalid_input("simulate: cv must be finite and >= 0, got " + std::to_string(options_.cv));
  }

  [[nodiscard]] std::string name(vertex_id v) const { return names_ ? names_(v) : "#" + std::to_string(v); }

  double draw() {
    if (options_.cv == 0) return 1.0;
    return std::exp(sigma_ * rng_.normal() - 0.5 * sigma_ * sigma_);
  }

  void push_event(seconds time, bool is_transfer, std::uint32_t id) {
    events_.push({time, sequence_++, is_transfer, id});
  }

  void allocate(device_id d, byte_count bytes, vertex_id v, const char* what) {
    if (bytes == 0) return;
    const byte_count capacity = devices_.capacity(d);
    if (bytes > capacity || memory_now_[d] > capacity - bytes) {
      std::ostringstream text;
      text << "device " << d << " runs out of memory at time " << now_ << " s: " << name(v) << " needs " << bytes
           << " " << what << " bytes with " << memory_now_[d] << " of " << capacity << " bytes in use";
      result_.outcome = {.code = status::out_of_memory, .vertex = v, .device = d, .time = now_, .needed = bytes,
                         .available = capacity > memory_now_[d] ? capacity - memory_now_[d] : 0, .message = text.str()};
      return;
    }
    memory_now_[d] += bytes;
    auto& s = result_.schedule;
    if (memory_now_[d] > s.peak_memory[d]) {
      s.peak_memory[d] = memory_now_[d];
      s.peak_memory_time[d] = now_;
    }
  }
  void release(device_id d, byte_count bytes) { memory_now_[d] -= bytes; }

  void make_ready(vertex_id v) {
    const device_id d = placement_[v];
    double key = 0;
    switch (options_.policy) {
      case ready_policy::placement_order:
      case ready_policy::strict_order: key = 0; break;
      case ready_policy::fifo: key = now_; break;
      case ready_policy::bottom_level: key = -bottom_[v]; break;
    }
    ready_[d].push({key, rank_[v], v});
  }

  void start_vertex(vertex_id v) {
    const device_id d = placement_[v];
    auto& s = result_.schedule;
    s.start[v] = now_;
    s.finish[v] = now_ + duration_[v];
    s.order[d].push_back(v);
    s.makespan = std::max(s.makespan, s.finish[v]);
    if (duration_[v] == 0) {
      // An empty interval holds nothing (schedule.hpp): v's inputs are freed before its output is
      // taken, as frees at one time come before allocations. Its consumers may start now.
      ++finished_;
      has_zero_duration_ = true;
      release_inputs(v);
      if (g_.out_degree(v) == 0) return;
      allocate(d, model_.output_bytes(v), v, "output");
      if (result_.ok()) hand_output(v);
      return;
    }
    allocate(d, model_.temporary_bytes(v), v, "temporary");
    if (result_.ok()) allocate(d, model_.output_bytes(v), v, "output");
    if (!result_.ok()) return;
    busy_[d] = 1;
    s.busy[d] += duration_[v];
    push_event(s.finish[v], false, v);
  }

  void finish_vertex(vertex_id v) {
    const device_id d = placement_[v];
    busy_[d] = 0;
    ++finished_;
    release(d, model_.temporary_bytes(v));
    hand_output(v);
    release_inputs(v);
  }

  void hand_output(vertex_id v) {
    const device_id d = placement_[v];
    auto& s = result_.schedule;
    // Consumers on this device get the output now; others get a transfer: one per tensor (edges of
    // equal bytes) and device when tensors are cached, else one per edge (schedule/schedule.hpp).
    std::uint32_t holders = 0;
    const auto succ = g_.successors(v);
    const auto out = g_.out_edges(v);
    const std::size_t first_new = s.transfers.size();
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const vertex_id w = succ[i];
      const device_id to = placement_[w];
      if (to == d) {
        ++holders;
        if (--pending_[w] == 0) make_ready(w);
        continue;
      }
      const edge_id e = out[i];
      const byte_count bytes = model_.edge_bytes(e);
      std::uint32_t t = detail::no_transfer;
      if (options_.cache_transfers)
        for (std::size_t k = first_new; k < s.transfers.size() && t == detail::no_transfer; ++k)
          if (s.transfers[k].to == to && s.transfers[k].bytes == bytes) t = static_cast<std::uint32_t>(k);
      if (t == detail::no_transfer) {
        t = static_cast<std::uint32_t>(s.transfers.size());
        s.transfers.push_back({v, e, d, to, 0, 0, bytes});
        transfer_holders_.push_back(0);
        transfer_duration_.push_back(
            model_.transfer_time(e, d, to) * (options_.vary_transfers ? draw() : 1.0));
        const auto booking = booking_of_.find(std::tuple(v, to, bytes));
        const bool listed = booking != booking_of_.end() && options_.transfer_order[booking->second].from == d;
        transfer_booking_.push_back(listed ? booking->second : detail::no_transfer);
        ++holders;
      }
      edge_transfer_[e] = t;
      ++transfer_holders_[t];
    }
    for (std::size_t k = first_new; k < s.transfers.size(); ++k) {
      const auto t = static_cast<std::uint32_t>(k);
      if (!topology_.shared() && room_for(s.transfers[k].to, s.transfers[k].bytes, 0, v, "received")) start_transfer(t);
      else transfer_queue_.insert({now_, rank_[v], s.transfers[k].edge, t});
    }
    output_holders_[v] = holders;
    if (holders == 0) release(d, model_.output_bytes(v));
  }

  // v no longer needs its inputs.
  void release_inputs(vertex_id v) {
    const device_id d = placement_[v];
    auto& s = result_.schedule;
    const auto pred = g_.predecessors(v);
    const auto in = g_.in_edges(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (placement_[u] == d) {
        if (--output_holders_[u] == 0) release(d, model_.output_bytes(u));
      } else {
        const std::uint32_t t = edge_transfer_[in[i]];
        if (--transfer_holders_[t] == 0) release(d, s.transfers[t].bytes);
      }
    }
  }

  void start_transfer(std::uint32_t t) {
    auto& tr = result_.schedule.transfers[t];
    allocate(tr.to, tr.bytes, tr.tensor, "received");
    if (!result_.ok()) return;
    for (const resource_id r : topology_.route_of(tr.from, tr.to)) {
      channel_busy_[r] = 1;
      if (transfer_booking_[t] != detail::no_transfer) ++booked_next_[r];
    }
    tr.start = now_;
    tr.finish = now_ + transfer_duration_[t];
    auto& s = result_.schedule;
    s.bytes_moved += tr.bytes;
    s.makespan = std::max(s.makespan, tr.finish);
    if (transfer_duration_[t] == 0) has_zero_duration_ = true;
    push_event(tr.finish, true, t);
  }

  void finish_transfer(std::uint32_t t) {
    const auto& tr = result_.schedule.transfers[t];
    for (const resource_id r : topology_.route_of(tr.from, tr.to)) channel_busy_[r] = 0;
    const vertex_id u = tr.tensor;
    if (--output_holders_[u] == 0) release(tr.from, model_.output_bytes(u));
    const auto succ = g_.successors(u);
    const auto out = g_.out_edges(u);
    for (std::size_t i = 0; i < succ.size(); ++i)
      if (edge_transfer_[out[i]] == t && --pending_[succ[i]] == 0) make_ready(succ[i]);
  }

  // Starts every transfer and vertex that can start now; a zero-length vertex finishes at once and
  // may let more start, so this repeats until nothing does.
  void dispatch() {
    waiting_ = {};
    for (bool started = true; started && result_.ok();) {
      started = false;
      // Transfers first: they never wait for devices, and a device that starts now may be a receiver.
      for (auto it = transfer_queue_.begin(); it != transfer_queue_.end() && result_.ok();) {
        const auto& tr = result_.schedule.transfers[std::get<3>(*it)];
        const route path = topology_.route_of(tr.from, tr.to);
        const std::uint32_t booking = transfer_booking_[std::get<3>(*it)];
        const auto blocked = [&](resource_id r) {
          if (channel_busy_[r] != 0) return true;
          // A booked transfer waits for the ones booked before it on each of its resources.
          return booking != detail::no_transfer && booked_[r][booked_next_[r]] != booking;
        };
        if (std::any_of(path.begin(), path.end(), blocked) || !room_for(tr.to, tr.bytes, 0, tr.tensor, "received")) {
          ++it;
          continue;
        }
        start_transfer(std::get<3>(*it));
        it = transfer_queue_.erase(it);
      }
      for (device_id d = 0; d < m_ && result_.ok(); ++d) {
        if (busy_[d]) continue;
        if (options_.policy == ready_policy::strict_order) {
          auto& next = strict_next_[d];
          const auto& list = strict_list_[d];
          if (next < list.size() && pending_[list[next]] == 0 && vertex_fits(list[next])) {
            start_vertex(list[next++]);
            started = true;
          }
        } else {
          // The first ready vertex in policy order that fits; the others wait for memory.
          skipped_.clear();
          while (!ready_[d].empty()) {
            const auto top = ready_[d].top();
            ready_[d].pop();
            if (vertex_fits(std::get<2>(top))) {
              start_vertex(std::get<2>(top));
              started = true;
              break;
            }
            skipped_.push_back(top);
          }
          for (const auto& key : skipped_) ready_[d].push(key);
        }
      }
    }
  }

  // Whether `bytes` more fit on d now, counting `freed` bytes released first. With wait_for_memory
  // a no is remembered (the run reports it if nothing else can go on); without, allocation fails
  // later as it always did, so this says yes.
  bool room_for(device_id d, byte_count bytes, byte_count freed, vertex_id v, const char* what) {
    if (!options_.wait_for_memory || bytes == 0) return true;
    const byte_count capacity = devices_.capacity(d);
    const byte_count held = memory_now_[d] - std::min(freed, memory_now_[d]);
    if (bytes <= capacity && held <= capacity - bytes) return true;
    waiting_ = {d, v, bytes, capacity > held ? capacity - held : 0, what};
    return false;
  }
  // Whether v can start now: its temporary and output bytes (for a zero-length vertex, its output
  // after the inputs it frees at once).
  bool vertex_fits(vertex_id v) {
    const device_id d = placement_[v];
    if (duration_[v] != 0)
      return room_for(d, detail::saturating_add(model_.temporary_bytes(v), model_.output_bytes(v)), 0, v,
                      "temporary and output");
    if (g_.out_degree(v) == 0) return true;
    return room_for(d, model_.output_bytes(v), freed_by_inputs(v), v, "output");
  }
  // Bytes release_inputs(v) would free on v's device.
  byte_count freed_by_inputs(vertex_id v) {
    const device_id d = placement_[v];
    const auto pred = g_.predecessors(v);
    const auto in = g_.in_edges(v);
    drops_.clear();
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (placement_[u] == d) drops_.emplace_back(0, u);
      else drops_.emplace_back(1, edge_transfer_[in[i]]);
    }
    std::sort(drops_.begin(), drops_.end());
    byte_count freed = 0;
    for (std::size_t i = 0; i < drops_.size();) {
      std::size_t j = i;
      while (j < drops_.size() && drops_[j] == drops_[i]) ++j;
      const auto [kind, id] = drops_[i];
      const auto count = static_cast<std::uint32_t>(j - i);
      if (kind == 0 && output_holders_[id] == count) freed += model_.output_bytes(id);
      if (kind == 1 && transfer_holders_[id] == count) freed += result_.schedule.transfers[id].bytes;
      i = j;
    }
    return freed;
  }

  // No events left but vertices unfinished: only a strict order that contradicts the graph does that.
  void stall() {
    if (waiting_.vertex != no_vertex) {
      std::ostringstream text;
      text << "device " << waiting_.device << " runs out of memory at time " << now_ << " s: " << name(waiting_.vertex)
           << " needs " << waiting_.needed << " " << waiting_.what << " bytes with " << waiting_.available << " of "
           << devices_.capacity(waiting_.device) << " bytes free, and nothing running can free more";
      result_.outcome = {.code = status::out_of_memory, .vertex = waiting_.vertex, .device = waiting_.device, .time = now_,
                         .needed = waiting_.needed, .available = waiting_.available, .message = text.str()};
      finish_run();
      return;
    }
    for (device_id d = 0; d < m_; ++d) {
      const auto& list = strict_list_.empty() ? std::vector<vertex_id>{} : strict_list_[d];
      if (strict_next_.size() > d && strict_next_[d] < list.size())
        throw invalid_input("simulate: the priority order runs " + name(list[strict_next_[d]]) + " on device " +
                            std::to_string(d) + " before one of its inputs can be produced");
    }
    if (!options_.transfer_order.empty())
      throw invalid_input("simulate: the run stalled: transfer_order lists a transfer this replay never makes "
                          "(another placement or cache setting than the schedule it came from?)");
    throw invalid_input("simulate: the run stalled with " + std::to_string(g_.vertex_count() - finished_) +
                        " vertices left");
  }

  void finish_run() {
    done_ = true;
    // With positive durations the memory tracked during the run is exact; a zero-length activity
    // can free at a time after allocations at that same time were made, so recompute then.
    if (result_.ok() && has_zero_duration_) {
      auto& s = result_.schedule;
      auto profile = compute_memory_profile(g_, s, model_, m_);
      s.peak_memory = std::move(profile.peak);
      s.peak_memory_time = std::move(profile.peak_time);
    }
  }

  const csr_graph& g_;
  const M& model_;
  const D& devices_;
  std::span<const device_id> placement_;
  simulate_options options_;
  std::function<std::string(vertex_id)> names_;
  std::size_t m_ = 0;

  simulation_result result_;
  seconds now_ = 0;
  std::size_t finished_ = 0;
  bool done_ = false;
  bool has_zero_duration_ = false;
  std::uint64_t sequence_ = 0;
  std::priority_queue<event, std::vector<event>, std::greater<>> events_;
  std::vector<std::uint32_t> rank_;
  std::vector<seconds> bottom_;
  detail::portable_random rng_{0};
  double sigma_ = 0;
  std::vector<seconds> duration_;
  std::vector<std::uint32_t> pending_;         // inputs not yet on the vertex's device, per vertex
  std::vector<std::uint32_t> output_holders_;  // who still needs a vertex's output on its own device
  std::vector<std::uint32_t> edge_transfer_;   // the transfer serving each cross-device edge
  std::vector<seconds> transfer_duration_;
  std::vector<std::uint32_t> transfer_holders_;  // consumers still needing a received copy
  std::vector<std::uint8_t> busy_;
  gantry::topology topology_;
  std::vector<std::uint8_t> channel_busy_;  // per resource of the topology
  // The last start that waited for memory (wait_for_memory): reported if the run cannot go on.
  struct memory_wait {
    device_id device = no_device;
    vertex_id vertex = no_vertex;
    byte_count needed = 0, available = 0;
    const char* what = "";
  } waiting_;
  std::vector<ready_key> skipped_;
  std::vector<std::pair<int, std::uint32_t>> drops_;
  // Strict replay with a transfer order: per (tensor, receiver, bytes) its place in the order; per
  // resource the places of the transfers it serves, in order, and how many have started; per
  // transfer of the run its place (no_transfer: not listed).
  std::map<std::tuple<vertex_id, device_id, byte_count>, std::uint32_t> booking_of_;
  std::vector<std::vector<std::uint32_t>> booked_;
  std::vector<std::size_t> booked_next_;
  std::vector<std::uint32_t> transfer_booking_;
  std::set<std::tuple<seconds, std::uint32_t, edge_id, std::uint32_t>> transfer_queue_;
  std::vector<std::priority_queue<ready_key, std::vector<ready_key>, std::greater<>>> ready_;
  std::vector<std::size_t> strict_next_;
  std::vector<std::vector<vertex_id>> strict_list_;
  std::vector<byte_count> memory_now_;
};

// Simulates `placement` (a device per vertex) of g. Bad arguments throw invalid_input; running out
// of memory is a status in the result.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] simulation_result simulate(const G& graph, const M& model, const D& devices,
                                         std::span<const device_id> placement, simulate_options options = {}) {
  const detail::csr_view<G> g(graph);
  if (const auto cycle = g->find_cycle(); !cycle.empty())
    throw not_a_dag("simulate: the graph has a cycle: " + describe_cycle(graph, cycle));
  simulator<M, D> sim(*g, model, devices, placement, options,
                      [&graph](vertex_id v) { return "'" + vertex_name(graph, v) + "'"; });
  return std::move(sim.run());
}

// Makespans of repeated runs with drawn durations (run i uses seed + i).
struct makespan_distribution {
  std::size_t runs = 0;
  std::size_t failed = 0;  // runs that ran out of memory
  seconds mean = 0, stddev = 0, min = 0, p50 = 0, p95 = 0, max = 0;
  std::vector<seconds> makespans;  // of the successful runs, in run order
};

template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] makespan_distribution simulate_runs(const G& graph, const M& model, const D& devices,
                                                  std::span<const device_id> placement, std::size_t runs,
                                                  simulate_options options = {}) {
  const detail::csr_view<G> g(graph);
  if (const auto cycle = g->find_cycle(); !cycle.empty())
    throw not_a_dag("simulate: the graph has a cycle: " + describe_cycle(graph, cycle));
  makespan_distribution out;
  out.runs = runs;
  const std::uint64_t seed = options.seed;
  for (std::size_t i = 0; i < runs; ++i) {
    options.seed = seed + i;
    simulator<M, D> sim(*g, model, devices, placement, options);
    const auto& r = sim.run();
    if (r.ok()) out.makespans.push_back(r.schedule.makespan);
    else ++out.failed;
  }
  if (out.makespans.empty()) return out;
  std::vector<seconds> sorted = out.makespans;
  std::sort(sorted.begin(), sorted.end());
  const auto quantile = [&](double q) {  // nearest rank
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  double sum = 0;
  for (const seconds x : sorted) sum += x;
  out.mean = sum / static_cast<double>(sorted.size());
  double squares = 0;
  for (const seconds x : sorted) squares += (x - out.mean) * (x - out.mean);
  out.stddev = sorted.size() > 1 ? std::sqrt(squares / static_cast<double>(sorted.size() - 1)) : 0.0;
  out.min = sorted.front();
  out.max = sorted.back();
  out.p50 = quantile(0.5);
  out.p95 = quantile(0.95);
  return out;
}

}  // namespace gantry
