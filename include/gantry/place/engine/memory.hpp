// The two ways a list-scheduling run counts a device's memory (list_options::accounting), behind
// one interface: free(d) (what d has left), fits(...) (whether a vertex's bytes fit) and record
// (a placement takes its bytes).
//  - detail::reserved_memory, Baechi's static rule: placing v on d takes total_bytes(v) (the whole
//    group's for a group's first member) plus the tensors d receives for it, for the rest of the run.
//  - detail::dynamic_memory, memory over time by the rules of schedule/schedule.hpp (Baechi §4.2):
//    a timeline of holds per device, freed as the ledger (schedule/memory_ledger.hpp) finds each
//    tensor's last reader done, plus the room a bound colocation group keeps for its members still
//    to come. See memory_accounting::dynamic in place/engine/options.hpp.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/engine/groups.hpp>
#include <gantry/place/engine/placed.hpp>
#include <gantry/place/engine/transfers.hpp>
#include <gantry/schedule/memory_ledger.hpp>
#include <gantry/schedule/memory_timeline.hpp>

#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace gantry::detail {

class reserved_memory {
 public:
  template <device_set D>
  void reset(const D& devices) {
    free_.resize(devices.device_count());
    for (device_id d = 0; d < free_.size(); ++d) free_[d] = devices.capacity(d);
  }
  // Memory of d not yet reserved.
  [[nodiscard]] byte_count free(device_id d) const { return free_[d]; }
  // Bytes placing v on d reserves: its group's when no member is placed yet, plus `received`
  // (the tensors d receives for it).
  [[nodiscard]] static byte_count need(const group_table& groups, vertex_id v, byte_count received) {
    const std::uint32_t grp = groups.of(v);
    return saturating_add(groups.bound(grp) ? 0 : groups.bytes(grp), received);
  }
  [[nodiscard]] bool fits(device_id d, byte_count need) const { return need <= free_[d]; }
  void record(device_id d, byte_count need) { free_[d] -= std::min(free_[d], need); }

 private:
  std::vector<byte_count> free_;
};

template <placement_model M, device_set D>
class dynamic_memory {
 public:
  // (time, change in bytes) of the holds a placement would add or end early.
  using hold_list = boost::container::small_vector<std::pair<seconds, std::int64_t>, 16>;
  // What the accounting reads of the run; every pointer must outlive it.
  struct parts {
    const csr_graph* graph;
    const M* model;
    const D* devices;
    const placed_vertices* placed;
    const group_table* groups;
    const transfer_book* transfers;
    bool shared;  // transfers share channels (copy_held_from())
  };

  void reset(const parts& p) {
    p_ = p;
    const csr_graph& g = *p.graph;
    const std::size_t n = g.vertex_count(), m = p.devices->device_count();
    timeline_.resize(m);
    for (auto& timeline : timeline_) timeline.clear();
    persistent_held_.assign(m, 0);
    reserve_.assign(m, 0);
    changed_.assign(m, 0);
    ledger_.reset(n);
    ledger_.reserve_copies(g.edge_count());
    const group_table& groups = *p.groups;
    group_reserve_.assign(groups.count(), 0);
    std::vector<byte_count> rest(groups.count(), 0);  // per group: output + temporary bytes of all members
    for (vertex_id v = 0; v < n; ++v) rest[groups.of(v)] = saturating_add(rest[groups.of(v)], own_reserved(v));
    // At least what added_bytes(v, d) can be on any device: fits() settles a roomy device with it.
    // A member may change its group's reserve by at most the other members' own bytes.
    added_bound_.resize(n);
    largest_added_bound_ = 0;
    for (vertex_id v = 0; v < n; ++v) {
      const std::uint32_t grp = groups.of(v);
      byte_count bytes = saturating_add(groups.persistent(grp), own_reserved(v));
      if (groups.size(grp) > 1) bytes = saturating_add(bytes, rest[grp]);
      for (const edge_id e : g.in_edges(v)) bytes = saturating_add(bytes, p.model->edge_bytes(e));
      added_bound_[v] = bytes;
      largest_added_bound_ = std::max(largest_added_bound_, bytes);
    }
  }

  [[nodiscard]] bool tracked(device_id d) const { return p_.devices->capacity(d) != unlimited_memory; }
  // Whether the last placement changed what d can hold (memory freed, or d's start moved on).
  [[nodiscard]] bool changed(device_id d) const { return changed_[d] != 0; }
  void clear_changed() { std::fill(changed_.begin(), changed_.end(), 0); }
  void mark_changed(device_id d) { changed_[d] = 1; }

  // Whether v fits on d whatever its inputs and timing: d has room for the most any vertex adds,
  // or for v's bound. O(1).
  [[nodiscard]] bool roomy(vertex_id v, device_id d) const {
    return fits_anyway(d, largest_added_bound_) || fits_anyway(d, added_bound_[v]);
  }
  // Whether `bytes` more fit on d at every time: a quick sufficient test, O(1).
  [[nodiscard]] bool fits_anyway(device_id d, byte_count bytes) const {
    return !tracked(d) || persistent_held_[d] + timeline_[d].ceiling() + as_signed(reserve_[d]) + as_signed(bytes) <=
                              as_signed(p_.devices->capacity(d));
  }
  // Capacity of d less the most it holds at any time from `from` on. The first query of a device
  // builds its timeline, so a policy asking every step (DOPPLER's features) pays O(log k) a call.
  [[nodiscard]] byte_count free_from(device_id d, seconds from) const {
    if (!tracked(d)) return unlimited_memory;
    build_timeline(d);
    const std::int64_t held = persistent_held_[d] + timeline_[d].peak_from(from) + as_signed(reserve_[d]);
    const auto capacity = as_signed(p_.devices->capacity(d));
    return held >= capacity ? 0 : static_cast<byte_count>(capacity - held);
  }

  // The room v's group keeps on d, its device, once v is placed there (0 for a vertex alone): the
  // most the members neither placed nor v hold at once, beyond the outputs the group holds already,
  // when they run one after another in Kahn order after v. An output counts from its member's start
  // until its last reader ran (one outside the group, not placed yet, never runs here; a sink's
  // ends with it); a temporary, and the copy of each input from outside the group that is not on
  // d, while its member runs. So a chain of members reserves two outputs, not all of them.
  // O(members + their edges).
  [[nodiscard]] byte_count group_reserve(vertex_id v, device_id d) const {
    const group_table& groups = *p_.groups;
    const std::uint32_t grp = groups.of(v);
    if (groups.size(grp) < 2) return 0;
    const csr_graph& g = *p_.graph;
    const M& model = *p_.model;
    const placed_vertices& placed = *p_.placed;
    const auto members = groups.members(v);
    boost::container::small_vector<std::uint32_t, 32> reads_left(members.size(), 0);  // by member index
    for (const vertex_id w : members) {  // reads still to come of each output the group holds
      if (w != v && !placed.placed(w)) continue;
      std::uint32_t left = 0;
      for (const vertex_id x : g.successors(w)) left += !placed.placed(x) && x != v ? 1 : 0;
      reads_left[groups.member_index(w)] = left;
    }
    std::int64_t held = 0, most = 0;
    for (const vertex_id u : members) {
      if (u == v || placed.placed(u)) continue;
      const std::int64_t output = as_signed(model.output_bytes(u));
      std::int64_t temporary = as_signed(model.temporary_bytes(u));
      const auto pred = g.predecessors(u);
      const auto in = g.in_edges(u);
      for (std::size_t i = 0; i < pred.size(); ++i)
        if (groups.of(pred[i]) != grp && placed.device[pred[i]] != d) temporary += as_signed(model.edge_bytes(in[i]));
      held += output + temporary;
      most = std::max(most, held);
      held -= temporary;
      reads_left[groups.member_index(u)] = static_cast<std::uint32_t>(g.out_degree(u));
      if (g.out_degree(u) == 0) held -= output;
      for (const vertex_id p : pred)
        if (groups.of(p) == grp && --reads_left[groups.member_index(p)] == 0) held -= as_signed(model.output_bytes(p));
    }
    return static_cast<byte_count>(most);
  }

  // Bytes placing v on d would add (as new_holds() counts them), without timing the transfers;
  // `reserve` is group_reserve(v, d).
  [[nodiscard]] byte_count added_bytes(vertex_id v, device_id d, std::span<const engine_input> inputs,
                                       byte_count reserve) const {
    const group_table& groups = *p_.groups;
    const M& model = *p_.model;
    const std::uint32_t grp = groups.of(v);
    byte_count bytes = groups.bound(grp) ? 0 : groups.persistent(grp);
    bytes = saturating_add(bytes, saturating_add(model.temporary_bytes(v), model.output_bytes(v)));
    if (groups.size(grp) > 1) bytes = saturating_add(bytes, reserve);  // at least the reserve's growth
    return saturating_add(bytes, p_.transfers->received_bytes(inputs, d, *p_.placed, model));
  }

  // The holds placing v on d from `begin` to `end` would add or end early, into `holds`, with the
  // transfers `plan` would start; `reserve` is group_reserve(v, d) and `available` when d's last
  // vertex ends. Returns the bytes they add in all.
  byte_count new_holds(vertex_id v, device_id d, seconds begin, seconds end, std::span<const transfer> plan,
                       byte_count reserve, seconds available, hold_list& holds) const {
    const csr_graph& g = *p_.graph;
    const M& model = *p_.model;
    const group_table& groups = *p_.groups;
    holds.clear();
    byte_count added = 0;
    const auto hold = [&](seconds from, seconds to, byte_count bytes, bool ends) {
      if (bytes == 0) return;
      added = saturating_add(added, bytes);
      holds.emplace_back(from, as_signed(bytes));
      if (ends) holds.emplace_back(to, -as_signed(bytes));  // an empty hold takes nothing
    };
    const std::uint32_t grp = groups.of(v);
    if (!groups.bound(grp)) hold(0, 0, groups.persistent(grp), false);
    // d's reserve for groups, as it will be after v: from d's end of work on.
    const byte_count after = reserve_after(v, d, reserve);
    if (after != 0) holds.emplace_back(std::max(available, end), as_signed(after));
    if (after > reserve_[d]) added = saturating_add(added, after - reserve_[d]);
    hold(begin, end, model.temporary_bytes(v), true);
    hold(begin, end, model.output_bytes(v), g.out_degree(v) == 0);
    // A received copy serves its one edge without caching; with caching, later consumers may use it.
    for (const transfer& t : plan) hold(copy_held_from(t.start, t.tensor), end, t.bytes, !p_.transfers->caches());
    // An input on d whose last consumer is v is freed once v and everything else holding it end.
    const auto pred = g.predecessors(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      const bool seen = std::find(pred.begin(), pred.begin() + i, u) != pred.begin() + i;
      if (p_.placed->device[u] != d || model.output_bytes(u) == 0 || seen) continue;
      const auto output = ledger_.output(u);
      if (ledger_.readers(output) != static_cast<std::uint32_t>(std::count(pred.begin(), pred.end(), u))) continue;
      holds.emplace_back(std::max(ledger_.end(output), end), -as_signed(model.output_bytes(u)));
    }
    return added;
  }

  // Whether the holds from new_holds(), adding `total` bytes in all, keep d within capacity at
  // every time. The common roomy case is settled by the device's peak alone, in O(1); else
  // O(h log k) for h holds. Sorts `holds`.
  [[nodiscard]] bool holds_fit(device_id d, byte_count total, hold_list& holds) const {
    if (fits_anyway(d, total)) return true;
    const auto capacity = as_signed(p_.devices->capacity(d));
    const std::int64_t base = persistent_held_[d];
    std::sort(holds.begin(), holds.end());
    std::int64_t added = 0;
    for (std::size_t i = 0; i < holds.size();) {
      const seconds from = holds[i].first;
      for (; i < holds.size() && holds[i].first == from; ++i) added += holds[i].second;
      if (added <= 0) continue;  // nothing added over this stretch: the timeline already fits
      const seconds to = i < holds.size() ? holds[i].first : std::numeric_limits<seconds>::infinity();
      build_timeline(d);
      if (base + added + timeline_[d].peak(from, to) > capacity) return false;
    }
    return true;
  }

  // Records the holds of v, just placed on d with the transfers from number first_new_transfer on
  // (new_group: its group's persistent bytes come now; keep: what the group reserves from now on,
  // group_reserve(v, d) before v was placed), and v's reads of its inputs. A copy serves one edge
  // without caching; with caching, it stays open (one reader for the tensor's other consumers)
  // until its tensor's last consumer is placed.
  void record(vertex_id v, device_id d, bool new_group, byte_count keep, std::size_t first_new_transfer) {
    const csr_graph& g = *p_.graph;
    const M& model = *p_.model;
    const group_table& groups = *p_.groups;
    const placed_vertices& placed = *p_.placed;
    const transfer_book& book = *p_.transfers;
    const auto& transfers = book.all();
    const std::uint32_t grp = groups.of(v);
    if (tracked(d)) {
      if (new_group) persistent_held_[d] += as_signed(groups.persistent(grp));
      if (groups.size(grp) > 1) {
        reserve_[d] = reserve_[d] - (new_group ? 0 : group_reserve_[grp]) + keep;
        group_reserve_[grp] = keep;
      }
    }
    const std::int64_t temporary = as_signed(model.temporary_bytes(v));
    hold_on(d, placed.start[v], temporary + as_signed(model.output_bytes(v)));
    hold_on(d, placed.finish[v], -temporary);
    ledger_.take(ledger_.output(v), placed.finish[v], static_cast<std::uint32_t>(g.out_degree(v)));
    for (std::size_t t = first_new_transfer; t < transfers.size(); ++t) {
      const transfer& copy = transfers[t];
      ledger_.take(ledger_.add_copy(), copy.finish, 1);
      hold_on(d, copy_held_from(copy.start, copy.tensor), as_signed(copy.bytes));
      if (book.caches()) continue;
      if (ledger_.read(ledger_.copy(t), placed.finish[v])) hold_on(d, placed.finish[v], -as_signed(copy.bytes));
      if (ledger_.read(ledger_.output(copy.tensor), copy.finish)) free_tensor(copy.tensor);
    }
    const auto pred = g.predecessors(v);
    const auto in = g.in_edges(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      seconds read_until = placed.finish[v];  // v reads u's output on d; an input from elsewhere comes by a copy
      if (placed.device[u] != d) {
        if (!book.caches()) continue;  // read by its copy above
        const auto t = book.cached(u, d, model.edge_bytes(in[i]));
        ledger_.extend(ledger_.copy(t), placed.finish[v]);
        read_until = transfers[t].finish;
      }
      if (ledger_.read(ledger_.output(u), read_until)) free_tensor(u);
    }
    if (g.out_degree(v) == 0) free_tensor(v);
    changed_[d] = 1;  // d's start moved: what it could not hold may fit later
  }

 private:
  [[nodiscard]] static std::int64_t as_signed(byte_count bytes) {
    return static_cast<std::int64_t>(std::min<byte_count>(bytes, std::numeric_limits<std::int64_t>::max() / 4));
  }
  [[nodiscard]] byte_count own_reserved(vertex_id v) const {
    return saturating_add(p_.model->output_bytes(v), p_.model->temporary_bytes(v));
  }
  // d's reserve for groups once v is placed there: v's group's share replaced by `reserve`, what it
  // keeps then.
  [[nodiscard]] byte_count reserve_after(vertex_id v, device_id d, byte_count reserve) const {
    const group_table& groups = *p_.groups;
    const std::uint32_t grp = groups.of(v);
    if (groups.size(grp) < 2 || !tracked(d)) return reserve_[d];
    const byte_count now = groups.bound(grp) ? group_reserve_[grp] : 0;
    return reserve_[d] - now + reserve;
  }
  // When a received copy of u's output counts, for a transfer starting at `start`. With shared
  // channels the simulator starts ready transfers in order of their producers' finish (see
  // place/engine/scheduler.hpp), possibly before the engine's start, so the copy counts from the
  // earliest any schedule could send it.
  [[nodiscard]] seconds copy_held_from(seconds start, vertex_id u) const {
    return p_.shared ? p_.placed->finish[u] : start;
  }
  // Until d's timeline is first asked for a range, its holds are only counted: build_timeline()
  // lists them again from the placed state, so a run with room to spare keeps no log of them.
  void hold_on(device_id d, seconds time, std::int64_t bytes) {
    if (bytes == 0 || !tracked(d)) return;
    if (bytes < 0) changed_[d] = 1;
    if (timeline_[d].built()) timeline_[d].add(time, bytes);
    else timeline_[d].add_deferred(bytes);
  }
  // Every consumer of u is placed: its output and (cached) its received copies are freed, each when
  // its last reader is done (the ledger has kept the ends).
  void free_tensor(vertex_id u) {
    const transfer_book& book = *p_.transfers;
    if (book.caches())
      for (auto t = book.first_copy(u); t != transfer_book::none; t = book.next_copy(t))
        if (const auto copy = ledger_.copy(t); ledger_.read(copy, 0))
          hold_on(book.all()[t].to, ledger_.end(copy), -as_signed(book.all()[t].bytes));
    hold_on(p_.placed->device[u], ledger_.end(ledger_.output(u)), -as_signed(p_.model->output_bytes(u)));
  }
  // From the first range query on, d's holds are kept exactly in its timeline: every hold on d so
  // far, as record() and free_tensor() made them, listed again from the placed state.
  void build_timeline(device_id d) const {
    if (timeline_[d].built()) return;
    const placed_vertices& placed = *p_.placed;
    const M& model = *p_.model;
    std::vector<memory_timeline::change> holds;
    for (vertex_id v = 0; v < placed.device.size(); ++v) {
      if (placed.device[v] != d) continue;
      const std::int64_t temporary = as_signed(model.temporary_bytes(v));
      const std::int64_t output = as_signed(model.output_bytes(v));
      holds.emplace_back(placed.start[v], temporary + output);
      holds.emplace_back(placed.finish[v], -temporary);
      if (ledger_.readers(ledger_.output(v)) == 0) holds.emplace_back(ledger_.end(ledger_.output(v)), -output);
    }
    const auto& transfers = p_.transfers->all();
    for (std::size_t t = 0; t < transfers.size(); ++t) {
      if (transfers[t].to != d) continue;
      const std::int64_t bytes = as_signed(transfers[t].bytes);
      holds.emplace_back(copy_held_from(transfers[t].start, transfers[t].tensor), bytes);
      if (ledger_.readers(ledger_.copy(t)) == 0) holds.emplace_back(ledger_.end(ledger_.copy(t)), -bytes);
    }
    timeline_[d].build(holds);
  }

  parts p_{};
  // Per device, without persistent bytes; a cache: built on the first range query, after which it
  // changes with every hold (const queries build it, and no answer depends on when they did).
  mutable std::vector<memory_timeline> timeline_;
  std::vector<std::int64_t> persistent_held_;  // per device
  std::vector<byte_count> reserve_;            // per device: its groups' reserves, from its end of work on
  std::vector<byte_count> group_reserve_;      // per group bound and tracked: group_reserve() at its last placement
  memory_ledger<> ledger_;                     // who still reads each output and received copy
  std::vector<std::uint8_t> changed_;          // per device: the last placement freed memory there
  std::vector<byte_count> added_bound_;        // per vertex: at least added_bytes(v, d) on every d
  byte_count largest_added_bound_ = 0;         // the largest of added_bound_
};

}  // namespace gantry::detail
