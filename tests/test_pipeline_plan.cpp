// Planning a pipeline in one call, as `gantry pipeline` does: partition, 1F1B* vs 1F1B vs GPipe.
#include <gantry/pipeline/plan.hpp>
#include <gantry/pipeline/unroll.hpp>

#include <doctest/doctest.h>

#include <limits>

using namespace gantry;

TEST_CASE("A plan compares 1F1B*, 1F1B and GPipe on the exact partition") {
  chain c;
  for (int l = 0; l < 12; ++l)
    c.layers.push_back({"block" + std::to_string(l), 1.0 + (l % 3), 2.0 + (l % 2), 1000u * (1 + l % 4), 400});
  const byte_count capacity = 14000;
  const auto plan = plan_pipeline(c, 4, capacity, {.schedule = pipeline_schedule::gpipe});
  REQUIRE_MESSAGE(plan.ok(), plan.partition.outcome.message);
  REQUIRE(plan.compared.size() == 3);
  CHECK(plan.compared[0].name == "1F1B*");
  CHECK(plan.compared[1].name == "1F1B");
  CHECK(plan.compared[2].name == "GPipe");
  CHECK(plan.chosen.name == "GPipe");
  CHECK(plan.compared[0].peak_memory() <= capacity);
  // 1F1B* never holds more activations than classic 1F1B at a period at least as long.
  CHECK(plan.compared[0].period >= plan.compared[1].period - 1e-9);
  for (std::size_t l = 0; l < c.size(); ++l) CHECK(plan.compared[0].nca[l] <= plan.compared[1].nca[l]);
  for (const auto& p : plan.compared) {
    const auto report = check_pattern(c, p);
    CHECK_MESSAGE(report.ok(), report.to_string());
  }
  const auto text = describe(c, plan);
  CHECK(text.find("GPipe (chosen)") != std::string::npos);
  CHECK(text.find("stage 3") != std::string::npos);
  CHECK(text.find("layers: block") != std::string::npos);
  CHECK(text.find("NCA") != std::string::npos);
}

TEST_CASE("A plan that cannot fit says why; schedule names parse") {
  const chain c{{{"huge", 1, 1, 1u << 20, 0}}};
  const auto plan = plan_pipeline(c, 2, 1024);
  CHECK(!plan.ok());
  CHECK(describe(c, plan).find("'huge'") != std::string::npos);
  CHECK(parse_pipeline_schedule("1F1B*") == pipeline_schedule::one_f_one_b_star);
  CHECK(parse_pipeline_schedule("gpipe") == pipeline_schedule::gpipe);
  CHECK_THROWS_AS((void)parse_pipeline_schedule("zero-bubble"), invalid_input);
}

TEST_CASE("A chain of zero-time layers plans at period 0, and every pattern validates") {
  // An all-zero chain, or a PipeDream profile of one Input node (its time is zeroed).
  for (const std::size_t processors : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
    const chain c{{{"a", 0, 0, 10, 3}, {"b", 0, 0, 20, 0}}};
    for (const bool replicated : {false, true}) {
      pipeline_plan_options options;
      if (replicated) options.max_replicas = 2;
      const auto plan = plan_pipeline(c, processors, 100, options);
      INFO(processors << " processors, replicas " << options.max_replicas);
      REQUIRE_MESSAGE(plan.ok(), plan.partition.outcome.message);
      CHECK(plan.period() == 0);
      for (const auto& p : plan.compared) {
        INFO(p.name);
        CHECK(p.ok());
        // The activation of a batch is held while its forward and backward run, even in no time.
        CHECK(p.nca[0] >= 1);
        CHECK(p.peak_memory() >= 10 + 3);
        const auto report = check_pattern(c, p, {.capacity = 100});
        CHECK_MESSAGE(report.ok(), report.to_string());
      }
    }
  }
}

TEST_CASE("Processors beyond what a chain can use cost nothing: P is cut to L (L·R with replicas)") {
  CHECK(useful_workers(3, 1000) == 3);
  CHECK(useful_workers(3, 2) == 2);
  CHECK(useful_workers(3, 1000, 4) == 12);
  CHECK(useful_workers(3, std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max()) ==
        std::numeric_limits<std::size_t>::max());
  const chain c{{{"a", 1, 2, 10, 3}, {"b", 2, 1, 20, 4}, {"c", 1, 1, 5, 1}}};
  // Tables of P·L (or L·P·R) entries would not fit in memory for P = 2^40.
  const std::size_t huge = std::size_t{1} << 40;
  const auto straight = plan_pipeline(c, huge, unlimited_memory);
  REQUIRE_MESSAGE(straight.ok(), straight.partition.outcome.message);
  CHECK(straight.period() == doctest::Approx(plan_pipeline(c, 3, unlimited_memory).period()));
  const auto replicated = plan_pipeline(c, huge, unlimited_memory, {.max_replicas = 2});
  REQUIRE_MESSAGE(replicated.ok(), replicated.partition.outcome.message);
  CHECK(replicated.period() == doctest::Approx(plan_pipeline(c, 6, unlimited_memory, {.max_replicas = 2}).period()));
}

TEST_CASE("Memory of a huge stage saturates instead of wrapping, and unlimited memory holds it") {
  // Four stages of cost 2 at T = 2 are four 1F1B* groups: stage 0 holds 4 activations of 2^62
  // bytes, 2^64 in all.
  chain c;
  c.layers = {{"a", 1, 1, 1, byte_count{1} << 62}, {"b", 1, 1, 1, 0}, {"c", 1, 1, 1, 0}, {"d", 1, 1, 1, 0}};
  const auto found = optimal_contiguous_partition(c, 4);
  REQUIRE_MESSAGE(found.ok(), found.outcome.message);
  CHECK(found.period == 2);
  CHECK(found.pattern.memory[0] == unlimited_memory);
  const auto plan = plan_pipeline(c, 4, unlimited_memory);
  REQUIRE(plan.ok());
  CHECK(plan.compared[1].memory[0] == unlimited_memory);  // classic 1F1B holds 4 on stage 0 too
}
