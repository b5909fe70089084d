// `gantry execute --backend cpu`: devices are threads of this machine (exec/cpu_backend.hpp), the
// work a spin, a sleep, a calibrated busy loop or, with Eigen, the graph's own operations.
#include "execute_host.hpp"

#include <gantry/exec/cpu_backend.hpp>

#include <memory>

namespace gantry::cli {

int run_cpu_execute(const execute_flags& flags, std::optional<cluster> given, graph_file& file, std::ostream& out,
                    std::ostream& err) {
  const bool json = flags.output_format == "json";
  std::ostream& text = json ? err : out;

  // The machine first: the busy loop's rate and the executor's launch overhead are always measured
  // here; the link comes from --cluster, or from this calibration.
  auto [calibration, base_cluster] = calibrated_host(flags, std::move(given));
  const seconds overhead = flags.launch_overhead == "auto"
                               ? calibration.launch_overhead
                               : duration_option("--launch-overhead", flags.launch_overhead);
  execution_setup setup{.devices = with_link_times(base_cluster, flags.time_scale), .overhead = overhead};
  const cluster& c = setup.devices;
  // Real work: the graph's products and element-wise ops run with Eigen, their times profiled here
  // first, so the placers and the simulator see this machine.
  const bool real_work = flags.kernel == "work";
#if GANTRY_CLI_HAS_LEARN
  const auto operations = profiled_work(flags, file, c.device_count(), text);
#else
  if (real_work) throw invalid_input("--kernel work needs a gantry built with Eigen");
#endif
  // auto: spin where every device thread and the executor's get a core of their own, else sleep
  // (a spinning device would take the core the executor needs to dispatch).
  const cpu_kernel kernel = flags.kernel == "busy-loop"                            ? cpu_kernel::busy_loop
                            : flags.kernel == "spin"                               ? cpu_kernel::spin
                            : flags.kernel == "sleep"                              ? cpu_kernel::sleep
                            : real_work                                            ? cpu_kernel::work
                            : c.device_count() + 1 <= calibration.hardware_threads ? cpu_kernel::spin
                                                                                   : cpu_kernel::sleep;
  cpu_backend_options backend_options{.kernel = kernel, .loop_rate = calibration.loop_rate};
#if GANTRY_CLI_HAS_LEARN
  if (real_work) backend_options.work = [&operations](const vertex_launch& v) { (*operations)(v); };
#endif
  cpu_backend backend(std::move(backend_options));

  text << "executor      cpu backend: " << c.device_count() << " devices as threads, " << to_string(kernel)
       << " kernels, memcpy copies paced to " << link_text(c) << "\n";
  text << "note          " << hardware_note(c.device_count(), calibration.hardware_threads, kernel == cpu_kernel::sleep)
       << "\n";
  if (real_work)
    text << "note          times were profiled with each vertex alone; devices computing side by side share caches and "
            "memory bandwidth, and a copy's memcpy takes a core (docs/executors.md)\n";
  setup.facts["backend"] = "cpu";
  setup.facts["hardware_threads"] = calibration.hardware_threads;
  return run_execution(flags, file.graph, setup, backend, out, err);
}

}  // namespace gantry::cli
