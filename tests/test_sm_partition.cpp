// The SM partition arithmetic of the CUDA backend (exec/sm_partition.hpp), on fake GPUs: no GPU is
// needed. The 132-SM resource is what an H100 or H200 reports (8 SMs minimum, alignment 8).
#include <gantry/exec/sm_partition.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace gantry;

namespace {
constexpr sm_resource hopper{.sm_count = 132, .min_partition = 8, .alignment = 8};
// A driver that makes floor(SMs / n) partitions of n SMs: what cuDevSmResourceSplitByCount does
// for sizes of the right granularity.
unsigned plain_driver(unsigned n) { return hopper.sm_count / n; }

std::string refusal(const sm_resource& r, std::size_t devices, unsigned requested = 0) {
  try {
    (void)plan_sm_partitions(r, devices, requested, {}, "GPU 0");
  } catch (const invalid_input& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("a 132-SM GPU splits into partitions of whole groups of 8") {
  const auto four = plan_sm_partitions(hopper, 4, 0, plain_driver);
  CHECK(four.partitions == 4);
  CHECK(four.per_partition == 32);  // 33 is not a multiple of 8
  CHECK(four.unused == 4);
  CHECK(describe(four, hopper) == "4 partitions of 32 SMs (4 of 132 unused)");
  CHECK(plan_sm_partitions(hopper, 1).per_partition == 128);
  CHECK(plan_sm_partitions(hopper, 2).per_partition == 64);
  CHECK(plan_sm_partitions(hopper, 3).per_partition == 40);
  CHECK(plan_sm_partitions(hopper, 8).per_partition == 16);
  CHECK(plan_sm_partitions(hopper, 16).per_partition == 8);
  for (std::size_t d = 1; d <= 16; ++d) {
    const auto p = plan_sm_partitions(hopper, d);
    CHECK(legal_partition_size(hopper, p.per_partition));
    CHECK(p.per_partition * d + p.unused == 132);
    CHECK((p.per_partition + 8) * d > 132);  // the largest legal size
  }
}

TEST_CASE("a requested partition size is checked against the granularity and the SM count") {
  CHECK(plan_sm_partitions(hopper, 4, 24).per_partition == 24);
  CHECK(plan_sm_partitions(hopper, 4, 24).unused == 36);
  CHECK(plan_sm_partitions(hopper, 2, 64).unused == 4);
  const auto odd = refusal(hopper, 4, 33);
  CHECK(odd.find("33 SMs per partition is not a size GPU 0 allows") != std::string::npos);
  CHECK(odd.find("132 SMs, handed out in multiples of 8 with at least 8 per partition") != std::string::npos);
  CHECK(odd.find("try 32 or 40") != std::string::npos);
  CHECK(refusal(hopper, 4, 4).find("try 8") != std::string::npos);
  CHECK(refusal(hopper, 4, 40).find("4 partitions of 40 SMs need 160 SMs; GPU 0 has 132") != std::string::npos);
}

TEST_CASE("more partitions than the granularity allows are refused, naming the limit") {
  CHECK(refusal(hopper, 17).find("cannot make 17 equal partitions (at most 16)") != std::string::npos);
  CHECK(refusal(hopper, 200).find("cannot make 200 partitions") != std::string::npos);
  CHECK(refusal(hopper, 0).find("no devices") != std::string::npos);
}

TEST_CASE("the driver's own count wins: a size it makes too few of is stepped down or refused") {
  // A driver whose clusters make partitions of more than 24 SMs come out one short.
  const auto clustered = [](unsigned n) { return n > 24 ? hopper.sm_count / n - 1 : hopper.sm_count / n; };
  CHECK(plan_sm_partitions(hopper, 4, 0, clustered).per_partition == 24);
  CHECK(plan_sm_partitions(hopper, 4, 0, clustered).unused == 36);
  bool refused = false;
  try {
    (void)plan_sm_partitions(hopper, 4, 32, clustered, "GPU 1");
  } catch (const invalid_input& e) {
    refused = std::string(e.what()).find("the driver makes only 3 partitions of 32 SMs of GPU 1") != std::string::npos;
  }
  CHECK(refused);
}

TEST_CASE("a GPU without a granularity splits by single SMs") {
  const sm_resource fine{.sm_count = 10, .min_partition = 1, .alignment = 1};
  CHECK(plan_sm_partitions(fine, 3).per_partition == 3);
  CHECK(plan_sm_partitions(fine, 3).unused == 1);
  CHECK(plan_sm_partitions(fine, 10).per_partition == 1);
  const sm_resource zeros{.sm_count = 6, .min_partition = 0, .alignment = 0};  // read as 1 and 1
  CHECK(plan_sm_partitions(zeros, 4).per_partition == 1);
}
