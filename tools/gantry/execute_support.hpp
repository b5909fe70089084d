// What `gantry calibrate` (calibrate_command.cpp) and `gantry execute` (execute_command.cpp,
// execute_cpu.cpp, execute_cuda.cpp) share: their flags, the backend options checked against each
// other, and the CUDA devices. execute_command.cpp and calibrate_command.cpp are compiled once for
// gantry and once for gantry-cuda (GANTRY_CLI_HAS_CUDA 0 and 1), execute_cuda.cpp for gantry-cuda
// alone; the other backends' units are compiled once, without CUDA, and linked into both, so what
// they share with the others here must not depend on GANTRY_CLI_HAS_CUDA: it asks cuda_built().
#pragma once

#include "commands.hpp"
#include "inputs.hpp"
#include "options.hpp"
#include "warnings.hpp"

#include <gantry/core/units.hpp>
#include <gantry/exec/calibrate.hpp>
#include <gantry/model/cluster.hpp>
#ifndef GANTRY_CLI_HAS_CUDA  // tools/CMakeLists.txt sets it: 1 for gantry-cuda
#define GANTRY_CLI_HAS_CUDA 0
#endif
#if GANTRY_CLI_HAS_CUDA
#include "cuda_tool.hpp"
#endif

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <ostream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

namespace gantry::cli {

// Which backend runs the devices, and for CUDA which GPUs; the same options on calibrate and
// execute. Unset values (0, empty, -1) are told apart from given ones so that a CUDA option with
// --backend cpu is refused rather than ignored.
struct backend_flags {
  std::string backend = "cpu";       // cpu, cuda, starpu or starpu-mpi
  std::size_t partitions = 0;        // SM partitions of one GPU as devices; 0: not given
  std::string gpus;                  // whole GPUs, comma separated; empty: not given
  int gpu = -1;                      // the GPU to partition; -1: not given (GPU 0)
  long long sms_per_partition = -1;  // -1: not given; 0: the largest equal split the GPU allows
  bool devices_given = false;        // --devices was on the command line
};

struct calibrate_flags {
  backend_flags backend;
  std::size_t devices = 2;
  std::string memory = "unlimited";
  std::string comm = "parallel";
  std::string out;
};

struct execute_flags {
  backend_flags backend;
  std::string graph_path;
  graph_reading reading;
  std::string cluster_path;
  std::size_t devices = 2;
  std::string memory = "unlimited";
  std::string comm = "parallel";
  std::string algorithm = "m-etf";
  std::string policy = "placement-order";
  bool no_cache = false;
  std::size_t runs = 5;
  std::size_t placements = 0;
  std::uint64_t seed = 1;
  double min_gap = 0;  // with placements: only placements simulated this fraction apart
  // >= 0: every measured run follows a run of the whole graph on this device, and each error is
  // also given relative to it (compare_options::reference)
  long long reference_device = -1;
  double time_scale = 1;
  std::string launch_overhead = "auto";
  std::string kernel = "auto";
  std::string replay = "auto";  // starpu: ahead (the default) or decided
  std::string trace, svg;
  std::string output_format = "table";
};

[[nodiscard]] inline comm_mode comm_from(const std::string& text) {
  return text == "sequential" ? comm_mode::sequential : text == "duplex" ? comm_mode::duplex : comm_mode::parallel;
}

[[nodiscard]] inline std::string signed_percent(double x) { return (x >= 0 ? "+" : "") + fixed_text(100 * x, 1) + "%"; }

// The cluster with every link and bandwidth domain `scale` times slower (latency × scale,
// bandwidth / scale); nodes and cores as they were.
[[nodiscard]] inline cluster with_link_times(const cluster& c, double scale, seconds added_latency = 0) {
  const auto scaled = [scale, added_latency](link_model l) {
    return link_model{l.latency * scale + added_latency, l.bandwidth / scale};
  };
  cluster out(c.devices(), scaled(c.default_link()), c.comm());
  if (!c.nodes().empty()) out.set_nodes(c.nodes());
  for (auto domain : c.domains()) {  // every time `scale` times longer: the same bytes at 1 / scale the rate
    domain.bandwidth /= scale;
    out.add_domain(std::move(domain));
  }
  for (const auto& [pair, l] : c.own_links()) out.set_link(pair.first, pair.second, scaled(l));
  return out;
}

[[nodiscard]] inline std::string hardware_note(std::size_t devices, unsigned threads, bool sleeping = false) {
  std::string text = "this machine has " + std::to_string(threads) + " hardware threads";
  if (threads == 0 || devices + 1 <= threads) return text;
  if (sleeping)
    return text + ": sleep kernels free the cores, so all " + std::to_string(devices) +
           " devices run in parallel; copies and the executor share the cores";
  return text + ": the " + std::to_string(devices) + " device threads and the executor's own share them, so at most " +
         std::to_string(std::min<std::size_t>(devices, threads)) +
         " devices truly run in parallel and measured times include the sharing";
}

// Whether this executable is gantry-cuda, which runs --backend cuda. Defined in execute_command.cpp,
// which each executable compiles with its own GANTRY_CLI_HAS_CUDA.
[[nodiscard]] bool cuda_built() noexcept;

// Where to get a gantry that runs --backend cuda.
inline constexpr const char* no_cuda_build_text =
    "--backend cuda: this gantry was built without CUDA. gantry-cuda runs it: configure with nvcc found "
    "(CUDACXX=/path/to/nvcc, or nvcc at /usr/local/cuda/bin/nvcc), build the target gantry_cuda_cli "
    "(cmake --build BUILD --target gantry_cuda_cli) and run BUILD/tools/gantry-cuda";

// Where to get a gantry that runs --backend starpu.
inline constexpr const char* no_starpu_build_text =
    "--backend starpu: this gantry was built without StarPU. Install it (Debian: libstarpu-dev, which "
    "scripts/install-deps.sh --tests installs), configure again so that CMake finds it, and rebuild gantry";

// GPU numbers separated by commas ("0,1"), each once: a GPU is one whole device.
[[nodiscard]] inline std::vector<int> parse_gpu_list(const std::string& text) {
  const auto bad = [&] {
    return invalid_input("--gpus: expected GPU numbers separated by commas, e.g. 0,1, got '" + text + "'");
  };
  std::vector<int> out;
  std::set<int> seen;
  for (std::size_t at = 0;;) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    int gpu = -1;
    const auto [end, error] = std::from_chars(text.data() + at, text.data() + comma, gpu);
    if (error != std::errc{} || end != text.data() + comma || gpu < 0) throw bad();
    if (!seen.insert(gpu).second)
      throw invalid_input("--gpus: GPU " + std::to_string(gpu) + " is listed twice in '" + text +
                          "'; each GPU is one whole device");
    out.push_back(gpu);
    if (comma == text.size()) return out;
    at = comma + 1;
  }
}

// Where to get a gantry that runs --backend starpu-mpi.
inline constexpr const char* no_starpu_mpi_build_text =
    "--backend starpu-mpi: this gantry was built without StarPU-MPI. Install StarPU and Open MPI (Debian: "
    "libstarpu-dev, libopenmpi-dev and openmpi-bin, which scripts/install-deps.sh --tests installs), configure "
    "again so that CMake finds them, rebuild gantry and run it under mpirun";

// The backend options, checked: for CUDA, which GPUs and how many devices.
struct backend_choice {
  bool cuda = false;
  bool starpu = false;
  bool starpu_mpi = false;
  std::vector<int> gpus;  // whole GPUs; empty: partitions of `gpu`
  int gpu = 0;
  unsigned sms_per_partition = 0;
  std::size_t devices = 0;  // CUDA: the partitions or GPUs (CPU: the command's own count)
};

// Checks the backend options against each other and against the device count the command was
// given (`devices`, from `devices_source`: "--devices" or the cluster file; empty when neither was
// given and `devices` is the default), naming the flag. Refuses --backend cuda where this gantry
// was built without CUDA, after the flags themselves are checked.
[[nodiscard]] inline backend_choice check_backend_flags(const backend_flags& f, std::size_t devices,
                                                        const std::string& devices_source) {
  backend_choice out;
  out.devices = devices;
  const char* cuda_only = f.partitions != 0          ? "--partitions"
                          : !f.gpus.empty()          ? "--gpus"
                          : f.gpu >= 0               ? "--gpu"
                          : f.sms_per_partition >= 0 ? "--sms-per-partition"
                                                     : nullptr;
  if (f.backend != "cuda") {
    if (f.backend != "cpu" && f.backend != "starpu" && f.backend != "starpu-mpi")
      throw invalid_input("--backend: expected cpu, cuda, starpu or starpu-mpi, got '" + f.backend + "'");
    if (cuda_only != nullptr)
      throw invalid_input(std::string(cuda_only) + " needs --backend cuda (" +
                          (f.backend == "cpu" ? "CPU devices are threads" : "StarPU devices are its CPU workers") +
                          ": --devices N)");
    out.starpu = f.backend == "starpu";
    out.starpu_mpi = f.backend == "starpu-mpi";
#if !GANTRY_CLI_HAS_STARPU
    if (out.starpu) throw invalid_input(no_starpu_build_text);
#endif
#if !GANTRY_CLI_HAS_STARPU_MPI
    if (out.starpu_mpi) throw invalid_input(no_starpu_mpi_build_text);
#endif
    return out;
  }
  out.cuda = true;
  if (f.partitions != 0 && !f.gpus.empty())
    throw invalid_input("--gpus '" + f.gpus + "' and --partitions " + std::to_string(f.partitions) +
                        ": give one: whole GPUs (--gpus 0,1) or SM partitions of one GPU (--partitions N)");
  if (!f.gpus.empty()) {
    if (f.gpu >= 0)
      throw invalid_input("--gpu " + std::to_string(f.gpu) +
                          " picks the GPU to partition; with --gpus every listed GPU "
                          "is one whole device");
    if (f.sms_per_partition >= 0)
      throw invalid_input("--sms-per-partition " + std::to_string(f.sms_per_partition) +
                          " sizes partitions; with --gpus every listed GPU is one whole device");
    out.gpus = parse_gpu_list(f.gpus);
    out.devices = out.gpus.size();
  } else {
    out.gpu = std::max(f.gpu, 0);
    out.sms_per_partition = static_cast<unsigned>(std::max(f.sms_per_partition, 0LL));
    if (f.partitions != 0) out.devices = f.partitions;
  }
  const bool chosen = f.partitions != 0 || !f.gpus.empty();
  if (chosen && !devices_source.empty() && devices != out.devices)
    throw invalid_input(devices_source + " gives " + std::to_string(devices) + " devices, but " +
                        (f.gpus.empty() ? "--partitions " + std::to_string(f.partitions)
                                        : "--gpus '" + f.gpus + "' lists " + std::to_string(out.devices) + " GPUs") +
                        ": give one count");
  if (!cuda_built()) throw invalid_input(no_cuda_build_text);
  return out;
}
// One rule on every command that builds a cluster: the device count is given (--devices, a cluster
// file, --gpus or --partitions, or the MPI ranks), never assumed. `or_else` names the command's
// other ways to give it ("--cluster FILE"), if any.
inline void require_device_count(const backend_flags& f, const backend_choice& b, bool counted_elsewhere,
                                 const std::string& or_else) {
  if (f.devices_given || counted_elsewhere || b.starpu_mpi || f.partitions != 0 || !f.gpus.empty()) return;
  throw invalid_input("give --devices N" + (or_else.empty() ? std::string() : " or " + or_else) +
                      (b.cuda ? ", --partitions N or --gpus LIST" : "") + ": how many devices to " +
                      (b.cuda ? "run on" : "run (CPU devices are threads)"));
}

#if GANTRY_CLI_HAS_CUDA
// A GPU-less machine fails the run (exit 1); a GPU number beyond the machine's is bad input.
inline void check_cuda_gpus(const backend_choice& b) {
  std::string why;
  const int count = cuda_gpu_count(why);
  if (count == 0) throw std::runtime_error("--backend cuda: no CUDA GPU was found (" + why + ")");
  const auto beyond = [&](int gpu, const std::string& flag) {
    if (gpu >= count)
      throw invalid_input(flag + ": this machine has " + std::to_string(count) + " CUDA GPU" + (count == 1 ? "" : "s") +
                          ", numbered from 0 to " + std::to_string(count - 1));
  };
  if (b.gpus.empty()) beyond(b.gpu, "--gpu " + std::to_string(b.gpu));
  for (const int gpu : b.gpus) beyond(gpu, "--gpus: GPU " + std::to_string(gpu));
}

[[nodiscard]] inline cuda_tool_options cuda_options_of(const backend_choice& b) {
  cuda_tool_options o;
  o.gpus = b.gpus;
  o.gpu = b.gpu;
  o.sms_per_partition = b.sms_per_partition;
  return o;
}

// The CUDA devices ("gpu1" for a whole GPU, "gpu0.p2" for partition 2 of GPU 0; kind "gpu") of
// `capacity` bytes each, linked by `link` under `comm`.
[[nodiscard]] inline cluster cuda_cluster(const backend_choice& b, link_model link, byte_count capacity,
                                          comm_mode comm) {
  std::vector<device> list(b.devices);
  for (std::size_t d = 0; d < b.devices; ++d) {
    list[d].name =
        b.gpus.empty() ? "gpu" + std::to_string(b.gpu) + ".p" + std::to_string(d) : "gpu" + std::to_string(b.gpus[d]);
    list[d].kind = "gpu";
    list[d].capacity = capacity;
  }
  return cluster(std::move(list), link, comm);
}

// The round trip per vertex and, on 2 devices or more, the link between devices 0 and 1.
[[nodiscard]] inline backend_calibration calibrate_cuda(any_backend& backend, std::size_t devices) {
  if (devices >= 2) return calibrate_backend(backend, {.devices = devices});
  backend_calibration out;
  out.launch_overhead = launch_round_trip(backend, 1);
  return out;
}
#endif

// gantry calibrate (calibrate_command.cpp).
int run_calibrate_command(const calibrate_flags& flags, std::ostream& out);

}  // namespace gantry::cli
