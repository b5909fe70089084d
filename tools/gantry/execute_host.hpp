// What the two backends of `gantry execute` that run on this host's cores share (execute_cpu.cpp,
// execute_starpu.cpp): the machine calibrated, the cluster to run on, and for --kernel work the
// graph's own operations, profiled here first so that the placers and the simulator see them.
#pragma once

#include "execute_flow.hpp"

#include <gantry/exec/calibrate.hpp>
#if GANTRY_CLI_HAS_LEARN
#include "eigen_work.hpp"
#endif

#include <memory>
#include <optional>
#include <ostream>

namespace gantry::cli {

struct host_machine {
  cpu_calibration calibration;  // the busy loop's rate, the launch round trip, the memcpy link
  cluster devices;              // --cluster's, or this calibration's with --devices, --memory, --comm
};

// Calibrates the CPU backend here (always: the busy loop's rate and the launch round trip are this
// machine's) and takes the cluster from --cluster or from this calibration.
[[nodiscard]] inline host_machine calibrated_host(const execute_flags& flags, std::optional<cluster> given) {
  host_machine out{calibrate_cpu({.devices = std::max<std::size_t>(flags.devices, 2)}), {}};
  if (given) {
    out.devices = std::move(*given);
  } else {
    const byte_count capacity = size_option("--memory", flags.memory, true);
    out.devices = calibrated_cluster(out.calibration, flags.devices, capacity, comm_from(flags.comm));
  }
  return out;
}

#if GANTRY_CLI_HAS_LEARN
// --kernel work: the graph's operations on `devices` devices, with the graph's compute times
// replaced by theirs, profiled here (said on `text`). Null for any other kernel.
[[nodiscard]] inline std::unique_ptr<eigen_work> profiled_work(const execute_flags& flags, graph_file& file,
                                                               std::size_t devices, std::ostream& text) {
  if (flags.kernel != "work") return nullptr;
  std::size_t shaped = 0;
  auto ops = work_operations(flags, file.graph, shaped);
  auto operations = std::make_unique<eigen_work>(std::move(ops), devices);
  file.graph = with_profiled_times(file.graph, operations->profile(file.graph));
  seconds work = 0;
  for (const auto& v : file.graph.vertices()) work += v.compute;
  text << "profile       " << shaped << " of " << file.graph.vertex_count()
       << " vertices run real work, timed here: " << format_seconds(work) << " of compute in all\n";
  return operations;
}
#endif

}  // namespace gantry::cli
