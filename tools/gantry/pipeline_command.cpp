// `gantry pipeline`: plans pipelined model parallelism for a chain file, a training graph or a
// PipeDream profile (docs/pipeline.md) on P workers of memory M each, with links between stages and
// replicated stages when asked; prints the period, the stages by layer name and what 1F1B*, 1F1B
// and GPipe cost, as text or JSON, and writes an SVG of the chosen schedule's periodic pattern.

#include <gantry/core/units.hpp>
#include <gantry/io/json_chain.hpp>
#include <gantry/io/pipeline_svg.hpp>
#include <gantry/pipeline/order_search.hpp>
#include <gantry/pipeline/plan.hpp>
#include <gantry/pipeline/unroll.hpp>

#include "commands.hpp"
#include "files.hpp"
#include "inputs.hpp"
#include "options.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <charconv>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace gantry::cli {

// The largest counts `gantry pipeline` accepts; beyond them a run would not finish or fit in memory.
inline constexpr std::size_t max_pipeline_processors = std::size_t{1} << 20;  // as --devices
inline constexpr std::size_t max_micro_batches = 1024;    // GPipe's pattern and its check are O(m·L)
inline constexpr std::size_t max_random_orders = 10'000;  // each order is one more plan
// Entries of comm_aware_partition's tables (L·P·R, 20 bytes each): about 1.3 GB at most.
inline constexpr std::size_t max_partition_table = std::size_t{1} << 26;

struct pipeline_command_flags {
  std::string chain_path;
  std::string graph_path;  // alternative to chain_path: a training graph or PipeDream profile
  graph_reading reading;
  std::size_t layers = 0;         // with graph_path: how many layers (0: one per forward vertex)
  std::size_t random_orders = 5;  // with graph_path: random topological orders tried beside 3 fixed ones
  std::size_t processors = 0;
  std::string memory = "unlimited";
  std::string cluster_path;                   // processors, memory and link from a cluster file
  std::string bandwidth = default_bandwidth;  // unlimited with latency 0: free
  std::string latency = default_latency;
  std::string transfers = "link-stages";
  std::size_t max_replicas = 1;
  std::string schedule = "1f1b*";
  std::size_t micro_batches = 0;
  std::string svg_path;
  std::string output_format = "table";
  bool check = false;
};

// The plan as JSON: "period" in seconds (1F1B*, per batch), stages with their layers by name,
// replicas, per-batch load in seconds and memory per worker in bytes, links, and each schedule.
[[nodiscard]] inline nlohmann::ordered_json plan_json(const chain& c, const pipeline_plan& plan) {
  nlohmann::ordered_json out;
  out["format"] = "gantry.pipeline_plan";
  out["version"] = 1;
  out["status"] = to_string(plan.partition.outcome.code);
  if (!plan.ok()) {
    out["message"] = plan.partition.outcome.message;
    return out;
  }
  out["period"] = plan.period();
  out["schedule"] = plan.chosen.name;
  out["capacity"] =
      plan.capacity == unlimited_memory ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(plan.capacity);
  if (plan.comm.link) {
    out["bandwidth"] = plan.comm.link->bandwidth;
    out["latency"] = plan.comm.link->latency;
    out["transfers"] = to_string(plan.comm.overlap);
  }
  const auto& star = plan.compared.front();
  auto stages = nlohmann::ordered_json::array();
  auto links = nlohmann::ordered_json::array();
  std::size_t workers = 0;
  for (const auto& st : plan.stages) {
    if (st.link) {
      links.push_back(
          {{"after", c[st.end_layer - 1].name}, {"bytes", c.crossing_bytes(st.end_layer - 1)}, {"load", st.load()}});
      continue;
    }
    auto layers = nlohmann::ordered_json::array();
    for (auto l = st.first_layer; l < st.end_layer; ++l) layers.push_back(c[l].name);
    workers += st.replicas;
    stages.push_back({{"layers", std::move(layers)},
                      {"replicas", st.replicas},
                      {"load", st.load()},
                      {"forward", st.forward},
                      {"backward", st.backward},
                      {"memory_per_worker", star.memory[st.resource]},
                      {"nca", star.stage_nca[&st - plan.stages.data()]}});
  }
  out["workers"] = workers;
  out["stages"] = std::move(stages);
  out["links"] = std::move(links);
  auto patterns = nlohmann::ordered_json::array();
  for (const auto& p : plan.compared)
    patterns.push_back({{"name", p.name},
                        {"period", p.period},
                        {"batches_per_period", p.batches_per_period},
                        {"period_per_batch", p.normalized_period()},
                        {"memory_per_worker", p.memory}});
  out["patterns"] = std::move(patterns);
  return out;
}

// W = factor × parameter bytes for each layer, refused with the option and the layer named when a
// product or the chain's total reaches max_chain_bytes (a factor of 1e300 would otherwise wrap).
inline void scale_weights(chain& c, double factor, const std::string& path) {
  for (auto& layer : c.layers) {
    layer.parameters = layer.weights;
    const double scaled = std::round(static_cast<double>(layer.weights) * factor);
    if (!(scaled < static_cast<double>(max_chain_bytes))) {
      std::ostringstream out;
      out << "--weight-factor " << factor << ": layer '" << layer.name << "' of " << path << " would hold "
          << layer.weights << " parameter bytes x " << factor << " = 2^63 bytes (8 EiB) or more";
      throw invalid_input(out.str());
    }
    layer.weights = static_cast<byte_count>(scaled);
  }
  if (const std::string problem = chain_problem(c); !problem.empty()) {
    std::ostringstream out;
    out << path;
    if (factor != 1.0) out << " with --weight-factor " << factor;
    out << ": " << problem;
    throw invalid_input(out.str());
  }
}

// Runs the command; returns the exit status (0 ok, 1 no plan fits or an output cannot be written,
// 2 bad input). Writes the report to `out` and problems to `err`; the SVG is written (atomically)
// before the report is printed, so a report never claims success for a run whose output failed.
inline int run_pipeline_command(const pipeline_command_flags& flags, std::ostream& out, std::ostream& err) {
  try {
    if (flags.chain_path.empty() == flags.graph_path.empty())
      throw invalid_input("give either --chain FILE or --graph FILE");
    if (flags.output_format != "table" && flags.output_format != "json")
      throw invalid_input("--format must be table or json, got '" + flags.output_format + "'");
    if (!(flags.reading.weight_factor >= 0) || !std::isfinite(flags.reading.weight_factor))
      throw invalid_input("--weight-factor must be a finite number >= 0");
    // The options' validators hold these for the tool; the checks keep a direct call as safe.
    if (flags.processors > max_pipeline_processors)
      throw invalid_input("--devices: expected a whole number from 1 to " + std::to_string(max_pipeline_processors) +
                          ", got '" + std::to_string(flags.processors) + "'");
    if (flags.micro_batches > max_micro_batches)
      throw invalid_input("--micro-batches: expected a whole number from 0 to " + std::to_string(max_micro_batches) +
                          ", got '" + std::to_string(flags.micro_batches) + "'");
    if (flags.random_orders > max_random_orders)
      throw invalid_input("--random-orders: expected a whole number from 0 to " + std::to_string(max_random_orders) +
                          ", got '" + std::to_string(flags.random_orders) + "'");
    pipeline_plan_options options{.schedule = parse_pipeline_schedule(flags.schedule),
                                  .micro_batches = flags.micro_batches,
                                  .max_replicas = std::max<std::size_t>(1, flags.max_replicas)};
    std::size_t processors = flags.processors;
    byte_count capacity = size_option("--memory", flags.memory, true);
    if (!flags.cluster_path.empty()) {
      const cluster devices = read_cluster_file(flags.cluster_path, {});
      processors = devices.device_count();
      if (devices.device_count() > 0) capacity = devices.capacity(0);
      options.comm.link = devices.default_link();
    }
    if (processors == 0) throw invalid_input("give --devices N (N >= 1) or --cluster FILE");
    if (flags.cluster_path.empty()) {
      // The same default link as place, compare and learn; unlimited bandwidth without latency is free.
      const link_model link{duration_option("--latency", flags.latency),
                            rate_option("--bandwidth", flags.bandwidth, true)};
      if (std::isfinite(link.bandwidth) || link.latency > 0) options.comm.link = link;
    }
    options.comm.overlap = parse_enum_name<transfer_overlap>(flags.transfers, "--transfers");
    // With links or replicas the partition's tables hold L·P·R entries, P and R cut to what helps.
    const auto check_table = [&](const chain& x) {
      if (!options.comm.link && options.max_replicas <= 1) return;
      const std::size_t workers = useful_workers(x.size(), processors, options.max_replicas);
      const std::size_t replicas = std::min(options.max_replicas, workers);
      if (x.size() > 0 && workers * replicas > max_partition_table / x.size())
        throw invalid_input("--max-replicas " + std::to_string(options.max_replicas) + " on " +
                            std::to_string(workers) + " workers for " + std::to_string(x.size()) +
                            " layers needs a table of more than " + std::to_string(max_partition_table) +
                            " entries (layers x workers x replicas); "
                            "lower --max-replicas or --devices");
    };
    // A long search says how far it is, once a second after the first two.
    const auto started = std::chrono::steady_clock::now();
    auto said = started;
    options.progress = [&](std::size_t done, std::size_t rows) {
      const auto now = std::chrono::steady_clock::now();
      if (now - started < std::chrono::seconds(2) || now - said < std::chrono::seconds(1)) return;
      said = now;
      const double share = static_cast<double>(done) / static_cast<double>(rows);
      err << "gantry pipeline: partition search, " << done << " of " << rows << " layers done, about "
          << static_cast<int>(100 * share * share) << "% of the work, "
          << static_cast<int>(std::chrono::duration<double>(now - started).count()) << " s\n";
    };
    const auto plan_chain = [&](const chain& x) {
      check_table(x);
      return plan_pipeline(x, processors, capacity, options);
    };

    chain c;
    pipeline_plan plan;
    std::string source;
    if (!flags.chain_path.empty()) {
      c = read_chain(flags.chain_path);
      if (c.size() == 0) throw invalid_input(flags.chain_path + ": the chain has no layers");
      plan = plan_chain(c);
      source = std::to_string(c.size()) + " layers";
    } else {
      // Weights are read as parameters, then scaled, so an all-reduce moves the gradients only.
      graph_reading reading = flags.reading;
      const double factor = reading.weight_factor;
      reading.weight_factor = 1.0;
      const graph g = read_any_graph_file(flags.graph_path, reading).graph;
      const auto scale = [&](chain& x) { scale_weights(x, factor, flags.graph_path); };
      if (flags.layers > 0) {
        c = chain_from_graph(g, {.layers = flags.layers});
        if (c.size() == 0) throw invalid_input(flags.graph_path + ": the graph has no forward vertices");
        scale(c);
        plan = plan_chain(c);
        source = std::to_string(c.size()) + " layers";
      } else {
        // Every cut of the forward vertices (their ideals) is searched for the plan's own target,
        // beside the fixed and random orders; where that search is exact it alone is planned.
        auto [found, best] = best_over_orders(g, plan_chain, scale,
                                              {.random_orders = flags.random_orders,
                                               .cuts = cut_target{.workers = processors,
                                                                  .capacity = capacity,
                                                                  .comm = options.comm,
                                                                  .max_replicas = options.max_replicas}});
        c = std::move(found.layers);
        plan = std::move(best);
        if (c.size() == 0) throw invalid_input(flags.graph_path + ": the graph has no forward vertices");
        source = std::to_string(c.size()) + " layers (" +
                 (found.exact ? "the best cuts over every topological order, " + std::to_string(found.cuts->ideals) +
                                    " ideals searched"
                              : "best of " + std::to_string(found.orders_tried) + " topological orders") +
                 ")";
      }
    }
    source += " on " + std::to_string(processors) + " workers";
    if (const std::size_t useful = useful_workers(c.size(), processors, options.max_replicas); useful < processors)
      source +=
          " (planned on " + std::to_string(useful) + ": at most one stage per layer" +
          (options.max_replicas > 1 ? ", each on at most " + std::to_string(options.max_replicas) + " workers)" : ")");

    // Everything that can fail runs before the report: the check, then the SVG.
    std::string checks;
    bool valid = true;
    if (plan.ok() && flags.check)
      for (const auto& p : plan.compared) {
        const auto report = check_pattern(c, p);
        checks += "check " + p.name + ": " + (report.ok() ? "valid" : "INVALID") + "\n";
        if (!report.ok()) {
          checks += report.to_string();
          valid = false;
          break;
        }
      }
    const std::string& svg_path = flags.svg_path;
    if (plan.ok() && valid && !svg_path.empty()) write_text_file(svg_path, pattern_svg(c, plan.chosen));

    auto& notes = flags.output_format == "json" ? err : out;
    if (flags.output_format == "json") {
      auto report = plan_json(c, plan);
      report["processors"] = processors;
      report["processors_planned"] = useful_workers(c.size(), processors, options.max_replicas);
      if (!valid) report["status"] = "invalid";
      out << report.dump(2) << "\n";
    } else {
      out << source << "\n" << describe(c, plan);
    }
    if (!plan.ok()) return 1;
    notes << checks;
    if (!valid) return 1;
    if (!svg_path.empty()) notes << "pattern of " << plan.chosen.name << " written to " << svg_path << "\n";
    return 0;
  } catch (const std::invalid_argument& e) {
    err << "gantry pipeline: " << e.what() << "\n";
    return 2;
  } catch (const parse_error& e) {
    err << "gantry pipeline: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "gantry pipeline: " << e.what() << "\n";
    return 1;
  }
}

void register_pipeline_command(CLI::App& app) {
  auto flags = std::make_shared<pipeline_command_flags>();
  auto* command = app.add_subcommand("pipeline",
                                     "plan pipelined model parallelism for a chain of layers: partition, "
                                     "replicas, 1F1B*/1F1B/GPipe period, NCA and memory per worker");
  auto* chain_option =
      command->add_option("--chain,-c", flags->chain_path, "chain file (gantry.chain JSON, see docs/pipeline.md)")
          ->check(CLI::ExistingFile);
  auto* graph_option = command
                           ->add_option("--graph,-g", flags->graph_path,
                                        "or a training graph (.json/.json.gz) or a PipeDream graph.txt profile")
                           ->check(CLI::ExistingFile);
  chain_option->excludes(graph_option);
  add_graph_reading_options(*command, flags->reading);
  command
      ->add_option("--layers", flags->layers,
                   "with --graph: number of layers (default: one per forward vertex, "
                   "searching several topological orders)")
      ->needs(graph_option);
  command
      ->add_option("--random-orders", flags->random_orders,
                   "with --graph: random topological orders tried beside Kahn's, two depth-first ones and the "
                   "best cuts over every order (each is one more plan; none when the cut search is exact)")
      ->capture_default_str()
      ->check(whole_number_between<std::size_t>(0, max_random_orders));
  auto* cluster_option = command->add_option("--cluster", flags->cluster_path, "cluster file: P, M and the link")
                             ->check(CLI::ExistingFile);
  command
      ->add_option("--devices,-d,--processors", flags->processors,
                   "without --cluster: number of workers P; a plan uses at most one stage per layer, each on at "
                   "most --max-replicas workers, and is searched over no more (the report says so when P was cut)")
      ->check(whole_number_between<std::size_t>(1, max_pipeline_processors))
      ->excludes(cluster_option);
  command->add_option("--memory,-m", flags->memory, "without --cluster: memory M of each worker, e.g. 16GiB")
      ->capture_default_str()
      ->excludes(cluster_option);
  command
      ->add_option("--bandwidth", flags->bandwidth,
                   "without --cluster: link bandwidth between stages, e.g. 1GB/s; "
                   "'unlimited' with --latency 0 makes communication free")
      ->capture_default_str()
      ->excludes(cluster_option);
  command->add_option("--latency", flags->latency, "without --cluster: link latency, e.g. 10us")
      ->capture_default_str()
      ->excludes(cluster_option);
  command
      ->add_option("--transfers", flags->transfers,
                   "link-stages (transfers overlap compute, the default) or on-processors (they stall both ends)")
      ->check(one_of(enum_name_list<transfer_overlap>()))
      ->capture_default_str();
  command
      ->add_option("--max-replicas", flags->max_replicas,
                   "workers one stage may run on (data parallelism inside the pipeline); 1: straight pipeline. "
                   "With links or replicas the search takes O(L^2 P R) time for L layers, P workers, R replicas")
      ->capture_default_str()
      ->check(whole_number_between<std::size_t>(1, max_pipeline_processors));
  command
      ->add_option("--schedule,-s", flags->schedule,
                   enum_choices<pipeline_schedule>() + ": the pattern drawn in the SVG")
      ->capture_default_str();
  command
      ->add_option("--micro-batches", flags->micro_batches,
                   "GPipe's micro-batches m per mini-batch (default: one per stage); its pattern has O(m·P) "
                   "operations and --validate unrolls 4m batches")
      ->check(whole_number_between<std::size_t>(0, max_micro_batches));
  command->add_option("--svg", flags->svg_path, "write an SVG of the chosen schedule's pattern here");
  command->add_option("--format", flags->output_format, "table or json")
      ->check(one_of({"table", "json"}))
      ->capture_default_str();
  command->add_flag("--validate", flags->check,
                    "unroll every pattern over several periods and check it with validate()");
  command->callback([flags] {
    const int code = run_pipeline_command(*flags, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace gantry::cli
