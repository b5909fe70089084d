// The list-scheduling engine behind ETF, m-ETF, Critical Path, HEFT, CPOP and PEFT: vertices are
// placed one at a time, each (vertex, device) pair named by a policy (place/list_policy.hpp) that
// reads the engine's state through its const queries. The engine keeps the ready set, device
// timelines (with idle gaps for insertion policies), transfer channels per communication mode, a
// tensor cache per device, colocation groups and memory: a static reservation per vertex or a
// timeline per device that frees memory as Baechi's execution simulator does (Baechi §2.3,
// §3.1-3.4, §4.2). list_scheduler steps through a run; list_schedule() is the one-call form.
//
// Transfers follow the rules of schedule/schedule.hpp: a copy is timed with the bytes of its own
// edge, and a tensor (a producer's edges carrying the same bytes) is sent once to a device and
// serves every consumer there. A transfer occupies the resources of its route in the cluster's
// topology (model/topology.hpp); the engine queues a vertex's transfers behind those already
// reserved on them when the vertex is placed (Baechi §3.4). The simulator (sim/simulator.hpp) run
// with ready_policy::strict_order, priority = placement.order and transfer_order =
// schedule.transfers (the order of those reservations) reproduces the engine's start and finish
// times exactly in every communication mode, and so never runs out of memory where the engine's
// schedule fits.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/capacity_scaled.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/kahn_one_device.hpp>
#include <gantry/place/list_policy.hpp>
#include <gantry/schedule/idle_gaps.hpp>
#include <gantry/schedule/memory_ledger.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/memory_timeline.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
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
  // A colocation group bound to d keeps room there for its members still to come: the most they
  // hold at once, beyond what the group holds already, when they run one after another in Kahn
  // order with each output freed after its last reader (group_reserve()). The room is held from
  // d's end of work on, where those members will run, and shrinks as they are placed.
  dynamic,
};

struct list_options {
  // Memory-aware placement (the "m-" algorithms): fits() says no for a device that cannot hold the vertex.
  bool respect_memory = false;
  // How memory is counted when it is respected.
  memory_accounting accounting = memory_accounting::dynamic;
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
  // When no ready vertex fits on any device it may use: false fails the run (status::out_of_memory);
  // true places the first such vertex (Kahn order) on the device it may use with the most free
  // memory and goes on, ending with status::over_capacity and a message naming the first vertex
  // placed so (Celeritas's Adjusting Placement; placers that must return a complete placement).
  bool best_effort = false;
  // When a memory-aware run ends out of memory (memory_fallback()): how many points of
  // capacity_grid below the devices' memory it tries again within, and whether every vertex on one
  // device comes last.
  unsigned memory_retries = 64;
  bool one_device_answer = true;
};

namespace detail {
template <class D>
std::string list_device_label(const D& devices, device_id d) {
  if constexpr (requires { devices[d].name; }) {
    if (!devices[d].name.empty()) return devices[d].name;
  }
  return "device " + std::to_string(d);
}
}  // namespace detail

// The engine as a class, to watch or interleave a run:
//   list_scheduler s(g, model, devices, etf_policy{}, {.respect_memory = true});
//   while (s.step()) show(s.last_placed());  auto result = s.result();
// Its const queries are the view a policy reads. Holds references to its arguments: they must
// outlive it. Throws invalid_input for options of the wrong size, and not_a_dag (naming a cycle)
// when the graph has one. Each step costs what the policy's choose() costs plus O(k log k) for a
// placement with k inputs; dynamic memory adds O(log n) per hold and per check of a device whose
// peak could be exceeded (a check is O(1) while the device's peak plus the vertex's bytes fit).
template <adapted_graph G, placement_model M, device_set D, class Policy>
class list_scheduler {
 public:
  list_scheduler(const G& graph, const M& model, const D& devices, Policy policy, list_options options = {})
      : graph_(graph), view_(graph), model_(model), devices_(devices), policy_(std::move(policy)),
        options_(std::move(options)) {
    static_assert(list_view<list_scheduler>, "the engine's queries must model list_view (place/list_policy.hpp)");
    static_assert(list_policy_for<Policy, list_scheduler>,
                  "a list-scheduling policy needs choose(view) returning std::optional<list_choice>");
    static_assert(detail::check_policy_hooks<Policy, list_scheduler>());
    init();
  }
  list_scheduler(const list_scheduler&) = delete;
  list_scheduler& operator=(const list_scheduler&) = delete;

  // Resets to nothing placed and tells the policy to start.
  void init() {
    const csr_graph& g = *view_;
    n_ = g.vertex_count();
    m_ = devices_.device_count();
    topology_ = detail::topology_of(devices_);
    shared_ = topology_.shared();
    check_arguments();
    const auto topo = detail::kahn_on(g);
    detail::require_dag(graph_, g, topo);
    rank_.assign(n_, 0);
    for (std::uint32_t i = 0; i < n_; ++i) rank_[topo[i]] = i;
    levels_.reset();

    outcome_ = {};
    placed_count_ = 0;
    last_placed_ = no_vertex;
    device_of_.assign(n_, no_device);
    start_.assign(n_, 0);
    finish_.assign(n_, 0);
    step_of_.assign(n_, 0);
    waiting_inputs_.resize(n_);
    for (vertex_id v = 0; v < n_; ++v) waiting_inputs_[v] = static_cast<std::uint32_t>(g.in_degree(v));
    ready_.clear();
    ready_slot_.assign(n_, no_slot);
    available_.assign(m_, 0);
    last_on_.assign(m_, no_vertex);
    excluded_.assign(m_, 0);
    free_.resize(m_);
    for (device_id d = 0; d < m_; ++d) free_[d] = devices_.capacity(d);
    dynamic_ = options_.respect_memory && options_.accounting == memory_accounting::dynamic;
    timeline_.resize(dynamic_ ? m_ : 0);
    for (auto& timeline : timeline_) timeline.clear();
    persistent_held_.assign(dynamic_ ? m_ : 0, 0);
    reserve_.assign(dynamic_ ? m_ : 0, 0);
    ledger_.reset(dynamic_ ? n_ : 0);
    if (dynamic_) ledger_.reserve_copies(g.edge_count());
    changed_.assign(m_, 0);
    channel_free_.assign(topology_.resource_count(), 0);
    transfers_.clear();
    transfer_next_.clear();
    // At most one transfer per edge: reserving spares the copies of growing (pages are touched only
    // as transfers are recorded).
    transfers_.reserve(g.edge_count());
    transfer_next_.reserve(g.edge_count());
    first_transfer_.assign(n_, no_transfer);
    gaps_.resize(inserts ? m_ : 0);
    for (auto& gaps : gaps_) gaps.reset();
    stamp_.assign(n_, 0);
    stamp_now_ = 0;
    inputs_of_ = no_vertex;

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
        throw invalid_input(std::string(name()) + ": vertex " + quoted(v) + " is fixed to device " +
                            std::to_string(options_.fixed_device[v]) + " but its group is fixed to device " +
                            std::to_string(fixed));
      fixed = options_.fixed_device[v];
    }
    init_group_units();
    // At least what added_bytes(v, d) can be on any device: fits() settles a roomy device with it.
    added_bound_.resize(dynamic_ ? n_ : 0);
    largest_added_bound_ = 0;
    for (vertex_id v = 0; v < added_bound_.size(); ++v) {
      // A member may change its group's reserve by at most the other members' own bytes.
      byte_count bytes = detail::saturating_add(group_persistent_[group_of_[v]], own_reserved(v));
      if (group_size_[group_of_[v]] > 1) bytes = detail::saturating_add(bytes, group_rest_[group_of_[v]]);
      for (const edge_id e : g.in_edges(v)) bytes = detail::saturating_add(bytes, model_.edge_bytes(e));
      added_bound_[v] = bytes;
      largest_added_bound_ = std::max(largest_added_bound_, bytes);
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

    detail::policy_start(policy_, *this);
    for (vertex_id v = 0; v < n_; ++v)
      if (waiting_inputs_[v] == 0) make_ready(v);
    for (vertex_id x = 0; x < outside_wait_.size(); ++x)
      if (outside_wait_[x] == 0) release_attached(x);
  }

  // Places one vertex, the one the policy chooses. Returns false when every vertex is placed or the
  // run failed.
  bool step() {
    if (done()) return false;
    for (;;) {
      if (const std::optional<list_choice> choice = policy_.choose(*this)) {
        place(choice->vertex, choice->device);
        return true;
      }
      if (failed()) return false;
      if (release_all_attached()) continue;  // they wait for inputs that wait for them
      if (parked_.empty()) {
        if (options_.best_effort && place_best_effort()) return true;
        fail_no_fit();
        return false;
      }
      open_gate();  // a forward vertex waits for a backward one: give up the gate
    }
  }

  // Runs to the end from the current state and returns the result.
  list_schedule_result run() {
    while (step()) {
    }
    return result();
  }

  // Places ready vertex v on device d at its earliest start (with insertion for an inserting
  // policy), whether or not its memory fits (fits() says); for policies and for placers that decide
  // outside the engine. Throws invalid_input when v is not ready or d may not take it (out of
  // range, or v's group is on another device).
  void place(vertex_id v, device_id d) {
    if (v >= n_ || ready_slot_[v] == no_slot)
      throw invalid_input(std::string(name()) + ": vertex " + (v >= n_ ? std::to_string(v) : quoted(v)) +
                          " cannot be placed now: it is " +
                          (v >= n_ ? "out of range" : is_placed(v) ? "placed already" : "not ready"));
    if (d >= m_ || !allowed(v, d))
      throw invalid_input(std::string(name()) + ": vertex " + quoted(v) + " cannot go to device " + std::to_string(d) +
                          (d >= m_ ? ": there are " + std::to_string(m_) + " devices"
                                   : ": its group is on " +
                                         detail::list_device_label(devices_, group_device_[group_of_[v]])));
    commit(v, d);
  }

  // --- the view: what a policy reads ----------------------------------------------------------

  [[nodiscard]] std::string_view name() const { return detail::policy_name(policy_); }
  [[nodiscard]] const Policy& policy() const noexcept { return policy_; }
  [[nodiscard]] const csr_graph& graph() const noexcept { return *view_; }
  [[nodiscard]] const M& model() const noexcept { return model_; }
  [[nodiscard]] const D& devices() const noexcept { return devices_; }
  [[nodiscard]] const list_options& options() const noexcept { return options_; }
  [[nodiscard]] std::size_t vertex_count() const noexcept { return n_; }
  [[nodiscard]] std::size_t device_count() const noexcept { return m_; }
  [[nodiscard]] comm_mode comm() const noexcept { return topology_.mode(); }
  // Which resources each transfer occupies (model/topology.hpp).
  [[nodiscard]] const gantry::topology& topology() const noexcept { return topology_; }
  // Whether transfers share resources, so a transfer may wait for another.
  [[nodiscard]] bool channels_shared() const noexcept { return shared_; }

  // Vertices whose inputs are all placed and that are not placed themselves, in no particular
  // order. Backward vertices wait while forward-only placement holds them, and a group's source
  // vertices wait for their group (see init_group_units()).
  [[nodiscard]] std::span<const vertex_id> ready() const noexcept { return ready_; }
  [[nodiscard]] bool is_ready(vertex_id v) const { return ready_slot_[v] != no_slot; }
  // Position in Kahn order: the usual tie-breaker.
  [[nodiscard]] std::uint32_t kahn_rank(vertex_id v) const { return rank_[v]; }
  // Levels with mean compute and transfer times (order/levels.hpp), computed on first use.
  [[nodiscard]] seconds bottom_level(vertex_id v) const { return levels().bottom[v]; }
  [[nodiscard]] seconds top_level(vertex_id v) const { return levels().top[v]; }

  [[nodiscard]] bool done() const noexcept { return failed() || placed_count_ == n_; }
  // ok, or why the run failed (out_of_memory: the vertex that fits nowhere, the device where it
  // came closest, the bytes it needed and those free there) or went over capacity (best effort).
  [[nodiscard]] const gantry::outcome& outcome() const noexcept { return outcome_; }
  [[nodiscard]] gantry::status status() const noexcept { return outcome_.code; }
  [[nodiscard]] const std::string& message() const noexcept { return outcome_.message; }
  [[nodiscard]] std::size_t placed_count() const noexcept { return placed_count_; }
  [[nodiscard]] vertex_id last_placed() const noexcept { return last_placed_; }
  [[nodiscard]] vertex_id failed_vertex() const noexcept { return outcome_.vertex; }
  [[nodiscard]] bool is_placed(vertex_id v) const { return device_of_[v] != no_device; }
  [[nodiscard]] device_id device_of(vertex_id v) const { return device_of_[v]; }
  [[nodiscard]] seconds start_of(vertex_id v) const { return start_[v]; }
  [[nodiscard]] seconds finish_of(vertex_id v) const { return finish_[v]; }
  // When device d finishes the last vertex appended to it so far.
  [[nodiscard]] seconds available_at(device_id d) const { return available_[d]; }
  // The vertex placed on d most recently (no_vertex before the first).
  [[nodiscard]] vertex_id last_on(device_id d) const { return last_on_[d]; }
  // The earliest time any device is free.
  [[nodiscard]] seconds now() const {
    return m_ == 0 ? 0.0 : *std::min_element(available_.begin(), available_.end());
  }

  // Whether v may go to d: its group's device once a member is placed (or fixed), else any device
  // not excluded.
  [[nodiscard]] bool allowed(vertex_id v, device_id d) const {
    const device_id fixed = group_device_[group_of_[v]];
    return fixed == no_device ? excluded_[d] == 0 : fixed == d;
  }
  // Takes d out of further placements of vertices whose group is not bound to it (m-SCT excludes a
  // device that ran out of memory). Groups already on d stay there.
  void exclude(device_id d) {
    if (d >= m_)
      throw invalid_input(std::string(name()) + ": cannot exclude device " + std::to_string(d) + " of " +
                          std::to_string(m_));
    excluded_[d] = 1;
  }
  [[nodiscard]] bool excluded(device_id d) const { return excluded_[d] != 0; }
  // The members of v's group (v alone when it has none).
  [[nodiscard]] std::span<const vertex_id> group_members(vertex_id v) const {
    if (member_first_.empty()) return {&group_self_[v], 1};
    const std::uint32_t g = group_of_[v];
    return {member_list_.data() + member_first_[g], member_first_[g + 1] - member_first_[g]};
  }
  // For a vertex of a group no member of which is placed yet: when the inputs that the group's
  // other members receive from vertices already placed could be on d (edges timed alone, no
  // channels). A group is placed as a unit, so its first member goes where the group can run, not
  // where that member alone could start. 0 otherwise.
  [[nodiscard]] seconds group_ready(vertex_id v, device_id d) const {
    const std::uint32_t grp = group_of_[v];
    if (group_size_[grp] < 2 || group_device_[grp] != no_device || member_first_.empty()) return 0;
    const csr_graph& g = *view_;
    seconds ready = 0;
    for (const vertex_id w : group_members(v)) {
      if (w == v || is_placed(w)) continue;
      const auto pred = g.predecessors(w);
      const auto in = g.in_edges(w);
      for (std::size_t i = 0; i < pred.size(); ++i) {
        const vertex_id u = pred[i];
        if (!is_placed(u) || group_of_[u] == grp) continue;
        ready = std::max(ready, finish_[u] + model_.transfer_time(in[i], device_of_[u], d));
      }
    }
    return ready;
  }
  // Whether data_ready(v, d) may change while v waits: with channels (they get busier, or a copy
  // arrives), and for a member of a group not bound yet (its other members' inputs get placed; once
  // bound, only the group's own device counts).
  [[nodiscard]] bool ready_may_change(vertex_id v) const {
    return shared_ || (group_size_[group_of_[v]] > 1 && group_device_[group_of_[v]] == no_device);
  }
  // Whether the last placement was the first of its group (of several): the group is bound now.
  [[nodiscard]] bool last_bound_group() const noexcept { return last_bound_group_; }
  // The device v's group is bound to, or no_device while it is free.
  [[nodiscard]] device_id bound_device(vertex_id v) const { return group_device_[group_of_[v]]; }
  [[nodiscard]] std::uint32_t group_of(vertex_id v) const { return group_of_[v]; }

  // When every input of ready vertex v could be on d, with the transfers that placing v on d would
  // start now (channels as reserved so far in sequential and duplex modes).
  // For the first member of a group, also when the group's other inputs could be (group_ready).
  [[nodiscard]] seconds data_ready(vertex_id v, device_id d) const {
    collect_inputs(v);
    return std::max(arrival<false>(d), group_ready(v, d));
  }
  // data_ready(v, d) for every device d, into out (device_count() entries): without shared
  // channels, one pass over v's inputs and their copies serves every device.
  void data_ready_all(vertex_id v, std::span<seconds> out) const {
    collect_inputs(v);
    if (shared_) {
      for (device_id d = 0; d < m_; ++d) out[d] = arrival<false>(d);
    } else {
      arrival_all(out);
    }
    const std::uint32_t grp = group_of_[v];
    if (group_size_[grp] >= 2 && group_device_[grp] == no_device)  // else group_ready() is 0
      for (device_id d = 0; d < m_; ++d) out[d] = std::max(out[d], group_ready(v, d));
  }
  // Earliest start of v on d under the engine's rule: after its inputs and the last vertex on d,
  // or in the earliest idle gap long enough when the policy inserts.
  [[nodiscard]] seconds earliest_start(vertex_id v, device_id d) const {
    return earliest_start_at(d, data_ready(v, d), model_.compute_time(v, d));
  }
  [[nodiscard]] seconds earliest_finish(vertex_id v, device_id d) const {
    return earliest_start(v, d) + model_.compute_time(v, d);
  }
  // Earliest start without insertion, whatever the policy: max(available_at(d), data_ready(v, d)).
  [[nodiscard]] seconds earliest_start_appended(vertex_id v, device_id d) const {
    return std::max(available_[d], data_ready(v, d));
  }
  // Whether v fits on d by the memory rules (always true when memory is not respected).
  [[nodiscard]] bool fits(vertex_id v, device_id d) const {
    if (!options_.respect_memory) return true;
    // O(1), before the inputs are looked at: d has room for the most any vertex adds, or for v's bound.
    if (dynamic_ && (fits_anyway(d, largest_added_bound_) || fits_anyway(d, added_bound_[v]))) return true;
    collect_inputs(v);
    if (!dynamic_) return need(v, d) <= free_[d];
    if (!tracked(d) || fits_anyway(d, added_bytes(v, d))) return true;
    const seconds length = model_.compute_time(v, d);
    const seconds begin = earliest_start_at(d, arrival(d), length);
    return holds_fit(d, new_holds(v, d, begin, begin + length));
  }
  // Memory of d not yet reserved (meaningful with respect_memory); with dynamic accounting, its
  // capacity less the most it holds at any time so far (holds not yet ended counted to infinity).
  [[nodiscard]] byte_count free_memory(device_id d) const {
    if (!dynamic_) return free_[d];
    return free_from(d, 0);
  }
  // Whether the last placement changed what d can hold (memory freed, or d's start moved on):
  // a vertex that did not fit on d may fit now.
  [[nodiscard]] bool memory_changed(device_id d) const { return changed_[d] != 0; }
  [[nodiscard]] const std::vector<transfer>& transfers() const noexcept { return transfers_; }
  // Whether backward vertices wait for every forward vertex (forward_only, memory permitting).
  [[nodiscard]] bool forward_only_active() const noexcept { return forward_gate_; }

  // The placement so far (no_device for vertices not placed) and, when every vertex is placed, the
  // schedule with its summary.
  [[nodiscard]] list_schedule_result result() const& { return make_result(*this); }
  // The same, moving the schedule's vectors out of the engine (which is left to be reset or dropped).
  [[nodiscard]] list_schedule_result result() && { return make_result(*this); }

 private:
  // Copies the schedule's vectors out of a const engine, moves them out of a non-const one.
  template <class Self>
  static list_schedule_result make_result(Self& self) {
    const list_scheduler& me = self;
    list_schedule_result out;
    out.forward_only = me.forward_gate_;
    auto& p = out.placement;
    p.outcome = me.outcome_;
    p.device = me.device_of_;
    p.order = me.order_by_start();
    if (me.failed() || me.placed_count_ != me.n_) return out;
    auto& s = out.schedule;
    s.device = me.device_of_;
    if constexpr (std::is_const_v<Self>) {
      s.start = me.start_;
      s.finish = me.finish_;
      s.transfers = me.transfers_;
    } else {
      s.start = std::move(self.start_);
      s.finish = std::move(self.finish_);
      s.transfers = std::move(self.transfers_);
    }
    summarize(s, *me.view_, me.model_, me.m_, true, p.order);
    return out;
  }

  // The placed vertices by (start, finish, placement step). A device's vertices in placement order
  // are already in that order unless the policy inserts into idle gaps, so the devices' lists are
  // merged in O(n log m); a list out of order falls back to sorting everything.
  [[nodiscard]] std::vector<vertex_id> order_by_start() const {
    std::vector<vertex_id> by_step(placed_count_);
    std::vector<std::uint32_t> first(m_ + 1, 0);
    for (vertex_id v = 0; v < n_; ++v)
      if (device_of_[v] != no_device) {
        by_step[step_of_[v]] = v;
        ++first[device_of_[v] + 1];
      }
    for (std::size_t d = 0; d < m_; ++d) first[d + 1] += first[d];
    std::vector<vertex_id> on_device(placed_count_);
    {
      std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
      for (const vertex_id v : by_step) on_device[fill[device_of_[v]]++] = v;
    }
    const auto before = [&](vertex_id a, vertex_id b) {
      return std::tie(start_[a], finish_[a], step_of_[a]) < std::tie(start_[b], finish_[b], step_of_[b]);
    };
    bool sorted = true;
    for (std::size_t d = 0; d < m_ && sorted; ++d)
      for (std::uint32_t i = first[d]; i + 1 < first[d + 1] && sorted; ++i)
        sorted = before(on_device[i], on_device[i + 1]);
    if (!sorted) {
      std::sort(by_step.begin(), by_step.end(), before);
      return by_step;
    }
    // A min-heap of the devices' next vertices, keys held in place.
    struct head {
      seconds start, finish;
      std::uint32_t step;
      device_id d;
      bool operator<(const head& o) const {
        return std::tie(start, finish, step) < std::tie(o.start, o.finish, o.step);
      }
    };
    std::vector<std::uint32_t> next(first.begin(), first.end() - 1);
    const auto head_of = [&](device_id d) {
      const vertex_id v = on_device[next[d]];
      return head{start_[v], finish_[v], step_of_[v], d};
    };
    std::vector<head> heap;
    for (device_id d = 0; d < m_; ++d)
      if (first[d] != first[d + 1]) heap.push_back(head_of(d));
    const auto sift_down = [&](std::size_t i) {
      const head moving = heap[i];
      for (std::size_t child; (child = 2 * i + 1) < heap.size(); i = child) {
        if (child + 1 < heap.size() && heap[child + 1] < heap[child]) ++child;
        if (!(heap[child] < moving)) break;
        heap[i] = heap[child];
      }
      heap[i] = moving;
    };
    for (std::size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
    std::vector<vertex_id> order;
    order.reserve(placed_count_);
    while (!heap.empty()) {
      const device_id d = heap.front().d;
      order.push_back(on_device[next[d]++]);
      if (next[d] != first[d + 1]) {
        heap.front() = head_of(d);
      } else {
        heap.front() = heap.back();
        heap.pop_back();
      }
      if (!heap.empty()) sift_down(0);
    }
    return order;
  }

  static constexpr std::uint32_t no_transfer = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t no_slot = std::numeric_limits<std::uint32_t>::max();
  static constexpr bool inserts = detail::policy_inserts<Policy>();
  struct input {
    vertex_id producer;
    edge_id edge;  // the edge whose bytes and time a new transfer would use
  };

  [[nodiscard]] const gantry::levels& levels() const {
    if (!levels_) {
      const auto topo = detail::kahn_on(*view_);
      levels_ = detail::compute_levels(*view_, topo, model_, m_);
    }
    return *levels_;
  }
  [[nodiscard]] bool is_backward(vertex_id v) const {
    return !options_.forward_of.empty() && options_.forward_of[v] != no_vertex;
  }
  [[nodiscard]] std::string quoted(vertex_id v) const { return quoted_vertex_name(graph_, v); }

  void check_arguments() const {
    const std::string who(name());
    const auto size = [&](std::size_t got, const char* what) {
      if (got != 0 && got != n_)
        throw invalid_input(who + ": " + what + " has " + std::to_string(got) + " entries for " +
                            std::to_string(n_) + " vertices");
    };
    size(options_.group.size(), "the group vector");
    size(options_.forward_of.size(), "the forward vector");
    size(options_.fixed_device.size(), "the fixed-device vector");
    for (vertex_id v = 0; v < options_.fixed_device.size(); ++v)
      if (options_.fixed_device[v] != no_device && options_.fixed_device[v] >= m_)
        throw invalid_input(who + ": vertex " + quoted(v) + " is fixed to device " +
                            std::to_string(options_.fixed_device[v]) + " but there are " + std::to_string(m_) +
                            " devices");
    if (n_ > 0 && m_ == 0) throw invalid_input(who + ": there are no devices to place " + std::to_string(n_) + " vertices on");
  }

  // --- readiness -------------------------------------------------------------------------------

  void make_ready(vertex_id v) {
    if (!gate_open_ && is_backward(v)) {
      parked_.push_back(v);
      return;
    }
    ready_slot_[v] = static_cast<std::uint32_t>(ready_.size());
    ready_.push_back(v);
    detail::policy_on_ready(policy_, *this, v);
  }
  void leave_ready(vertex_id v) {
    const std::uint32_t slot = ready_slot_[v];
    ready_slot_[ready_.back()] = slot;
    ready_[slot] = ready_.back();
    ready_.pop_back();
    ready_slot_[v] = no_slot;
  }

  // Groups as units. A source vertex (no inputs, a weight or a constant) of a group of several
  // would otherwise be ready at time 0 and decide the group's device alone: it is attached to its
  // consumers in the group and becomes ready once one of them has every other input placed (or
  // the group is bound, or nothing else can be placed). Members are listed in Kahn order, the order
  // group_reserve() runs them in.
  void init_group_units() {
    const csr_graph& g = *view_;
    member_first_.clear();
    member_list_.clear();
    attached_.clear();
    outside_wait_.clear();
    group_rest_.assign(dynamic_ ? group_size_.size() : 0, 0);
    group_self_.resize(n_);
    for (vertex_id v = 0; v < n_; ++v) group_self_[v] = v;
    bool any = false;
    for (const auto size : group_size_) any = any || size > 1;
    if (!any) return;
    member_first_.assign(group_size_.size() + 1, 0);
    for (vertex_id v = 0; v < n_; ++v) ++member_first_[group_of_[v] + 1];
    for (std::size_t k = 0; k + 1 < member_first_.size(); ++k) member_first_[k + 1] += member_first_[k];
    member_list_.resize(n_);
    std::vector<std::uint32_t> fill(member_first_.begin(), member_first_.end() - 1);
    for (const vertex_id v : detail::kahn_on(g)) member_list_[fill[group_of_[v]]++] = v;
    group_reserve_.assign(dynamic_ ? group_size_.size() : 0, 0);
    reads_left_.assign(dynamic_ ? n_ : 0, 0);
    reserve_of_ = no_vertex;
    if (dynamic_)
      for (vertex_id v = 0; v < n_; ++v)
        group_rest_[group_of_[v]] = detail::saturating_add(group_rest_[group_of_[v]], own_reserved(v));
    attached_.assign(n_, 0);
    outside_wait_.assign(n_, 0);
    for (vertex_id v = 0; v < n_; ++v) {
      const std::uint32_t grp = group_of_[v];
      if (g.in_degree(v) != 0 || group_size_[grp] < 2 || group_device_[grp] != no_device) continue;
      for (const vertex_id x : g.successors(v)) attached_[v] |= group_of_[x] == grp ? 1 : 0;
    }
    for (vertex_id x = 0; x < n_; ++x) {
      bool feeds = false;
      for (const vertex_id u : g.predecessors(x)) {
        if (attached_[u] && group_of_[u] == group_of_[x]) feeds = true;
        else ++outside_wait_[x];
      }
      if (!feeds) outside_wait_[x] = no_slot;  // nothing attached waits for x
    }
    for (vertex_id v = 0; v < n_; ++v) waiting_inputs_[v] += attached_[v];  // released, not ready, at 0
  }
  // x's inputs from outside its attached sources are all placed: its attached sources become ready.
  void release_attached(vertex_id x) {
    outside_wait_[x] = no_slot;
    for (const vertex_id u : view_->predecessors(x))
      if (group_of_[u] == group_of_[x]) release_source(u);
  }
  void release_source(vertex_id u) {
    if (!attached_[u]) return;
    attached_[u] = 0;
    if (--waiting_inputs_[u] == 0) make_ready(u);
  }
  // Every attached source still waiting, in Kahn order; false when there was none.
  bool release_all_attached() {
    std::vector<vertex_id> waiting;
    for (vertex_id v = 0; v < attached_.size(); ++v)
      if (attached_[v]) waiting.push_back(v);
    std::sort(waiting.begin(), waiting.end(), [&](vertex_id a, vertex_id b) { return rank_[a] < rank_[b]; });
    for (const vertex_id v : waiting) release_source(v);
    return !waiting.empty();
  }

  void open_gate() {
    gate_open_ = true;
    std::vector<vertex_id> parked;
    parked.swap(parked_);
    std::sort(parked.begin(), parked.end(), [&](vertex_id a, vertex_id b) { return rank_[a] < rank_[b]; });
    for (const vertex_id v : parked) make_ready(v);
  }

  // --- inputs and transfers ----------------------------------------------------------------------

  // The inputs of v that come from other vertices: one per tensor (producer and bytes) when
  // tensors are cached, else one per edge; in the order transfers are reserved: producer's finish,
  // then its place in the order, then edge. Kept until another vertex's inputs are collected (the
  // inputs of a ready vertex do not change).
  void collect_inputs(vertex_id v) const {
    if (inputs_of_ == v) return;
    const csr_graph& g = *view_;
    inputs_.clear();
    inputs_of_ = v;
    const auto pred = g.predecessors(v);
    const auto in = g.in_edges(v);
    // Whether u was met before: by scanning the few inputs so far, or by stamps (a random access
    // per producer, which costs more than a short scan) when there are many.
    const bool stamped = pred.size() > 16;
    if (stamped) ++stamp_now_;
    const auto met = [&](vertex_id u) {
      if (stamped) return stamp_[u] == stamp_now_;
      for (const input& other : inputs_)
        if (other.producer == u) return true;
      return false;
    };
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (options_.cache_transfers) {
        if (met(u)) {  // u sends v several edges: one input per distinct size
          const byte_count bytes = model_.edge_bytes(in[i]);
          bool seen = false;
          for (const input& other : inputs_) seen = seen || (other.producer == u && model_.edge_bytes(other.edge) == bytes);
          if (seen) continue;
        }
        if (stamped) stamp_[u] = stamp_now_;
      }
      inputs_.push_back({u, in[i]});
    }
    if (shared_)
      std::sort(inputs_.begin(), inputs_.end(), [&](const input& a, const input& b) {
        return std::tie(finish_[a.producer], start_[a.producer], step_of_[a.producer], a.edge) <
               std::tie(finish_[b.producer], start_[b.producer], step_of_[b.producer], b.edge);
      });
  }

  // The copy of u's tensor of `bytes` bytes already sent to d, if any.
  [[nodiscard]] std::uint32_t cached(vertex_id u, device_id d, byte_count bytes) const {
    for (auto t = first_transfer_[u]; t != no_transfer; t = transfer_next_[t])
      if (transfers_[t].to == d && transfers_[t].bytes == bytes) return t;
    return no_transfer;
  }

  // When every input of v (collected by collect_inputs) can be on device d. The transfers this
  // would start are left in planned_ (when `plan`: only a placement and a memory check use them);
  // channel state is left as it was.
  template <bool plan = true>
  seconds arrival(device_id d) const {
    seconds ready = 0;
    touched_.clear();
    if constexpr (plan) planned_.clear();
    for (const input& in : inputs_) {
      const vertex_id u = in.producer;
      const device_id from = device_of_[u];
      if (from == d) {
        ready = std::max(ready, finish_[u]);
        continue;
      }
      const byte_count bytes = model_.edge_bytes(in.edge);
      if (options_.cache_transfers) {
        if (const auto t = cached(u, d, bytes); t != no_transfer) {
          ready = std::max(ready, transfers_[t].finish);
          continue;
        }
      }
      const seconds duration = model_.transfer_time(in.edge, from, d);
      seconds begin = finish_[u];
      if (!channel_free_.empty()) {
        const route path = topology_.route_of(from, d);
        for (const resource_id r : path) begin = std::max(begin, channel_free_[r]);
        for (const resource_id r : path) {
          touched_.emplace_back(r, channel_free_[r]);
          channel_free_[r] = begin + duration;
        }
      }
      ready = std::max(ready, begin + duration);
      if constexpr (plan) planned_.push_back({u, in.edge, from, d, begin, begin + duration, bytes});
    }
    for (auto it = touched_.rbegin(); it != touched_.rend(); ++it) channel_free_[it->first] = it->second;
    return ready;
  }
  // arrival<false>(d) for every device at once, when no channels are shared: per input, the copy a
  // device already has (the newest of the right size, as cached() finds it) or a new transfer.
  void arrival_all(std::span<seconds> out) const {
    std::fill(out.begin(), out.end(), 0.0);
    copy_on_.resize(m_);
    for (const input& in : inputs_) {
      const vertex_id u = in.producer;
      const device_id from = device_of_[u];
      const seconds done = finish_[u];
      std::fill(copy_on_.begin(), copy_on_.end(), no_transfer);
      if (options_.cache_transfers) {
        const byte_count bytes = model_.edge_bytes(in.edge);
        for (auto t = first_transfer_[u]; t != no_transfer; t = transfer_next_[t])
          if (transfers_[t].bytes == bytes && copy_on_[transfers_[t].to] == no_transfer) copy_on_[transfers_[t].to] = t;
      }
      for (device_id d = 0; d < m_; ++d) {
        const seconds at = d == from                    ? done
                           : copy_on_[d] != no_transfer ? transfers_[copy_on_[d]].finish
                                                        : done + model_.transfer_time(in.edge, from, d);
        out[d] = std::max(out[d], at);
      }
    }
  }
  // Records the transfers of the last arrival() and reserves their channels.
  void commit_transfers() {
    for (const transfer& t : planned_) {
      if (!channel_free_.empty())
        for (const resource_id r : topology_.route_of(t.from, t.to)) channel_free_[r] = t.finish;
      const auto index = static_cast<std::uint32_t>(transfers_.size());
      transfers_.push_back(t);
      transfer_next_.push_back(first_transfer_[t.tensor]);  // every transfer of a tensor, newest first
      first_transfer_[t.tensor] = index;
    }
  }

  // Bytes that placing v on d would reserve: its group's when the group has none yet, plus the
  // tensors d would receive for it.
  [[nodiscard]] byte_count need(vertex_id v, device_id d) const {
    const std::uint32_t grp = group_of_[v];
    byte_count bytes = group_reserved_[grp] ? 0 : group_bytes_[grp];
    return detail::saturating_add(bytes, received_bytes(d));
  }
  // Bytes of the collected inputs that d does not hold yet.
  [[nodiscard]] byte_count received_bytes(device_id d) const {
    byte_count bytes = 0;
    for (const input& in : inputs_) {
      if (device_of_[in.producer] == d) continue;
      const byte_count size = model_.edge_bytes(in.edge);
      if (options_.cache_transfers && cached(in.producer, d, size) != no_transfer) continue;
      bytes = detail::saturating_add(bytes, size);
    }
    return bytes;
  }

  // --- dynamic memory ---------------------------------------------------------------------------

  [[nodiscard]] bool tracked(device_id d) const { return devices_.capacity(d) != unlimited_memory; }
  [[nodiscard]] static std::int64_t as_signed(byte_count bytes) {
    return static_cast<std::int64_t>(std::min<byte_count>(bytes, std::numeric_limits<std::int64_t>::max() / 4));
  }
  // When the engine counts a received copy of u's output from, for a transfer starting at `start`.
  // With sequential channels the simulator starts ready transfers in order of their producers'
  // finish (see the top of this file), possibly before the engine's start, so the copy counts from
  // the earliest any schedule could send it.
  [[nodiscard]] seconds copy_held_from(seconds start, vertex_id u) const {
    return topology_.shared() ? finish_[u] : start;
  }
  // Capacity of d less the most it holds at any time from `from` on. The first query of a device
  // builds its timeline, so a policy asking every step (DOPPLER's features) pays O(log k) a call.
  [[nodiscard]] byte_count free_from(device_id d, seconds from) const {
    if (!tracked(d)) return unlimited_memory;
    build_timeline(d);
    const std::int64_t held = persistent_held_[d] + timeline_[d].peak_from(from) + as_signed(reserve_[d]);
    const auto capacity = as_signed(devices_.capacity(d));
    return held >= capacity ? 0 : static_cast<byte_count>(capacity - held);
  }
  // The holds placing v on d from `begin` to `end` would add or end early, as (time, change);
  // uses the transfers planned by the last arrival(d). Returns the bytes they add in all.
  byte_count new_holds(vertex_id v, device_id d, seconds begin, seconds end) const {
    const csr_graph& g = *view_;
    holds_.clear();
    byte_count added = 0;
    const auto hold = [&](seconds from, seconds to, byte_count bytes, bool ends) {
      if (bytes == 0) return;
      added = detail::saturating_add(added, bytes);
      holds_.emplace_back(from, as_signed(bytes));
      if (ends) holds_.emplace_back(to, -as_signed(bytes));  // an empty hold takes nothing
    };
    const std::uint32_t grp = group_of_[v];
    if (!group_reserved_[grp]) hold(0, 0, group_persistent_[grp], false);
    // d's reserve for groups, as it will be after v: from d's end of work on.
    const byte_count reserve = reserve_after(v, d);
    if (reserve != 0) holds_.emplace_back(std::max(available_[d], end), as_signed(reserve));
    if (reserve > reserve_[d]) added = detail::saturating_add(added, reserve - reserve_[d]);
    hold(begin, end, model_.temporary_bytes(v), true);
    hold(begin, end, model_.output_bytes(v), g.out_degree(v) == 0);
    // A received copy serves its one edge without caching; with caching, later consumers may use it.
    for (const transfer& t : planned_) hold(copy_held_from(t.start, t.tensor), end, t.bytes, !options_.cache_transfers);
    // An input on d whose last consumer is v is freed once v and everything else holding it end.
    const auto pred = g.predecessors(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      const bool seen = std::find(pred.begin(), pred.begin() + i, u) != pred.begin() + i;
      if (device_of_[u] != d || model_.output_bytes(u) == 0 || seen) continue;
      const auto output = ledger_.output(u);
      if (ledger_.readers(output) != static_cast<std::uint32_t>(std::count(pred.begin(), pred.end(), u))) continue;
      holds_.emplace_back(std::max(ledger_.end(output), end), -as_signed(model_.output_bytes(u)));
    }
    return added;
  }
  // Bytes placing v on d would add (as new_holds() counts them), without timing the transfers.
  [[nodiscard]] byte_count added_bytes(vertex_id v, device_id d) const {
    const std::uint32_t grp = group_of_[v];
    byte_count bytes = group_reserved_[grp] ? 0 : group_persistent_[grp];
    bytes = detail::saturating_add(bytes, detail::saturating_add(model_.temporary_bytes(v), model_.output_bytes(v)));
    if (group_size_[grp] > 1) bytes = detail::saturating_add(bytes, group_reserve(v, d));  // at least the reserve's growth
    return detail::saturating_add(bytes, received_bytes(d));
  }
  [[nodiscard]] byte_count own_reserved(vertex_id v) const {
    return detail::saturating_add(model_.output_bytes(v), model_.temporary_bytes(v));
  }
  // The room v's group keeps on d, its device, once v is placed there (0 for a vertex alone): the
  // most the members neither placed nor v hold at once, beyond the outputs the group holds already,
  // when they run one after another in Kahn order after v. An output counts from its member's start
  // until its last reader ran (one outside the group, not placed yet, never runs here; a sink's
  // ends with it); a temporary, and the copy of each input from outside the group that is not on
  // d, while its member runs. So a chain of members reserves two outputs, not all of them.
  // O(members + their edges), remembered for (v, d) until the next placement.
  [[nodiscard]] byte_count group_reserve(vertex_id v, device_id d) const {
    const std::uint32_t grp = group_of_[v];
    if (!dynamic_ || group_size_[grp] < 2) return 0;
    if (reserve_of_ == v && reserve_on_ == d && reserve_step_ == placed_count_) return reserve_value_;
    const csr_graph& g = *view_;
    const auto members = group_members(v);
    for (const vertex_id w : members) {  // reads still to come of each output the group holds
      if (w != v && !is_placed(w)) continue;
      std::uint32_t left = 0;
      for (const vertex_id x : g.successors(w)) left += !is_placed(x) && x != v ? 1 : 0;
      reads_left_[w] = left;
    }
    std::int64_t held = 0, most = 0;
    for (const vertex_id u : members) {
      if (u == v || is_placed(u)) continue;
      const std::int64_t output = as_signed(model_.output_bytes(u));
      std::int64_t temporary = as_signed(model_.temporary_bytes(u));
      const auto pred = g.predecessors(u);
      const auto in = g.in_edges(u);
      for (std::size_t i = 0; i < pred.size(); ++i)
        if (group_of_[pred[i]] != grp && device_of_[pred[i]] != d)
          temporary += as_signed(model_.edge_bytes(in[i]));
      held += output + temporary;
      most = std::max(most, held);
      held -= temporary;
      reads_left_[u] = static_cast<std::uint32_t>(g.out_degree(u));
      if (reads_left_[u] == 0) held -= output;
      for (const vertex_id p : pred)
        if (group_of_[p] == grp && --reads_left_[p] == 0) held -= as_signed(model_.output_bytes(p));
    }
    for (const vertex_id w : members) reads_left_[w] = 0;
    reserve_of_ = v;
    reserve_on_ = d;
    reserve_step_ = placed_count_;
    reserve_value_ = static_cast<byte_count>(most);
    return reserve_value_;
  }
  // d's reserve for groups once v is placed there: v's group's share replaced by what it keeps then.
  [[nodiscard]] byte_count reserve_after(vertex_id v, device_id d) const {
    const std::uint32_t grp = group_of_[v];
    if (group_size_[grp] < 2 || !tracked(d)) return reserve_[d];
    const byte_count now = group_reserved_[grp] ? group_reserve_[grp] : 0;
    return reserve_[d] - now + group_reserve(v, d);
  }
  // Whether `bytes` more fit on d at every time: a quick sufficient test.
  [[nodiscard]] bool fits_anyway(device_id d, byte_count bytes) const {
    return !tracked(d) || persistent_held_[d] + timeline_[d].ceiling() + as_signed(reserve_[d]) + as_signed(bytes) <=
                              as_signed(devices_.capacity(d));
  }
  // Whether the holds from new_holds(), adding `total` bytes in all, keep d within capacity at
  // every time. The common roomy case is settled by the device's peak alone, in O(1).
  [[nodiscard]] bool holds_fit(device_id d, byte_count total) const {
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
      build_timeline(d);
      if (base + added + timeline_[d].peak(from, to) > capacity) return false;
    }
    return true;
  }
  // Until d's timeline is first asked for a range, its holds are only counted: replay_holds()
  // lists them again from the placed state, so a run with room to spare keeps no log of them.
  void hold_on(device_id d, seconds time, std::int64_t bytes) {
    if (bytes == 0 || !tracked(d)) return;
    if (bytes < 0) changed_[d] = 1;
    if (timeline_[d].built()) timeline_[d].add(time, bytes);
    else timeline_[d].add_deferred(bytes);
  }
  // Every consumer of u is placed: its output and (cached) its received copies are freed, each when
  // its last reader is done (schedule.hpp's rules; the ledger has kept the ends). Until a device's
  // timeline is built, a free there only marks that memory was freed.
  void free_tensor(vertex_id u) {
    if (options_.cache_transfers)
      for (auto t = first_transfer_[u]; t != no_transfer; t = transfer_next_[t])
        if (const auto copy = ledger_.copy(t); ledger_.read(copy, 0))
          hold_on(transfers_[t].to, ledger_.end(copy), -as_signed(transfers_[t].bytes));
    hold_on(device_of_[u], ledger_.end(ledger_.output(u)), -as_signed(model_.output_bytes(u)));
  }
  // From the first range query on, d's holds are kept exactly in its timeline.
  void build_timeline(device_id d) const {
    if (timeline_[d].built()) return;
    replay_holds(d);
    timeline_[d].build(replayed_);
  }
  // Every hold on d so far, as hold_placed() and free_tensor() made them, into replayed_.
  void replay_holds(device_id d) const {
    replayed_.clear();
    for (vertex_id v = 0; v < n_; ++v) {
      if (device_of_[v] != d) continue;
      const std::int64_t temporary = as_signed(model_.temporary_bytes(v));
      const std::int64_t output = as_signed(model_.output_bytes(v));
      replayed_.emplace_back(start_[v], temporary + output);
      replayed_.emplace_back(finish_[v], -temporary);
      if (ledger_.readers(ledger_.output(v)) == 0) replayed_.emplace_back(ledger_.end(ledger_.output(v)), -output);
    }
    for (std::size_t t = 0; t < transfers_.size(); ++t) {
      if (transfers_[t].to != d) continue;
      const std::int64_t bytes = as_signed(transfers_[t].bytes);
      replayed_.emplace_back(copy_held_from(transfers_[t].start, transfers_[t].tensor), bytes);
      if (ledger_.readers(ledger_.copy(t)) == 0) replayed_.emplace_back(ledger_.end(ledger_.copy(t)), -bytes);
    }
  }
  // Records the holds of v, just placed on d (new_group: its group's persistent bytes come now;
  // keep: what the group reserves from now on), and v's reads of its inputs. A copy serves one edge
  // without caching; with caching, it stays open (one reader for the tensor's other consumers) until
  // its tensor's last consumer is placed.
  void hold_placed(vertex_id v, device_id d, bool new_group, byte_count keep, std::size_t first_new_transfer) {
    const csr_graph& g = *view_;
    const std::uint32_t grp = group_of_[v];
    if (tracked(d)) {
      if (new_group) persistent_held_[d] += as_signed(group_persistent_[grp]);
      if (group_size_[grp] > 1) {
        reserve_[d] = reserve_[d] - (new_group ? 0 : group_reserve_[grp]) + keep;
        group_reserve_[grp] = keep;
      }
    }
    const std::int64_t temporary = as_signed(model_.temporary_bytes(v));
    hold_on(d, start_[v], temporary + as_signed(model_.output_bytes(v)));
    hold_on(d, finish_[v], -temporary);
    ledger_.take(ledger_.output(v), finish_[v], static_cast<std::uint32_t>(g.out_degree(v)));
    for (std::size_t t = first_new_transfer; t < transfers_.size(); ++t) {
      const transfer& copy = transfers_[t];
      ledger_.take(ledger_.add_copy(), copy.finish, 1);
      hold_on(d, copy_held_from(copy.start, copy.tensor), as_signed(copy.bytes));
      if (options_.cache_transfers) continue;
      if (ledger_.read(ledger_.copy(t), finish_[v])) hold_on(d, finish_[v], -as_signed(copy.bytes));
      if (ledger_.read(ledger_.output(copy.tensor), copy.finish)) free_tensor(copy.tensor);
    }
    const auto pred = g.predecessors(v);
    const auto in = g.in_edges(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      seconds read_until = finish_[v];  // v reads u's output on d; an input from elsewhere comes by a copy
      if (device_of_[u] != d) {
        if (!options_.cache_transfers) continue;  // read by its copy above
        const auto t = cached(u, d, model_.edge_bytes(in[i]));
        ledger_.extend(ledger_.copy(t), finish_[v]);
        read_until = transfers_[t].finish;
      }
      if (ledger_.read(ledger_.output(u), read_until)) free_tensor(u);
    }
    if (g.out_degree(v) == 0) free_tensor(v);
  }

  // Earliest start on d for a vertex of length `length` whose inputs are there at `ready`.
  [[nodiscard]] seconds earliest_start_at(device_id d, seconds ready, seconds length) const {
    if constexpr (!inserts) {
      return std::max(available_[d], ready);
    } else {
      return gaps_[d].earliest_start(ready, length);
    }
  }

  void occupy(device_id d, seconds begin, seconds end) {
    available_[d] = std::max(available_[d], end);
    if constexpr (inserts) {
      gaps_[d].occupy(begin, end);
    }
  }

  // --- placing -------------------------------------------------------------------------------

  void commit(vertex_id v, device_id d) {
    const csr_graph& g = *view_;
    const std::uint32_t grp = group_of_[v];
    collect_inputs(v);
    std::fill(changed_.begin(), changed_.end(), 0);
    if (options_.respect_memory && !dynamic_) free_[d] -= std::min(free_[d], need(v, d));
    const bool new_group = !group_reserved_[grp];
    const byte_count keep = dynamic_ ? group_reserve(v, d) : 0;  // while v is still unplaced
    last_bound_group_ = new_group && group_size_[grp] > 1;
    if (new_group) {
      group_reserved_[grp] = 1;
      group_device_[grp] = d;
    }
    const std::size_t first_new_transfer = transfers_.size();
    const seconds ready = arrival(d);
    commit_transfers();
    const seconds length = model_.compute_time(v, d);
    const seconds begin = earliest_start_at(d, ready, length);
    start_[v] = begin;
    finish_[v] = begin + length;
    occupy(d, begin, finish_[v]);
    device_of_[v] = d;
    last_on_[d] = v;
    step_of_[v] = static_cast<std::uint32_t>(placed_count_++);
    last_placed_ = v;
    leave_ready(v);
    inputs_of_ = no_vertex;
    if (dynamic_) {
      hold_placed(v, d, new_group, keep, first_new_transfer);
      changed_[d] = 1;  // d's start moved: what it could not hold may fit later
    }
    if (!gate_open_ && !is_backward(v) && --forward_left_ == 0) open_gate();
    detail::policy_on_placed(policy_, *this, v, d);
    for (const vertex_id w : g.successors(v))
      if (--waiting_inputs_[w] == 0) make_ready(w);
    if (!attached_.empty()) {
      if (new_group)
        for (const vertex_id w : group_members(v)) release_source(w);
      for (const vertex_id w : g.successors(v))
        if (outside_wait_[w] != no_slot && --outside_wait_[w] == 0) release_attached(w);
    }
  }

  // --- failure ---------------------------------------------------------------------------------

  void fail(gantry::status s, std::string message) {
    outcome_ = {.code = s, .message = std::move(message)};
  }

  // A run placed over capacity goes on; any other status ends it.
  [[nodiscard]] bool failed() const noexcept { return !outcome_.ok() && outcome_.code != status::over_capacity; }

  // The first ready vertex in Kahn order, no_vertex when none is ready.
  [[nodiscard]] vertex_id first_ready() const {
    vertex_id first = no_vertex;
    for (const vertex_id v : ready_)
      if (first == no_vertex || rank_[v] < rank_[first]) first = v;
    return first;
  }

  // Nothing fits: the first ready vertex goes where it may with the most free memory. False when it
  // may go nowhere (every device excluded).
  bool place_best_effort() {
    const vertex_id v = first_ready();
    if (v == no_vertex) return false;
    device_id chosen = no_device;
    for (device_id d = 0; d < m_; ++d)
      if (allowed(v, d) && (chosen == no_device || free_memory(d) > free_memory(chosen))) chosen = d;
    if (chosen == no_device) return false;
    if (outcome_.ok()) {
      fail_memory(v);  // the fields and message of the first vertex placed over capacity
      outcome_.code = status::over_capacity;
      outcome_.device = chosen;
      outcome_.message = std::string(name()) + ": placed best effort; " +
                         outcome_.message.substr(outcome_.message.find(':') + 2) + "; it went to " +
                         detail::list_device_label(devices_, chosen);
    }
    commit(v, chosen);
    return true;
  }

  // The policy found nothing to place: the first ready vertex (in Kahn order) fits nowhere.
  void fail_no_fit() {
    if (ready_.empty()) {
      // cannot happen on a DAG; kept so that a bug is a status, not a hang
      fail(status::infeasible, std::string(name()) + ": no vertex is ready with " + std::to_string(n_ - placed_count_) +
                                   " vertices left");
      return;
    }
    fail_memory(first_ready());
  }

  void fail_memory(vertex_id v) {
    const std::uint32_t grp = group_of_[v];
    collect_inputs(v);
    const device_id first = group_device_[grp] == no_device ? 0 : group_device_[grp];
    const device_id last = group_device_[grp] == no_device ? static_cast<device_id>(m_) : group_device_[grp] + 1;
    std::ostringstream text;
    text << name() << ": no device can hold vertex " << quoted(v) << ", which needs " << format_bytes(total_bytes(model_, v));
    if (group_size_[grp] > 1 && dynamic_)
      text << " (and " << format_bytes(group_reserve(v, first)) << " kept for the rest of its group of " << group_size_[grp]
           << " vertices on " << detail::list_device_label(devices_, first) << ")";
    else if (group_size_[grp] > 1 && !group_reserved_[grp])
      text << " (" << format_bytes(group_bytes_[grp]) << " for its group of " << group_size_[grp] << " vertices)";
    if (group_device_[grp] != no_device) text << " and must go to " << detail::list_device_label(devices_, group_device_[grp]);
    // The device where v comes closest to fitting: the fields of the outcome.
    device_id closest = no_device;
    byte_count closest_need = 0, closest_free = 0;
    std::optional<seconds> closest_time;
    const auto consider = [&](device_id d, byte_count needed, byte_count available, std::optional<seconds> at) {
      const byte_count short_by = needed > available ? needed - available : 0;
      if (closest == no_device || short_by < (closest_need > closest_free ? closest_need - closest_free : 0)) {
        closest = d;
        closest_need = needed;
        closest_free = available;
        closest_time = at;
      }
    };
    // A device the policy took out of the run (m-SCT closes a device once a vertex did not fit
    // there) may have room: say so, or the numbers read as a contradiction.
    const auto closed = [&](device_id d) { return !allowed(v, d) && group_device_[grp] == no_device; };
    const auto device_line = [&](device_id d, byte_count needed, byte_count available) {
      text << (d == first ? " " : ", ") << detail::list_device_label(devices_, d) << " needs " << format_bytes(needed)
           << ", has " << format_bytes(available) << (closed(d) ? " (closed)" : "");
    };
    bool any_closed = false, all_closed = true;
    for (device_id d = first; d < last; ++d) {
      any_closed = any_closed || closed(d);
      all_closed = all_closed && closed(d);
    }
    if (dynamic_) {
      // Per device: the bytes v would add and the device's free memory from v's first new hold on.
      text << "; with its incoming tensors, free memory from when it would start taking it:";
      for (device_id d = first; d < last; ++d) {
        const seconds ready = arrival(d);
        const seconds length = model_.compute_time(v, d);
        const seconds begin = earliest_start_at(d, ready, length);
        const byte_count added = new_holds(v, d, begin, begin + length);
        seconds from = begin;
        for (const auto& hold : holds_) from = std::min(from, hold.first);
        device_line(d, added, free_from(d, from));
        if (!closed(d) || all_closed) consider(d, added, free_from(d, from), from);
      }
    } else {
      text << "; with its incoming tensors, free memory:";
      for (device_id d = first; d < last; ++d) {
        device_line(d, need(v, d), free_[d]);
        if (!closed(d) || all_closed) consider(d, need(v, d), free_[d], std::nullopt);
      }
    }
    if (any_closed) text << "; a closed device takes no more vertices in this run, whatever room it has";
    outcome_ = {.code = status::out_of_memory, .vertex = v, .device = closest, .time = closest_time,
                .needed = closest_need, .available = closest_free, .message = text.str()};
  }

  const G& graph_;
  detail::csr_view<G> view_;
  const M& model_;
  const D& devices_;
  Policy policy_;
  list_options options_;
  std::size_t n_ = 0, m_ = 0;
  gantry::topology topology_;
  bool shared_ = false;  // topology_.shared(), asked often

  gantry::outcome outcome_;
  std::size_t placed_count_ = 0;
  vertex_id last_placed_ = no_vertex;
  bool last_bound_group_ = false;

  std::vector<std::uint32_t> rank_;  // Kahn order position, the tie-breaker
  mutable std::optional<gantry::levels> levels_;
  std::vector<device_id> device_of_;
  std::vector<seconds> start_, finish_;
  std::vector<std::uint32_t> step_of_;
  std::vector<std::uint32_t> waiting_inputs_;
  std::vector<vertex_id> ready_;
  std::vector<std::uint32_t> ready_slot_;  // position in ready_, no_slot when not ready
  std::vector<seconds> available_;
  std::vector<vertex_id> last_on_;
  std::vector<std::uint8_t> excluded_;
  std::vector<byte_count> free_;
  mutable std::vector<seconds> channel_free_;  // restored by every query that probes it
  std::vector<transfer> transfers_;
  std::vector<std::uint32_t> transfer_next_, first_transfer_;  // copies per tensor
  std::vector<detail::idle_gaps> gaps_;                       // idle intervals per device (insertion)

  // Scratch of the const queries: they leave no trace in the state.
  mutable std::vector<std::uint32_t> stamp_;
  mutable std::uint32_t stamp_now_ = 0;
  mutable std::vector<input> inputs_;
  mutable vertex_id inputs_of_ = no_vertex;
  mutable std::vector<std::pair<std::size_t, seconds>> touched_;
  mutable std::vector<transfer> planned_;  // the transfers the last arrival() would start
  mutable std::vector<std::uint32_t> copy_on_;  // scratch for arrival_all(): per device, a copy of one input
  mutable std::vector<std::pair<seconds, std::int64_t>> holds_;  // scratch for new_holds()

  std::vector<std::uint32_t> group_of_;
  std::vector<byte_count> group_bytes_;
  std::vector<std::uint32_t> group_size_;
  std::vector<device_id> group_device_;
  std::vector<std::uint8_t> group_reserved_;
  std::vector<byte_count> group_persistent_;

  // Dynamic memory accounting.
  bool dynamic_ = false;
  mutable std::vector<detail::memory_timeline> timeline_;  // per device, without persistent bytes
  std::vector<std::int64_t> persistent_held_;              // per device
  std::vector<byte_count> reserve_;                        // per device: its groups' reserves, from available_ on
  detail::memory_ledger<> ledger_;                           // who still reads each output and received copy
  mutable std::vector<detail::memory_timeline::change> replayed_;  // scratch for replay_holds()
  std::vector<std::uint8_t> changed_;                      // per device: the last placement freed memory there
  std::vector<byte_count> added_bound_;                    // per vertex: at least added_bytes(v, d) on every d
  byte_count largest_added_bound_ = 0;                     // the largest of added_bound_

  bool forward_gate_ = false;  // forward-only placement chosen
  bool gate_open_ = true;      // backward vertices may be placed
  std::size_t forward_left_ = 0;
  std::vector<vertex_id> parked_;

  // Groups as units (only when some group has several members).
  std::vector<std::uint32_t> member_first_;  // per group, into member_list_
  std::vector<vertex_id> member_list_;
  std::vector<vertex_id> group_self_;        // v itself, for group_members() without groups
  std::vector<std::uint8_t> attached_;       // per vertex: a group's source waiting for its consumers
  std::vector<std::uint32_t> outside_wait_;  // per vertex: inputs not from attached sources still unplaced
  std::vector<byte_count> group_rest_;       // per group: output + temporary bytes of all members (dynamic)
  std::vector<byte_count> group_reserve_;    // per group bound and tracked: group_reserve() at its last placement
  mutable std::vector<std::uint32_t> reads_left_;  // scratch of group_reserve(), all 0 between calls
  mutable vertex_id reserve_of_ = no_vertex;       // group_reserve()'s last answer: for whom, where, when, what
  mutable device_id reserve_on_ = no_device;
  mutable std::size_t reserve_step_ = 0;
  mutable byte_count reserve_value_ = 0;
};

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
    if (try_on(capacity_scaled<D>(devices, 16, cap), cap)) return true;
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
  list_scheduler<G, M, D, kahn_one_device_policy> scheduler(graph, model, devices,
                                                            kahn_one_device_policy(std::string(name), home, skip),
                                                            std::move(options));
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
    alone.placement.outcome.message = "placed every vertex on " + detail::list_device_label(devices, *home) +
                                      within + " instead, the first ready vertex in Kahn order that fits going next";
    return alone;
  };
  if (auto alone = detail::one_device_run(graph, model, devices, options, name, *home, true)) return said(std::move(*alone), "");
  std::optional<list_schedule_result> found;
  const unsigned retries = options.memory_retries;
  const bool any = detail::down_the_grid(devices, detail::least_capacity(graph, model, 1), retries, [&](const auto& on, byte_count cap) {
    auto alone = detail::one_device_run(graph, model, on, options, name, *home, true);
    if (alone) found = said(std::move(*alone), " within " + std::to_string(cap) + " bytes");
    return alone.has_value();
  });
  return any ? std::move(found) : std::nullopt;
}

// What a memory-aware run does when it ends out of memory (or, placing best effort, over
// capacity): `run(devices)` runs the same placer on any device set. A greedy list scheduler can
// fill every device with tensors whose consumers then fit nowhere, at one capacity and not at a
// smaller one, so the run is tried again with each device's memory capped at the points of
// capacity_grid (model/capacity_scaled.hpp) below the largest capacity, 2.2% apart, down to what
// some device must hold (detail::least_capacity) and at most options.memory_retries of them; and
// at last (options.one_device_answer) with every vertex on one device (place_on_one_device). The
// first of these that fits is returned, its message saying which it was; else `failed` unchanged.
// So a memory-aware placer fails only where one device cannot run the graph either; and since a
// run with more memory tries every grid point a run with less memory tries, feasibility is
// monotone over the capacities of the grid (the registry's placers, place/placers.hpp, plan
// within a grid point for that reason). Retries run only after a failure.
template <adapted_graph G, placement_model M, device_set D, class Run>
[[nodiscard]] list_schedule_result memory_fallback(const G& graph, const M& model, const D& devices,
                                                   list_options options, list_schedule_result failed,
                                                   std::string_view name, Run&& run) {
  const status code = failed.placement.outcome.code;
  if (!options.respect_memory || (code != status::out_of_memory && code != status::over_capacity)) return failed;
  const std::size_t m = devices.device_count();
  if (m == 0) return failed;
  const auto explained = [&](list_schedule_result ok, const std::string& how) {
    ok.placement.outcome.message = failed.placement.outcome.message + "; " + how;
    return ok;
  };
  std::optional<list_schedule_result> found;
  detail::down_the_grid(devices, detail::least_capacity(graph, model, m), options.memory_retries, [&](const auto& on, byte_count cap) {
    list_schedule_result retry = run(on);
    if (retry.ok()) found = explained(std::move(retry), "placed within " + std::to_string(cap) + " bytes per device instead");
    return found.has_value();
  });
  if (found) return std::move(*found);
  if (!options.one_device_answer) return failed;
  auto alone = place_on_one_device(graph, model, devices, std::move(options), name);
  if (!alone) return failed;
  std::string how = alone->placement.outcome.message;
  return explained(std::move(*alone), how);
}

// Runs a list-scheduling policy to the end. Throws as list_scheduler does; running out of memory
// is a status in the result, given only when memory_fallback() found nothing either (a policy that
// cannot be copied gets only the one-device answer).
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
  list_scheduler<G, M, D, Policy> scheduler(graph, model, devices, std::move(policy),
                                            memory ? options : std::move(options));
  while (scheduler.step()) {
  }
  const std::string name(scheduler.name());
  return memory_fallback(graph, model, devices, std::move(options), std::move(scheduler).result(), name,
                         [&]<class S>(const S& smaller) {
                           if (!spare) return list_schedule_result{};
                           list_scheduler<G, M, S, Policy> retry(graph, model, smaller, *spare, *strict);
                           while (retry.step()) {
                           }
                           return std::move(retry).result();
                         });
}

}  // namespace gantry
