// `gantry calibrate`: measures this machine's CPU backend (or, in gantry-cuda, its GPUs: --backend
// cuda) and writes a cluster file (docs/executors.md).
#include "execute_support.hpp"
#include "files.hpp"

#include <gantry/core/units.hpp>
#include <gantry/exec/calibrate.hpp>
#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/operations.hpp>
#if GANTRY_CLI_HAS_LEARN
#include "eigen_work.hpp"
#endif
#if GANTRY_CLI_HAS_STARPU_MPI
#include <gantry/exec/starpu_mpi_backend.hpp>
#endif

#include <cstdint>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace gantry::cli {

// What a calibration measured: the round trip per vertex, the copies and the fitted link.
inline void print_calibration(std::ostream& out, seconds launch_overhead, const std::vector<transfer_sample>& samples,
                              const link_fit& link,
                              const char* launch_is = "the executor's round trip for a vertex of no work") {
  out << "launch         " << format_seconds(launch_overhead) << " per vertex (" << launch_is << ")\n";
  out << "copies         ";
  for (const auto& s : samples)
    out << format_bytes(static_cast<byte_count>(s.bytes)) << " " << format_seconds(s.time) << "  ";
  out << "\nlink           " << format_seconds(link.link.latency) << " + bytes / "
      << format_bytes(static_cast<byte_count>(std::min(link.link.bandwidth, 1e18))) << "/s (r^2 "
      << fixed_text(link.r_squared, 3) << ")\n";
  if (!link.trusted())
    std::cerr << "gantry calibrate: warning: the link's fit explains " << fixed_text(link.r_squared, 3)
              << " of the copies' variance (r^2 below " << fixed_text(link_fit::least_trusted_r_squared, 1)
              << "): the times do not grow in a line with the bytes, so the latency and bandwidth written are "
                 "rough; measure again with nothing else running on the machines and links\n";
}

// What the memory-bandwidth probe measured, and the domain written with the cluster.
inline void print_domain(std::ostream& out, const domain_measurement& m, const std::string& unit) {
  out << "memory         " << unit << " alone " << format_bytes(static_cast<byte_count>(m.alone_bandwidth()))
      << "/s, all " << m.devices << " at once " << format_bytes(static_cast<byte_count>(m.together_bandwidth()))
      << "/s in all (a bandwidth-bound sum x" << fixed_text(m.slowdown(), 2)
      << " beside the others): the devices' shared bandwidth domain\n";
}

#if GANTRY_CLI_HAS_CUDA
inline int run_cuda_calibrate(const calibrate_flags& flags, const backend_choice& b, std::ostream& out) {
  if (b.devices < 2)
    throw invalid_input(std::string(b.gpus.empty() ? "--partitions" : "--gpus") +
                        ": calibrate times copies between two devices: give at least 2, got " +
                        std::to_string(b.devices));
  const byte_count capacity = size_option("--memory", flags.memory, true);
  check_cuda_gpus(b);
  auto backend = make_cuda_backend(cuda_options_of(b));
  const auto calibration = calibrate_backend(*backend, {.devices = b.devices});
  cluster c = cuda_cluster(b, calibration.link.link, capacity, comm_from(flags.comm));
  // Partitions of one GPU share its memory; whole GPUs each have their own.
  std::optional<domain_measurement> domain;
  if (b.gpus.empty()) {
    constexpr std::uint64_t probe_elements = std::uint64_t{1} << 26;  // 256 MiB per tensor
    auto options = cuda_options_of(b);
    options.operations = operations_of(bandwidth_probe(b.devices, probe_elements));
    auto probe = make_cuda_backend(options);
    domain = measure_domain(*probe, b.devices, probe_elements);
    add_measured_domain(c, *domain, "gpu" + std::to_string(b.gpu));
  }
  if (!flags.out.empty()) write_cluster_file(flags.out, c);
  out << "executor       cuda backend: " << cuda_description(*backend) << "\n";
  print_calibration(out, calibration.launch_overhead, calibration.samples, calibration.link);
  if (domain) print_domain(out, *domain, "one partition");
  if (!flags.out.empty()) out << "cluster        " << b.devices << " GPU devices written to " << flags.out << "\n";
  return 0;
}
#endif

#if GANTRY_CLI_HAS_STARPU_MPI
// Under mpirun: the MPI link between ranks 0 and 1 (StarPU-MPI's messages, unpaced) and StarPU-MPI's
// cost per task; one device per rank. Rank 0 prints and writes the cluster file.
inline int run_starpu_mpi_calibrate(const calibrate_flags& flags, std::ostream& out) {
  const byte_count capacity = size_option("--memory", flags.memory, true);
  const comm_mode comm = comm_from(flags.comm);
  starpu_mpi_backend_options options;  // named: GCC 12 warns (wrongly) of its std::function otherwise
  starpu_mpi_backend backend(std::move(options));
  if (backend.ranks() < 2)
    throw invalid_input("calibrate --backend starpu-mpi: run at least 2 ranks (mpirun -np 2 gantry calibrate ...)");
  const auto ranks = static_cast<std::size_t>(backend.ranks());
  if (flags.backend.devices_given && flags.devices != ranks)
    throw invalid_input("--devices " + std::to_string(flags.devices) +
                        " with --backend starpu-mpi: each rank is one "
                        "device, and " +
                        std::to_string(ranks) + " ranks run");
  const auto link = measure_mpi_link(backend);
  const seconds task_cost = measure_task_cost(backend);
  if (backend.rank() != 0) return 0;
  const cluster c = cluster::uniform(ranks, capacity, link.link.link, comm);
  if (!flags.out.empty()) write_cluster_file(flags.out, c);
  out << "executor       starpu-mpi backend: " << ranks << " MPI ranks, one device each; clocks tied to within "
      << format_seconds(backend.clock_uncertainty()) << "\n";
  print_calibration(out, task_cost, link.samples, link.link, "StarPU-MPI's cost per task, on a chain of empty tasks");
  out << "note           the link is the one between ranks 0 and 1, written for every pair; measure where the "
         "ranks will run (one per machine: mpirun --hostfile)\n";
  if (!flags.out.empty()) out << "cluster        " << ranks << " devices (MPI ranks) written to " << flags.out << "\n";
  return 0;
}
#endif

int run_calibrate_command(const calibrate_flags& flags, std::ostream& out) {
  [[maybe_unused]] const auto choice =
      check_backend_flags(flags.backend, flags.devices, flags.backend.devices_given ? "--devices" : "");
  if (choice.starpu)
    throw invalid_input(
        "calibrate --backend starpu: StarPU's workers in one process copy with memcpy, as the CPU backend's "
        "threads do: calibrate with --backend cpu, and `gantry execute --backend starpu` measures StarPU's own "
        "cost per task itself");
  require_device_count(flags.backend, choice, false, "");
#if GANTRY_CLI_HAS_CUDA
  if (choice.cuda) return run_cuda_calibrate(flags, choice, out);
#endif
#if GANTRY_CLI_HAS_STARPU_MPI
  if (choice.starpu_mpi) return run_starpu_mpi_calibrate(flags, out);
#endif
  const byte_count capacity = size_option("--memory", flags.memory, true);
  if (const auto warning = busy_machine()) std::cerr << "gantry calibrate: warning: " << *warning << "\n";
  const auto calibration = calibrate_cpu({.devices = flags.devices});
  cluster c = calibrated_cluster(calibration, flags.devices, capacity, comm_from(flags.comm));
#if GANTRY_CLI_HAS_LEARN
  // The devices share this machine's memory (a bandwidth-bound sum with Eigen, alone and on every
  // device at once) and its hardware threads (device threads and copies).
  constexpr std::uint64_t probe_elements = std::uint64_t{1} << 24;  // 64 MiB per tensor: past the caches
  eigen_work probe_ops(operations_of(bandwidth_probe(flags.devices, probe_elements)), flags.devices);
  cpu_backend probe({.kernel = cpu_kernel::work, .work = [&probe_ops](const vertex_launch& v) { probe_ops(v); }});
  const auto domain = measure_domain(probe, flags.devices, probe_elements);
  add_measured_domain(c, domain, "host", calibration.hardware_threads);
#endif
  if (!flags.out.empty()) write_cluster_file(flags.out, c);
  out << "busy loop      " << std::setprecision(4) << calibration.loop_rate << " iterations/s\n";
  print_calibration(out, calibration.launch_overhead, calibration.samples, calibration.link);
#if GANTRY_CLI_HAS_LEARN
  print_domain(out, domain, "one device");
#else
  out << "memory         not measured (this build has no Eigen to run the bandwidth probe): no shared domain written\n";
#endif
  out << "note           " << hardware_note(flags.devices, calibration.hardware_threads) << "\n";
  if (!flags.out.empty()) out << "cluster        " << flags.devices << " CPU devices written to " << flags.out << "\n";
  return 0;
}

}  // namespace gantry::cli
