// detail::radix_sort_by_key: a stable LSD radix sort of records by their unsigned 64-bit `key`,
// for the hot sorts of the engine (ETF's tie order, memory events), where it is about five times
// faster than std::sort.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gantry::detail {

// Sorts [items, items + n) by `key`, stably; `scratch` is room for n more records. Six passes of
// 11-bit digits (66 bits cover the key), all counted in one read (the counts fit in L1); a pass
// whose digit is the same for every record is skipped. O(n) per pass.
template <class T>
void radix_sort_by_key(T* items, std::size_t n, std::vector<T>& scratch) {
  if (n < 2) return;
  scratch.resize(n);
  T* from = items;
  T* to = scratch.data();
  constexpr int digit_bits = 11, passes = 6;
  constexpr std::uint64_t digit_mask = (std::uint64_t{1} << digit_bits) - 1;
  std::vector<std::uint32_t> count(passes << digit_bits, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (int pass = 0; pass < passes; ++pass)
      ++count[(pass << digit_bits) + ((items[i].key >> (pass * digit_bits)) & digit_mask)];
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * digit_bits;
    std::uint32_t* digit_count = count.data() + (pass << digit_bits);
    if (digit_count[(from[0].key >> shift) & digit_mask] == n) continue;
    std::uint32_t sum = 0;
    for (std::size_t c = 0; c <= digit_mask; ++c) sum += std::exchange(digit_count[c], sum);
    for (std::size_t i = 0; i < n; ++i) to[digit_count[(from[i].key >> shift) & digit_mask]++] = from[i];
    std::swap(from, to);
  }
  if (from != items) std::copy(from, from + n, items);
}

}  // namespace gantry::detail
