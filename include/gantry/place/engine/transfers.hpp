// detail::transfer_book: the transfers of a list-scheduling run and the channels they hold.
//  - Inputs. A ready vertex's inputs from other vertices, listed once when it becomes ready (they
//    do not change while it waits): one per tensor (producer and bytes) when tensors are cached,
//    else one per edge; with shared channels in the order transfers are reserved (producer's
//    finish, its start, its placement step, then edge).
//  - Probes. When every input of a vertex could be on a device, with the transfers that placing it
//    there would start now: each queued behind the transfers already reserved on the resources of
//    its route (model/topology.hpp, Baechi §3.4). A probe is const and leaves nothing behind; the
//    transfers it would start go to a caller's list, which commit() records.
//  - Copies. Every transfer of a tensor, newest first: with caching, a tensor is sent to a device
//    once and serves every consumer there (schedule/schedule.hpp's rules).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/model.hpp>
#include <gantry/model/topology.hpp>
#include <gantry/place/engine/placed.hpp>
#include <gantry/schedule/schedule.hpp>

#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

namespace gantry::detail {

struct engine_input {
  vertex_id producer;
  edge_id edge;  // the edge whose bytes and time a new transfer would use
};

// The transfers a probe would start, in the order they would be reserved.
using planned_transfers = boost::container::small_vector<transfer, 8>;

class transfer_book {
 public:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  // No transfers and free channels for a graph of n vertices and `edges` edges; `topology` must
  // outlive the run. cache: a tensor is sent to a device once.
  void reset(std::size_t n, std::size_t edges, const gantry::topology& topology, bool cache) {
    topology_ = &topology;
    cache_ = cache;
    channel_free_.assign(topology.resource_count(), 0);
    transfers_.clear();
    next_.clear();
    // At most one transfer per edge: reserving spares the copies of growing (pages are touched
    // only as transfers are recorded).
    transfers_.reserve(edges);
    next_.reserve(edges);
    first_.assign(n, none);
    inputs_.clear();
    inputs_.reserve(edges);
    input_at_.assign(n, none);
    input_count_.assign(n, 0);
    stamp_.assign(n, 0);
    stamp_now_ = 0;
  }

  // Lists v's inputs (every producer placed). Once per vertex; O(k) for k inputs, O(k log k)
  // sorted with shared channels.
  template <placement_model M>
  void collect(const csr_graph& g, const M& model, vertex_id v, const placed_vertices& placed) {
    if (input_at_[v] != none) return;
    const auto first = static_cast<std::uint32_t>(inputs_.size());
    const auto pred = g.predecessors(v);
    const auto in = g.in_edges(v);
    // Whether u was met before: by scanning the few inputs so far, or by stamps (a random access
    // per producer, which costs more than a short scan) when there are many.
    const bool stamped = pred.size() > 16;
    if (stamped) ++stamp_now_;
    const auto listed = [&] { return std::span<const engine_input>(inputs_).subspan(first); };
    const auto met = [&](vertex_id u) {
      if (stamped) return stamp_[u] == stamp_now_;
      return std::any_of(listed().begin(), listed().end(), [&](const engine_input& i) { return i.producer == u; });
    };
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (cache_) {
        if (met(u)) {  // u sends v several edges: one input per distinct size
          const byte_count bytes = model.edge_bytes(in[i]);
          const auto same = [&](const engine_input& o) { return o.producer == u && model.edge_bytes(o.edge) == bytes; };
          if (std::any_of(listed().begin(), listed().end(), same)) continue;
        }
        if (stamped) stamp_[u] = stamp_now_;
      }
      inputs_.push_back({u, in[i]});
    }
    if (topology_->shared())
      std::sort(inputs_.begin() + first, inputs_.end(), [&](const engine_input& a, const engine_input& b) {
        const vertex_id x = a.producer, y = b.producer;
        return std::tie(placed.finish[x], placed.start[x], placed.step[x], a.edge) <
               std::tie(placed.finish[y], placed.start[y], placed.step[y], b.edge);
      });
    input_at_[v] = first;
    input_count_[v] = static_cast<std::uint32_t>(inputs_.size() - first);
  }
  // v's inputs as collect() listed them; empty before.
  [[nodiscard]] std::span<const engine_input> inputs(vertex_id v) const {
    if (input_at_[v] == none) return {};
    return {inputs_.data() + input_at_[v], input_count_[v]};
  }

  // When every input can be on device d. The transfers this would start go to *plan when given.
  // O(k r) for k inputs and routes of r resources, O(k) without shared channels.
  template <placement_model M>
  [[nodiscard]] seconds arrival(std::span<const engine_input> inputs, device_id d, const placed_vertices& placed,
                                const M& model, planned_transfers* plan = nullptr) const {
    // The channels this probe reserved so far, until when: the book's own stay as they are.
    boost::container::small_vector<std::pair<resource_id, seconds>, 8> busy;
    const auto free_at = [&](resource_id r) {
      for (const auto& [res, until] : busy)
        if (res == r) return until;
      return channel_free_[r];
    };
    const auto reserve = [&](resource_id r, seconds until) {
      for (auto& [res, was] : busy)
        if (res == r) {
          was = until;
          return;
        }
      busy.emplace_back(r, until);
    };
    seconds ready = 0;
    for (const engine_input& in : inputs) {
      const vertex_id u = in.producer;
      const device_id from = placed.device[u];
      if (from == d) {
        ready = std::max(ready, placed.finish[u]);
        continue;
      }
      const byte_count bytes = model.edge_bytes(in.edge);
      if (cache_) {
        if (const auto t = cached(u, d, bytes); t != none) {
          ready = std::max(ready, transfers_[t].finish);
          continue;
        }
      }
      const seconds duration = model.transfer_time(in.edge, from, d);
      seconds begin = placed.finish[u];
      if (!channel_free_.empty()) {
        const route path = topology_->route_of(from, d);
        for (const resource_id r : path) begin = std::max(begin, free_at(r));
        for (const resource_id r : path) reserve(r, begin + duration);
      }
      ready = std::max(ready, begin + duration);
      if (plan) plan->push_back({u, in.edge, from, d, begin, begin + duration, bytes});
    }
    return ready;
  }
  // arrival() for every device at once, into out (one entry per device), when no channels are
  // shared: per input, the copy a device already has (the newest of the right size, as cached()
  // finds it) or a new transfer. O(k (m + copies)).
  template <placement_model M>
  void arrival_all(std::span<const engine_input> inputs, const placed_vertices& placed, const M& model,
                   std::span<seconds> out) const {
    std::fill(out.begin(), out.end(), 0.0);
    boost::container::small_vector<std::uint32_t, 16> copy_on(out.size());
    for (const engine_input& in : inputs) {
      const vertex_id u = in.producer;
      const device_id from = placed.device[u];
      const seconds done = placed.finish[u];
      std::fill(copy_on.begin(), copy_on.end(), none);
      if (cache_) {
        const byte_count bytes = model.edge_bytes(in.edge);
        for (auto t = first_[u]; t != none; t = next_[t])
          if (transfers_[t].bytes == bytes && copy_on[transfers_[t].to] == none) copy_on[transfers_[t].to] = t;
      }
      for (device_id d = 0; d < out.size(); ++d) {
        const seconds at = d == from            ? done
                           : copy_on[d] != none ? transfers_[copy_on[d]].finish
                                                : done + model.transfer_time(in.edge, from, d);
        out[d] = std::max(out[d], at);
      }
    }
  }
  // Bytes of the inputs that d does not hold yet (on d or as a cached copy).
  template <placement_model M>
  [[nodiscard]] byte_count received_bytes(std::span<const engine_input> inputs, device_id d,
                                          const placed_vertices& placed, const M& model) const {
    byte_count bytes = 0;
    for (const engine_input& in : inputs) {
      if (placed.device[in.producer] == d) continue;
      const byte_count size = model.edge_bytes(in.edge);
      if (cache_ && cached(in.producer, d, size) != none) continue;
      bytes = saturating_add(bytes, size);
    }
    return bytes;
  }

  // Records the transfers of a probe and reserves their channels.
  void commit(std::span<const transfer> plan) {
    for (const transfer& t : plan) {
      if (!channel_free_.empty())
        for (const resource_id r : topology_->route_of(t.from, t.to)) channel_free_[r] = t.finish;
      const auto index = static_cast<std::uint32_t>(transfers_.size());
      transfers_.push_back(t);
      next_.push_back(first_[t.tensor]);
      first_[t.tensor] = index;
    }
  }

  // The copy of u's tensor of `bytes` bytes already sent to d, `none` if there is none.
  [[nodiscard]] std::uint32_t cached(vertex_id u, device_id d, byte_count bytes) const {
    for (auto t = first_[u]; t != none; t = next_[t])
      if (transfers_[t].to == d && transfers_[t].bytes == bytes) return t;
    return none;
  }
  // u's transfers, newest first: for (t = first_copy(u); t != none; t = next_copy(t)).
  [[nodiscard]] std::uint32_t first_copy(vertex_id u) const { return first_[u]; }
  [[nodiscard]] std::uint32_t next_copy(std::uint32_t t) const { return next_[t]; }
  [[nodiscard]] const std::vector<transfer>& all() const noexcept { return transfers_; }
  [[nodiscard]] std::vector<transfer> take() && { return std::move(transfers_); }
  [[nodiscard]] bool caches() const noexcept { return cache_; }

 private:
  const gantry::topology* topology_ = nullptr;
  bool cache_ = true;
  std::vector<seconds> channel_free_;  // per resource: when its last reserved transfer ends
  std::vector<transfer> transfers_;
  std::vector<std::uint32_t> next_, first_;  // every transfer of a tensor, newest first
  std::vector<engine_input> inputs_;         // the inputs of every vertex made ready so far
  std::vector<std::uint32_t> input_at_, input_count_;
  std::vector<std::uint32_t> stamp_;  // collect(): producers met, when there are many
  std::uint32_t stamp_now_ = 0;
};

}  // namespace gantry::detail
