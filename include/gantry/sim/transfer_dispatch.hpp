// Which transfers of a run (sim/event_loop.hpp) go when, by communication mode: in parallel mode
// (model/topology.hpp: no resource shared) a transfer starts as soon as its producer is done and
// its bytes fit; otherwise it waits in a queue, by the time it became ready, its producer's rank
// and its edge, until every resource of its route is free. A strict replay given the transfer
// order of the schedule it replays (simulate_options::transfer_order) serves each resource's
// listed transfers in that order ("bookings"); a transfer the order does not list goes when its
// resources are free.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/topology.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace gantry::detail {

class transfer_dispatch {
 public:
  // No transfer made or queued. With `bookings`, `order` (a schedule's transfers) is checked and
  // each resource serves the transfers it lists in that order; invalid_input names an entry out of
  // range or listed twice (`who` starts the message, `name` names a vertex).
  template <device_set D, class Name>
  void reset(const D& devices, std::span<const transfer> order, bool cache, bool bookings, std::size_t n,
             const char* who, Name name) {
    topology_ = topology_of(devices);
    cache_ = cache;
    order_ = order;
    const std::size_t m = devices.device_count();
    const std::size_t resources = topology_.resource_count();
    busy_.assign(resources, 0);
    queue_.clear();
    booking_of_.clear();
    booked_.assign(resources, {});
    booked_next_.assign(resources, 0);
    booking_.clear();
    claimed_.assign(order.size(), 0);
    if (!bookings || !topology_.shared()) return;
    for (std::uint32_t i = 0; i < order.size(); ++i) {
      const transfer& t = order[i];
      if (t.tensor >= n || t.from >= m || t.to >= m || t.from == t.to)
        throw invalid_input(std::string(who) + ": transfer_order entry " + std::to_string(i) +
                            " names a vertex or device out of range");
      if (!booking_of_.emplace(key(t.tensor, t.to, t.bytes, t.edge), i).second)
        throw invalid_input(std::string(who) + ": transfer_order lists the tensor of " + name(t.tensor) +
                            " to device " + std::to_string(t.to) + (cache ? " twice" : " twice for one edge"));
      for (const resource_id r : topology_.route_of(t.from, t.to)) booked_[r].push_back(i);
    }
  }

  [[nodiscard]] const gantry::topology& topology() const noexcept { return topology_; }
  // Parallel mode: no two transfers share a resource, so a transfer never queues for one.
  [[nodiscard]] bool parallel() const noexcept { return !topology_.shared(); }

  // The run made transfer `tr` (the next index): it takes its place in the order if listed and not
  // yet taken by another copy (without caching, a copy per edge).
  void made(const transfer& tr) {
    const auto it = booking_of_.find(key(tr.tensor, tr.to, tr.bytes, tr.edge));
    const bool listed = it != booking_of_.end() && order_[it->second].from == tr.from && !claimed_[it->second];
    if (listed) claimed_[it->second] = 1;
    booking_.push_back(listed ? it->second : no_transfer);
  }
  // Queues transfer t, made ready at `ready` by a producer of rank `rank`, for edge e.
  void enqueue(seconds ready, std::uint32_t rank, edge_id e, std::uint32_t t) { queue_.insert({ready, rank, e, t}); }

  // Starts the queued transfers whose routes are free (and whose bookings come next on each
  // resource), in queue order, while ok(): for each, admit(t) says whether it may start now (memory)
  // and start(t) starts it (taking its route with occupy()).
  template <class Ok, class Admit, class Start>
  void serve(const std::vector<transfer>& transfers, Ok ok, Admit admit, Start start) {
    for (auto it = queue_.begin(); it != queue_.end() && ok();) {
      const std::uint32_t t = std::get<3>(*it);
      const auto& tr = transfers[t];
      const route path = topology_.route_of(tr.from, tr.to);
      const std::uint32_t booking = booking_[t];
      const auto blocked = [&](resource_id r) {
        if (busy_[r] != 0) return true;
        // A booked transfer waits for the ones booked before it on each of its resources.
        return booking != no_transfer && booked_[r][booked_next_[r]] != booking;
      };
      if (std::any_of(path.begin(), path.end(), blocked) || !admit(t)) {
        ++it;
        continue;
      }
      it = queue_.erase(it);
      start(t);
    }
  }
  // Transfer t (of `tr`) starts: its route's resources are busy until vacate().
  void occupy(std::uint32_t t, const transfer& tr) {
    for (const resource_id r : topology_.route_of(tr.from, tr.to)) {
      busy_[r] = 1;
      if (booking_[t] != no_transfer) ++booked_next_[r];
    }
  }
  void vacate(const transfer& tr) {
    for (const resource_id r : topology_.route_of(tr.from, tr.to)) busy_[r] = 0;
  }

 private:
  // A booking's key: the tensor, its device and size, and (without caching, one copy per edge) the
  // edge; with caching the edge is no_edge.
  [[nodiscard]] std::tuple<vertex_id, device_id, byte_count, edge_id> key(vertex_id tensor, device_id to,
                                                                          byte_count bytes, edge_id e) const {
    return {tensor, to, bytes, cache_ ? no_edge : e};
  }

  gantry::topology topology_;
  bool cache_ = true;
  std::span<const transfer> order_;
  std::vector<std::uint8_t> busy_;  // per resource
  std::set<std::tuple<seconds, std::uint32_t, edge_id, std::uint32_t>> queue_;
  // Per (tensor, receiver, bytes[, edge]) its place in the order; per resource the places of the
  // transfers it serves, in order, and how many have started; per transfer of the run its place
  // (no_transfer: not listed); per place, whether a transfer of the run took it.
  std::map<std::tuple<vertex_id, device_id, byte_count, edge_id>, std::uint32_t> booking_of_;
  std::vector<std::vector<std::uint32_t>> booked_;
  std::vector<std::size_t> booked_next_;
  std::vector<std::uint32_t> booking_;
  std::vector<std::uint8_t> claimed_;
};

}  // namespace gantry::detail
