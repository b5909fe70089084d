// `gantry execute --backend starpu`: devices are StarPU's CPU workers (exec/starpu_backend.hpp),
// one per device, and the copies run on the backend's copy engine; a vertex is a sleep, a spin, a
// calibrated busy loop or, with Eigen, the graph's own operations. Each simulated schedule is
// submitted to StarPU at once (--replay ahead, the default) or launched vertex by vertex by the
// executor (--replay decided).
#include "execute_host.hpp"

#include <gantry/exec/starpu_backend.hpp>

#include <memory>

namespace gantry::cli {

int run_starpu_execute(const execute_flags& flags, std::optional<cluster> given, graph_file& file, std::ostream& out,
                       std::ostream& err) {
  const bool json = flags.output_format == "json";
  std::ostream& text = json ? err : out;
  const std::size_t devices = given ? given->device_count() : flags.devices;
  if (devices > STARPU_MAXCPUS)
    throw invalid_input("--backend starpu: " + std::to_string(devices) + " devices need " + std::to_string(devices) +
                        " StarPU CPU workers; this StarPU allows " + std::to_string(STARPU_MAXCPUS));
  // The CPU backend's calibration first (StarPU's workers poll when idle and would slow it): the
  // busy loop's rate and, without --cluster, the memcpy link the copy engine is paced to.
  auto [calibration, base_cluster] = calibrated_host(flags, std::move(given));
  execution_setup setup{.devices = with_link_times(base_cluster, flags.time_scale), .ahead = flags.replay != "decided"};
  const cluster& c = setup.devices;
  const bool real_work = flags.kernel == "work";
#if GANTRY_CLI_HAS_LEARN
  const auto operations = profiled_work(flags, file, devices, text);
#else
  if (real_work) throw invalid_input("--kernel work needs a gantry built with Eigen");
#endif
  // auto: sleep. StarPU's idle workers poll, so a spinning device would only add to the cores
  // they already take.
  const cpu_kernel kernel = flags.kernel == "busy-loop" ? cpu_kernel::busy_loop
                            : flags.kernel == "spin"    ? cpu_kernel::spin
                            : real_work                 ? cpu_kernel::work
                                                        : cpu_kernel::sleep;
  // Set field by field: GCC 12 warns (wrongly) of an uninitialised std::function otherwise.
  starpu_backend_options options;
  options.devices = devices;
  options.kernels.kernel = kernel;
  options.kernels.loop_rate = calibration.loop_rate;
#if GANTRY_CLI_HAS_LEARN
  if (real_work) options.kernels.work = [&operations](const vertex_launch& v) { (*operations)(v); };
#endif
  starpu_backend backend(std::move(options));
  const seconds task_cost = measure_task_cost(backend);
  setup.overhead =
      flags.launch_overhead == "auto" ? task_cost : duration_option("--launch-overhead", flags.launch_overhead);
  // A copy waits for StarPU to hand over its tensor and wakes its consumer through StarPU, as a task does.
  setup.copy_overhead = setup.overhead;

  text << "executor      starpu backend (StarPU " << STARPU_MAJOR_VERSION << "." << STARPU_MINOR_VERSION
       << "): " << devices << " devices as CPU workers, " << to_string(kernel) << " kernels, "
       << (setup.ahead ? "each schedule submitted ahead (workers in its order, tensors as data handles)"
                       : "launches decided by the executor")
       << ", memcpy copies on one copy engine paced to " << link_text(c) << "\n";
  text
      << "task cost     " << format_seconds(task_cost)
      << " per task on one worker (a chain of empty tasks); the launch overhead is added to every simulated copy too\n";
  if (c.comm() != comm_mode::sequential && devices > 1)
    text << "note          the one copy engine runs one copy at a time; the cluster's " << to_string(c.comm())
         << " links let copies overlap, so measured copies may queue where the simulation has none\n";
  if (devices + 1 > calibration.hardware_threads)
    text << "note          this machine has " << calibration.hardware_threads << " hardware threads for StarPU's "
         << devices
         << " workers, which poll while idle, and the copy engine: a thread waking from a sleep may "
            "wait for a core, and measured times include it\n";
  setup.facts["backend"] = "starpu";
  setup.facts["replay"] = setup.ahead ? "ahead" : "decided";
  setup.facts["task_cost"] = task_cost;
  setup.facts["hardware_threads"] = calibration.hardware_threads;
  return run_execution(flags, file.graph, setup, backend, out, err);
}

}  // namespace gantry::cli
