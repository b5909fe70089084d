// `gantry workload`: writes one of DOPPLER's four workloads (workloads/doppler.hpp) as a graph
// file, so that every command can take it: place, compare, learn, and execute with real work
// (`--kernel work` runs its products and element-wise ops with Eigen).
//   gantry workload chainmm --dimension 1024 --out chainmm.json
//   gantry workload llama-block --sequence 512 --hidden 1024 --heads 8 --ffn-hidden 2752 --out block.json
// and the four graphs DOPPLER published, node for node (workloads/doppler_published.hpp):
//   gantry workload published block --out block.json

#include "commands.hpp"
#include "options.hpp"

#include <gantry/core/units.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/workloads/doppler.hpp>
#include <gantry/workloads/doppler_published.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace gantry::cli {

struct workload_flags {
  std::string out;
  double flops_per_second = 1e13;
  std::string op_overhead = "0s";
  std::uint64_t max_graph_size = default_max_workload_size;
  chain_mm_options chain{};
  ffnn_options ffnn{};
  llama_layer_options llama{};
  std::string published = "chain_mm";
  double cost_per_second = 1e10;
};

// The summary line every workload prints; writes the graph first when --out is given.
// `work_unit` names what the vertices' flops count (FLOPs, or the published files' cost unit).
inline int write_workload(const std::string& name, const graph& g, const std::string& path, const char* work_unit,
                          const std::string& rate, std::ostream& out) {
  double flops = 0;
  seconds work = 0;
  for (const auto& v : g.vertices()) flops += v.flops, work += v.compute;
  if (!path.empty()) write_graph(path, g);
  out << name << ": " << g.vertex_count() << " vertices, " << g.edge_count() << " edges, " << flops << ' ' << work_unit
      << ", " << format_seconds(work) << " of compute at " << rate
      << (path.empty() ? std::string() : ", written to " + path) << "\n";
  return 0;
}

inline int run_workload_command(const std::string& name, const workload_flags& flags, std::ostream& out) {
  if (!(flags.flops_per_second > 0) || !std::isfinite(flags.flops_per_second))
    throw invalid_input("--flops-per-second must be a finite number > 0");
  const workload_device device{.flops_per_second = flags.flops_per_second,
                               .op_overhead = duration_option("--op-overhead", flags.op_overhead)};
  graph g;
  if (name == "chainmm") {
    auto o = flags.chain;
    o.device = device;
    o.max_graph_size = flags.max_graph_size;
    g = chain_mm(o);
  } else if (name == "ffnn") {
    auto o = flags.ffnn;
    o.device = device;
    o.max_graph_size = flags.max_graph_size;
    g = ffnn(o);
  } else if (name == "llama-block") {
    auto o = flags.llama.block;
    o.device = device;
    o.max_graph_size = flags.max_graph_size;
    g = llama_block(o);
  } else {
    auto o = flags.llama;
    o.block.device = device;
    o.block.max_graph_size = flags.max_graph_size;
    g = llama_layer(o);
  }
  std::ostringstream rate;
  rate << flags.flops_per_second << " FLOP/s";
  return write_workload(name, g, flags.out, "FLOPs", rate.str(), out);
}

inline int run_published_command(const workload_flags& flags, std::ostream& out) {
  const auto which = parse_enum<doppler_graph>(flags.published);
  if (!which)
    throw invalid_input("unknown published graph '" + flags.published + "': " + enum_choices<doppler_graph>());
  const graph g = doppler_published(*which, {.cost_per_second = flags.cost_per_second});
  std::ostringstream rate;
  rate << flags.cost_per_second << " cost/s";
  return write_workload(std::string("published ") + to_string(*which), g, flags.out, "cost", rate.str(), out);
}

void register_workload_command(CLI::App& app) {
  auto flags = std::make_shared<workload_flags>();
  auto* command = app.add_subcommand("workload",
                                     "write one of DOPPLER's workloads (chainmm, ffnn, llama-block, "
                                     "llama-layer) as a graph file");
  command->require_subcommand(1);
  // Every workload's own subcommand, sharing the output options and the one callback.
  const auto common = [flags](CLI::App& sub) {
    sub.add_option("--out,-o", flags->out, "write the graph here (.json, or .json.gz)");
    sub.add_option("--flops-per-second", flags->flops_per_second, "the device rate: compute = FLOPs / rate")
        ->check(positive_number())
        ->capture_default_str();
    sub.add_option("--op-overhead", flags->op_overhead, "added to every operation's compute time, e.g. 5us")
        ->capture_default_str();
    sub.add_option("--max-graph-size", flags->max_graph_size,
                   "refuse options that make more vertices plus edges than this (checked before building)")
        ->check(positive_whole(flags->max_graph_size))
        ->capture_default_str();
    sub.callback([flags, &sub] {
      run_in_callback("workload", [&] { return run_workload_command(sub.get_name(), *flags, std::cout); });
    });
  };
  auto* chain = command->add_subcommand("chainmm", "(A x B) + (C x (D x E)), n x n matrices in p x p blocks");
  chain->add_option("--dimension", flags->chain.dimension, "n")
      ->check(positive_whole(flags->chain.dimension))
      ->capture_default_str();
  chain->add_option("--blocks", flags->chain.blocks_per_side, "p: blocks per side")
      ->check(positive_whole(flags->chain.blocks_per_side))
      ->capture_default_str();
  chain->add_option("--inner-split", flags->chain.inner_split, "q: each product's inner blocks in q groups (divides p)")
      ->check(positive_whole(flags->chain.inner_split))
      ->capture_default_str();
  common(*chain);
  auto* ffnn_command = command->add_subcommand("ffnn", "softmax(relu(X W1 + b1) W2 + b2), sharded by batch and hidden");
  ffnn_command->add_option("--batch", flags->ffnn.batch)
      ->check(positive_whole(flags->ffnn.batch))
      ->capture_default_str();
  ffnn_command->add_option("--features", flags->ffnn.features)
      ->check(positive_whole(flags->ffnn.features))
      ->capture_default_str();
  ffnn_command->add_option("--hidden", flags->ffnn.hidden)
      ->check(positive_whole(flags->ffnn.hidden))
      ->capture_default_str();
  ffnn_command->add_option("--classes", flags->ffnn.classes)
      ->check(positive_whole(flags->ffnn.classes))
      ->capture_default_str();
  ffnn_command->add_option("--batch-split", flags->ffnn.batch_split)
      ->check(positive_whole(flags->ffnn.batch_split))
      ->capture_default_str();
  ffnn_command->add_option("--hidden-split", flags->ffnn.hidden_split)
      ->check(positive_whole(flags->ffnn.hidden_split))
      ->capture_default_str();
  common(*ffnn_command);
  for (const char* which : {"llama-block", "llama-layer"}) {
    const bool layer = std::string(which) == "llama-layer";
    auto* sub =
        command->add_subcommand(which, layer ? "a Llama layer: embedding, block, output projection and softmax"
                                             : "a Llama block: attention and SwiGLU FFN, sharded Megatron style");
    auto& b = flags->llama.block;
    sub->add_option("--batch", b.batch)->check(positive_whole(b.batch))->capture_default_str();
    sub->add_option("--sequence", b.sequence)->check(positive_whole(b.sequence))->capture_default_str();
    sub->add_option("--hidden", b.hidden)->check(positive_whole(b.hidden))->capture_default_str();
    sub->add_option("--heads", b.heads)->check(positive_whole(b.heads))->capture_default_str();
    sub->add_option("--ffn-hidden", b.ffn_hidden)->check(positive_whole(b.ffn_hidden))->capture_default_str();
    sub->add_option("--shards", b.shards)->check(positive_whole(b.shards))->capture_default_str();
    if (layer)
      sub->add_option("--vocabulary", flags->llama.vocabulary)
          ->check(positive_whole(flags->llama.vocabulary))
          ->capture_default_str();
    common(*sub);
  }
  auto* published = command->add_subcommand(
      "published", "one of the compute graphs DOPPLER published, node for node: " + enum_choices<doppler_graph>());
  published->add_option("graph", flags->published, "which graph")
      ->required()
      ->check(one_of(enum_name_list<doppler_graph>()));
  published->add_option("--cost-per-second", flags->cost_per_second, "compute = the file's cost / this")
      ->check(positive_number())
      ->capture_default_str();
  published->add_option("--out,-o", flags->out, "write the graph here (.json, or .json.gz)");
  published->callback(
      [flags] { run_in_callback("workload", [&] { return run_published_command(*flags, std::cout); }); });
}

}  // namespace gantry::cli
