// The devices a graph is placed on: capacity and speed of each, the links between them (a linear
// latency + bytes / bandwidth model per device pair, Baechi §4.1) and how transfers share them.
#pragma once

#include <gantry/core/types.hpp>

#include <cmath>
#include <concepts>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace gantry {

// parallel: any number of transfers at once. sequential: each device has one channel used by
// every transfer that it sends or receives, so transfers touching a device run one at a time
// (Baechi §3.4). duplex: one channel for sending and one for receiving per device.
enum class comm_mode { parallel, sequential, duplex };

[[nodiscard]] constexpr const char* to_string(comm_mode m) noexcept {
  switch (m) {
    case comm_mode::parallel: return "parallel";
    case comm_mode::sequential: return "sequential";
    case comm_mode::duplex: return "duplex";
  }
  return "unknown";
}

// Time to move `bytes` over a link: latency + bytes / bandwidth.
struct link_model {
  seconds latency = 0;
  double bandwidth = std::numeric_limits<double>::infinity();  // bytes per second

  [[nodiscard]] seconds time(byte_count bytes) const noexcept {
    return latency + static_cast<double>(bytes) / bandwidth;
  }
  friend bool operator==(const link_model&, const link_model&) = default;
};

struct device {
  std::string name;
  std::string kind = "default";         // selects per-kind compute times
  byte_count capacity = unlimited_memory;
  double speed = 1.0;                    // compute time is divided by this
};

class cluster {
 public:
  cluster() = default;
  cluster(std::vector<device> devices, link_model link = {}, comm_mode comm = comm_mode::parallel)
      : devices_(std::move(devices)), default_link_(link), comm_(comm) {
    for (std::size_t d = 0; d < devices_.size(); ++d) check_device(d);
    check_link(default_link_, "default link");
  }

  // m identical devices named "d0".."d<m-1>".
  [[nodiscard]] static cluster uniform(std::size_t count, byte_count capacity = unlimited_memory,
                                       link_model link = {}, comm_mode comm = comm_mode::parallel) {
    std::vector<device> devices(count);
    for (std::size_t d = 0; d < count; ++d) {
      devices[d].name = std::string("d").append(std::to_string(d));
      devices[d].capacity = capacity;
    }
    return cluster(std::move(devices), link, comm);
  }

  [[nodiscard]] std::size_t device_count() const noexcept { return devices_.size(); }
  [[nodiscard]] const device& operator[](device_id d) const { return devices_[d]; }
  [[nodiscard]] const std::vector<device>& devices() const noexcept { return devices_; }
  [[nodiscard]] byte_count capacity(device_id d) const { return devices_[d].capacity; }
  [[nodiscard]] comm_mode comm() const noexcept { return comm_; }
  void set_comm(comm_mode comm) noexcept { comm_ = comm; }

  // The link from `from` to `to`: the pair's own if set, else the default.
  [[nodiscard]] const link_model& link(device_id from, device_id to) const {
    if (!pair_links_.empty()) {
      const auto& l = pair_links_[from * devices_.size() + to];
      if (l) return *l;
    }
    return default_link_;
  }
  [[nodiscard]] const link_model& default_link() const noexcept { return default_link_; }
  void set_link(device_id from, device_id to, link_model link) {
    if (from >= devices_.size() || to >= devices_.size())
      throw invalid_input("set_link: device " + std::to_string(std::max(from, to)) +
                          " is out of range (the cluster has " + std::to_string(devices_.size()) + ")");
    check_link(link, "link " + devices_[from].name + " -> " + devices_[to].name);
    if (pair_links_.empty()) pair_links_.resize(devices_.size() * devices_.size());
    pair_links_[from * devices_.size() + to] = link;
  }
  [[nodiscard]] bool has_own_link(device_id from, device_id to) const {
    return !pair_links_.empty() && pair_links_[from * devices_.size() + to].has_value();
  }

  // The time to move `bytes` from one device to another; zero on the same device.
  [[nodiscard]] seconds transfer_time(byte_count bytes, device_id from, device_id to) const {
    return from == to ? 0.0 : link(from, to).time(bytes);
  }

  [[nodiscard]] std::optional<device_id> find(std::string_view name) const {
    for (device_id d = 0; d < devices_.size(); ++d)
      if (devices_[d].name == name) return d;
    return std::nullopt;
  }

 private:
  void check_device(std::size_t d) const {
    const auto& dev = devices_[d];
    if (!std::isfinite(dev.speed) || dev.speed <= 0)
      throw invalid_input("device '" + dev.name + "': speed must be finite and > 0, got " +
                          std::to_string(dev.speed));
  }
  static void check_link(const link_model& l, const std::string& what) {
    if (!std::isfinite(l.latency) || l.latency < 0)
      throw invalid_input(what + ": latency must be finite and >= 0, got " + std::to_string(l.latency));
    if (std::isnan(l.bandwidth) || l.bandwidth <= 0)
      throw invalid_input(what + ": bandwidth must be > 0, got " + std::to_string(l.bandwidth));
  }

  std::vector<device> devices_;
  link_model default_link_;
  std::vector<std::optional<link_model>> pair_links_;  // m*m, empty when every pair uses the default
  comm_mode comm_ = comm_mode::parallel;
};

// What an algorithm needs to know about devices.
template <class D>
concept device_set = requires(const D& d, device_id i) {
  { d.device_count() } -> std::convertible_to<std::size_t>;
  { d.capacity(i) } -> std::convertible_to<byte_count>;
  { d.comm() } -> std::convertible_to<comm_mode>;
};

}  // namespace gantry
