// Seeded random draws that give the same numbers on every platform: only the raw output of
// std::mt19937_64 (fully specified by the standard) is used, never std::*_distribution.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace gantry {

namespace detail {
// Portable draws from a raw 64-bit engine.
struct portable_random {
  std::mt19937_64 engine;
  explicit portable_random(std::uint64_t seed) : engine(seed) {}
  // Uniform in [0, 1).
  double unit() { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }
  // Uniform integer in [lo, hi].
  std::uint64_t integer(std::uint64_t lo, std::uint64_t hi) {
    if (hi <= lo) return lo;
    const std::uint64_t span = hi - lo + 1;
    return span == 0 ? engine() : lo + engine() % span;  // modulo bias is irrelevant here
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  // Standard normal by Box-Muller.
  double normal() {
    const double u1 = 1.0 - unit(), u2 = unit();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};
}  // namespace detail

}  // namespace gantry
