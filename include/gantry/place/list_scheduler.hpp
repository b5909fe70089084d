// The list-scheduling engine behind ETF, m-ETF, Critical Path and HEFT: vertices are placed one at a
// time by a selection policy (which vertex, which device) while the engine keeps device timelines,
// transfer channels, a tensor cache per device and memory: either a static reservation per vertex or
// a timeline per device that frees memory as Baechi's execution simulator does (Baechi §2.3, §3.1-3.4, §4.2).
// list_scheduler steps through a run; list_schedule() is the one-call form.
//
// What the simulator (sim/simulator.hpp) reproduces: running the returned placement with
// ready_policy::strict_order and priority = placement.order gives exactly the engine's start and
// finish times in parallel communication mode, provided every out-edge of a vertex carries the same
// bytes (one tensor) or transfer times depend on bytes alone. In sequential and duplex modes the
// engine queues a vertex's transfers behind those already reserved when the vertex is placed
// (Baechi §3.4), while the simulator starts ready transfers in order of their producers' finish
// times; a transfer reserved later but ready earlier runs first there, so times can differ.
// Both schedules are valid; neither can know the other's channel order without re-timing the past.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/memory_timeline.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gantry {

struct list_schedule_result {
  gantry::placement placement;  // order: vertices by (start, finish, placement step), a topological order
  gantry::schedule schedule;    // complete and summarized when ok; empty after a failure
  bool forward_only = false;    // placed by forward vertices first (Baechi §3.3)

  [[nodiscard]] bool ok() const noexcept { return placement.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

// Which vertex goes next.
enum class vertex_selection {
  earliest_start_pair,  // ETF: the (ready vertex, device) pair that can start first
  highest_priority,     // the ready vertex with the largest priority (Critical Path, HEFT)
};

// Where a vertex chosen by priority goes.
enum class device_selection { earliest_start, earliest_finish };

// How memory-aware placement counts a device's memory.
enum class memory_accounting {
  // Baechi's static rule: placing v on d takes total_bytes(v) (the whole group's for a group's first
  // member) plus the tensors d receives for it, for the rest of the run.
  reserved,
  // Memory over time by the rules in schedule/schedule.hpp (Baechi §4.2): temporary bytes are freed
  // when the vertex finishes, an output once its consumers and transfers are done, a received copy
  // once the consumers it serves there are done; persistent bytes (a group's, at its first member)
  // are held from time 0. A hold whose consumers are not all placed yet lasts to infinity until
  // they are. v fits on d when its new holds keep d at or below capacity at every time from each
  // hold's start on, so the engine's schedule stays within memory by construction. A vertex that
  // fits nowhere now waits while other vertices can be placed (their placement may free memory);
  // the run fails only when no ready vertex fits anywhere.
  dynamic,
};

// An algorithm, as the engine sees it. Ties: earliest time, then Kahn order of the vertex, then
// lowest device id (Baechi's code); priority ties also go to the earlier vertex in Kahn order.
struct list_policy {
  std::string name = "list scheduling";  // used in messages
  vertex_selection selection = vertex_selection::earliest_start_pair;
  device_selection device = device_selection::earliest_start;  // for highest_priority
  bool insertion = false;         // place into the earliest idle gap long enough (HEFT); highest_priority only
  std::vector<seconds> priority;  // per vertex, for highest_priority: larger goes first
};

struct list_options {
  // Memory-aware placement (the "m-" algorithms): a device that cannot hold the vertex is skipped.
  bool respect_memory = false;
  // How memory is counted when it is respected.
  memory_accounting accounting = memory_accounting::dynamic;
  // Overrides the devices' communication mode.
  std::optional<comm_mode> comm{};
  // A tensor is sent to a device once; later consumers there use the copy (Baechi's code).
  bool cache_transfers = true;
  // Colocation group per vertex (no_group: alone); empty for none. See place/colocation.hpp.
  std::vector<std::uint32_t> group{};
  // Co-placement (Baechi §3.2): a vertex whose output has exactly one consumer joins its group.
  bool co_place_single_consumer = false;
  // Forward vertex per vertex (no_vertex for forward vertices); empty for none.
  std::vector<vertex_id> forward_of{};
  // Each backward vertex joins its forward vertex's group (Baechi §3.2).
  bool co_place_forward_backward = false;
  // Place forward vertices first; each backward vertex then follows its forward vertex's device
  // (Baechi §3.3). Used when one device could hold the whole graph (or memory is not respected);
  // otherwise every vertex is placed with the pairs co-placed, as Baechi does when memory is short.
  bool forward_only = false;
  // A device per vertex that the vertex (and its group) must use; no_device leaves it free.
  std::vector<device_id> fixed_device{};
};

namespace detail {
template <class D>
std::string list_device_label(const D& devices, device_id d) {
  if constexpr (requires { devices[d].name; }) {
    if (!devices[d].name.empty()) return devices[d].name;
  }
  return "device " + std::to_string(d);
}
inline byte_count saturating_add(byte_count a, byte_count b) {
  return a > unlimited_memory - b ? unlimited_memory : a + b;
}

}  // namespace detail

// The engine as a class, to watch or interleave a run:
//   list_scheduler s(g, model, devices, etf_policy(), {.respect_memory = true});
//   s.init(); while (s.step()) show(s.last_placed());  auto result = s.result();
// Holds references to its arguments: they must outlive it. Throws invalid_input for options of the
// wrong size, and not_a_dag (naming a cycle) when the graph has one.
// Complexity: O((n + e) · m · log n) with earliest_start_pair (a heap of candidates per device
// keyed by earliest start, entries removed lazily), O((n + e) · m + n log n) with highest_priority
// (plus the gap search with insertion). Dynamic memory adds O(log n) per hold and per check of a
// device whose peak could be exceeded (a check is O(1) while the device's peak plus the vertex's
// bytes fit), plus another look at vertices set aside for memory after each placement.
template <adapted_graph G, placement_model M, device_set D>
class list_scheduler {
 public:
  list_scheduler(const G& graph, const M& model, const D& devices, list_policy policy, list_options options = {})
      : graph_(graph), view_(graph), model_(model), devices_(devices), policy_(std::move(policy)),
        options_(std::move(options)) {
    init();
  }
  list_scheduler(const list_scheduler&) = delete;
  list_scheduler& operator=(const list_scheduler&) = delete;

  // Resets to nothing placed.
  void init() {
    const csr_graph& g = *view_;
    n_ = g.vertex_count();
    m_ = devices_.device_count();
    comm_ = options_.comm.value_or(devices_.comm());
    check_arguments();
    const auto topo = detail::kahn_on(g);
    detail::require_dag(graph_, g, topo);
    rank_.assign(n_, 0);
    at_rank_ = topo;
    for (std::uint32_t i = 0; i < n_; ++i) rank_[topo[i]] = i;

    status_ = status::ok;
    message_.clear();
    failed_vertex_ = no_vertex;
    placed_count_ = 0;
    last_placed_ = no_vertex;
    device_of_.assign(n_, no_device);
    start_.assign(n_, 0);
    finish_.assign(n_, 0);
    step_of_.assign(n_, 0);
    waiting_inputs_.resize(n_);
    for (vertex_id v = 0; v < n_; ++v) waiting_inputs_[v] = static_cast<std::uint32_t>(g.in_degree(v));
    available_.assign(m_, 0);
    free_.resize(m_);
    for (device_id d = 0; d < m_; ++d) free_[d] = devices_.capacity(d);
    dynamic_ = options_.respect_memory && options_.accounting == memory_accounting::dynamic;
    timeline_.resize(dynamic_ ? m_ : 0);
    for (auto& timeline : timeline_) timeline.clear();
    persistent_held_.assign(dynamic_ ? m_ : 0, 0);
    consumers_left_.resize(dynamic_ ? n_ : 0);
    for (vertex_id v = 0; v < consumers_left_.size(); ++v) consumers_left_[v] = static_cast<std::uint32_t>(g.out_degree(v));
    latest_on_.assign(dynamic_ ? m_ : 0, -1.0);
    freed_.assign(dynamic_ ? m_ : 0, 0);
    blocked_.assign(dynamic_ && pair_mode() ? m_ : 0, {});
    held_back_.clear();
    channel_free_.assign(comm_ == comm_mode::parallel ? 0 : comm_ == comm_mode::sequential ? m_ : 2 * m_, 0);
    transfers_.clear();
    transfer_next_.clear();
    first_transfer_.assign(n_, no_transfer);
    gaps_.assign(policy_.insertion ? m_ : 0, {});
    for (auto& gaps : gaps_) gaps.emplace(0.0, std::numeric_limits<seconds>::infinity());
    stamp_.assign(n_, 0);
    stamp_now_ = 0;

    // Tensor edge: the out-edge carrying the most bytes (the first such); a cached copy carries it.
    tensor_edge_.assign(n_, no_edge);
    for (vertex_id u = 0; u < n_; ++u)
      for (const edge_id e : g.out_edges(u))
        if (tensor_edge_[u] == no_edge || model_.edge_bytes(e) > model_.edge_bytes(tensor_edge_[u])) tensor_edge_[u] = e;

    // Groups.
    const bool pairs = options_.co_place_forward_backward || options_.forward_only;
    const bool any_group = !options_.group.empty() || options_.co_place_single_consumer ||
                           (pairs && !options_.forward_of.empty());
    if (any_group) {
      group_of_ = detail::merge_groups(g, options_.group, options_.co_place_single_consumer,
                                       pairs ? options_.forward_of : std::vector<vertex_id>{});
    } else {
      group_of_.resize(n_);
      for (vertex_id v = 0; v < n_; ++v) group_of_[v] = v;
    }
    std::uint32_t groups = 0;
    for (const auto gr : group_of_) groups = std::max(groups, gr + 1);
    group_bytes_.assign(groups, 0);
    group_size_.assign(groups, 0);
    group_device_.assign(groups, no_device);
    group_reserved_.assign(groups, 0);
    group_persistent_.assign(groups, 0);
    for (vertex_id v = 0; v < n_; ++v) {
      group_bytes_[group_of_[v]] = detail::saturating_add(group_bytes_[group_of_[v]], total_bytes(model_, v));
      group_persistent_[group_of_[v]] =
          detail::saturating_add(group_persistent_[group_of_[v]], model_.persistent_bytes(v));
      ++group_size_[group_of_[v]];
      if (options_.fixed_device.empty() || options_.fixed_device[v] == no_device) continue;
      auto& fixed = group_device_[group_of_[v]];
      if (fixed != no_device && fixed != options_.fixed_device[v])
        throw invalid_input(policy_.name + ": vertex " + name(v) + " is fixed to device " +
                            std::to_string(options_.fixed_device[v]) + " but its group is fixed to device " +
                            std::to_string(fixed));
      fixed = options_.fixed_device[v];
    }

    // Forward-only placement holds backward vertices back until every forward vertex is placed.
    forward_gate_ = false;
    gate_open_ = true;
    parked_.clear();
    forward_left_ = 0;
    if (options_.forward_only && !options_.forward_of.empty()) {
      forward_gate_ = true;
      if (options_.respect_memory) {
        byte_count total = 0, largest = 0;
        for (vertex_id v = 0; v < n_; ++v) total = detail::saturating_add(total, total_bytes(model_, v));
        for (device_id d = 0; d < m_; ++d) largest = std::max(largest, devices_.capacity(d));
        forward_gate_ = total <= largest;
      }
      for (vertex_id v = 0; v < n_; ++v) forward_left_ += is_backward(v) ? 0 : 1;
      gate_open_ = !forward_gate_ || forward_left_ == 0;
    }

    pending_.assign(pair_mode() ? m_ : 0, {});
    startable_.assign(pair_mode() ? m_ : 0, {});
    candidates_.assign(pair_mode() ? n_ : 0, 0);
    best_known_.assign(pair_mode() ? m_ : 0, 0);
    best_.assign(pair_mode() ? m_ : 0, std::nullopt);
    by_priority_ = {};
    for (vertex_id v = 0; v < n_ && status_ == status::ok; ++v)
      if (waiting_inputs_[v] == 0) make_ready(v);
  }

  // Places one vertex. Returns false when every vertex is placed or the run failed.
  bool step() {
    if (done()) return false;
    for (;;) {
      const bool placed = pair_mode() ? step_pairs() : step_priority();
      if (placed || status_ != status::ok) return placed;
      if (parked_.empty()) {
        if (fail_blocked()) return false;  // every ready vertex waits for memory that nothing frees
        // cannot happen on a DAG; kept so that a bug is a status, not a hang
        fail(status::infeasible, policy_.name + ": no vertex is ready with " + std::to_string(n_ - placed_count_) +
                                     " vertices left");
        return false;
      }
      release_blocked();
      open_gate();  // a forward vertex waits for a backward one: give up the gate
    }
  }

  // Runs to the end from the current state and returns the result.
  list_schedule_result run() {
    while (step()) {
    }
    return result();
  }

  [[nodiscard]] bool done() const noexcept { return status_ != status::ok || placed_count_ == n_; }
  [[nodiscard]] gantry::status status() const noexcept { return status_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  [[nodiscard]] std::size_t placed_count() const noexcept { return placed_count_; }
  [[nodiscard]] vertex_id last_placed() const noexcept { return last_placed_; }
  [[nodiscard]] vertex_id failed_vertex() const noexcept { return failed_vertex_; }
  [[nodiscard]] bool is_placed(vertex_id v) const { return device_of_[v] != no_device; }
  [[nodiscard]] device_id device_of(vertex_id v) const { return device_of_[v]; }
  [[nodiscard]] seconds start_of(vertex_id v) const { return start_[v]; }
  [[nodiscard]] seconds finish_of(vertex_id v) const { return finish_[v]; }
  // When device d finishes the last vertex placed on it so far.
  [[nodiscard]] seconds available_at(device_id d) const { return available_[d]; }
  // Memory of d not yet reserved (meaningful with respect_memory); with dynamic accounting, its
  // capacity less the most it holds at any time so far (holds not yet ended counted to infinity).
  [[nodiscard]] byte_count free_memory(device_id d) const {
    if (!dynamic_) return free_[d];
    return free_from(d, 0);
  }
  [[nodiscard]] const std::vector<transfer>& transfers() const noexcept { return transfers_; }
  // Whether backward vertices wait for every forward vertex (forward_only, memory permitting).
  [[nodiscard]] bool forward_only_active() const noexcept { return forward_gate_; }

  // The placement so far (no_device for vertices not placed) and, when every vertex is placed, the
  // schedule with its summary.
  [[nodiscard]] list_schedule_result result() const {
    list_schedule_result out;
    out.forward_only = forward_gate_;
    auto& p = out.placement;
    p.status = status_;
    p.message = message_;
    p.device = device_of_;
    for (vertex_id v = 0; v < n_; ++v)
      if (device_of_[v] != no_device) p.order.push_back(v);
    std::sort(p.order.begin(), p.order.end(), [&](vertex_id a, vertex_id b) {
      return std::tie(start_[a], finish_[a], step_of_[a]) < std::tie(start_[b], finish_[b], step_of_[b]);
    });
    if (status_ != status::ok || placed_count_ != n_) return out;
    auto& s = out.schedule;
    s.device = device_of_;
    s.start = start_;
    s.finish = finish_;
    s.transfers = transfers_;
    summarize(s, *view_, model_, m_);
    return out;
  }

 private:
  static constexpr std::uint32_t no_transfer = std::numeric_limits<std::uint32_t>::max();
  struct input {
    vertex_id producer;
    edge_id edge;  // the edge whose bytes and time a new transfer would use
  };
  struct pending_entry {
    seconds ready;
    std::uint32_t rank;
    bool operator>(const pending_entry& o) const { return std::tie(ready, rank) > std::tie(o.ready, o.rank); }
  };
  struct priority_entry {
    seconds priority;
    std::uint32_t rank;
    bool operator<(const priority_entry& o) const {  // max-heap: larger priority, then smaller rank
      return priority < o.priority || (priority == o.priority && rank > o.rank);
    }
  };

  [[nodiscard]] bool pair_mode() const { return policy_.selection == vertex_selection::earliest_start_pair; }
  [[nodiscard]] bool is_backward(vertex_id v) const {
    return !options_.forward_of.empty() && options_.forward_of[v] != no_vertex;
  }
  [[nodiscard]] std::string name(vertex_id v) const { return "'" + vertex_name(graph_, v) + "'"; }
  [[nodiscard]] std::size_t send_channel(device_id d) const { return comm_ == comm_mode::duplex ? 2 * d : d; }
  [[nodiscard]] std::size_t receive_channel(device_id d) const { return comm_ == comm_mode::duplex ? 2 * d + 1 : d; }

  void check_arguments() const {
    const auto size = [&](std::size_t got, const char* what) {
      if (got != 0 && got != n_)
        throw invalid_input(policy_.name + ": " + what + " has " + std::to_string(got) + " entries for " +
                            std::to_string(n_) + " vertices");
    };
    size(options_.group.size(), "the group vector");
    size(options_.forward_of.size(), "the forward vector");
    size(options_.fixed_device.size(), "the fixed-device vector");
    for (vertex_id v = 0; v < options_.fixed_device.size(); ++v)
      if (options_.fixed_device[v] != no_device && options_.fixed_device[v] >= m_)
        throw invalid_input(policy_.name + ": vertex " + name(v) + " is fixed to device " +
                            std::to_string(options_.fixed_device[v]) + " but there are " + std::to_string(m_) +
                            " devices");
    if (n_ > 0 && m_ == 0) throw invalid_input(policy_.name + ": there are no devices to place " + std::to_string(n_) + " vertices on");
    if (!pair_mode() && policy_.priority.size() != n_)
      throw invalid_input(policy_.name + ": the priority vector has " + std::to_string(policy_.priority.size()) +
                          " entries for " + std::to_string(n_) + " vertices");
    for (vertex_id v = 0; v < policy_.priority.size(); ++v)
      if (std::isnan(policy_.priority[v]))
        throw invalid_input(policy_.name + ": the priority of vertex " + name(v) + " is not a number");
    if (pair_mode() && policy_.insertion)
      throw invalid_input(policy_.name + ": insertion needs vertex_selection::highest_priority");
  }

  // --- readiness -------------------------------------------------------------------------------

  void make_ready(vertex_id v) {
    if (!gate_open_ && is_backward(v)) {
      parked_.push_back(v);
      return;
    }
    if (!pair_mode()) {
      by_priority_.push({policy_.priority[v], rank_[v]});
      return;
    }
    const std::uint32_t grp = group_of_[v];
    collect_inputs(v);
    std::uint32_t count = 0;
    for (device_id d = first_device(grp); d < last_device(grp); ++d) {
      const seconds ready = arrival(d, false);
      if (options_.respect_memory && !dynamic_ && need(v, d) > free_[d]) continue;
      pending_[d].push({ready, rank_[v]});
      forget_best_if_beaten(d, ready, rank_[v]);
      ++count;
    }
    candidates_[v] = count;
    if (count == 0) fail_memory(v);
  }

  // Vertices set aside because they fit nowhere get another chance (after a placement, which may
  // have freed memory or moved a device's start past a peak).
  void release_blocked() {
    if (!dynamic_) return;
    for (device_id d = 0; d < blocked_.size(); ++d) release_blocked(d);
    for (const std::uint32_t rank : held_back_) by_priority_.push({policy_.priority[at_rank_[rank]], rank});
    held_back_.clear();
  }
  void release_blocked(device_id d) {
    for (const pending_entry& entry : blocked_[d]) {
      pending_[d].push(entry);
      forget_best_if_beaten(d, entry.ready, entry.rank);
    }
    blocked_[d].clear();
  }
  // Fails on the first (in Kahn order) unplaced vertex set aside for memory, if any.
  bool fail_blocked() {
    if (!dynamic_) return false;
    std::uint32_t first = no_transfer;
    for (const auto& entries : blocked_)
      for (const pending_entry& entry : entries)
        if (device_of_[at_rank_[entry.rank]] == no_device) first = std::min(first, entry.rank);
    for (const std::uint32_t rank : held_back_)
      if (device_of_[at_rank_[rank]] == no_device) first = std::min(first, rank);
    if (first == no_transfer) return false;
    fail_memory(at_rank_[first]);
    return true;
  }

  void open_gate() {
    gate_open_ = true;
    std::vector<vertex_id> parked;
    parked.swap(parked_);
    std::sort(parked.begin(), parked.end(), [&](vertex_id a, vertex_id b) { return rank_[a] < rank_[b]; });
    for (const vertex_id v : parked)
      if (status_ == status::ok) make_ready(v);
  }

  [[nodiscard]] device_id first_device(std::uint32_t grp) const {
    return group_device_[grp] == no_device ? 0 : group_device_[grp];
  }
  [[nodiscard]] device_id last_device(std::uint32_t grp) const {
    return group_device_[grp] == no_device ? static_cast<device_id>(m_) : group_device_[grp] + 1;
  }

  // --- inputs and transfers ----------------------------------------------------------------------

  // The inputs of v that come from other vertices, one per producer when tensors are cached, in
  // the order transfers are reserved: producer's finish, then its place in the order, then edge.
  void collect_inputs(vertex_id v) {
    const csr_graph& g = *view_;
    inputs_.clear();
    ++stamp_now_;
    const auto pred = g.predecessors(v);
    const auto in = g.in_edges(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (options_.cache_transfers) {
        if (stamp_[u] == stamp_now_) continue;
        stamp_[u] = stamp_now_;
        inputs_.push_back({u, tensor_edge_[u]});
      } else {
        inputs_.push_back({u, in[i]});
      }
    }
    if (comm_ != comm_mode::parallel)
      std::sort(inputs_.begin(), inputs_.end(), [&](const input& a, const input& b) {
        return std::tie(finish_[a.producer], start_[a.producer], step_of_[a.producer], a.edge) <
               std::tie(finish_[b.producer], start_[b.producer], step_of_[b.producer], b.edge);
      });
  }

  [[nodiscard]] std::uint32_t cached(vertex_id u, device_id d) const {
    for (auto t = first_transfer_[u]; t != no_transfer; t = transfer_next_[t])
      if (transfers_[t].to == d) return t;
    return no_transfer;
  }

  // When every input of v (collected by collect_inputs) can be on device d. With commit, the
  // transfers are recorded and their channels reserved; without, channel state is left as it was.
  seconds arrival(device_id d, bool commit) {
    seconds ready = 0;
    touched_.clear();
    planned_.clear();
    for (const input& in : inputs_) {
      const vertex_id u = in.producer;
      const device_id from = device_of_[u];
      if (from == d) {
        ready = std::max(ready, finish_[u]);
        continue;
      }
      if (options_.cache_transfers) {
        if (const auto t = cached(u, d); t != no_transfer) {
          ready = std::max(ready, transfers_[t].finish);
          continue;
        }
      }
      const seconds duration = model_.transfer_time(in.edge, from, d);
      seconds begin = finish_[u];
      if (!channel_free_.empty()) {
        const auto sc = send_channel(from), rc = receive_channel(d);
        begin = std::max({begin, channel_free_[sc], channel_free_[rc]});
        if (!commit) {
          touched_.emplace_back(sc, channel_free_[sc]);
          touched_.emplace_back(rc, channel_free_[rc]);
        }
        channel_free_[sc] = channel_free_[rc] = begin + duration;
      }
      const seconds end = begin + duration;
      ready = std::max(ready, end);
      if (dynamic_) planned_.emplace_back(copy_held_from(begin, u), model_.edge_bytes(in.edge));
      if (commit) {
        const auto t = static_cast<std::uint32_t>(transfers_.size());
        transfers_.push_back({u, in.edge, from, d, begin, end, model_.edge_bytes(in.edge)});
        transfer_next_.push_back(first_transfer_[u]);  // every transfer of a tensor, newest first
        first_transfer_[u] = t;
      }
    }
    for (auto it = touched_.rbegin(); it != touched_.rend(); ++it) channel_free_[it->first] = it->second;
    return ready;
  }

  // Bytes that placing v on d would reserve: its group's when the group has none yet, plus the
  // tensors d would receive for it.
  [[nodiscard]] byte_count need(vertex_id v, device_id d) const {
    const std::uint32_t grp = group_of_[v];
    byte_count bytes = group_reserved_[grp] ? 0 : group_bytes_[grp];
    for (const input& in : inputs_) {
      if (device_of_[in.producer] == d) continue;
      if (options_.cache_transfers && cached(in.producer, d) != no_transfer) continue;
      bytes = detail::saturating_add(bytes, model_.edge_bytes(in.edge));
    }
    return bytes;
  }

  // --- dynamic memory ---------------------------------------------------------------------------

  [[nodiscard]] bool tracked(device_id d) const { return devices_.capacity(d) != unlimited_memory; }
  [[nodiscard]] static std::int64_t as_signed(byte_count bytes) {
    return static_cast<std::int64_t>(std::min<byte_count>(bytes, std::numeric_limits<std::int64_t>::max() / 4));
  }
  // Where the engine ends a hold [from, to). An empty hold takes nothing by the rules, but the
  // simulator allocates a zero-length vertex's bytes for an instant, so the engine keeps them for
  // the shortest non-empty interval: its schedule then runs in the simulator too.
  [[nodiscard]] static seconds hold_end(seconds from, seconds to) {
    return to > from ? to : std::nextafter(from, std::numeric_limits<seconds>::infinity());
  }
  // When the engine counts a received copy of u's output from, for a transfer starting at `start`.
  // With sequential channels the simulator starts ready transfers in order of their producers'
  // finish (see the top of this file), possibly before the engine's start, so the copy counts from
  // the earliest any schedule could send it.
  [[nodiscard]] seconds copy_held_from(seconds start, vertex_id u) const {
    return comm_ == comm_mode::parallel ? start : finish_[u];
  }
  // Capacity of d less the most it holds at any time from `from` on.
  [[nodiscard]] byte_count free_from(device_id d, seconds from) const {
    if (!tracked(d)) return unlimited_memory;
    const std::int64_t held = persistent_held_[d] + timeline_[d].peak_from(from);
    const auto capacity = as_signed(devices_.capacity(d));
    return held >= capacity ? 0 : static_cast<byte_count>(capacity - held);
  }
  // The holds placing v on d from `begin` to `end` would add, as (time, change) sorted by time;
  // uses the transfers recorded by the last arrival(d, ...). Returns the bytes they add in all.
  byte_count new_holds(vertex_id v, seconds begin, seconds end) {
    const csr_graph& g = *view_;
    holds_.clear();
    byte_count added = 0;
    const auto hold = [&](seconds from, seconds to, byte_count bytes, bool ends) {
      if (bytes == 0) return;
      added = detail::saturating_add(added, bytes);
      holds_.emplace_back(from, as_signed(bytes));
      if (ends) holds_.emplace_back(hold_end(from, to), -as_signed(bytes));
    };
    const std::uint32_t grp = group_of_[v];
    if (!group_reserved_[grp]) hold(0, 0, group_persistent_[grp], false);
    hold(begin, end, model_.temporary_bytes(v), true);
    hold(begin, end, model_.output_bytes(v), g.out_degree(v) == 0);
    // A received copy serves its one edge without caching; with caching, later consumers may use it.
    for (const auto& [from, bytes] : planned_) hold(from, end, bytes, !options_.cache_transfers);
    return added;
  }
  // Bytes placing v on d would add (as new_holds() counts them), without timing the transfers.
  [[nodiscard]] byte_count added_bytes(vertex_id v, device_id d) const {
    const std::uint32_t grp = group_of_[v];
    byte_count bytes = group_reserved_[grp] ? 0 : group_persistent_[grp];
    bytes = detail::saturating_add(bytes, detail::saturating_add(model_.temporary_bytes(v), model_.output_bytes(v)));
    for (const input& in : inputs_) {
      if (device_of_[in.producer] == d) continue;
      if (options_.cache_transfers && cached(in.producer, d) != no_transfer) continue;
      bytes = detail::saturating_add(bytes, model_.edge_bytes(in.edge));
    }
    return bytes;
  }
  // Whether `bytes` more fit on d at every time: a quick sufficient test.
  [[nodiscard]] bool fits_anyway(device_id d, byte_count bytes) const {
    return !tracked(d) ||
           persistent_held_[d] + timeline_[d].ceiling() + as_signed(bytes) <= as_signed(devices_.capacity(d));
  }
  // Whether the holds from new_holds(), adding `total` bytes in all, keep d within capacity at
  // every time. The common roomy case is settled by the device's peak alone, in O(1).
  [[nodiscard]] bool holds_fit(device_id d, byte_count total) {
    if (fits_anyway(d, total)) return true;
    const auto capacity = as_signed(devices_.capacity(d));
    const std::int64_t base = persistent_held_[d];
    std::sort(holds_.begin(), holds_.end());
    std::int64_t added = 0;
    for (std::size_t i = 0; i < holds_.size();) {
      const seconds from = holds_[i].first;
      for (; i < holds_.size() && holds_[i].first == from; ++i) added += holds_[i].second;
      if (added <= 0) continue;  // nothing added over this stretch: the timeline already fits
      const seconds to = i < holds_.size() ? holds_[i].first : std::numeric_limits<seconds>::infinity();
      if (base + added + timeline_[d].peak(from, to) > capacity) return false;
    }
    return true;
  }
  // Whether v fits on d, starting when the last arrival(d, ...) says its inputs are there.
  bool fits(vertex_id v, device_id d, seconds ready) {
    if (!tracked(d)) return true;
    const seconds length = model_.compute_time(v, d);
    const seconds begin = earliest_start(d, ready, length);
    return holds_fit(d, new_holds(v, begin, begin + length));
  }
  void hold_on(device_id d, seconds time, std::int64_t bytes) {
    if (!tracked(d)) return;
    timeline_[d].add(time, bytes);
    if (bytes < 0) freed_[d] = 1;
  }
  // Every consumer of u is placed: its output and its received copies now end (schedule.hpp's rules).
  void release_tensor(vertex_id u) {
    const csr_graph& g = *view_;
    const device_id home = device_of_[u];
    seconds output_end = finish_[u];
    for (const vertex_id w : g.successors(u)) {
      if (device_of_[w] == home) output_end = std::max(output_end, finish_[w]);
      else latest_on_[device_of_[w]] = std::max(latest_on_[device_of_[w]], finish_[w]);
    }
    for (auto t = first_transfer_[u]; t != no_transfer; t = transfer_next_[t]) {
      const transfer& copy = transfers_[t];
      output_end = std::max(output_end, copy.finish);
      if (options_.cache_transfers && copy.bytes != 0)
        hold_on(copy.to, hold_end(copy.start, std::max(copy.finish, latest_on_[copy.to])), -as_signed(copy.bytes));
    }
    for (const vertex_id w : g.successors(u)) latest_on_[device_of_[w]] = -1.0;
    if (const byte_count bytes = model_.output_bytes(u); bytes != 0)
      hold_on(home, hold_end(start_[u], output_end), -as_signed(bytes));
  }
  // Records the holds of v, just placed on d (new_group: its group's persistent bytes come now).
  void hold_placed(vertex_id v, device_id d, bool new_group, std::size_t first_new_transfer) {
    const csr_graph& g = *view_;
    if (new_group && tracked(d)) persistent_held_[d] += as_signed(group_persistent_[group_of_[v]]);
    const std::int64_t temporary = as_signed(model_.temporary_bytes(v));
    hold_on(d, start_[v], temporary + as_signed(model_.output_bytes(v)));
    hold_on(d, hold_end(start_[v], finish_[v]), -temporary);
    for (std::size_t t = first_new_transfer; t < transfers_.size(); ++t) {
      hold_on(d, copy_held_from(transfers_[t].start, transfers_[t].tensor), as_signed(transfers_[t].bytes));
      if (!options_.cache_transfers)
        hold_on(d, hold_end(transfers_[t].start, finish_[v]), -as_signed(transfers_[t].bytes));
    }
    for (const vertex_id u : g.predecessors(v))
      if (--consumers_left_[u] == 0) release_tensor(u);
    if (g.out_degree(v) == 0) release_tensor(v);
  }

  // Earliest start on d for a vertex of length `length` whose inputs are there at `ready`.
  [[nodiscard]] seconds earliest_start(device_id d, seconds ready, seconds length) const {
    if (!policy_.insertion) return std::max(available_[d], ready);
    const auto& gaps = gaps_[d];
    auto it = gaps.upper_bound(ready);
    if (it != gaps.begin()) --it;
    for (; it != gaps.end(); ++it) {
      const seconds begin = std::max(it->first, ready);
      if (begin + length <= it->second) return begin;
    }
    return std::max(available_[d], ready);  // unreachable: the last gap is unbounded
  }

  void occupy(device_id d, seconds begin, seconds end) {
    available_[d] = std::max(available_[d], end);
    if (!policy_.insertion) return;
    auto& gaps = gaps_[d];
    auto it = gaps.upper_bound(begin);
    --it;  // the gap holding [begin, end)
    const seconds gap_begin = it->first, gap_end = it->second;
    gaps.erase(it);
    if (gap_begin < begin) gaps.emplace(gap_begin, begin);
    if (end < gap_end) gaps.emplace(end, gap_end);
  }

  // --- placing -------------------------------------------------------------------------------

  void place(vertex_id v, device_id d) {
    const csr_graph& g = *view_;
    const std::uint32_t grp = group_of_[v];
    collect_inputs(v);
    if (options_.respect_memory && !dynamic_) free_[d] -= std::min(free_[d], need(v, d));
    const bool new_group = !group_reserved_[grp];
    if (new_group) {
      group_reserved_[grp] = 1;
      group_device_[grp] = d;
    }
    forget_best_after_placing(v, d, new_group);
    const std::size_t first_new_transfer = transfers_.size();
    const seconds ready = arrival(d, true);
    const seconds length = model_.compute_time(v, d);
    const seconds begin = earliest_start(d, ready, length);
    start_[v] = begin;
    finish_[v] = begin + length;
    occupy(d, begin, finish_[v]);
    device_of_[v] = d;
    step_of_[v] = static_cast<std::uint32_t>(placed_count_++);
    last_placed_ = v;
    if (dynamic_) {
      hold_placed(v, d, new_group, first_new_transfer);
      freed_[d] = 1;  // d's start moved: what it could not hold may fit later
      for (device_id x = 0; x < blocked_.size(); ++x)
        if (freed_[x]) release_blocked(x);
      std::fill(freed_.begin(), freed_.end(), 0);
      for (const std::uint32_t rank : held_back_) by_priority_.push({policy_.priority[at_rank_[rank]], rank});
      held_back_.clear();
    }
    if (!gate_open_ && !is_backward(v) && --forward_left_ == 0) open_gate();
    for (const vertex_id w : g.successors(v))
      if (--waiting_inputs_[w] == 0 && status_ == status::ok) make_ready(w);
  }

  // ETF: the best candidate of each device, then the best pair. A candidate whose group went to
  // another device is dropped; one that no longer fits is dropped (memory only shrinks), and
  // when a vertex has no device left the run fails. In sequential modes keys are lower bounds
  // (channels only get busier) and are checked again at the top.
  bool step_pairs() {
    std::optional<std::tuple<seconds, std::uint32_t, device_id>> best;
    for (device_id d = 0; d < m_ && status_ == status::ok; ++d) {
      if (!best_known_[d]) {
        best_[d] = best_on(d);
        best_known_[d] = status_ == status::ok;
      }
      const auto& candidate = best_[d];
      if (candidate && (!best || std::tuple(candidate->first, candidate->second, d) < *best))
        best = std::tuple(candidate->first, candidate->second, d);
    }
    if (status_ != status::ok || !best) return false;
    place(at_rank_[std::get<1>(*best)], std::get<2>(*best));
    return true;
  }

  std::optional<std::pair<seconds, std::uint32_t>> best_on(device_id d) {
    auto& pending = pending_[d];
    auto& startable = startable_[d];
    const bool recheck = comm_ != comm_mode::parallel;
    for (;;) {
      while (!pending.empty() && pending.top().ready <= available_[d]) {
        startable.push(pending.top().rank);
        pending.pop();
      }
      const bool from_startable = !startable.empty();
      if (!from_startable && pending.empty()) return std::nullopt;
      const std::uint32_t rank = from_startable ? startable.top() : pending.top().rank;
      const seconds key = from_startable ? available_[d] : pending.top().ready;
      const vertex_id v = at_rank_[rank];
      const auto drop = [&] {
        if (from_startable) startable.pop();
        else pending.pop();
      };
      const std::uint32_t grp = group_of_[v];
      if (device_of_[v] != no_device || (group_device_[grp] != no_device && group_device_[grp] != d)) {
        drop();
        continue;
      }
      if (options_.respect_memory || recheck) collect_inputs(v);
      if (dynamic_) {
        const bool roomy = fits_anyway(d, added_bytes(v, d));  // settles most checks without timing transfers
        const seconds ready = recheck || !roomy ? arrival(d, false) : key;
        if (recheck && ready > key) {
          drop();
          pending.push({ready, rank});
          continue;
        }
        if (!roomy && !fits(v, d, ready)) {
          drop();
          blocked_[d].push_back({key, rank});
          continue;
        }
        return std::pair(key, rank);
      }
      if (options_.respect_memory && need(v, d) > free_[d]) {
        drop();
        if (--candidates_[v] == 0) {
          fail_memory(v);
          return std::nullopt;
        }
        continue;
      }
      if (recheck) {
        const seconds ready = arrival(d, false);
        if (ready > key) {
          drop();
          pending.push({ready, rank});
          continue;
        }
      }
      return std::pair(key, rank);
    }
  }

  // Critical Path and HEFT: the ready vertex with the largest priority, on its best device.
  bool step_priority() {
    while (!by_priority_.empty()) {
      const vertex_id v = at_rank_[by_priority_.top().rank];
      by_priority_.pop();
      const std::uint32_t grp = group_of_[v];
      collect_inputs(v);
      device_id chosen = no_device;
      seconds best = 0;
      for (device_id d = first_device(grp); d < last_device(grp); ++d) {
        if (options_.respect_memory && !dynamic_ && need(v, d) > free_[d]) continue;
        const seconds length = model_.compute_time(v, d);
        const seconds ready = arrival(d, false);
        if (dynamic_ && !fits(v, d, ready)) continue;
        const seconds begin = earliest_start(d, ready, length);
        const seconds key = policy_.device == device_selection::earliest_start ? begin : begin + length;
        if (chosen == no_device || key < best) {
          chosen = d;
          best = key;
        }
      }
      if (chosen == no_device && dynamic_) {
        held_back_.push_back(rank_[v]);  // another vertex's placement may free memory for it
        continue;
      }
      if (chosen == no_device) {
        fail_memory(v);
        return false;
      }
      place(v, chosen);
      return true;
    }
    return false;
  }

  // A device's best candidate stays known until something that can change it happens: a placement
  // on the device (time and memory), the candidate placed or its group sent elsewhere, a better
  // entry pushed, or, with sequential channels, any reservation (keys are lower bounds there).
  void forget_best_after_placing(vertex_id v, device_id d, bool new_group) {
    if (!pair_mode()) return;
    const bool channels = comm_ != comm_mode::parallel;
    for (device_id other = 0; other < m_; ++other) {
      if (!best_known_[other]) continue;
      if (other == d || channels || !best_[other]) {
        best_known_[other] = 0;
        continue;
      }
      const vertex_id candidate = at_rank_[best_[other]->second];
      // Transfers made for v go into d only, so other devices' memory and arrivals stay as they were.
      if (candidate == v || (new_group && group_of_[candidate] == group_of_[v])) best_known_[other] = 0;
    }
  }
  void forget_best_if_beaten(device_id d, seconds ready, std::uint32_t rank) {
    if (best_known_[d] && (!best_[d] || std::tie(ready, rank) < std::tie(best_[d]->first, best_[d]->second)))
      best_known_[d] = 0;
  }

  // --- failure ---------------------------------------------------------------------------------

  void fail(gantry::status s, std::string message) {
    status_ = s;
    message_ = std::move(message);
  }

  void fail_memory(vertex_id v) {
    const std::uint32_t grp = group_of_[v];
    collect_inputs(v);
    std::ostringstream text;
    text << policy_.name << ": no device can hold vertex " << name(v) << ", which needs "
         << total_bytes(model_, v) << " bytes";
    if (group_size_[grp] > 1 && !group_reserved_[grp])
      text << " (" << group_bytes_[grp] << " for its group of " << group_size_[grp] << " vertices)";
    if (group_device_[grp] != no_device)
      text << " and must go to " << detail::list_device_label(devices_, group_device_[grp]);
    if (dynamic_) {
      // Per device: the bytes v would add and the device's free memory from v's first new hold on.
      text << "; with its incoming tensors, free memory from when it would start taking it:";
      for (device_id d = first_device(grp); d < last_device(grp); ++d) {
        const seconds ready = arrival(d, false);
        const seconds length = model_.compute_time(v, d);
        const seconds begin = earliest_start(d, ready, length);
        const byte_count added = new_holds(v, begin, begin + length);
        seconds from = begin;
        for (const auto& hold : holds_) from = std::min(from, hold.first);
        text << (d == first_device(grp) ? " " : ", ") << detail::list_device_label(devices_, d) << " needs " << added
             << " has " << free_from(d, from);
      }
    } else {
      text << "; with its incoming tensors, free memory:";
      for (device_id d = first_device(grp); d < last_device(grp); ++d)
        text << (d == first_device(grp) ? " " : ", ") << detail::list_device_label(devices_, d) << " needs "
             << need(v, d) << " has " << free_[d];
    }
    fail(status::out_of_memory, text.str());
    failed_vertex_ = v;
  }

  const G& graph_;
  detail::csr_view<G> view_;
  const M& model_;
  const D& devices_;
  list_policy policy_;
  list_options options_;
  std::size_t n_ = 0, m_ = 0;
  comm_mode comm_ = comm_mode::parallel;

  gantry::status status_ = status::ok;
  std::string message_;
  vertex_id failed_vertex_ = no_vertex;
  std::size_t placed_count_ = 0;
  vertex_id last_placed_ = no_vertex;

  std::vector<std::uint32_t> rank_;  // Kahn order position, the tie-breaker
  std::vector<vertex_id> at_rank_;
  std::vector<device_id> device_of_;
  std::vector<seconds> start_, finish_;
  std::vector<std::uint32_t> step_of_;
  std::vector<std::uint32_t> waiting_inputs_;
  std::vector<seconds> available_;
  std::vector<byte_count> free_;
  std::vector<seconds> channel_free_;
  std::vector<transfer> transfers_;
  std::vector<std::uint32_t> transfer_next_, first_transfer_;  // cached copies per tensor
  std::vector<std::map<seconds, seconds>> gaps_;              // idle intervals per device (insertion)
  std::vector<edge_id> tensor_edge_;
  std::vector<std::uint32_t> stamp_;
  std::uint32_t stamp_now_ = 0;
  std::vector<input> inputs_;
  std::vector<std::pair<std::size_t, seconds>> touched_;

  std::vector<std::uint32_t> group_of_;
  std::vector<byte_count> group_bytes_;
  std::vector<std::uint32_t> group_size_;
  std::vector<device_id> group_device_;
  std::vector<std::uint8_t> group_reserved_;
  std::vector<byte_count> group_persistent_;

  // Dynamic memory accounting.
  bool dynamic_ = false;
  std::vector<detail::memory_timeline> timeline_;     // per device, without persistent bytes
  std::vector<std::int64_t> persistent_held_;         // per device
  std::vector<std::uint32_t> consumers_left_;         // per vertex: out-edges whose target is not placed
  std::vector<seconds> latest_on_;                    // scratch per device: a tensor's last consumer there
  std::vector<std::uint8_t> freed_;                   // per device: memory freed by the current placement
  std::vector<std::pair<seconds, byte_count>> planned_;   // transfers the last arrival() would start
  std::vector<std::pair<seconds, std::int64_t>> holds_;    // scratch for new_holds()
  std::vector<std::vector<pending_entry>> blocked_;   // per device: candidates that did not fit
  std::vector<std::uint32_t> held_back_;              // ranks of prioritised vertices that fit nowhere

  bool forward_gate_ = false;  // forward-only placement chosen
  bool gate_open_ = true;      // backward vertices may be placed
  std::size_t forward_left_ = 0;
  std::vector<vertex_id> parked_;

  std::vector<std::priority_queue<pending_entry, std::vector<pending_entry>, std::greater<>>> pending_;
  std::vector<std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>>> startable_;
  std::vector<std::uint32_t> candidates_;
  std::vector<std::uint8_t> best_known_;
  std::vector<std::optional<std::pair<seconds, std::uint32_t>>> best_;
  std::priority_queue<priority_entry> by_priority_;
};

// Runs a list-scheduling policy to the end. Throws as list_scheduler does; running out of memory
// is a status in the result.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] list_schedule_result list_schedule(const G& graph, const M& model, const D& devices, list_policy policy,
                                                 list_options options = {}) {
  list_scheduler<G, M, D> scheduler(graph, model, devices, std::move(policy), std::move(options));
  return scheduler.run();
}

}  // namespace gantry
