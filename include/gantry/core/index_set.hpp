// detail::index_set: a set of integers in [0, n) with insert, erase and smallest element in
// O(log64 n) word operations (three levels of 64-bit words cover 262,144 values per top word), for
// queues whose keys are dense ranks: cheaper than a binary heap and free of duplicates.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace gantry::detail {

class index_set {
 public:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  // Empties the set and sizes it for values below n.
  void reset(std::size_t n) {
    levels_ = 0;
    std::size_t words = std::max<std::size_t>(1, (n + 63) / 64), total = 0;
    for (;;) {
      first_[levels_++] = total;
      total += words;
      if (words == 1) break;
      words = (words + 63) / 64;
    }
    words_.assign(total, 0);
  }
  void insert(std::uint32_t x) {
    for (std::size_t level = 0; level < levels_; ++level) {
      std::uint64_t& word = words_[first_[level] + x / 64];
      const bool was_empty = word == 0;
      word |= std::uint64_t{1} << (x % 64);
      if (!was_empty) return;
      x /= 64;
    }
  }
  void erase(std::uint32_t x) {
    for (std::size_t level = 0; level < levels_; ++level) {
      std::uint64_t& word = words_[first_[level] + x / 64];
      word &= ~(std::uint64_t{1} << (x % 64));
      if (word != 0) return;
      x /= 64;
    }
  }
  [[nodiscard]] bool empty() const { return levels_ == 0 || words_[first_[levels_ - 1]] == 0; }
  [[nodiscard]] bool contains(std::uint32_t x) const { return (words_[x / 64] >> (x % 64)) & 1; }
  // The smallest element, none when empty.
  [[nodiscard]] std::uint32_t min() const {
    if (empty()) return none;
    std::uint32_t x = 0;
    for (std::size_t level = levels_; level-- > 0;)
      x = x * 64 + static_cast<std::uint32_t>(std::countr_zero(words_[first_[level] + x]));
    return x;
  }

 private:
  // Level 0 (one bit per value) first, then each next level (one bit per word of the one below),
  // in one array; six levels cover every 32-bit value.
  std::vector<std::uint64_t> words_;
  std::size_t first_[6] = {};
  std::size_t levels_ = 0;
};

}  // namespace gantry::detail
