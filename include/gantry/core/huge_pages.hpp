// A hint to the operating system that a large buffer about to be filled should be backed by huge
// pages (Linux's transparent huge pages, where they are enabled "always" or "madvise"): one page
// fault and one TLB entry per 2 MiB instead of per 4 KiB. Reading a graph of a million vertices
// touches a few hundred megabytes for the first time and looks names up at random in a table of
// tens of megabytes; there the hint saves the faults and the page walks. Elsewhere, and on other
// systems, it does nothing. Only the whole 2 MiB pages inside [data, data + bytes) are advised,
// so memory around the buffer is never touched.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gantry::detail {

inline void advise_huge_pages([[maybe_unused]] const void* data, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
  // Failure (no such support, memory not from mmap) leaves the pages as they were: a hint only.
  if (begin < end) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

}  // namespace gantry::detail
