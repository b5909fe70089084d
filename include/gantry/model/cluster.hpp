// The devices a graph is placed on: capacity and speed of each, the links between them (a linear
// latency + bytes / bandwidth model per device pair, Baechi §4.1) and how transfers share them
// (the communication mode and, optionally, nodes whose devices share a network port: the
// cluster's topology, model/topology.hpp).
// Devices may share a memory-bandwidth domain (the partitions of one GPU, the cores of one host):
// the simulator then slows work that moves many bytes while others in the domain do too
// (sim/shared_bandwidth.hpp). Without domains every device runs as if alone.
// Links are stored sparsely (a default plus per-pair overrides), so a cluster of m devices takes
// O(m + overrides) memory and its mean link is computed in the same time.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/model/topology.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gantry {

// The least bandwidth (bytes per second) of a link or a bandwidth domain: below it, moving the
// largest byte count (2^63 - 1) takes longer than a double holds, and a run's times become infinite.
inline constexpr double least_bandwidth = 9.223372036854775807e18 / std::numeric_limits<double>::max();

namespace detail {
// Three significant digits: "5.13e-290", "5e-324", "1.2e+10" (std::to_string prints the first two
// as 0.000000).
[[nodiscard]] inline std::string three_significant(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}
}  // namespace detail

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
  std::string kind = "default";  // selects per-kind compute times
  byte_count capacity = unlimited_memory;
  double speed = 1.0;  // compute time is divided by this
};

// Devices that draw on one memory bandwidth: `bandwidth` bytes per second for all of them together.
// A vertex on one of them moves its traffic (sim/shared_bandwidth.hpp: traffic_bytes) through it;
// a copy reads its bytes in the sender's domain and writes them in the receiver's (both in one
// domain: twice the bytes there) unless `copies` is false. `cores` > 0 says the devices also
// share that many processors (device threads of one host): each running vertex, and each copy
// that draws on the domain, takes one, and where more run than there are cores each gets an equal
// share.
struct bandwidth_domain {
  std::string name;
  std::vector<device_id> devices;
  double bandwidth = std::numeric_limits<double>::infinity();  // bytes per second
  bool copies = true;
  std::uint32_t cores = 0;  // 0: every device has its processor, and copies take none
  friend bool operator==(const bandwidth_domain&, const bandwidth_domain&) = default;
};

inline constexpr std::uint32_t no_domain = 0xffffffffu;

class cluster {
 public:
  cluster() = default;
  cluster(std::vector<device> devices, link_model link = {}, comm_mode comm = comm_mode::parallel)
      : devices_(std::move(devices)), default_link_(link), comm_(comm) {
    if (devices_.size() >= no_device)
      throw invalid_input("cluster: " + std::to_string(devices_.size()) +
                          " devices is more than device ids can number");
    for (std::size_t d = 0; d < devices_.size(); ++d) check_device(d);
    check_link(default_link_, "default link");
    by_name_.reserve(devices_.size());
    // The first of several devices with one name is the one find() returns, as before.
    for (std::size_t d = 0; d < devices_.size(); ++d) by_name_.try_emplace(devices_[d].name, static_cast<device_id>(d));
    topology_ = gantry::topology(comm_, devices_.size());
  }

  // m identical devices named "d0".."d<m-1>".
  [[nodiscard]] static cluster uniform(std::size_t count, byte_count capacity = unlimited_memory, link_model link = {},
                                       comm_mode comm = comm_mode::parallel) {
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
  void set_capacity(device_id d, byte_count capacity) {
    if (d >= devices_.size())
      throw invalid_input("cluster: device " + std::to_string(d) + " does not exist (" +
                          std::to_string(devices_.size()) + " devices)");
    devices_[d].capacity = capacity;
  }
  [[nodiscard]] comm_mode comm() const noexcept { return comm_; }
  void set_comm(comm_mode comm) {
    comm_ = comm;
    topology_ = gantry::topology(comm_, devices_.size(), node_of_);
  }
  // Groups devices into nodes (one id per device, no_node for none; empty to remove nodes): a
  // transfer between devices of different nodes also occupies both nodes' network ports.
  void set_nodes(std::vector<std::uint32_t> node_of) {
    topology_ = gantry::topology(comm_, devices_.size(), node_of);
    node_of_ = std::move(node_of);
  }
  [[nodiscard]] const std::vector<std::uint32_t>& nodes() const noexcept { return node_of_; }
  // Which resources each transfer occupies; what the engine, simulator and validate() use.
  [[nodiscard]] const gantry::topology& topology() const noexcept { return topology_; }

  // Declares devices that share a memory bandwidth (and, with cores > 0, processors). A device
  // belongs to at most one domain; a domain has at least one device and a bandwidth > 0 (infinity:
  // shares none). Throws invalid_input, leaving the cluster as it was, for anything else.
  void add_domain(bandwidth_domain domain) {
    const std::string what = "bandwidth domain '" + domain.name + "'";
    if (domain.devices.empty()) throw invalid_input(what + " has no devices");
    if (std::isnan(domain.bandwidth) || domain.bandwidth < least_bandwidth)
      throw invalid_input(what + ": bandwidth must be at least " + detail::three_significant(least_bandwidth) +
                          " bytes per second, got " + detail::three_significant(domain.bandwidth));
    std::vector<std::uint8_t> listed(devices_.size(), 0);
    for (const device_id d : domain.devices) {
      if (d >= devices_.size())
        throw invalid_input(what + ": device " + std::to_string(d) + " is out of range (the cluster has " +
                            std::to_string(devices_.size()) + ")");
      if (listed[d]) throw invalid_input(what + ": device '" + devices_[d].name + "' is listed twice");
      listed[d] = 1;
      if (!domain_of_.empty() && domain_of_[d] != no_domain)
        throw invalid_input(what + ": device '" + devices_[d].name + "' is already in bandwidth domain '" +
                            domains_[domain_of_[d]].name + "'");
    }
    if (domain_of_.empty()) domain_of_.assign(devices_.size(), no_domain);
    for (const device_id d : domain.devices) domain_of_[d] = static_cast<std::uint32_t>(domains_.size());
    domains_.push_back(std::move(domain));
  }
  void clear_domains() {
    domains_.clear();
    domain_of_.clear();
  }
  [[nodiscard]] const std::vector<bandwidth_domain>& domains() const noexcept { return domains_; }
  // The domain of device d (an index into domains()), or no_domain.
  [[nodiscard]] std::uint32_t domain_of(device_id d) const noexcept {
    return domain_of_.empty() ? no_domain : domain_of_[d];
  }

  // The link from `from` to `to`: the pair's own if set, else the default.
  [[nodiscard]] const link_model& link(device_id from, device_id to) const {
    if (!pair_links_.empty()) {
      if (const auto it = pair_links_.find(pair_key(from, to)); it != pair_links_.end()) return it->second;
    }
    return default_link_;
  }
  [[nodiscard]] const link_model& default_link() const noexcept { return default_link_; }
  void set_link(device_id from, device_id to, link_model link) {
    if (from >= devices_.size() || to >= devices_.size())
      throw invalid_input("set_link: device " + std::to_string(std::max(from, to)) +
                          " is out of range (the cluster has " + std::to_string(devices_.size()) + ")");
    check_link(link, "link " + devices_[from].name + " -> " + devices_[to].name);
    pair_links_[pair_key(from, to)] = link;
  }
  [[nodiscard]] bool has_own_link(device_id from, device_id to) const {
    return !pair_links_.empty() && pair_links_.contains(pair_key(from, to));
  }
  // The pairs with their own link, as ((from, to), link) sorted by from, then to.
  [[nodiscard]] std::vector<std::pair<std::pair<device_id, device_id>, link_model>> own_links() const {
    std::vector<std::pair<std::pair<device_id, device_id>, link_model>> out;
    out.reserve(pair_links_.size());
    for (const auto& [key, l] : pair_links_)
      out.push_back({{static_cast<device_id>(key >> 32), static_cast<device_id>(key & 0xffffffffu)}, l});
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  }
  [[nodiscard]] std::size_t own_link_count() const noexcept { return pair_links_.size(); }

  // The mean link over ordered pairs of distinct devices: mean latency and the harmonic mean of
  // bandwidths (the mean time per byte), so that mean_link().time(b) is the mean transfer time of
  // b bytes. O(overrides); a free link ({0, infinity}) for fewer than two devices.
  [[nodiscard]] link_model mean_link() const {
    const std::size_t m = devices_.size();
    if (m < 2) return {};
    const double pairs = static_cast<double>(m) * static_cast<double>(m - 1);
    // Summed in key order, not the map's: the mean must not depend on the order links were set.
    std::vector<std::pair<std::uint64_t, link_model>> links(pair_links_.begin(), pair_links_.end());
    std::sort(links.begin(), links.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double latency = 0, per_byte = 0, own = 0;
    for (const auto& [key, l] : links) {
      if ((key >> 32) == (key & 0xffffffffu)) continue;  // a device's link to itself is never used
      latency += l.latency;
      per_byte += 1.0 / l.bandwidth;
      own += 1;
    }
    latency += (pairs - own) * default_link_.latency;
    per_byte += (pairs - own) * (1.0 / default_link_.bandwidth);
    return {latency / pairs, per_byte > 0 ? pairs / per_byte : std::numeric_limits<double>::infinity()};
  }

  // The time to move `bytes` from one device to another; zero on the same device.
  [[nodiscard]] seconds transfer_time(byte_count bytes, device_id from, device_id to) const {
    return from == to ? 0.0 : link(from, to).time(bytes);
  }

  // The device of this name (the first, if several share it). O(1).
  [[nodiscard]] std::optional<device_id> find(std::string_view name) const {
    if (const auto it = by_name_.find(name); it != by_name_.end()) return it->second;
    return std::nullopt;
  }

 private:
  void check_device(std::size_t d) const {
    const auto& dev = devices_[d];
    if (!std::isfinite(dev.speed) || dev.speed <= 0)
      throw invalid_input("device '" + dev.name + "': speed must be finite and > 0, got " + std::to_string(dev.speed));
  }
  static void check_link(const link_model& l, const std::string& what) {
    if (!std::isfinite(l.latency) || l.latency < 0)
      throw invalid_input(what + ": latency must be finite and >= 0, got " + std::to_string(l.latency));
    if (std::isnan(l.bandwidth) || l.bandwidth < least_bandwidth)
      throw invalid_input(what + ": bandwidth must be at least " + detail::three_significant(least_bandwidth) +
                          " bytes per second, got " + detail::three_significant(l.bandwidth));
  }

  [[nodiscard]] static std::uint64_t pair_key(device_id from, device_id to) noexcept {
    return (std::uint64_t{from} << 32) | to;
  }
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
  };

  std::vector<device> devices_;
  link_model default_link_;
  std::unordered_map<std::uint64_t, link_model> pair_links_;  // pair_key -> the pair's own link
  std::unordered_map<std::string, device_id, string_hash, std::equal_to<>> by_name_;
  comm_mode comm_ = comm_mode::parallel;
  std::vector<std::uint32_t> node_of_;
  gantry::topology topology_;
  std::vector<bandwidth_domain> domains_;
  std::vector<std::uint32_t> domain_of_;  // per device; empty without domains
};

namespace detail {
// Whether some devices of the set share a finite memory bandwidth or processors (so times may stretch).
template <class D>
[[nodiscard]] bool shares_bandwidth(const D& devices) {
  if constexpr (requires { devices.domains(); }) {
    for (const auto& domain : devices.domains())
      if (std::isfinite(domain.bandwidth) || domain.cores > 0) return true;
  }
  return false;
}
}  // namespace detail

// What an algorithm needs to know about devices.
template <class D>
concept device_set = requires(const D& d, device_id i) {
  { d.device_count() } -> std::convertible_to<std::size_t>;
  { d.capacity(i) } -> std::convertible_to<byte_count>;
  { d.comm() } -> std::convertible_to<comm_mode>;
};

}  // namespace gantry
