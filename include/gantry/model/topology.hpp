// The machine's topology: which shared resources (channels, network ports) a transfer from one
// device to another occupies while it runs. The list scheduling engine, the simulator and
// validate() all ask this one place, so that a transfer is serialized the same way everywhere.
//
// A resource serves one transfer at a time. A transfer from `from` to `to` occupies its route:
//   - the communication mode's device channels: none (parallel), the one channel of each end
//     (sequential, Baechi §3.4), or the sender's send and the receiver's receive channel (duplex);
//   - when devices are grouped into nodes (machines, or GPUs behind one switch or NIC) and the ends
//     sit in different nodes, also the sending node's outgoing port and the receiving node's
//     incoming port (a full-duplex NIC shared by the node's devices).
// Routes are computed on demand in O(1) from per-device numbers: storage grows with devices and
// nodes, not with pairs. A route has at most four resources.
#pragma once

#include <gantry/core/types.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gantry {

// parallel: any number of transfers at once. sequential: each device has one channel used by
// every transfer that it sends or receives, so transfers touching a device run one at a time
// (Baechi §3.4). duplex: one channel for sending and one for receiving per device.
enum class comm_mode { parallel, sequential, duplex };

inline constexpr enum_name<comm_mode> comm_mode_names[] = {
    {comm_mode::parallel, "parallel"}, {comm_mode::sequential, "sequential"}, {comm_mode::duplex, "duplex"}};
[[nodiscard]] constexpr std::span<const enum_name<comm_mode>> enum_names(comm_mode) noexcept { return comm_mode_names; }
[[nodiscard]] constexpr const char* to_string(comm_mode m) noexcept { return name_of(m); }

using resource_id = std::uint32_t;
inline constexpr std::uint32_t no_node = 0xffffffffu;

// The resources one transfer occupies, in increasing id order.
struct route {
  std::array<resource_id, 4> resources{};
  std::uint8_t count = 0;

  [[nodiscard]] const resource_id* begin() const noexcept { return resources.data(); }
  [[nodiscard]] const resource_id* end() const noexcept { return resources.data() + count; }
  [[nodiscard]] bool empty() const noexcept { return count == 0; }
};

class topology {
 public:
  topology() = default;
  // `devices` devices under `mode`; `node_of` (empty, or one entry per device: a node id, or
  // no_node for a device outside every node) groups devices behind shared ports. Node ids need not
  // be dense. Throws invalid_input for a node list of the wrong size.
  topology(comm_mode mode, std::size_t devices, std::span<const std::uint32_t> node_of = {})
      : mode_(mode), devices_(devices) {
    if (!node_of.empty() && node_of.size() != devices)
      throw invalid_input("topology: " + std::to_string(node_of.size()) + " node ids for " + std::to_string(devices) +
                          " devices");
    per_device_ = mode == comm_mode::parallel ? 0 : mode == comm_mode::sequential ? 1 : 2;
    if (!node_of.empty()) {
      // Dense node numbers in order of first appearance.
      node_.assign(devices, no_node);
      std::vector<std::uint32_t> seen;
      for (std::size_t d = 0; d < devices; ++d) {
        if (node_of[d] == no_node) continue;
        std::uint32_t k = 0;
        while (k < seen.size() && seen[k] != node_of[d]) ++k;
        if (k == seen.size()) seen.push_back(node_of[d]);
        node_[d] = k;
      }
      node_names_ = seen;
    }
  }

  [[nodiscard]] comm_mode mode() const noexcept { return mode_; }
  [[nodiscard]] std::size_t device_count() const noexcept { return devices_; }
  [[nodiscard]] std::size_t node_count() const noexcept { return node_names_.size(); }
  // The node of device d (dense, in order of first appearance), or no_node.
  [[nodiscard]] std::uint32_t node(std::size_t d) const noexcept { return node_.empty() ? no_node : node_[d]; }
  [[nodiscard]] std::size_t resource_count() const noexcept { return per_device_ * devices_ + 2 * node_names_.size(); }
  // True when some transfers wait for others (any resource at all).
  [[nodiscard]] bool shared() const noexcept { return resource_count() > 0; }

  // The resources a transfer from `from` to `to` (distinct devices) occupies.
  [[nodiscard]] route route_of(std::size_t from, std::size_t to) const noexcept {
    route r;
    const auto add = [&r](std::size_t id) { r.resources[r.count++] = static_cast<resource_id>(id); };
    if (mode_ == comm_mode::sequential) {
      add(std::min(from, to));
      add(std::max(from, to));
    } else if (mode_ == comm_mode::duplex) {
      const std::size_t send = 2 * from, receive = 2 * to + 1;
      add(std::min(send, receive));
      add(std::max(send, receive));
    }
    if (!node_.empty()) {
      const std::uint32_t a = node_[from], b = node_[to];
      if (a != b) {
        const std::size_t base = per_device_ * devices_;
        if (a != no_node) add(base + 2 * a);      // a's outgoing port
        if (b != no_node) add(base + 2 * b + 1);  // b's incoming port
      }
    }
    // At most four: insertion sort (std::sort, inlined here, also trips GCC 12's -Warray-bounds).
    for (std::size_t i = 1; i < r.count; ++i)
      for (std::size_t j = i; j > 0 && r.resources[j] < r.resources[j - 1]; --j)
        std::swap(r.resources[j], r.resources[j - 1]);
    return r;
  }

  // Words for a resource, for messages: "channel of device 2", "send channel of device 0",
  // "outgoing port of node 1".
  [[nodiscard]] std::string resource_name(resource_id r) const {
    const std::size_t device_resources = per_device_ * devices_;
    if (r < device_resources) {
      if (mode_ == comm_mode::sequential) return "channel of device " + std::to_string(r);
      return std::string(r % 2 ? "receive" : "send") + " channel of device " + std::to_string(r / 2);
    }
    const std::size_t k = r - device_resources;
    return std::string(k % 2 ? "incoming" : "outgoing") + " port of node " + std::to_string(node_names_[k / 2]);
  }

 private:
  comm_mode mode_ = comm_mode::parallel;
  std::size_t devices_ = 0;
  std::size_t per_device_ = 0;
  std::vector<std::uint32_t> node_;        // per device, dense node number; empty without nodes
  std::vector<std::uint32_t> node_names_;  // per dense node, the id the caller gave it
};

namespace detail {
// The topology of a device set: its own if it has one, else the one its communication mode builds.
template <class D>
[[nodiscard]] topology topology_of(const D& devices) {
  if constexpr (requires {
                  { devices.topology() } -> std::convertible_to<const topology&>;
                })
    return devices.topology();
  else return topology(devices.comm(), devices.device_count());
}
}  // namespace detail

}  // namespace gantry
