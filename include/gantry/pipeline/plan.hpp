// Planning a pipeline in one call: the exact contiguous partition for P processors of memory M
// (with communication and replicated stages when asked), then the chosen schedule on it (1F1B*,
// classic 1F1B or GPipe) beside the other two, so a user sees what each choice costs in period and
// memory (Euro-Par 2021). Used by `gantry pipeline`.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/comm_partition.hpp>
#include <gantry/pipeline/gpipe.hpp>
#include <gantry/pipeline/one_f_one_b.hpp>
#include <gantry/pipeline/one_f_one_b_star.hpp>
#include <gantry/pipeline/partition.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gantry {

enum class pipeline_schedule { one_f_one_b_star, one_f_one_b, gpipe };

inline constexpr enum_name<pipeline_schedule> pipeline_schedule_names[] = {
    {pipeline_schedule::one_f_one_b_star, "1f1b*"},
    {pipeline_schedule::one_f_one_b, "1f1b"},
    {pipeline_schedule::gpipe, "gpipe"}};
[[nodiscard]] constexpr std::span<const enum_name<pipeline_schedule>> enum_names(pipeline_schedule) noexcept {
  return pipeline_schedule_names;
}
[[nodiscard]] constexpr const char* to_string(pipeline_schedule s) noexcept { return name_of(s); }

// "1f1b*", "1f1b" or "gpipe" (any case); throws invalid_input naming the text otherwise.
[[nodiscard]] inline pipeline_schedule parse_pipeline_schedule(std::string_view text) {
  return parse_enum_name<pipeline_schedule>(text, "pipeline schedule");
}

struct pipeline_plan_options {
  pipeline_schedule schedule = pipeline_schedule::one_f_one_b_star;
  std::size_t micro_batches = 0;  // GPipe's m; 0 means one per processor
  pipeline_comm comm{};           // links between stages; none: communication is free
  std::size_t max_replicas = 1;   // workers one stage may run on; 1: a straight pipeline
  // With links or replicas: comm_aware_partition's progress, (rows done, rows).
  std::function<void(std::size_t, std::size_t)> progress{};
};

struct pipeline_plan {
  partition_result partition;              // exact partition and its 1F1B* period
  std::vector<std::uint32_t> replicas;     // workers per stage
  std::vector<stage> stages;               // per-batch stages, links included, that the patterns run
  pipeline_pattern chosen;                 // the requested schedule on that partition
  std::vector<pipeline_pattern> compared;  // 1F1B*, 1F1B, GPipe on that partition, in that order
  byte_count capacity = unlimited_memory;
  pipeline_comm comm;

  [[nodiscard]] bool ok() const noexcept { return partition.ok(); }
  [[nodiscard]] seconds period() const noexcept { return partition.period; }
};

// Partitions for 1F1B* (the schedule whose memory the partitioner knows exactly); the 1F1B*
// pattern is the smallest period that fits, classic 1F1B runs at T = max U and GPipe at its
// flush period. Patterns that do not fit M keep status ok and show it in their memory.
[[nodiscard]] inline pipeline_plan plan_pipeline(const chain& c, std::size_t processors, byte_count capacity,
                                                 pipeline_plan_options options = {}) {
  pipeline_plan plan;
  plan.capacity = capacity;
  plan.comm = options.comm;
  if (!options.comm.link && options.max_replicas <= 1) {
    // No communication and no replication: the exact partition under 1F1B*'s own memory.
    plan.partition = optimal_contiguous_partition(c, processors, capacity);
    if (!plan.partition.ok()) return plan;
    plan.replicas.assign(plan.partition.partition.stage_count(), 1);
  } else {
    auto found = comm_aware_partition(
        c, processors, capacity,
        {.comm = options.comm, .max_replicas = options.max_replicas, .progress = options.progress});
    plan.partition.outcome.code = found.outcome.code;
    plan.partition.outcome.message = found.outcome.message;
    if (!found.ok()) return plan;
    plan.partition.partition = found.partition;
    plan.replicas = found.replicas;
    plan.partition.pattern = smallest_period_one_f_one_b_star(c, found.stages, capacity);
    plan.partition.period = plan.partition.pattern.period;
    if (!plan.partition.pattern.ok()) {
      plan.partition.outcome.code = plan.partition.pattern.outcome.code;
      plan.partition.outcome.message = plan.partition.pattern.outcome.message;
      return plan;
    }
  }
  const auto stages = pipeline_stages(c, plan.partition.partition, plan.replicas, options.comm);
  plan.stages = stages;
  plan.compared.push_back(plan.partition.pattern);
  plan.compared.push_back(one_f_one_b(c, stages));
  plan.compared.push_back(gpipe(c, stages, {.micro_batches = options.micro_batches}));
  plan.chosen = plan.compared[static_cast<std::size_t>(options.schedule)];
  return plan;
}

namespace detail {

// Seconds with every digit a double holds, beside the readable form.
inline std::string exact_seconds(seconds t) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g s", t);
  return format_seconds(t) + " (" + text + ")";
}

// The layers of a stage by name, so a user sees what runs where, not positions in an order.
inline std::string layer_names(const chain& c, const stage& st) {
  std::string names;
  for (auto l = st.first_layer; l < st.end_layer; ++l) names += (names.empty() ? "" : ", ") + c[l].name;
  return names;
}

}  // namespace detail

// The plan in words: the period, then the stages (layers by name, workers, per-batch load,
// memory per worker), then per schedule its period and NCA and memory per worker.
[[nodiscard]] inline std::string describe(const chain& c, const pipeline_plan& plan) {
  std::ostringstream out;
  if (!plan.ok()) {
    out << "no plan: " << plan.partition.outcome.message << "\n";
    return out.str();
  }
  const auto& part = plan.partition.partition;
  std::size_t workers = 0;
  for (const auto r : plan.replicas) workers += r;
  out << "period " << detail::exact_seconds(plan.period()) << " per batch (1F1B*)\n";
  out << "partition into " << part.stage_count() << " stages on " << workers << " workers (capacity "
      << format_bytes(plan.capacity) << " per worker";
  if (plan.comm.link) {
    const double bandwidth = plan.comm.link->bandwidth;
    out << "; links "
        << (std::isfinite(bandwidth) ? format_bytes(static_cast<byte_count>(std::min(bandwidth, 1e18))) + "/s"
                                     : std::string("without bandwidth limit"))
        << ", latency " << format_seconds(plan.comm.link->latency) << ", transfers " << to_string(plan.comm.overlap);
  } else {
    out << "; communication free";
  }
  out << "):\n";
  const auto& star = plan.compared.front();
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& st = plan.stages[i];
    if (st.link) {
      out << "  link after '" << c[st.end_layer - 1].name << "': " << format_bytes(c.crossing_bytes(st.end_layer - 1))
          << " each way, load " << detail::exact_seconds(st.load()) << " per batch\n";
      continue;
    }
    seconds compute = 0;
    for (auto l = st.first_layer; l < st.end_layer; ++l) compute += c.cost(l);
    out << "  stage " << st.resource << " on " << st.replicas << (st.replicas == 1 ? " worker" : " workers")
        << ": load " << detail::exact_seconds(st.load()) << " per batch (compute " << format_seconds(compute)
        << "), memory " << format_bytes(star.memory[st.resource]) << " per worker"
        << (star.memory[st.resource] > plan.capacity ? " (over capacity)" : "") << "\n"
        << "    layers: " << detail::layer_names(c, st) << "\n";
  }
  for (const auto& p : plan.compared) {
    out << p.name << (p.name == plan.chosen.name ? " (chosen)" : "") << ": period " << detail::exact_seconds(p.period);
    if (p.batches_per_period > 1)
      out << " for " << p.batches_per_period << " batches, " << format_seconds(p.normalized_period()) << " per batch";
    out << "\n";
    for (std::size_t s = 0; s < p.stages.size(); ++s) {
      const auto& st = p.stages[s];
      if (st.link) continue;
      out << "  stage " << st.resource << ": NCA " << p.stage_nca[s] << ", memory "
          << format_bytes(p.memory[st.resource]) << " per worker"
          << (p.memory[st.resource] > plan.capacity ? " (over capacity)" : "") << "\n";
    }
  }
  return out.str();
}

}  // namespace gantry
