// Plans pipelined training of a GPT-style chain on 4 GPUs of 16 GiB and prints what each schedule
// costs: 1F1B* (fewest activations for its period), classic 1F1B and GPipe, then a k-periodic
// pattern and a non-contiguous allocation for comparison. Every pattern is checked by unrolling
// it into a schedule and running validate().
//
//   embed -> block0 -> block1 -> ... -> block23 -> head      (forward, then backward in reverse)
//   |---- GPU 0 ----|---- GPU 1 ----|---- GPU 2 ----|---- GPU 3 ----|
#include <gantry/core/units.hpp>
#include <gantry/pipeline/k_periodic.hpp>
#include <gantry/pipeline/non_contiguous.hpp>
#include <gantry/pipeline/plan.hpp>
#include <gantry/pipeline/unroll.hpp>

#include <cstdio>
#include <iostream>

int main() {
  using namespace gantry;
  constexpr byte_count MiB = 1 << 20;
  // Sizes of a 1.3B-parameter GPT with Adam (16 bytes per parameter) and a micro-batch of 8 x 1024 tokens.
  chain gpt;
  gpt.layers.push_back({"embed", 0.004, 0.008, 50304 * 2048 * 16, 8 * 1024 * 2048 * 2});
  for (int b = 0; b < 24; ++b)
    gpt.layers.push_back(
        {"block" + std::to_string(b), 0.012, 0.024, 12ull * 2048 * 2048 * 16, 34ull * 8 * 1024 * 2048});
  gpt.layers.push_back({"head", 0.010, 0.020, 2048 * 16 * MiB / 1024, 8 * 1024 * 50304 * 2});

  const std::size_t gpus = 4;
  const byte_count memory = parse_bytes("16GiB");
  const auto plan = plan_pipeline(gpt, gpus, memory);
  std::cout << describe(gpt, plan);
  if (!plan.ok()) return 1;

  std::cout << "\nschedule         period/batch   peak memory    fits 16 GiB   valid\n";
  const auto row = [&](const pipeline_pattern& p) {
    const auto report = check_pattern(gpt, p, {.capacity = unlimited_memory});
    std::printf("%-16s %-14s %-14s %-13s %s\n", p.name.c_str(), format_seconds(p.normalized_period()).c_str(),
                format_bytes(p.peak_memory()).c_str(), p.peak_memory() <= memory ? "yes" : "no",
                report.ok() ? "yes" : "NO");
  };
  for (const auto& p : plan.compared) row(p);
  const auto stages = contiguous_stages(gpt, plan.partition.partition);
  row(k_periodic(gpt, stages, 2));
  const auto spread = greedy_allocation(gpt, gpus, memory);
  if (spread.ok()) {
    auto p = spread.pattern;
    p.name = "greedy non-c.";
    row(p);
  } else {
    std::cout << "greedy non-contiguous allocation: " << spread.outcome.message << "\n";
  }
  return 0;
}
