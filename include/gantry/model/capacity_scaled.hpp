// capacity_scaled: a view of a device set with every capacity scaled to sixteenths, for placers
// that retry within less memory (a schedule within less memory is within the real one).
#pragma once

#include <gantry/model/cluster.hpp>
#include <gantry/model/topology.hpp>

#include <cstddef>

namespace gantry {

// The devices of `devices` with `sixteenths / 16` of each capacity (unlimited stays unlimited),
// the same links and names. Holds a reference: `devices` must outlive it.
template <device_set D>
class capacity_scaled {
 public:
  capacity_scaled(const D& devices, unsigned sixteenths) : devices_(devices), sixteenths_(sixteenths) {}
  [[nodiscard]] std::size_t device_count() const { return devices_.device_count(); }
  [[nodiscard]] byte_count capacity(device_id d) const {
    const byte_count full = devices_.capacity(d);
    return full == unlimited_memory ? full : full / 16 * sixteenths_ + full % 16 * sixteenths_ / 16;
  }
  [[nodiscard]] comm_mode comm() const { return devices_.comm(); }
  [[nodiscard]] gantry::topology topology() const { return detail::topology_of(devices_); }
  [[nodiscard]] decltype(auto) domains() const
    requires requires(const D& x) { x.domains(); }
  {
    return devices_.domains();
  }
  [[nodiscard]] std::uint32_t domain_of(device_id d) const
    requires requires(const D& x) { x.domain_of(d); }
  {
    return devices_.domain_of(d);
  }
  [[nodiscard]] decltype(auto) operator[](device_id d) const
    requires requires(const D& x) { x[d]; }
  {
    return devices_[d];
  }

 private:
  const D& devices_;
  unsigned sixteenths_;
};

}  // namespace gantry
