// Contiguous partitioning (exact, against brute force over all partitions), next fit (Theorem 5)
// and non-contiguous allocations (§6.1, Lemma 2), each result's pattern validated.
#include <gantry/pipeline/non_contiguous.hpp>
#include <gantry/pipeline/partition.hpp>
#include <gantry/pipeline/unroll.hpp>

#include <doctest/doctest.h>

#include <limits>
#include <random>

using namespace gantry;

namespace {

std::uint64_t draw(std::mt19937_64& rng, std::uint64_t low, std::uint64_t high) {
  return low + rng() % (high - low + 1);
}

chain random_chain(std::mt19937_64& rng, std::size_t layers) {
  chain c;
  for (std::size_t l = 0; l < layers; ++l)
    c.layers.push_back({"l" + std::to_string(l), static_cast<double>(draw(rng, 1, 5)),
                        static_cast<double>(draw(rng, 1, 9)), draw(rng, 0, 40), draw(rng, 0, 12)});
  return c;
}

void require_valid(const chain& c, const pipeline_pattern& p, byte_count capacity) {
  REQUIRE_MESSAGE(p.ok(), p.outcome.message);
  const auto report = check_pattern(c, p, {.capacity = capacity});
  REQUIRE_MESSAGE(report.ok(), report.to_string());
  for (std::size_t d = 0; d < p.memory.size(); ++d) CHECK(report.peak_memory[d] <= p.memory[d]);
}

// The best non-contiguous period without memory limits: every allocation of L layers to P processors.
seconds best_non_contiguous_period(const chain& c, std::size_t processors) {
  std::vector<std::size_t> at(c.size(), 0);
  seconds best = std::numeric_limits<double>::infinity();
  while (true) {
    std::vector<seconds> load(processors, 0);
    for (std::size_t l = 0; l < c.size(); ++l) load[at[l]] += c.cost(l);
    best = std::min(best, *std::max_element(load.begin(), load.end()));
    std::size_t i = 0;
    while (i < at.size() && ++at[i] == processors) at[i++] = 0;
    if (i == at.size()) return best;
  }
}

}  // namespace

TEST_CASE("The exact partition matches brute force over every contiguous partition") {
  std::mt19937_64 rng(2021);
  for (int trial = 0; trial < 60; ++trial) {
    const auto c = random_chain(rng, draw(rng, 1, 7));
    const std::size_t processors = draw(rng, 1, 4);
    byte_count biggest = 0, everything = 0;
    for (const auto& x : c.layers) {
      biggest = std::max(biggest, x.weights + x.activation);
      everything += x.weights + c.size() * x.activation;
    }
    const byte_count capacity =
        trial % 5 == 0 ? unlimited_memory : draw(rng, biggest, std::max(biggest, everything / 2));
    INFO("trial " << trial << ", " << c.size() << " layers, " << processors << " processors, capacity " << capacity);
    seconds brute = std::numeric_limits<double>::infinity();
    const std::size_t L = c.size();
    for (std::uint32_t mask = 0; mask < (1u << (L - 1)); ++mask) {
      chain_partition part{{0}};
      for (std::uint32_t l = 1; l < L; ++l)
        if (mask & (1u << (l - 1))) part.first.push_back(l);
      if (part.stage_count() > processors) continue;
      const auto p = smallest_period_one_f_one_b_star(c, part, capacity);
      if (p.ok()) brute = std::min(brute, p.period);
    }
    const auto result = optimal_contiguous_partition(c, processors, capacity);
    if (std::isinf(brute)) {
      CHECK(result.outcome.code == status::out_of_memory);
      CHECK(!result.outcome.message.empty());
      continue;
    }
    REQUIRE_MESSAGE(result.ok(), result.outcome.message);
    CHECK(result.period == doctest::Approx(brute));
    CHECK(result.partition.stage_count() <= processors);
    CHECK(result.pattern.period == doctest::Approx(result.period));
    require_valid(c, result.pattern, capacity);
  }
}

TEST_CASE("§6.1: costs (1,2,1) on 2 processors give period 3 contiguous and 2 non-contiguous") {
  const chain c{{{"a", 0.5, 0.5, 0, 1}, {"b", 1, 1, 0, 1}, {"c", 0.5, 0.5, 0, 1}}};
  const auto contiguous = optimal_contiguous_partition(c, 2);
  REQUIRE(contiguous.ok());
  CHECK(contiguous.period == doctest::Approx(3.0));
  const auto greedy = greedy_allocation(c, 2);
  REQUIRE_MESSAGE(greedy.ok(), greedy.outcome.message);
  CHECK(greedy.period == doctest::Approx(2.0));
  CHECK(greedy.processor[0] == greedy.processor[2]);
  CHECK(greedy.processor[0] != greedy.processor[1]);
  require_valid(c, greedy.pattern, unlimited_memory);
}

TEST_CASE("Lemma 2: weights (1,2,1), M = 2, 2 processors: only a non-contiguous allocation fits") {
  const chain c{{{"a", 0.5, 0.5, 1, 0}, {"b", 1, 1, 2, 0}, {"c", 0.5, 0.5, 1, 0}}};
  const auto contiguous = optimal_contiguous_partition(c, 2, 2);
  CHECK(contiguous.outcome.code == status::out_of_memory);
  CHECK(contiguous.outcome.message.find("2 processors") != std::string::npos);
  const auto greedy = greedy_allocation(c, 2, 2);
  REQUIRE_MESSAGE(greedy.ok(), greedy.outcome.message);
  CHECK(greedy.pattern.peak_memory() <= 2);
  require_valid(c, greedy.pattern, 2);
}

TEST_CASE("Theorem 5: next fit with budget 2T* always succeeds, and the best contiguous period is at most 2T*") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    const auto c = random_chain(rng, draw(rng, 1, 8));
    const std::size_t processors = draw(rng, 1, 3);
    const seconds best = best_non_contiguous_period(c, processors);
    const auto fit = next_fit_partition(c, processors, 2 * best);
    REQUIRE_MESSAGE(fit.ok(), fit.outcome.message);
    CHECK(fit.partition.stage_count() <= processors);
    CHECK(fit.period <= 2 * best + 1e-9);
    require_valid(c, fit.pattern, unlimited_memory);
    const auto exact = optimal_contiguous_partition(c, processors);
    REQUIRE(exact.ok());
    CHECK(exact.period <= 2 * best + 1e-9);
    CHECK(exact.period >= best - 1e-9);
    CHECK(exact.period <= fit.period + 1e-9);
  }
}

TEST_CASE("Patterns of random non-contiguous allocations are valid; on contiguous ones they are 1F1B") {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    const auto c = random_chain(rng, draw(rng, 1, 9));
    const std::size_t processors = draw(rng, 1, 4);
    std::vector<device_id> at(c.size());
    for (auto& d : at) d = static_cast<device_id>(draw(rng, 0, processors - 1));
    const auto p = allocation_pattern(c, at, processors);
    require_valid(c, p, unlimited_memory);
    const auto greedy = greedy_allocation(c, processors);
    REQUIRE(greedy.ok());
    CHECK(greedy.period >= best_non_contiguous_period(c, processors) - 1e-9);
    require_valid(c, greedy.pattern, unlimited_memory);
  }
  // One layer per processor: the allocation pattern is classic 1F1B, NCA = P - l.
  const chain c{{{"a", 1, 2, 5, 1}, {"b", 2, 1, 5, 1}, {"c", 1, 1, 5, 1}}};
  const auto p = allocation_pattern(c, {0, 1, 2}, 3);
  CHECK(p.nca == std::vector<std::uint32_t>{3, 2, 1});
  require_valid(c, p, unlimited_memory);
}

TEST_CASE("Bad input is refused with what and where") {
  const chain c{{{"a", 1, 1, 0, 0}, {"b", -1, 1, 0, 0}}};
  CHECK_THROWS_AS((void)optimal_contiguous_partition(c, 2), invalid_input);
  const chain ok{{{"a", 1, 1, 0, 0}, {"b", 1, 1, 0, 0}}};
  CHECK_THROWS_AS((void)optimal_contiguous_partition(ok, 0), invalid_input);
  CHECK_THROWS_AS((void)contiguous_stages(ok, chain_partition{{0, 2}}), invalid_input);
  CHECK_THROWS_AS((void)allocation_pattern(ok, {0, 3}, 2), invalid_input);
  const chain heavy{{{"big", 1, 1, 100, 10}}};
  const auto r = optimal_contiguous_partition(heavy, 4, 50);
  CHECK(r.outcome.code == status::out_of_memory);
  CHECK(r.outcome.message.find("'big'") != std::string::npos);
}
