// detail::readiness: which vertices a list-scheduling run may place next. A vertex is ready once
// every input is placed, with two holds on top:
//  - Forward-only placement (Baechi §3.3) parks backward vertices until every forward vertex is
//    placed (or nothing else can be placed: the engine opens the gate).
//  - Groups as units. A source vertex (no inputs: a weight or a constant) of a group of several
//    would be ready at time 0 and decide the group's device alone: it is attached to its consumers
//    in the group and becomes ready once one of them has every other input placed, or the group
//    is bound, or nothing else can be placed.
// A vertex entering the ready set is passed to the caller's on_ready(v), in a deterministic order.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/engine/groups.hpp>
#include <gantry/place/engine/options.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace gantry::detail {

// Whether forward-only placement holds backward vertices back in a run over n vertices: when asked
// and, with memory respected, when one device could hold the whole graph (Baechi §3.3).
template <placement_model M, device_set D>
[[nodiscard]] bool forward_gate(const list_options& options, const M& model, const D& devices, std::size_t n) {
  if (!options.forward_only || options.forward_of.empty()) return false;
  if (!options.respect_memory) return true;
  byte_count total = 0, largest = 0;
  for (vertex_id v = 0; v < n; ++v) total = saturating_add(total, total_bytes(model, v));
  for (device_id d = 0; d < devices.device_count(); ++d) largest = std::max(largest, devices.capacity(d));
  return total <= largest;
}

class readiness {
 public:
  // Nothing ready yet. kahn_rank orders vertices released together; forward_of (empty for none)
  // names backward vertices, parked while `gate` holds and a forward vertex is unplaced. The spans
  // must outlive the run.
  void reset(const csr_graph& g, const group_table& groups, std::span<const std::uint32_t> kahn_rank,
             std::span<const vertex_id> forward_of, bool gate) {
    const std::size_t n = g.vertex_count();
    rank_ = kahn_rank;
    forward_of_ = forward_of;
    waiting_.resize(n);
    for (vertex_id v = 0; v < n; ++v) waiting_[v] = static_cast<std::uint32_t>(g.in_degree(v));
    ready_.clear();
    slot_.assign(n, no_slot);
    gate_ = gate;
    parked_.clear();
    forward_left_ = 0;
    if (gate)
      for (vertex_id v = 0; v < n; ++v) forward_left_ += is_backward(v) ? 0 : 1;
    gate_open_ = !gate || forward_left_ == 0;
    attached_.clear();
    outside_wait_.clear();
    if (!groups.any_several()) return;
    attached_.assign(n, 0);
    outside_wait_.assign(n, 0);
    for (vertex_id v = 0; v < n; ++v) {
      const std::uint32_t grp = groups.of(v);
      if (g.in_degree(v) != 0 || groups.size(grp) < 2 || groups.device(grp) != no_device) continue;
      for (const vertex_id x : g.successors(v)) attached_[v] |= groups.of(x) == grp ? 1 : 0;
    }
    for (vertex_id x = 0; x < n; ++x) {
      bool feeds = false;
      for (const vertex_id u : g.predecessors(x)) {
        if (attached_[u] && groups.of(u) == groups.of(x)) feeds = true;
        else ++outside_wait_[x];
      }
      if (!feeds) outside_wait_[x] = no_slot;  // nothing attached waits for x
    }
    for (vertex_id v = 0; v < n; ++v) waiting_[v] += attached_[v];  // released, not ready, at 0
  }

  // Makes the vertices without inputs ready, then the attached sources whose consumers wait for
  // nothing else.
  template <class OnReady>
  void start(const csr_graph& g, const group_table& groups, OnReady&& on_ready) {
    for (vertex_id v = 0; v < waiting_.size(); ++v)
      if (waiting_[v] == 0) make_ready(v, on_ready);
    for (vertex_id x = 0; x < outside_wait_.size(); ++x)
      if (outside_wait_[x] == 0) release_attached(g, groups, x, on_ready);
  }

  // Vertices whose inputs are all placed and that are not placed themselves, in no particular order.
  [[nodiscard]] std::span<const vertex_id> ready() const noexcept { return ready_; }
  [[nodiscard]] bool is_ready(vertex_id v) const { return slot_[v] != no_slot; }
  // The first ready vertex in Kahn order, no_vertex when none is ready. O(ready).
  [[nodiscard]] vertex_id first_ready() const {
    vertex_id first = no_vertex;
    for (const vertex_id v : ready_)
      if (first == no_vertex || rank_[v] < rank_[first]) first = v;
    return first;
  }
  // Whether backward vertices wait for every forward vertex in this run.
  [[nodiscard]] bool gated() const noexcept { return gate_; }
  [[nodiscard]] bool any_parked() const noexcept { return !parked_.empty(); }

  // v is being placed: it leaves the ready set.
  void leave(vertex_id v) {
    const std::uint32_t slot = slot_[v];
    slot_[ready_.back()] = slot;
    ready_[slot] = ready_.back();
    ready_.pop_back();
    slot_[v] = no_slot;
  }
  // v is placed: the last forward vertex placed opens the gate.
  template <class OnReady>
  void count_forward(vertex_id v, OnReady&& on_ready) {
    if (!gate_open_ && !is_backward(v) && --forward_left_ == 0) open_gate(on_ready);
  }
  // After v's placement: its consumers with every input placed become ready; when v bound its
  // group (new_group), the group's attached sources are released, and so are those of consumers
  // that now wait for nothing outside their group.
  template <class OnReady>
  void placed(const csr_graph& g, const group_table& groups, vertex_id v, bool new_group, OnReady&& on_ready) {
    for (const vertex_id w : g.successors(v))
      if (--waiting_[w] == 0) make_ready(w, on_ready);
    if (attached_.empty()) return;
    if (new_group)
      for (const vertex_id w : groups.members(v)) release_source(w, on_ready);
    for (const vertex_id w : g.successors(v))
      if (outside_wait_[w] != no_slot && --outside_wait_[w] == 0) release_attached(g, groups, w, on_ready);
  }

  // Every attached source still waiting, in Kahn order (they wait for inputs that wait for them);
  // false when there was none.
  template <class OnReady>
  bool release_all_attached(OnReady&& on_ready) {
    std::vector<vertex_id> waiting;
    for (vertex_id v = 0; v < attached_.size(); ++v)
      if (attached_[v]) waiting.push_back(v);
    std::sort(waiting.begin(), waiting.end(), [&](vertex_id a, vertex_id b) { return rank_[a] < rank_[b]; });
    for (const vertex_id v : waiting) release_source(v, on_ready);
    return !waiting.empty();
  }

  // The parked backward vertices become ready, in Kahn order.
  template <class OnReady>
  void open_gate(OnReady&& on_ready) {
    gate_open_ = true;
    std::vector<vertex_id> parked;
    parked.swap(parked_);
    std::sort(parked.begin(), parked.end(), [&](vertex_id a, vertex_id b) { return rank_[a] < rank_[b]; });
    for (const vertex_id v : parked) make_ready(v, on_ready);
  }

 private:
  static constexpr std::uint32_t no_slot = std::numeric_limits<std::uint32_t>::max();

  [[nodiscard]] bool is_backward(vertex_id v) const { return !forward_of_.empty() && forward_of_[v] != no_vertex; }
  template <class OnReady>
  void make_ready(vertex_id v, OnReady& on_ready) {
    if (!gate_open_ && is_backward(v)) {
      parked_.push_back(v);
      return;
    }
    slot_[v] = static_cast<std::uint32_t>(ready_.size());
    ready_.push_back(v);
    on_ready(v);
  }
  // x's inputs from outside its attached sources are all placed: its attached sources become ready.
  template <class OnReady>
  void release_attached(const csr_graph& g, const group_table& groups, vertex_id x, OnReady& on_ready) {
    outside_wait_[x] = no_slot;
    for (const vertex_id u : g.predecessors(x))
      if (groups.of(u) == groups.of(x)) release_source(u, on_ready);
  }
  template <class OnReady>
  void release_source(vertex_id u, OnReady& on_ready) {
    if (!attached_[u]) return;
    attached_[u] = 0;
    if (--waiting_[u] == 0) make_ready(u, on_ready);
  }

  std::span<const std::uint32_t> rank_;
  std::span<const vertex_id> forward_of_;
  std::vector<std::uint32_t> waiting_;  // per vertex: inputs (and attachment) not yet placed
  std::vector<vertex_id> ready_;
  std::vector<std::uint32_t> slot_;  // position in ready_, no_slot when not ready
  bool gate_ = false;                // forward-only placement holds backward vertices
  bool gate_open_ = true;            // backward vertices may be placed
  std::size_t forward_left_ = 0;
  std::vector<vertex_id> parked_;
  std::vector<std::uint8_t> attached_;       // per vertex: a group's source waiting for its consumers
  std::vector<std::uint32_t> outside_wait_;  // per vertex: inputs not from attached sources still unplaced
};

}  // namespace gantry::detail
