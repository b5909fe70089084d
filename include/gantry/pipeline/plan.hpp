// Planning a pipeline in one call: the exact contiguous partition for P processors of memory M,
// then the chosen schedule on it (1F1B*, classic 1F1B or GPipe) beside the other two, so a user
// sees what each choice costs in period and memory (Euro-Par 2021). Used by `gantry pipeline`.
#pragma once

#include <gantry/io/units.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/gpipe.hpp>
#include <gantry/pipeline/one_f_one_b.hpp>
#include <gantry/pipeline/one_f_one_b_star.hpp>
#include <gantry/pipeline/partition.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gantry {

enum class pipeline_schedule { one_f_one_b_star, one_f_one_b, gpipe };

[[nodiscard]] constexpr const char* to_string(pipeline_schedule s) noexcept {
  switch (s) {
    case pipeline_schedule::one_f_one_b_star: return "1f1b*";
    case pipeline_schedule::one_f_one_b: return "1f1b";
    case pipeline_schedule::gpipe: return "gpipe";
  }
  return "unknown";
}

// "1f1b*", "1f1b" or "gpipe" (any case); throws invalid_input naming the text otherwise.
[[nodiscard]] inline pipeline_schedule parse_pipeline_schedule(std::string_view text) {
  for (const auto s : {pipeline_schedule::one_f_one_b_star, pipeline_schedule::one_f_one_b, pipeline_schedule::gpipe})
    if (detail::equals_ignoring_case(text, to_string(s))) return s;
  throw invalid_input("unknown pipeline schedule '" + std::string(text) + "' (expected 1f1b*, 1f1b or gpipe)");
}

struct pipeline_plan_options {
  pipeline_schedule schedule = pipeline_schedule::one_f_one_b_star;
  std::size_t micro_batches = 0;  // GPipe's m; 0 means one per processor
};

struct pipeline_plan {
  partition_result partition;              // exact partition and its 1F1B* period
  pipeline_pattern chosen;                 // the requested schedule on that partition
  std::vector<pipeline_pattern> compared;  // 1F1B*, 1F1B, GPipe on that partition, in that order
  byte_count capacity = unlimited_memory;

  [[nodiscard]] bool ok() const noexcept { return partition.ok(); }
};

// Partitions for 1F1B* (the schedule whose memory the partitioner knows exactly); the 1F1B*
// pattern is the smallest period that fits, classic 1F1B runs at T = max U and GPipe at its
// flush period. Patterns that do not fit M keep status ok and show it in their memory.
[[nodiscard]] inline pipeline_plan plan_pipeline(const chain& c, std::size_t processors, byte_count capacity,
                                                 pipeline_plan_options options = {}) {
  pipeline_plan plan;
  plan.capacity = capacity;
  plan.partition = optimal_contiguous_partition(c, processors, capacity);
  if (!plan.partition.ok()) return plan;
  const auto stages = contiguous_stages(c, plan.partition.partition);
  plan.compared.push_back(plan.partition.pattern);
  plan.compared.push_back(one_f_one_b(c, stages));
  plan.compared.push_back(gpipe(c, stages, {.micro_batches = options.micro_batches}));
  plan.chosen = plan.compared[static_cast<std::size_t>(options.schedule)];
  return plan;
}

// The plan in words: partition, then per schedule its period and NCA and memory per processor.
[[nodiscard]] inline std::string describe(const chain& c, const pipeline_plan& plan) {
  std::ostringstream out;
  if (!plan.ok()) {
    out << "no plan: " << plan.partition.message << "\n";
    return out.str();
  }
  const auto& part = plan.partition.partition;
  out << "partition into " << part.stage_count() << " stages (capacity " << format_bytes(plan.capacity)
      << " per processor):\n";
  for (std::size_t s = 0; s < part.stage_count(); ++s) {
    const auto end = part.end(s, c.size());
    seconds load = 0;
    for (auto l = part.first[s]; l < end; ++l) load += c.cost(l);
    out << "  processor " << s << ": layers " << part.first[s] << ".." << end - 1 << " ('" << c[part.first[s]].name
        << "'..'" << c[end - 1].name << "'), load " << format_seconds(load) << "\n";
  }
  for (const auto& p : plan.compared) {
    out << p.name << (p.name == plan.chosen.name ? " (chosen)" : "") << ": period " << format_seconds(p.period);
    if (p.batches_per_period > 1)
      out << " for " << p.batches_per_period << " batches, " << format_seconds(p.normalized_period()) << " per batch";
    out << "\n";
    for (std::size_t s = 0; s < p.stages.size(); ++s) {
      const auto& st = p.stages[s];
      if (st.link) continue;
      out << "  processor " << st.resource << ": NCA " << p.stage_nca[s] << ", memory "
          << format_bytes(p.memory[st.resource]) << (p.memory[st.resource] > plan.capacity ? " (over capacity)" : "")
          << "\n";
    }
  }
  return out.str();
}

}  // namespace gantry
