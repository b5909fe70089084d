// The exact non-contiguous allocation (GLPK MIP) against brute force on small chains, and the
// paper's §6 examples.
#include <gantry/pipeline/lp_allocation.hpp>
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

// Smallest max load over allocations whose weights (plus one activation per layer) fit.
seconds brute_force(const chain& c, std::size_t processors, byte_count capacity) {
  std::vector<std::size_t> at(c.size(), 0);
  seconds best = std::numeric_limits<double>::infinity();
  while (true) {
    std::vector<seconds> load(processors, 0);
    std::vector<byte_count> memory(processors, 0);
    for (std::size_t l = 0; l < c.size(); ++l) {
      load[at[l]] += c.cost(l);
      memory[at[l]] += c[l].weights + c[l].activation;
    }
    if (*std::max_element(memory.begin(), memory.end()) <= capacity)
      best = std::min(best, *std::max_element(load.begin(), load.end()));
    std::size_t i = 0;
    while (i < at.size() && ++at[i] == processors) at[i++] = 0;
    if (i == at.size()) return best;
  }
}
}  // namespace

TEST_CASE("§6.1 and Lemma 2 with the exact allocation") {
  const chain costs{{{"a", 0.5, 0.5, 0, 0}, {"b", 1, 1, 0, 0}, {"c", 0.5, 0.5, 0, 0}}};
  const auto best = exact_allocation(costs, 2);
  REQUIRE_MESSAGE(best.ok(), best.outcome.message);
  CHECK(best.period == doctest::Approx(2.0));
  CHECK(optimal_contiguous_partition(costs, 2).period == doctest::Approx(3.0));
  const chain weights{{{"a", 1, 1, 1, 0}, {"b", 1, 1, 2, 0}, {"c", 1, 1, 1, 0}}};
  CHECK(optimal_contiguous_partition(weights, 2, 2).outcome.code == status::out_of_memory);
  const auto fits = exact_allocation(weights, 2, 2);
  REQUIRE_MESSAGE(fits.ok(), fits.outcome.message);
  CHECK(fits.processor[0] == fits.processor[2]);
  const auto report = check_pattern(weights, fits.pattern, {.capacity = 2});
  CHECK_MESSAGE(report.ok(), report.to_string());
  CHECK(exact_allocation(weights, 2, 1).outcome.code == status::infeasible);
}

TEST_CASE("The exact allocation equals brute force on small random chains") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 25; ++trial) {
    chain c;
    const std::size_t L = draw(rng, 1, 6);
    for (std::size_t l = 0; l < L; ++l)
      c.layers.push_back({"l" + std::to_string(l), static_cast<double>(draw(rng, 1, 5)),
                          static_cast<double>(draw(rng, 1, 5)), draw(rng, 1, 9), 0});
    const std::size_t P = draw(rng, 1, 3);
    const byte_count capacity = draw(rng, 9, 30);
    const seconds expected = brute_force(c, P, capacity);
    const auto r = exact_allocation(c, P, capacity);
    if (std::isinf(expected)) {
      CHECK(r.outcome.code == status::infeasible);
      continue;
    }
    REQUIRE_MESSAGE(r.ok(), r.outcome.message);
    CHECK(r.period == doctest::Approx(expected));
    const auto report = check_pattern(c, r.pattern, {.capacity = capacity});
    CHECK_MESSAGE(report.ok(), report.to_string());
    if (const auto greedy = greedy_allocation(c, P, capacity); greedy.ok()) CHECK(greedy.period >= r.period - 1e-9);
  }
  CHECK_THROWS_AS((void)exact_allocation(chain{std::vector<layer>(30)}, 2), invalid_input);
}
