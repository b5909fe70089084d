// capacity_scaled: a view of a device set with every capacity scaled to sixteenths or capped, for
// placers that retry within less memory (a schedule within less memory is within the real one),
// and capacity_grid, the capacities such retries step down.
#pragma once

#include <gantry/model/cluster.hpp>
#include <gantry/model/topology.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <utility>

namespace gantry {

// gantry's capacity grid: point(k) = floor(2^(k/32)) bytes, k = 0 .. 2016 (2^63 bytes), about 2.2%
// apart. Retries within less memory try grid points, never fractions of the capacity asked for, so
// that every capacity a run with less memory tries, a run with more memory tries too (feasibility
// is then monotone in capacity: memory_fallback() in place/list_scheduler.hpp).
struct capacity_grid {
  static constexpr unsigned steps_per_octave = 32;
  static constexpr unsigned last = 63 * steps_per_octave;

  [[nodiscard]] static byte_count point(unsigned k) {
    // 2^(j/32), j = 0..31, to 20 digits (the nearest doubles); ldexp scales exactly.
    static constexpr std::array<double, steps_per_octave> mantissa{1.0,
                                                                   1.0218971486541166782,
                                                                   1.0442737824274138403,
                                                                   1.0671404006768236181,
                                                                   1.0905077326652576592,
                                                                   1.1143867425958925363,
                                                                   1.1387886347566916537,
                                                                   1.1637248587775775138,
                                                                   1.1892071150027210667,
                                                                   1.2152473599804688781,
                                                                   1.2418578120734840485,
                                                                   1.2690509571917332225,
                                                                   1.2968395546510096659,
                                                                   1.3252366431597412946,
                                                                   1.3542555469368927282,
                                                                   1.3839098819638319548,
                                                                   1.4142135623730950488,
                                                                   1.4451808069770466200,
                                                                   1.4768261459394993113,
                                                                   1.5091644275934227397,
                                                                   1.5422108254079408236,
                                                                   1.5759808451078864864,
                                                                   1.6104903319492543081,
                                                                   1.6457554781539648445,
                                                                   1.6817928305074290860,
                                                                   1.7186192981224779156,
                                                                   1.7562521603732994831,
                                                                   1.7947090750031071864,
                                                                   1.8340080864093424634,
                                                                   1.8741676341102999013,
                                                                   1.9152065613971472938,
                                                                   1.9571441241754002690};
    k = std::min(k, last);
    return static_cast<byte_count>(
        std::floor(std::ldexp(mantissa[k % steps_per_octave], static_cast<int>(k / steps_per_octave))));
  }
  // The largest k with point(k) < capacity; nullopt when capacity <= 1.
  [[nodiscard]] static std::optional<unsigned> index_below(byte_count capacity) {
    if (capacity <= point(0)) return std::nullopt;
    unsigned lo = 0, hi = last + 1;  // point(lo) < capacity; hi: past the end or point(hi) >= capacity
    while (hi - lo > 1) {
      const unsigned mid = lo + (hi - lo) / 2;
      (point(mid) < capacity ? lo : hi) = mid;
    }
    return lo;
  }
};

// The devices of `devices` with `sixteenths / 16` of each capacity, and at most `cap` bytes
// (unlimited stays unlimited), the same links and names. Holds a reference: `devices` must
// outlive it.
template <device_set D>
class capacity_scaled {
 public:
  capacity_scaled(const D& devices, unsigned sixteenths, byte_count cap = unlimited_memory)
      : devices_(devices), sixteenths_(sixteenths), cap_(cap) {}
  [[nodiscard]] std::size_t device_count() const { return devices_.device_count(); }
  [[nodiscard]] byte_count capacity(device_id d) const {
    const byte_count full = devices_.capacity(d);
    return full == unlimited_memory ? full : std::min(cap_, full / 16 * sixteenths_ + full % 16 * sixteenths_ / 16);
  }
  [[nodiscard]] comm_mode comm() const { return devices_.comm(); }
  [[nodiscard]] gantry::topology topology() const { return detail::topology_of(devices_); }
  [[nodiscard]] decltype(auto) domains() const requires requires(const D& x) { x.domains(); }
  { return devices_.domains(); }
  [[nodiscard]] std::uint32_t domain_of(device_id d) const requires requires(const D& x) { x.domain_of(d); }
  { return devices_.domain_of(d); }
  [[nodiscard]] decltype(auto) operator[](device_id d) const requires requires(const D& x) { x[d]; }
  { return devices_[d]; }
  // This view capped at `cap` bytes as well, a view of the same type.
  [[nodiscard]] capacity_scaled capped(byte_count cap) const { return {devices_, sixteenths_, std::min(cap_, cap)}; }

 private:
  const D& devices_;
  unsigned sixteenths_;
  byte_count cap_;
};

// `devices` with every capacity capped at `cap` bytes (unlimited stays unlimited; the default caps
// nothing). A capacity_scaled view is capped as itself, not wrapped again, so a run and its retries
// within less memory (place/list_scheduler.hpp) share one type and one instance of the engine.
// Holds a reference, as capacity_scaled does.
template <device_set D>
[[nodiscard]] capacity_scaled<D> capped(const D& devices, byte_count cap = unlimited_memory) {
  return {devices, 16, cap};
}
template <device_set D>
[[nodiscard]] capacity_scaled<D> capped(const capacity_scaled<D>& devices, byte_count cap = unlimited_memory) {
  return devices.capped(cap);
}
// The type capped() gives for D: capacity_scaled<D>, or D itself where D is a capacity_scaled view.
template <device_set D>
using capped_t = decltype(capped(std::declval<const D&>()));

}  // namespace gantry
