// `gantry execute --backend starpu-mpi`, run under mpirun: one MPI rank per device
// (exec/starpu_mpi_backend.hpp). Every rank runs this same command on the same graph and cluster
// and takes part in every run; rank 0 alone prints and writes files. Each simulated schedule is
// replayed ahead across the ranks; copies are StarPU-MPI messages, paced to the cluster's links.
// Without --cluster the link is the MPI link between ranks 0 and 1, measured here first.
#include "execute_host.hpp"

#include <gantry/exec/starpu_mpi_backend.hpp>

#include <cmath>
#include <ostream>
#include <streambuf>

namespace gantry::cli {

namespace {
// Where the ranks other than 0 write.
struct null_buffer : std::streambuf {
  int overflow(int c) override { return c; }
};
}  // namespace

int run_starpu_mpi_execute(const execute_flags& flags, std::optional<cluster> given, graph_file& file,
                           std::ostream& out, std::ostream& err) {
  if (flags.kernel == "work")
    throw invalid_input(
        "--kernel work with --backend starpu-mpi: each rank would profile the operations on its own and the ranks "
        "would simulate different graphs; use sleep, spin or busy-loop kernels");
  if (flags.replay == "decided")
    throw invalid_input("--replay decided with --backend starpu-mpi: the ranks replay each schedule ahead only");
  const cpu_kernel kernel = flags.kernel == "busy-loop" ? cpu_kernel::busy_loop
                            : flags.kernel == "spin"    ? cpu_kernel::spin
                                                        : cpu_kernel::sleep;
  starpu_mpi_backend_options options;
  options.kernels.kernel = kernel;
  // Each rank's own busy loop (the rate only sets how long a vertex spins; the plan is the same).
  if (kernel == cpu_kernel::busy_loop) options.kernels.loop_rate = calibrate_busy_loop();
  starpu_mpi_backend backend(std::move(options));
  null_buffer nothing;
  std::ostream quiet(&nothing);
  std::ostream& to_out = backend.rank() == 0 ? out : quiet;
  std::ostream& to_err = backend.rank() == 0 ? err : quiet;
  const bool json = flags.output_format == "json";
  std::ostream& text = json ? to_err : to_out;

  const auto ranks = static_cast<std::size_t>(backend.ranks());
  const std::size_t devices = given ? given->device_count() : ranks;
  if (devices > ranks || devices < 1)
    throw invalid_input("--backend starpu-mpi: " + std::to_string(devices) + " devices need as many MPI ranks; " +
                        std::to_string(ranks) + " run (mpirun -np " + std::to_string(devices) + " gantry execute ...)");
  if (flags.backend.devices_given && !given && flags.devices != ranks)
    throw invalid_input("--devices " + std::to_string(flags.devices) +
                        " with --backend starpu-mpi: each rank is one "
                        "device, and " +
                        std::to_string(ranks) + " ranks run");
  cluster base;
  if (given) {
    base = std::move(*given);
  } else {
    if (ranks < 2) throw invalid_input("--backend starpu-mpi: run at least 2 ranks (mpirun -np 2 gantry execute ...)");
    const link_model link = measure_mpi_link(backend).link.link;
    text << "link          MPI between ranks 0 and 1, measured: "
         << (std::isfinite(link.bandwidth)
                 ? format_seconds(link.latency) + " + bytes / " + fixed_text(link.bandwidth / 1e9, 2) + " GB/s"
                 : format_seconds(link.latency) + ", no bandwidth limit seen up to 4 MiB")
         << "\n";
    base = cluster::uniform(devices, size_option("--memory", flags.memory, true), link, comm_from(flags.comm));
  }
  execution_setup setup{.devices = with_link_times(base, flags.time_scale), .ahead = true};
  const seconds task_cost = measure_task_cost(backend);
  setup.overhead =
      flags.launch_overhead == "auto" ? task_cost : duration_option("--launch-overhead", flags.launch_overhead);
  text << "executor      starpu-mpi backend (StarPU " << STARPU_MAJOR_VERSION << "." << STARPU_MINOR_VERSION
       << "): " << devices << " devices, one MPI rank each (" << ranks << " ranks), " << to_string(kernel)
       << " kernels, each schedule replayed ahead; copies are StarPU-MPI messages paced to " << link_text(setup.devices)
       << "\n";
  text << "task cost     " << format_seconds(task_cost) << " per task on one rank (a chain of empty tasks)\n";
  text << "clocks        every rank's tied to rank 0's, to within " << format_seconds(backend.clock_uncertainty())
       << "\n";
  setup.facts["backend"] = "starpu-mpi";
  setup.facts["ranks"] = ranks;
  setup.facts["task_cost"] = task_cost;
  setup.facts["clock_uncertainty"] = backend.clock_uncertainty();
  return run_execution(flags, file.graph, setup, backend, to_out, to_err);
}

}  // namespace gantry::cli
