// The list-scheduling engine behind ETF, m-ETF, Critical Path, HEFT, CPOP and PEFT: vertices are
// placed one at a time, each (vertex, device) pair named by a policy (place/list_policy.hpp) that
// reads the engine's state through its const queries, the list_view. The engine is a composition
// of parts, each in its own header in place/engine/:
//   placed.hpp     what is placed: device, start, finish and step per vertex; the result's order
//   groups.hpp     colocation groups placed as units, their bytes and bound devices
//   readiness.hpp  the ready set, forward-only placement's gate, groups' attached sources
//   transfers.hpp  inputs per ready vertex, channels per communication mode, the tensor cache
//   memory.hpp     static (Baechi's reservation) or dynamic (a timeline per device) accounting
// and itself keeps the device timelines (with idle gaps for insertion policies), the policy and
// the failure explanations (Baechi §2.3, §3.1-3.4, §4.2). list_scheduler steps through a run;
// list_schedule() (place/list_scheduler.hpp) is the one-call form, with the memory fallbacks.
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
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/engine/failure.hpp>
#include <gantry/place/engine/groups.hpp>
#include <gantry/place/engine/memory.hpp>
#include <gantry/place/engine/options.hpp>
#include <gantry/place/engine/placed.hpp>
#include <gantry/place/engine/readiness.hpp>
#include <gantry/place/engine/transfers.hpp>
#include <gantry/place/list_policy.hpp>
#include <gantry/schedule/idle_gaps.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

// The engine as a class, to watch or interleave a run:
//   list_scheduler s(g, model, devices, etf_policy{}, {.respect_memory = true});
//   while (s.step()) show(s.last_placed());  auto result = s.result();
// Its const queries are the view a policy reads (list_view, with each query's cost); they change
// nothing a later query answers, and one may call another (the bottom levels and a device's memory
// timeline are caches built on first use). Holds references to its arguments: they must outlive
// it. Throws invalid_input for options of the wrong size, and not_a_dag (naming a cycle) when the
// graph has one. Each step costs what the policy's choose() costs plus O(k log k) for a placement
// with k inputs; dynamic memory adds O(log n) per hold and per check of a device whose peak could
// be exceeded (a check is O(1) while the device's peak plus the vertex's bytes fit).
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
    detail::check_list_options(options_, n_, m_, name(), [&](vertex_id v) { return quoted(v); });
    const auto topo = detail::kahn_on(g);
    detail::require_dag(graph_, g, topo);
    rank_.assign(n_, 0);
    for (std::uint32_t i = 0; i < n_; ++i) rank_[topo[i]] = i;
    levels_.reset();
    outcome_ = {};
    last_placed_ = no_vertex;
    last_bound_group_ = false;
    placed_.reset(n_);
    available_.assign(m_, 0);
    last_on_.assign(m_, no_vertex);
    excluded_.assign(m_, 0);
    reopened_ = 0;
    gaps_.resize(inserts ? m_ : 0);
    for (auto& gaps : gaps_) gaps.reset();
    groups_.reset(g, model_, options_, topo, name(), [&](vertex_id v) { return quoted(v); });
    book_.reset(n_, g.edge_count(), topology_, options_.cache_transfers);
    reserved_.reset(devices_);
    dynamic_ = options_.respect_memory && options_.accounting == memory_accounting::dynamic;
    if (dynamic_) memory_.reset({&g, &model_, &devices_, &placed_, &groups_, &book_, topology_.shared()});
    ready_.reset(g, groups_, rank_, options_.forward_of, detail::forward_gate(options_, model_, devices_, n_));
    detail::policy_start(policy_, *this);
    ready_.start(g, groups_, on_ready());
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
      if (ready_.release_all_attached(on_ready())) continue;  // they wait for inputs that wait for them
      if (!ready_.any_parked()) {
        if (reopen_excluded()) continue;
        if (options_.best_effort && place_best_effort()) return true;
        fail_no_fit();
        return false;
      }
      ready_.open_gate(on_ready());  // a forward vertex waits for a backward one: give up the gate
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
    if (v >= n_ || !ready_.is_ready(v))
      throw invalid_input(std::string(name()) + ": vertex " + (v >= n_ ? std::to_string(v) : quoted(v)) +
                          " cannot be placed now: it is " +
                          (v >= n_        ? "out of range"
                           : is_placed(v) ? "placed already"
                                          : "not ready"));
    if (d >= m_ || !allowed(v, d))
      throw invalid_input(std::string(name()) + ": vertex " + quoted(v) + " cannot go to device " + std::to_string(d) +
                          (d >= m_ ? ": there are " + std::to_string(m_) + " devices"
                                   : ": its group is on " + detail::list_device_label(devices_, bound_device(v))));
    commit(v, d);
  }

  // --- the view: what a policy reads (list_view in place/list_policy.hpp gives each query's cost) --

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
  [[nodiscard]] bool channels_shared() const noexcept { return topology_.shared(); }

  // Vertices whose inputs are all placed and that are not placed themselves, in no particular
  // order. Backward vertices wait while forward-only placement holds them, and a group's source
  // vertices wait for their group (place/engine/readiness.hpp).
  [[nodiscard]] std::span<const vertex_id> ready() const noexcept { return ready_.ready(); }
  [[nodiscard]] bool is_ready(vertex_id v) const { return ready_.is_ready(v); }
  // Position in Kahn order: the usual tie-breaker.
  [[nodiscard]] std::uint32_t kahn_rank(vertex_id v) const { return rank_[v]; }
  // Levels with mean compute and transfer times (order/levels.hpp), computed on first use.
  [[nodiscard]] seconds bottom_level(vertex_id v) const { return levels().bottom[v]; }
  [[nodiscard]] seconds top_level(vertex_id v) const { return levels().top[v]; }

  [[nodiscard]] bool done() const noexcept { return failed() || placed_.count == n_; }
  // ok, or why the run failed (out_of_memory: the vertex that fits nowhere, the device where it
  // came closest, the bytes it needed and those free there) or went over capacity (best effort).
  [[nodiscard]] const gantry::outcome& outcome() const noexcept { return outcome_; }
  [[nodiscard]] gantry::status status() const noexcept { return outcome_.code; }
  [[nodiscard]] const std::string& message() const noexcept { return outcome_.message; }
  [[nodiscard]] std::size_t placed_count() const noexcept { return placed_.count; }
  [[nodiscard]] vertex_id last_placed() const noexcept { return last_placed_; }
  [[nodiscard]] vertex_id failed_vertex() const noexcept { return outcome_.vertex; }
  [[nodiscard]] bool is_placed(vertex_id v) const { return placed_.placed(v); }
  [[nodiscard]] device_id device_of(vertex_id v) const { return placed_.device[v]; }
  [[nodiscard]] seconds start_of(vertex_id v) const { return placed_.start[v]; }
  [[nodiscard]] seconds finish_of(vertex_id v) const { return placed_.finish[v]; }
  // When device d finishes the last vertex appended to it so far.
  [[nodiscard]] seconds available_at(device_id d) const { return available_[d]; }
  // The vertex placed on d most recently (no_vertex before the first).
  [[nodiscard]] vertex_id last_on(device_id d) const { return last_on_[d]; }
  // The earliest time any device is free.
  [[nodiscard]] seconds now() const { return m_ == 0 ? 0.0 : *std::min_element(available_.begin(), available_.end()); }

  // Whether v may go to d: its group's device once a member is placed (or fixed), else any device
  // not excluded.
  [[nodiscard]] bool allowed(vertex_id v, device_id d) const {
    const device_id fixed = bound_device(v);
    return fixed == no_device ? excluded_[d] == 0 : fixed == d;
  }
  // Takes d out of further placements of vertices whose group is not bound to it (m-SCT excludes a
  // device that ran out of memory). Groups already on d stay there. Exclusion is a preference, never
  // a cause of failure: when no ready vertex fits on a device left open, every excluded device is
  // open again (reopened() counts it) and the policy chooses among all of them, as m-ETF would.
  void exclude(device_id d) {
    if (d >= m_)
      throw invalid_input(std::string(name()) + ": cannot exclude device " + std::to_string(d) + " of " +
                          std::to_string(m_));
    excluded_[d] = 1;
  }
  [[nodiscard]] bool excluded(device_id d) const { return excluded_[d] != 0; }
  // How many times the excluded devices were opened again because nothing fitted on the others.
  [[nodiscard]] std::size_t reopened() const noexcept { return reopened_; }
  // The members of v's group in Kahn order (v alone when it has none).
  [[nodiscard]] std::span<const vertex_id> group_members(vertex_id v) const { return groups_.members(v); }
  // For a vertex of a group no member of which is placed yet: when the inputs that the group's
  // other members receive from vertices already placed could be on d (edges timed alone, no
  // channels). A group is placed as a unit, so its first member goes where the group can run, not
  // where that member alone could start. 0 otherwise.
  [[nodiscard]] seconds group_ready(vertex_id v, device_id d) const {
    return groups_.ready_on(*view_, model_, placed_, v, d);
  }
  // Whether data_ready(v, d) may change while v waits: with channels (they get busier, or a copy
  // arrives), and for a member of a group not bound yet (its other members' inputs get placed; once
  // bound, only the group's own device counts).
  [[nodiscard]] bool ready_may_change(vertex_id v) const { return topology_.shared() || groups_.unbound_several(v); }
  // Whether the last placement was the first of its group (of several): the group is bound now.
  [[nodiscard]] bool last_bound_group() const noexcept { return last_bound_group_; }
  // The device v's group is bound to, or no_device while it is free.
  [[nodiscard]] device_id bound_device(vertex_id v) const { return groups_.device(groups_.of(v)); }
  [[nodiscard]] std::uint32_t group_of(vertex_id v) const { return groups_.of(v); }

  // When every input of ready vertex v could be on d, with the transfers that placing v on d would
  // start now (channels as reserved so far in sequential and duplex modes).
  // For the first member of a group, also when the group's other inputs could be (group_ready).
  // This and the queries built on it are for ready vertices: a vertex's inputs are listed when it
  // becomes ready, so before that only the group term counts.
  [[nodiscard]] seconds data_ready(vertex_id v, device_id d) const {
    return std::max(book_.arrival(book_.inputs(v), d, placed_, model_), group_ready(v, d));
  }
  // data_ready(v, d) for every device d, into out (device_count() entries): without shared
  // channels, one pass over v's inputs and their copies serves every device.
  void data_ready_all(vertex_id v, std::span<seconds> out) const {
    const auto inputs = book_.inputs(v);
    if (topology_.shared()) {
      for (device_id d = 0; d < m_; ++d) out[d] = book_.arrival(inputs, d, placed_, model_);
    } else {
      book_.arrival_all(inputs, placed_, model_, out.first(m_));
    }
    if (groups_.unbound_several(v))  // else group_ready() is 0
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
    if (dynamic_ && memory_.roomy(v, d)) return true;  // O(1), before the inputs are looked at
    const auto inputs = book_.inputs(v);
    if (!dynamic_) return reserved_.fits(d, need(v, d));
    const byte_count reserve = memory_.group_reserve(v, d);
    if (!memory_.tracked(d) || memory_.fits_anyway(d, memory_.added_bytes(v, d, inputs, reserve))) return true;
    hold_list holds;
    const byte_count added = probe_holds(v, d, reserve, holds);
    return memory_.holds_fit(d, added, holds);
  }
  // Memory of d not yet reserved (meaningful with respect_memory); with dynamic accounting, its
  // capacity less the most it holds at any time so far (holds not yet ended counted to infinity).
  [[nodiscard]] byte_count free_memory(device_id d) const {
    return dynamic_ ? memory_.free_from(d, 0) : reserved_.free(d);
  }
  // Whether the last placement changed what d can hold (memory freed, or d's start moved on):
  // a vertex that did not fit on d may fit now.
  [[nodiscard]] bool memory_changed(device_id d) const { return dynamic_ && memory_.changed(d); }
  [[nodiscard]] const std::vector<transfer>& transfers() const noexcept { return book_.all(); }
  // Whether backward vertices wait for every forward vertex (forward_only, memory permitting).
  [[nodiscard]] bool forward_only_active() const noexcept { return ready_.gated(); }

  // The placement so far (no_device for vertices not placed) and, when every vertex is placed, the
  // schedule with its summary.
  [[nodiscard]] list_schedule_result result() const& { return make_result(*this); }
  // The same, moving the schedule's vectors out of the engine (which is left to be reset or dropped).
  [[nodiscard]] list_schedule_result result() && { return make_result(*this); }

 private:
  using hold_list = typename detail::dynamic_memory<M, D>::hold_list;
  static constexpr bool inserts = detail::policy_inserts<Policy>();

  // Copies the schedule's vectors out of a const engine, moves them out of a non-const one.
  template <class Self>
  static list_schedule_result make_result(Self& self) {
    const list_scheduler& me = self;
    list_schedule_result out;
    out.forward_only = me.ready_.gated();
    auto& p = out.placement;
    p.outcome = me.outcome_;
    p.device = me.placed_.device;
    p.order = me.placed_.order_by_start(me.m_);
    if (!p.outcome.ok()) out.steps = me.placed_.by_step();
    if (me.failed() || me.placed_.count != me.n_) return out;
    auto& s = out.schedule;
    s.device = me.placed_.device;
    if constexpr (std::is_const_v<Self>) {
      s.start = me.placed_.start;
      s.finish = me.placed_.finish;
      s.transfers = me.book_.all();
    } else {
      s.start = std::move(self.placed_.start);
      s.finish = std::move(self.placed_.finish);
      s.transfers = std::move(self.book_).take();
    }
    summarize(s, *me.view_, me.model_, me.m_, true, p.order);
    return out;
  }

  [[nodiscard]] const gantry::levels& levels() const {
    if (!levels_) levels_ = detail::compute_levels(*view_, detail::kahn_on(*view_), model_, m_);
    return *levels_;
  }
  [[nodiscard]] std::string quoted(vertex_id v) const { return quoted_vertex_name(graph_, v); }
  // What the readiness part calls for each vertex entering the ready set.
  [[nodiscard]] auto on_ready() {
    return [this](vertex_id v) {
      book_.collect(*view_, model_, v, placed_);
      detail::policy_on_ready(policy_, *this, v);
    };
  }

  // Bytes placing v on d would reserve under Baechi's static rule.
  [[nodiscard]] byte_count need(vertex_id v, device_id d) const {
    return detail::reserved_memory::need(groups_, v, book_.received_bytes(book_.inputs(v), d, placed_, model_));
  }
  // The holds placing v on d at its earliest start would add (dynamic_memory::new_holds()), with
  // the transfers it would start; `reserve` is group_reserve(v, d). Returns the bytes they add.
  // `from` (when given) is set to when the first of them starts.
  byte_count probe_holds(vertex_id v, device_id d, byte_count reserve, hold_list& holds,
                         seconds* from = nullptr) const {
    detail::planned_transfers plan;
    const seconds ready = book_.arrival(book_.inputs(v), d, placed_, model_, &plan);
    const seconds length = model_.compute_time(v, d);
    const seconds begin = earliest_start_at(d, ready, length);
    const byte_count added =
        memory_.new_holds(v, d, begin, begin + length, {plan.data(), plan.size()}, reserve, available_[d], holds);
    if (from) {
      *from = begin;
      for (const auto& hold : holds) *from = std::min(*from, hold.first);
    }
    return added;
  }

  // Earliest start on d for a vertex of length `length` whose inputs are there at `ready`.
  [[nodiscard]] seconds earliest_start_at(device_id d, seconds ready, seconds length) const {
    if constexpr (!inserts) return std::max(available_[d], ready);
    else return gaps_[d].earliest_start(ready, length);
  }

  void commit(vertex_id v, device_id d) {
    const std::uint32_t grp = groups_.of(v);
    if (dynamic_) memory_.clear_changed();
    if (options_.respect_memory && !dynamic_) reserved_.record(d, need(v, d));
    const bool new_group = !groups_.bound(grp);
    const byte_count keep = dynamic_ ? memory_.group_reserve(v, d) : 0;  // while v is still unplaced
    last_bound_group_ = new_group && groups_.size(grp) > 1;
    if (new_group) groups_.bind(grp, d);
    const std::size_t first_new_transfer = book_.all().size();
    detail::planned_transfers plan;
    const seconds ready = book_.arrival(book_.inputs(v), d, placed_, model_, &plan);
    book_.commit({plan.data(), plan.size()});
    const seconds length = model_.compute_time(v, d);
    const seconds begin = earliest_start_at(d, ready, length);
    available_[d] = std::max(available_[d], begin + length);
    if constexpr (inserts) gaps_[d].occupy(begin, begin + length);
    placed_.record(v, d, begin, begin + length);
    last_on_[d] = v;
    last_placed_ = v;
    ready_.leave(v);
    if (dynamic_) memory_.record(v, d, new_group, keep, first_new_transfer);
    ready_.count_forward(v, on_ready());
    detail::policy_on_placed(policy_, *this, v, d);
    ready_.placed(*view_, groups_, v, new_group, on_ready());
  }

  // --- failure ---------------------------------------------------------------------------------

  // A run placed over capacity goes on; any other status ends it.
  [[nodiscard]] bool failed() const noexcept { return !outcome_.ok() && outcome_.code != status::over_capacity; }

  // Nothing fits: the first ready vertex goes where it may with the most free memory. False when it
  // may go nowhere (every device excluded).
  bool place_best_effort() {
    const vertex_id v = ready_.first_ready();
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

  // The policy found nothing to place while some device is excluded: open them all again. False
  // when none is excluded.
  bool reopen_excluded() {
    if (std::find(excluded_.begin(), excluded_.end(), std::uint8_t{1}) == excluded_.end()) return false;
    std::fill(excluded_.begin(), excluded_.end(), std::uint8_t{0});
    ++reopened_;
    return true;
  }

  // The policy found nothing to place: the first ready vertex (in Kahn order) fits nowhere.
  void fail_no_fit() {
    if (ready_.ready().empty()) {
      // cannot happen on a DAG; kept so that a bug is a status, not a hang
      outcome_ = {.code = status::infeasible,
                  .message = std::string(name()) + ": no vertex is ready with " + std::to_string(n_ - placed_.count) +
                             " vertices left"};
      return;
    }
    fail_memory(ready_.first_ready());
  }

  // outcome_: v fits on no device it may use, with the bytes it needs and has on each.
  void fail_memory(vertex_id v) {
    const std::uint32_t grp = groups_.of(v);
    const device_id bound = groups_.device(grp);
    const device_id first = bound == no_device ? 0 : bound;
    std::string text = std::string(name()) + ": no device can hold vertex " + quoted(v) + ", which needs " +
                       format_bytes(total_bytes(model_, v));
    const std::string members = std::to_string(groups_.size(grp));
    if (groups_.size(grp) > 1 && dynamic_)
      text += " (and " + format_bytes(memory_.group_reserve(v, first)) + " kept for the rest of its group of " +
              members + " vertices on " + detail::list_device_label(devices_, first) + ")";
    else if (groups_.size(grp) > 1 && !groups_.bound(grp))
      text += " (" + format_bytes(groups_.bytes(grp)) + " for its group of " + members + " vertices)";
    outcome_ =
        detail::no_fit_outcome(*this, v, std::move(text), bound, dynamic_, [&](device_id d) -> detail::device_room {
          if (!dynamic_) return {need(v, d), reserved_.free(d), std::nullopt};
          // The bytes v would add and the device's free memory from v's first new hold on.
          hold_list holds;
          seconds from = 0;
          const byte_count added = probe_holds(v, d, memory_.group_reserve(v, d), holds, &from);
          return {added, memory_.free_from(d, from), from};
        });
  }

  const G& graph_;
  detail::csr_view<G> view_;
  const M& model_;
  const D& devices_;
  Policy policy_;
  list_options options_;
  std::size_t n_ = 0, m_ = 0;
  gantry::topology topology_;
  std::vector<std::uint32_t> rank_;               // Kahn order position, the tie-breaker
  mutable std::optional<gantry::levels> levels_;  // a cache, computed on first use

  gantry::outcome outcome_;
  vertex_id last_placed_ = no_vertex;
  bool last_bound_group_ = false;
  detail::placed_vertices placed_;
  std::vector<seconds> available_;      // per device: when its last appended vertex ends
  std::vector<vertex_id> last_on_;      // per device
  std::vector<std::uint8_t> excluded_;  // per device
  std::size_t reopened_ = 0;
  std::vector<detail::idle_gaps> gaps_;  // per device: idle intervals (insertion policies only)

  detail::group_table groups_;
  detail::readiness ready_;
  detail::transfer_book book_;
  bool dynamic_ = false;  // memory respected and counted over time
  detail::reserved_memory reserved_;
  detail::dynamic_memory<M, D> memory_;
};

}  // namespace gantry
