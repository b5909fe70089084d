// How the tool's commands read their inputs: a graph file (gantry JSON or a PipeDream profile), the
// limits on input files, and a cluster from a file or from flags that describe identical devices.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/io/documents.hpp>
#include <gantry/io/limits.hpp>
#include <gantry/model/cluster.hpp>

#include "options.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace gantry::cli {

// The most devices a cluster given by flags may have: beyond it a run would not finish or fit in memory.
inline constexpr std::size_t max_devices = std::size_t{1} << 20;

// How a graph file is read: "auto" recognises PipeDream's graph.txt by content, else gantry JSON.
struct graph_reading {
  std::string format = "auto";   // auto, gantry or pipedream
  bool keep_input_time = false;  // PipeDream: keep the Input node's data-loading time
  double weight_factor = 1.0;    // PipeDream: persistent bytes = factor × parameter_size
};

// Reads a gantry graph file or a PipeDream profile; throws parse_error naming the file and line.
// Defined in files.cpp, with every other file the tool reads or writes (files.hpp).
[[nodiscard]] graph_file read_any_graph_file(const std::string& path, const graph_reading& how = {},
                                             const read_limits& limits = {});

// The options that say how `--graph` is read, for every command that reads a graph.
inline void add_graph_reading_options(CLI::App& command, graph_reading& reading) {
  command.add_option("--graph-format", reading.format, "auto (by content), gantry or pipedream")
      ->check(one_of({"auto", "gantry", "pipedream"}))
      ->capture_default_str();
  command.add_flag("--keep-input-time", reading.keep_input_time,
                   "PipeDream: keep the Input node's time (data loading; zeroed by default, as PipeDream does)");
  command
      .add_option("--weight-factor", reading.weight_factor,
                  "PipeDream: memory per parameter byte (1 weights only, 2 +gradients, 3 +SGD momentum, 4 Adam)")
      ->capture_default_str()
      ->check(non_negative_number());
}

// Limits on input files (--max-inflated-size).
struct input_flags {
  std::string max_inflated_size = "512MiB";

  void add_to(CLI::App& app) {
    app.add_option("--max-inflated-size", max_inflated_size,
                   "refuse gzip input that inflates to more than this (a guard against decompression bombs)")
        ->capture_default_str();
  }
  [[nodiscard]] read_limits make() const {
    read_limits limits;
    limits.max_inflated_bytes =
        static_cast<std::size_t>(cli::size_option("--max-inflated-size", max_inflated_size, false));
    return limits;
  }
};

struct cluster_flags {
  std::string cluster_file;
  std::size_t devices = 0;
  std::string memory = "unlimited";
  std::string bandwidth = cli::default_bandwidth;
  std::string latency = cli::default_latency;
  std::string comm = "parallel";

  // A cluster file, or the flags that describe identical devices: never both (a file's devices,
  // memories and links would silently win over flags, or the other way round).
  void add_to(CLI::App& app) {
    auto* file = app.add_option("--cluster", cluster_file, "cluster description (JSON, see docs/format.md)")
                     ->check(CLI::ExistingFile);
    app.add_option("--devices,-d", devices, "without --cluster: number of identical devices")
        ->check(whole_number_between<std::size_t>(1, max_devices))
        ->excludes(file);
    app.add_option("--memory,-m", memory, "without --cluster: memory per device, e.g. 8GiB, 512MiB, or 'unlimited'")
        ->capture_default_str()
        ->excludes(file);
    app.add_option("--bandwidth", bandwidth,
                   "without --cluster: link bandwidth between any two devices, e.g. 12GB/s, or 'unlimited'")
        ->capture_default_str()
        ->excludes(file);
    app.add_option("--latency", latency, "without --cluster: link latency, e.g. 10us")
        ->capture_default_str()
        ->excludes(file);
    app.add_option("--comm", comm,
                   "without --cluster: transfers: parallel (any number at once), sequential (one per "
                   "device), duplex")
        ->check(one_of(enum_name_list<comm_mode>()))
        ->capture_default_str()
        ->excludes(file);
  }

  // The cluster file, read (files.cpp), or identical devices from the flags.
  [[nodiscard]] cluster make(const read_limits& limits) const;
};

}  // namespace gantry::cli
