// The branch and bound that proves optima of STG-like graphs (tests/stg_like.hpp, used by
// test_stg.cpp) against the exact placer's program (place/exact.hpp) on graphs small enough for it.
#include "stg_like.hpp"

#include <gantry/place/exact.hpp>

#include <doctest/doctest.h>

#include <cmath>

using namespace gantry;

TEST_CASE("stg_optimum equals the exact placer's proven optimum on small STG-like graphs") {
  std::size_t proven = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const graph g = test::stg_like_graph({.tasks = static_cast<std::size_t>(3 + seed % 5),
                                          .method = static_cast<test::stg_method>(seed % 4),
                                          .mean_predecessors = 1.0 + static_cast<double>(seed % 3) * 0.5,
                                          .layers = static_cast<std::size_t>(2 + seed % 3),
                                          .seed = seed});
    for (const std::size_t processors : {2, 3}) {
      CAPTURE(seed);
      CAPTURE(processors);
      const auto c = cluster::uniform(processors);
      const graph_model model(g, c);
      const auto r = exact_schedule(g, model, c, {.respect_memory = false});
      REQUIRE(r.ok());
      const std::int64_t optimum = test::stg_optimum(g, processors, std::llround(r.makespan) + 1);
      // Whole times: the program's bound rounds up to a whole number.
      const auto bound = static_cast<std::int64_t>(std::ceil(r.bound - 1e-6));
      CHECK(optimum <= std::llround(r.makespan));
      CHECK(optimum >= bound);
      if (r.optimal || bound == std::llround(r.makespan)) {
        CHECK(optimum == std::llround(r.makespan));
        ++proven;
      }
    }
  }
  CHECK(proven == 60);  // 5 to 9 vertices: the program proves each within its default 10 s, in ~2 s all told
}
