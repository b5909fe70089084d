// Devices that share a memory bandwidth slow each other (model/cluster.hpp: bandwidth_domain).
// The rule, the simulator's and the executors' virtual clock's (docs/algorithms.md, "Shared
// memory bandwidth"):
//   - An activity (a vertex or a copy) has a time alone t (the model's) and moves `traffic` bytes
//     through each domain it touches: a vertex its traffic_bytes() in its device's domain; a copy
//     its bytes in the sender's domain and in the receiver's (twice in one domain: read and write).
//     Alone it draws demand = traffic / t bytes per second from the domain.
//   - A domain's bandwidth is shared max-min fairly among the activities running in it (water
//     filling): an activity gets its demand when the domain has room for all, else the fair share
//     of what those with smaller demands leave.
//   - An activity runs at speed min(1, allocation / demand) over its domains (a roofline: the
//     time alone, or the bytes over the bandwidth it gets, whichever is longer), recomputed
//     whenever an activity starts or ends in one of its domains.
//   - A domain with cores > 0 shares that many processors the same way: each running vertex, and
//     each copy that draws on the domain, demands one core (a copy within one domain, one).
// So compute-bound work (small demand) keeps its time beside bandwidth-bound work; n bandwidth-
// bound vertices that each reach the whole domain alone take n times as long together.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace gantry {

// Which device draws on which domain, and each domain's bandwidth and cores: what a virtual clock
// needs.
struct bandwidth_sharing {
  std::vector<std::uint32_t> domain_of;  // per device: an index into bandwidth, or no_domain
  std::vector<double> bandwidth;         // per domain, bytes per second
  std::vector<std::uint8_t> copies;      // per domain: copies draw on it
  std::vector<std::uint32_t> cores;      // per domain: processors shared (0: none)

  // Whether anything is shared: some domain has a finite bandwidth or cores.
  [[nodiscard]] bool engaged() const noexcept {
    return std::any_of(bandwidth.begin(), bandwidth.end(), [](double b) { return std::isfinite(b); }) ||
           std::any_of(cores.begin(), cores.end(), [](std::uint32_t c) { return c > 0; });
  }
  [[nodiscard]] std::uint32_t domain(device_id d) const noexcept {
    return d < domain_of.size() ? domain_of[d] : no_domain;
  }
};

namespace detail {

// The sharing of a device set: its bandwidth domains if it has them (a cluster), else none.
template <class D>
[[nodiscard]] bandwidth_sharing sharing_of(const D& devices) {
  bandwidth_sharing out;
  if constexpr (requires {
                  devices.domains();
                  devices.domain_of(device_id{});
                }) {
    const auto& domains = devices.domains();
    if (domains.empty()) return out;
    out.domain_of.resize(devices.device_count());
    for (device_id d = 0; d < out.domain_of.size(); ++d) out.domain_of[d] = devices.domain_of(d);
    for (const auto& domain : domains) {
      out.bandwidth.push_back(domain.bandwidth);
      out.copies.push_back(domain.copies ? 1 : 0);
      out.cores.push_back(domain.cores);
    }
  }
  return out;
}

// The bytes vertex v moves through its device's memory while it runs: the model's
// traffic_bytes(v) where it has one, else what it reads (the bytes of its in-edges: one per
// operand) and what it writes (its output).
template <memory_model M>
[[nodiscard]] byte_count traffic_bytes(const M& model, const csr_graph& g, vertex_id v) {
  if constexpr (requires {
                  { model.traffic_bytes(v) } -> std::convertible_to<byte_count>;
                }) {
    return model.traffic_bytes(v);
  } else {
    byte_count bytes = model.output_bytes(v);
    for (const edge_id e : g.in_edges(v)) bytes = saturating_add(bytes, static_cast<byte_count>(model.edge_bytes(e)));
    return bytes;
  }
}

// Max-min fair shares of `bandwidth` for the demands (water filling): allocation[i] is demand[i]
// when every smaller demand and this one fit, else an equal share of what the smaller ones leave.
// `order` is scratch space. O(k log k).
inline void share_fairly(double bandwidth, std::span<const double> demand, std::span<double> allocation,
                         std::vector<std::uint32_t>& order) {
  const std::size_t k = demand.size();
  order.resize(k);
  for (std::uint32_t i = 0; i < k; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return demand[a] < demand[b] || (demand[a] == demand[b] && a < b);
  });
  double left = bandwidth;
  for (std::size_t j = 0; j < k; ++j) {
    const std::uint32_t i = order[j];
    const double share = left / static_cast<double>(k - j);
    if (demand[i] <= share) {
      allocation[i] = demand[i];
      left -= demand[i];
    } else {
      for (std::size_t r = j; r < k; ++r) allocation[order[r]] = share;
      return;
    }
  }
}

}  // namespace detail
}  // namespace gantry
