// Planning a pipeline in one call, as `gantry pipeline` does: partition, 1F1B* vs 1F1B vs GPipe.
#include <gantry/pipeline/plan.hpp>
#include <gantry/pipeline/unroll.hpp>

#include <doctest/doctest.h>

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
