// `gantry execute --backend cuda` (gantry-cuda only): devices are SM partitions of one GPU (green
// contexts) or whole GPUs (cuda_tool.hpp), the work spin kernels or cuBLAS products and element-wise
// kernels.
#include "execute_flow.hpp"

#include <memory>

namespace gantry::cli {

int run_cuda_execute(const execute_flags& flags, const backend_choice& b, std::optional<cluster> given,
                     graph_file& file, std::ostream& out, std::ostream& err) {
  const bool json = flags.output_format == "json";
  std::ostream& text = json ? err : out;
  if (flags.kernel != "auto" && flags.kernel != "spin" && flags.kernel != "work")
    throw invalid_input("--kernel " + flags.kernel +
                        " is a CPU backend's kernel; with --backend cuda: spin (the "
                        "default) or work");
  // Real work: products with cuBLAS and element-wise kernels, profiled on device 0 first.
  const bool real_work = flags.kernel == "work";
  std::size_t shaped = 0;
  std::vector<operation> operations;
  if (real_work) operations = work_operations(flags, file.graph, shaped);
  check_cuda_gpus(b);

  // The round trip per vertex is always measured here; the link comes from --cluster, or from
  // copies between devices 0 and 1 now. Calibration runs spin kernels (a vertex of no work is an
  // empty one), so a run of real work gets a backend of its own.
  cuda_tool_options options = cuda_options_of(b);
  // The simulation moves every byte of a tensor, so each device's copy buffer holds the largest
  // (a capped copy would run faster than simulated: FFNN's 1 GiB activations measured 20% short).
  byte_count largest = std::size_t{1} << 20;
  for (edge_id e = 0; e < file.graph.edge_count(); ++e) largest = std::max(largest, file.graph.bytes(e));
  options.max_copy_bytes = static_cast<std::size_t>(largest);
  std::unique_ptr<any_backend> backend = make_cuda_backend(options);
  const auto calibration = calibrate_cuda(*backend, b.devices);
  const byte_count capacity = size_option("--memory", flags.memory, true);
  const cluster base_cluster =
      given ? std::move(*given) : cuda_cluster(b, calibration.link.link, capacity, comm_from(flags.comm));
  const seconds overhead = flags.launch_overhead == "auto"
                               ? calibration.launch_overhead
                               : duration_option("--launch-overhead", flags.launch_overhead);
  execution_setup setup{.devices = with_link_times(base_cluster, flags.time_scale), .overhead = overhead};
  const cluster& c = setup.devices;
  if (real_work) {
    options.operations = std::move(operations);
    backend.reset();  // one set of contexts on the GPU at a time
    backend = make_cuda_backend(options);
    file.graph = with_profiled_times(file.graph, cuda_profile(*backend, file.graph, c.device_count()));
    seconds work = 0;
    for (const auto& v : file.graph.vertices()) work += v.compute;
    text << "profile       " << shaped << " of " << file.graph.vertex_count()
         << " vertices run real work, timed on the GPU: " << format_seconds(work) << " of compute in all\n";
  }
  backend->begin(c.device_count());  // sets the GPUs or partitions up, so they can be described
  const std::string description = cuda_description(*backend);
  text << "executor      cuda backend: " << description << ", "
       << (real_work ? "real work (cuBLAS products, element-wise kernels)" : "spin kernels of the modelled durations")
       << ", copies modelled as " << link_text(c) << ", each moving its whole tensor (the largest "
       << format_bytes(largest) << ")\n";
  if (real_work)
    text << "note          times were profiled with each vertex alone on device 0; partitions of one GPU share its "
            "memory bandwidth and L2 cache (docs/executors.md)\n";
  setup.facts["backend"] = "cuda";
  setup.facts["executor"] = description;
  return run_execution(flags, file.graph, setup, *backend, out, err);
}

}  // namespace gantry::cli
