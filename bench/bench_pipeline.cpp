// Times the exact contiguous partitioning (1F1B* memory) of a seeded random 1,000-layer chain on
// 64 processors, against a baseline from the same run: an O(L·P) next-fit pass plus building one
// 1F1B* pattern.
#include <gantry/pipeline/one_f_one_b_star.hpp>
#include <gantry/pipeline/partition.hpp>

#include <chrono>
#include <cstdio>
#include <random>

int main() {
  using namespace gantry;
  using clock = std::chrono::steady_clock;
  std::mt19937_64 rng(1000);
  const auto draw = [&](std::uint64_t low, std::uint64_t high) { return low + rng() % (high - low + 1); };
  chain c;
  byte_count weights = 0;
  for (int l = 0; l < 1000; ++l) {
    c.layers.push_back({"l" + std::to_string(l), static_cast<double>(draw(1, 100)) * 1e-4,
                        static_cast<double>(draw(1, 200)) * 1e-4, draw(1, 64) << 20, draw(1, 16) << 20});
    weights += c.layers.back().weights;
  }
  const std::size_t processors = 64;
  // Room for each processor's share of the weights and a few activations per layer.
  const byte_count capacity = weights / processors * 2;

  const auto seconds_of = [](auto&& f, int repeats) {
    const auto start = clock::now();
    for (int i = 0; i < repeats; ++i) f();
    return std::chrono::duration<double>(clock::now() - start).count() / repeats;
  };
  partition_result exact;
  const double exact_time = seconds_of([&] { exact = optimal_contiguous_partition(c, processors, capacity); }, 3);
  partition_result loose;
  const double loose_time = seconds_of([&] { loose = optimal_contiguous_partition(c, processors); }, 3);
  double budget = c.total_cost() / processors;
  partition_result fit;
  const double baseline_time = seconds_of(
      [&] {
        budget = c.total_cost() / processors;
        do {
          fit = next_fit_partition(c, processors, budget);
          budget *= 1.05;
        } while (!fit.ok());
        (void)one_f_one_b_star(c, fit.partition, fit.period);
      },
      20);
  if (!exact.ok()) {
    std::printf("exact partition failed: %s\n", exact.outcome.message.c_str());
    return 1;
  }
  std::printf("chain: 1000 layers, %zu processors, capacity %llu bytes\n", processors,
              static_cast<unsigned long long>(capacity));
  std::printf("exact partition: period %.4f s, %zu stages, peak memory %llu bytes, %.4f s\n", exact.period,
              exact.partition.stage_count(), static_cast<unsigned long long>(exact.pattern.peak_memory()), exact_time);
  std::printf("exact partition, unlimited memory: period %.4f s, %.4f s\n", loose.period, loose_time);
  std::printf("baseline (next fit + one 1F1B* pattern, no memory): period %.4f s, %.6f s\n", fit.period, baseline_time);
  std::printf("ratio exact / baseline time: %.1f\n", exact_time / baseline_time);
  std::printf("TARGET pipeline_partition_1000x64_seconds measured=%.4f limit=1 %s\n", exact_time,
              exact_time <= 1.0 ? "ok" : "FAIL");
  return 0;
}
