// detail::index_set: a set of integers in [0, n) with insert, erase and smallest element in
// O(log64 n) word operations (three levels of 64-bit words cover 262,144 values per top word), for
// queues whose keys are dense ranks: cheaper than a binary heap and free of duplicates.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace gantry::detail {

class index_set {
 public:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  // Empties the set and sizes it for values below n.
  void reset(std::size_t n) {
    levels_.clear();
    std::size_t words = (n + 63) / 64;
    do {
      levels_.emplace_back(words == 0 ? 1 : words, 0);
      words = (words + 63) / 64;
    } while (levels_.back().size() > 1);
  }
  void insert(std::uint32_t x) {
    for (auto& level : levels_) {
      const std::uint64_t bit = std::uint64_t{1} << (x % 64);
      const bool was_empty = level[x / 64] == 0;
      level[x / 64] |= bit;
      if (!was_empty) return;
      x /= 64;
    }
  }
  void erase(std::uint32_t x) {
    for (auto& level : levels_) {
      level[x / 64] &= ~(std::uint64_t{1} << (x % 64));
      if (level[x / 64] != 0) return;
      x /= 64;
    }
  }
  [[nodiscard]] bool empty() const { return levels_.empty() || levels_.back()[0] == 0; }
  [[nodiscard]] bool contains(std::uint32_t x) const { return (levels_.front()[x / 64] >> (x % 64)) & 1; }
  // The smallest element, none when empty.
  [[nodiscard]] std::uint32_t min() const {
    if (empty()) return none;
    std::uint32_t x = 0;
    for (auto level = levels_.rbegin(); level != levels_.rend(); ++level)
      x = x * 64 + static_cast<std::uint32_t>(std::countr_zero((*level)[x]));
    return x;
  }

 private:
  std::vector<std::vector<std::uint64_t>> levels_;  // levels_[0]: one bit per value; each next: one per word
};

}  // namespace gantry::detail
