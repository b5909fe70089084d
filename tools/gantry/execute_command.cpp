// The command lines of `gantry execute` and `gantry calibrate`, and execute's choice of backend.
// `execute` runs placements for real on this machine's CPU backend (or StarPU's workers: --backend
// starpu, where StarPU was found; or, in gantry-cuda, its GPUs: --backend cuda) and reports how
// well the simulator predicted them (docs/executors.md). CPU
// devices are threads: on a machine of H hardware threads at most H devices (fewer, counting the
// executor's own thread) truly run in parallel, and the output says so. CUDA devices are SM
// partitions of one GPU (green contexts) or whole GPUs. Each backend's part is a unit of its own
// (execute_cpu.cpp, execute_starpu.cpp, execute_cuda.cpp), all through one flow (execute_flow.hpp: run_execution);
// calibrate's work is in calibrate_command.cpp.

#include "execute_flow.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace gantry::cli {

bool cuda_built() noexcept { return GANTRY_CLI_HAS_CUDA != 0; }

inline int run_execute_command(const execute_flags& flags, std::ostream& out, std::ostream& err) {
  if (!std::isfinite(flags.time_scale) || flags.time_scale <= 0)
    throw invalid_input("--time-scale must be a finite number > 0, got " + std::to_string(flags.time_scale));
  std::optional<cluster> given;
  if (!flags.cluster_path.empty()) given = read_cluster_file(flags.cluster_path, {});
  [[maybe_unused]] const auto choice = check_backend_flags(flags.backend, given ? given->device_count() : flags.devices,
                                                           given ? "--cluster '" + flags.cluster_path + "'"
                                                           : flags.backend.devices_given ? std::string("--devices")
                                                                                         : std::string());
  require_device_count(flags.backend, choice, given.has_value(), "--cluster FILE");
  auto file = read_any_graph_file(flags.graph_path, flags.reading);
  // Under mpirun (--backend starpu-mpi) rank 0 alone warns.
  const char* mpi_rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (const auto warning = busy_machine(); warning && (mpi_rank == nullptr || std::string(mpi_rank) == "0"))
    err << "gantry execute: warning: " << *warning << "\n";
  if (flags.replay != "auto" && !choice.starpu && !choice.starpu_mpi)
    throw invalid_input("--replay " + flags.replay + " needs --backend starpu (the " + flags.backend.backend +
                        " backend's launches are decided one by one by the executor)");
#if GANTRY_CLI_HAS_CUDA
  if (choice.cuda) return run_cuda_execute(flags, choice, std::move(given), file, out, err);
#endif
#if GANTRY_CLI_HAS_STARPU
  if (choice.starpu) return run_starpu_execute(flags, std::move(given), file, out, err);
#endif
#if GANTRY_CLI_HAS_STARPU_MPI
  if (choice.starpu_mpi) return run_starpu_mpi_execute(flags, std::move(given), file, out, err);
#endif
  return run_cpu_execute(flags, std::move(given), file, out, err);
}

// --backend and the CUDA backend's options, the same on calibrate and execute (the command's
// callback records whether --devices was given, so that a count given twice is checked).
inline void add_backend_options(CLI::App& command, backend_flags& flags) {
  command
      .add_option("--backend", flags.backend,
                  std::string("cpu (devices are threads), starpu (devices are StarPU's CPU workers") +
                      (GANTRY_CLI_HAS_STARPU ? "" : "; needs a build with StarPU") +
                      "), starpu-mpi (devices are MPI ranks, one each: run under mpirun" +
                      (GANTRY_CLI_HAS_STARPU_MPI ? "" : "; needs a build with StarPU-MPI") +
                      ") or cuda (devices are SM partitions of one GPU, or whole GPUs" +
                      (cuda_built() ? ")" : "; needs gantry-cuda, a build with nvcc)"))
      ->check(one_of({"cpu", "cuda", "starpu", "starpu-mpi"}))
      ->capture_default_str();
  command
      .add_option("--partitions", flags.partitions,
                  "with --backend cuda: this many SM partitions of one GPU (green contexts) as devices "
                  "(default: --devices)")
      ->check(whole_number_between<std::size_t>(1, 256));
  command.add_option("--gpus", flags.gpus, "with --backend cuda: whole GPUs as devices, one each, e.g. 0,1");
  command.add_option("--gpu", flags.gpu, "with --backend cuda: the GPU to partition (default 0)")
      ->check(whole_number_between<int>(0, 1023));
  command
      .add_option("--sms-per-partition", flags.sms_per_partition,
                  "with --backend cuda: SMs per partition; 0 (the default): the largest equal split the GPU allows")
      ->check(whole_number_between<long long>(0, 1 << 20));
}

void register_execute_commands(CLI::App& app) {
  auto calibrate = std::make_shared<calibrate_flags>();
  auto* cal = app.add_subcommand("calibrate",
                                 "measure this machine's CPU backend (busy loop, launch overhead, copies "
                                 "between device buffers), or its GPUs with --backend cuda, and write a "
                                 "cluster file");
  auto* cal_devices =
      cal->add_option("--devices,-d", calibrate->devices,
                      "devices in the cluster (CPU: threads); required but for --backend cuda with --partitions or "
                      "--gpus, and starpu-mpi (one per rank)")
          ->check(whole_number_between<std::size_t>(2, 256));
  add_backend_options(*cal, calibrate->backend);
  cal->add_option("--memory,-m", calibrate->memory, "memory per device, e.g. 1GiB, or 'unlimited'")
      ->capture_default_str();
  cal->add_option("--comm", calibrate->comm, "parallel, sequential or duplex")
      ->check(one_of({"parallel", "sequential", "duplex"}))
      ->capture_default_str();
  cal->add_option("--out,-o", calibrate->out, "write the cluster (JSON) here");
  cal->callback([calibrate, cal_devices] {
    calibrate->backend.devices_given = cal_devices->count() > 0;
    run_in_callback("calibrate", [&] { return run_calibrate_command(*calibrate, std::cout); });
  });

  auto flags = std::make_shared<execute_flags>();
  auto* ex = app.add_subcommand("execute",
                                "place, simulate and run a graph for real on CPU threads (or StarPU's workers: "
                                "--backend starpu; GPUs: --backend cuda); report simulated vs measured makespans");
  ex->add_option("--graph,-g", flags->graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")
      ->required()
      ->check(CLI::ExistingFile);
  add_graph_reading_options(*ex, flags->reading);
  auto* cluster_option = ex->add_option("--cluster", flags->cluster_path, "cluster file (from `gantry calibrate`)")
                             ->check(CLI::ExistingFile);
  auto* ex_devices =
      ex->add_option("--devices,-d", flags->devices,
                     "without --cluster: devices, linked as calibrated now; required but for --backend cuda with "
                     "--partitions or --gpus, and starpu-mpi (one per rank)")
          ->check(whole_number_between<std::size_t>(1, 256))
          ->excludes(cluster_option);
  add_backend_options(*ex, flags->backend);
  ex->add_option("--memory,-m", flags->memory, "without --cluster: memory per device")
      ->excludes(cluster_option)
      ->capture_default_str();
  ex->add_option("--comm", flags->comm, "without --cluster: parallel, sequential or duplex")
      ->check(one_of({"parallel", "sequential", "duplex"}))
      ->excludes(cluster_option)
      ->capture_default_str();
  ex->add_option("--algorithm,-a", flags->algorithm, "placer to run (`gantry algorithms` lists them)")
      ->capture_default_str();
  ex->add_option("--policy", flags->policy, "which ready vertex a device runs first (simulation and execution alike)")
      ->check(one_of(enum_name_list<ready_policy>()))
      ->capture_default_str();
  ex->add_flag("--no-cache", flags->no_cache, "send a tensor once per consumer instead of once per device");
  ex->add_option("--runs", flags->runs, "measured runs per placement (the median is reported)")
      ->check(whole_number_between<std::size_t>(1, 1000))
      ->capture_default_str();
  auto* placements =
      ex->add_option("--placements", flags->placements,
                     "compare this many placements (every placer, then seeded random perturbations of them)")
          ->check(whole_number_between<std::size_t>(0, 10000));
  ex->add_option("--seed", flags->seed, "seed of the perturbations")->capture_default_str();
  ex->add_option("--min-gap", flags->min_gap,
                 "with --placements: keep only placements whose simulated makespans differ by more than this "
                 "fraction (e.g. 0.02), so that Spearman judges differences the simulator claims, not ties")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              std::size_t used = 0;
              const double x = std::stod(text, &used);
              if (used == text.size() && std::isfinite(x) && x >= 0 && x < 1) return {};
            } catch (const std::exception&) {
            }
            return "expected a fraction in [0, 1), got '" + text + "'";
          },
          "a fraction in [0, 1)"))
      ->needs(placements)
      ->capture_default_str();
  ex->add_option("--reference-device", flags->reference_device,
                 "run the whole graph on this device before and after every measured run, and give each error "
                 "also relative to those two runs (measured ratio over simulated ratio), which cancels the "
                 "machine's speed drifting between runs; doubles the measuring time")
      ->check(whole_number_between<long long>(0, 1 << 20));
  ex->add_option("--time-scale", flags->time_scale, "run every compute and transfer time this many times longer")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              std::size_t used = 0;
              const double x = std::stod(text, &used);
              if (used == text.size() && std::isfinite(x) && x > 0) return {};
            } catch (const std::exception&) {
            }
            return "expected a finite number > 0, got '" + text + "'";
          },
          "a finite number > 0"))
      ->capture_default_str();
  ex->add_option("--launch-overhead", flags->launch_overhead,
                 "added to every vertex's simulated time: 'auto' (measured now) or a duration, e.g. 0s, 20us")
      ->capture_default_str();
  ex->add_option("--kernel", flags->kernel,
                 "how a device spends a vertex's time: busy-loop (calibrated iterations), spin (on the clock), "
                 "sleep (frees the core), work (the graph's own products and element-wise ops with Eigen, or cuBLAS "
                 "and CUDA kernels with --backend cuda, profiled first: `gantry workload` graphs), auto (CPU: spin "
                 "when every device and the executor get a core, else sleep; CUDA: spin)")
      ->check(one_of({"auto", "busy-loop", "spin", "sleep", "work"}))
      ->capture_default_str();
  ex->add_option("--replay", flags->replay,
                 "with --backend starpu: ahead (the default: each simulated schedule submitted to StarPU at once, "
                 "every worker in its order, tensors as data handles) or decided (the executor launches each "
                 "vertex as a pinned task)")
      ->check(one_of({"auto", "ahead", "decided"}))
      ->capture_default_str();
  ex->add_option("--trace", flags->trace,
                 "Chrome traces, as in place: --trace run.json writes run.simulated.json and "
                 "run.measured.json");
  ex->add_option("--svg", flags->svg,
                 "Gantt charts, as in place: --svg run.svg writes run.simulated.svg and run.measured.svg");
  ex->add_option("--format", flags->output_format, "table or json")
      ->check(one_of({"table", "json"}))
      ->capture_default_str();
  ex->callback([flags, ex_devices] {
    flags->backend.devices_given = ex_devices->count() > 0;
    run_in_callback("execute", [&] { return run_execute_command(*flags, std::cout, std::cerr); });
  });
}

}  // namespace gantry::cli
