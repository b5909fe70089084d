// How many SMs each virtual device of a GPU gets: the arithmetic of exec/cuda_backend.cuh's SM
// partitions, kept free of CUDA so that it is tested without a GPU. A GPU hands its SMs out in
// groups (the driver reports a minimum partition size and an alignment: 8 and 8 on the H100 and
// H200, whose 132 SMs therefore split into 4 x 32, not 4 x 33); the plan takes the largest legal
// equal split, or checks the size a user asked for, and asks the driver (through `groups_for`) how
// many partitions of that size it really makes, since clusters can make it fewer.
#pragma once

#include <gantry/core/types.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>

namespace gantry {

// What the driver says about a GPU's SMs (CUdevSmResource: smCount, minSmPartitionSize,
// smCoscheduledAlignment).
struct sm_resource {
  unsigned sm_count = 0;
  unsigned min_partition = 1;  // the fewest SMs a partition may have
  unsigned alignment = 1;      // a partition's SMs are a multiple of this
};

struct sm_partition_plan {
  unsigned partitions = 0;     // as many as devices were asked for
  unsigned per_partition = 0;  // SMs in each
  unsigned unused = 0;         // SMs of the GPU no partition gets
};

// The granularity a partition size must respect: a multiple of the alignment, at least the minimum.
[[nodiscard]] constexpr bool legal_partition_size(const sm_resource& r, unsigned sms) noexcept {
  const unsigned align = std::max(r.alignment, 1u);
  return sms >= std::max(r.min_partition, 1u) && sms % align == 0;
}

// `devices` equal partitions of r's SMs. `requested` SMs each when not 0 (checked: legal, and
// `devices` of them fit), else the largest legal size that fits `devices` times. `groups_for(n)`,
// when given, says how many partitions of n SMs the driver would make (cuDevSmResourceSplitByCount
// with no result array): a size it cannot make `devices` times is stepped down by the alignment (a
// requested one is refused). `gpu` names the GPU in messages. Throws invalid_input naming the SM
// count, granularity and request when no legal split exists.
[[nodiscard]] inline sm_partition_plan plan_sm_partitions(const sm_resource& r, std::size_t devices,
                                                          unsigned requested = 0,
                                                          const std::function<unsigned(unsigned)>& groups_for = {},
                                                          const std::string& gpu = "the GPU") {
  const unsigned align = std::max(r.alignment, 1u), least = std::max(r.min_partition, 1u);
  const std::string granularity = std::to_string(r.sm_count) + " SMs, handed out in multiples of " +
                                  std::to_string(align) + " with at least " + std::to_string(least) + " per partition";
  if (devices == 0) throw invalid_input("SM partitions: no devices to make of " + gpu);
  if (devices > r.sm_count)
    throw invalid_input("SM partitions: " + gpu + " has " + granularity + ": it cannot make " +
                        std::to_string(devices) + " partitions");
  const auto count = static_cast<unsigned>(devices);
  const auto fits = [&](unsigned sms) { return static_cast<std::size_t>(sms) * devices <= r.sm_count; };
  const auto made = [&](unsigned sms) { return groups_for ? groups_for(sms) : r.sm_count / sms; };
  if (requested != 0) {
    if (!legal_partition_size(r, requested)) {
      const unsigned below = std::max(requested / align * align, least),
                     above = (requested + align - 1) / align * align;
      throw invalid_input("SM partitions: " + std::to_string(requested) + " SMs per partition is not a size " + gpu +
                          " allows (" + granularity + "): try " + std::to_string(below) +
                          (above != below && above >= least ? " or " + std::to_string(above) : std::string()));
    }
    if (!fits(requested))
      throw invalid_input("SM partitions: " + std::to_string(devices) + " partitions of " + std::to_string(requested) +
                          " SMs need " + std::to_string(static_cast<std::size_t>(requested) * devices) + " SMs; " +
                          gpu + " has " + std::to_string(r.sm_count));
    if (made(requested) < count)
      throw invalid_input("SM partitions: the driver makes only " + std::to_string(made(requested)) +
                          " partitions of " + std::to_string(requested) + " SMs of " + gpu + " (" + granularity +
                          "), not " + std::to_string(devices));
    return {count, requested, r.sm_count - requested * count};
  }
  for (unsigned sms = r.sm_count / count / align * align; sms >= least && sms > 0; sms -= align)
    if (legal_partition_size(r, sms) && made(sms) >= count) return {count, sms, r.sm_count - sms * count};
  throw invalid_input("SM partitions: " + gpu + " has " + granularity + ": it cannot make " + std::to_string(devices) +
                      " equal partitions (at most " + std::to_string(r.sm_count / std::max(least, align)) + ")");
}

// "4 partitions of 32 SMs (4 of 132 unused)".
[[nodiscard]] inline std::string describe(const sm_partition_plan& p, const sm_resource& r) {
  return std::to_string(p.partitions) + " partition" + (p.partitions == 1 ? "" : "s") + " of " +
         std::to_string(p.per_partition) + " SMs (" + std::to_string(p.unused) + " of " + std::to_string(r.sm_count) +
         " unused)";
}

}  // namespace gantry
