// 1F1B*, classic 1F1B, GPipe and k-periodic patterns (Euro-Par 2021 §5): every pattern unrolled and
// validated, NCA and memory checked against the paper's statements and against brute force.
#include <gantry/pipeline/gpipe.hpp>
#include <gantry/pipeline/k_periodic.hpp>
#include <gantry/pipeline/one_f_one_b.hpp>
#include <gantry/pipeline/one_f_one_b_star.hpp>
#include <gantry/pipeline/unroll.hpp>

#include <doctest/doctest.h>

#include <random>

using namespace gantry;

namespace {

// Integers in [low, high] from a seeded engine, the same on every standard library.
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t low, std::uint64_t high) { return low + rng() % (high - low + 1); }

chain random_chain(std::mt19937_64& rng, std::size_t layers, std::uint64_t max_time = 4) {
  chain c;
  for (std::size_t l = 0; l < layers; ++l)
    c.layers.push_back({"l" + std::to_string(l), static_cast<double>(draw(rng, 0, max_time)),
                        static_cast<double>(draw(rng, 1, max_time)), draw(rng, 0, 50), draw(rng, 1, 20)});
  return c;
}

chain_partition random_partition(std::mt19937_64& rng, std::size_t layers, std::size_t stages) {
  std::vector<std::uint32_t> cuts;
  for (std::uint32_t l = 1; l < layers; ++l) cuts.push_back(l);
  std::shuffle(cuts.begin(), cuts.end(), rng);
  cuts.resize(std::min(cuts.size(), stages - 1));
  cuts.push_back(0);
  std::sort(cuts.begin(), cuts.end());
  return {cuts};
}

// Validates a pattern by unrolling it and checks that the memory it claims is what the processors
// really reach.
void require_valid(const chain& c, const pipeline_pattern& p, bool memory_exact = true) {
  REQUIRE_MESSAGE(p.ok(), p.message);
  const auto report = check_pattern(c, p);
  INFO(p.name << ", period " << p.period);
  REQUIRE_MESSAGE(report.ok(), report.to_string());
  REQUIRE(report.peak_memory.size() >= p.memory.size());
  for (std::size_t d = 0; d < p.memory.size(); ++d) {
    if (memory_exact) CHECK(report.peak_memory[d] == p.memory[d]);
    else CHECK(report.peak_memory[d] <= p.memory[d]);
  }
}

}  // namespace

TEST_CASE("1F1B*, 1F1B, GPipe and k-periodic patterns on random chains are valid schedules") {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 40; ++trial) {
    const auto c = random_chain(rng, draw(rng, 1, 8));
    const auto part = random_partition(rng, c.size(), draw(rng, 1, 4));
    const auto stages = contiguous_stages(c, part);
    const seconds most = detail::largest_load(stages);
    seconds total = 0;
    for (const auto& s : stages) total += s.load();
    for (const seconds period : {most, (most + total) / 2, total}) {
      const auto star = one_f_one_b_star(c, stages, period);
      require_valid(c, star);
      for (std::size_t s = 0; s < stages.size(); ++s) CHECK(star.stage_nca[s] == star.group[s]);
    }
    require_valid(c, one_f_one_b(c, stages));
    require_valid(c, gpipe(c, stages));
    for (std::size_t k = 1; k <= 3; ++k) require_valid(c, k_periodic(c, stages, k));
  }
}
