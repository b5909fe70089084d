// Measures the CPU backend's machine so that placement and simulation use it: the busy loop's rate,
// the executor's round trip per vertex (launch, run nothing, complete), and a link fitted (Baechi
// §4.1's latency + bytes / bandwidth) to unpaced copies between device buffers, each timed from its
// launch to its end (latency from the smallest copy, bandwidth from the least-squares slope).
// calibrated_cluster() turns the result into a cluster of CPU devices. calibrate_backend() measures
// the round trip and the link of any backend (the CUDA one too); measure_domain() the memory
// bandwidth devices share (a bandwidth-bound probe alone and on every device at once).
#pragma once

#include <gantry/exec/cpu_backend.hpp>
#include <gantry/exec/executor.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/link_fit.hpp>
#include <gantry/model/model.hpp>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace gantry {

struct cpu_calibration_options {
  std::size_t devices = 2;
  seconds loop_time = 0.05;              // how long the busy loop is timed
  std::size_t overhead_vertices = 1000;  // length of the chain of empty vertices
  std::vector<byte_count> copy_sizes = {std::uint64_t{4} << 10, std::uint64_t{64} << 10, std::uint64_t{1} << 20,
                                        std::uint64_t{4} << 20, std::uint64_t{16} << 20};
  int repeats = 7;  // copies per size; their median is the sample
};

struct cpu_calibration {
  double loop_rate = 0;                  // busy-loop iterations per second
  seconds launch_overhead = 0;           // per vertex: the executor's round trip for a vertex of no work
  link_fit link;                         // the fitted link between two device buffers
  std::vector<transfer_sample> samples;  // per size: the median copy time
  unsigned hardware_threads = 0;         // std::thread::hardware_concurrency()
};

// What any backend's calibration measures: the executor's round trip per vertex and the link.
struct backend_calibration {
  seconds launch_overhead = 0;           // per vertex: the round trip for a vertex of no work
  link_fit link;                         // latency from the smallest copy, bandwidth from the slope
  std::vector<transfer_sample> samples;  // per size: the median copy time
};
struct backend_calibration_options {
  std::size_t devices = 2;               // the run's devices; copies go from device 0 to device 1
  std::size_t overhead_vertices = 1000;  // length of the chain of empty vertices
  std::vector<byte_count> copy_sizes = {std::uint64_t{4} << 10, std::uint64_t{64} << 10, std::uint64_t{1} << 20,
                                        std::uint64_t{4} << 20, std::uint64_t{16} << 20};
  int repeats = 7;  // copies per size; their median is the sample
};

// The executor's round trip per vertex on `backend` with `devices` devices: a chain of `vertices`
// empty vertices on device 0, run once to warm up and once timed; its makespan over its length.
template <execution_backend B>
[[nodiscard]] seconds launch_round_trip(B& backend, std::size_t devices, std::size_t vertices = 1000) {
  const std::size_t n = std::max<std::size_t>(vertices, 2);
  graph chain;
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = "v";  // "v" + to_string(i) trips GCC 12's -Wrestrict (a false positive)
    name += std::to_string(i);
    chain.add_vertex(std::move(name), 0.0);
    if (i > 0) chain.add_edge(static_cast<vertex_id>(i - 1), static_cast<vertex_id>(i), 0);
  }
  const cluster c = cluster::uniform(devices);
  const graph_model model(chain, c);
  const std::vector<device_id> placement(n, 0);
  (void)execute(chain, model, c, std::span<const device_id>(placement), backend);  // warm up
  const auto run = execute(chain, model, c, std::span<const device_id>(placement), backend);
  return run.schedule.makespan / static_cast<double>(n);
}

// Measures `backend` (any execution_backend, CPU or GPU): launch_round_trip() with
// `overhead_vertices`, and copies from device 0 to device 1, one at a time, each timed from launch
// to end (median of `repeats` per size), for the link. The backend must copy at least the largest
// size for real and run a vertex of zero modelled time as no work (a CPU backend unpaced, a GPU
// one without operations).
template <execution_backend B>
[[nodiscard]] backend_calibration calibrate_backend(B& backend, const backend_calibration_options& options = {}) {
  if (options.devices < 2) throw invalid_input("calibrate_backend: needs at least 2 devices to time copies between");
  if (options.copy_sizes.size() < 2 || options.repeats < 1)
    throw invalid_input("calibrate_backend: needs at least 2 copy sizes and 1 repeat");
  backend_calibration out;
  out.launch_overhead = launch_round_trip(backend, options.devices, options.overhead_vertices);
  backend.begin(options.devices);
  std::vector<completion> done;
  const auto copy_once = [&](byte_count bytes) {
    done.clear();
    backend.launch_copy({0, 0, 0, 1, bytes, 0});
    while (done.empty()) backend.wait(done);
    return done.front().finish - done.front().start;
  };
  copy_once(*std::max_element(options.copy_sizes.begin(), options.copy_sizes.end()));  // grows the buffers
  for (const byte_count bytes : options.copy_sizes) {
    std::vector<double> times;
    for (int i = 0; i < options.repeats; ++i) times.push_back(copy_once(bytes));
    std::sort(times.begin(), times.end());
    out.samples.push_back({static_cast<double>(bytes), times[times.size() / 2]});
  }
  // The least-squares slope gives the bandwidth; large copies dominate the intercept, so the
  // latency is what the smallest copy takes beyond its bytes at that bandwidth.
  out.link = fit_link(out.samples);
  const auto smallest =
      *std::min_element(out.samples.begin(), out.samples.end(),
                        [](const transfer_sample& a, const transfer_sample& b) { return a.bytes < b.bytes; });
  out.link.link.latency = std::max(0.0, smallest.time - smallest.bytes / out.link.link.bandwidth);
  return out;
}

// The devices' shared memory bandwidth, as a bandwidth-bound probe measures it: per device, two
// inputs of `elements` floats and their sum (op "add": 12 bytes moved per element). Each sum runs
// alone (all on device 0, one after another) and then one per device at once; `traffic` is the
// bytes one sum moves.
struct domain_measurement {
  byte_count traffic = 0;
  seconds alone = 0, together = 0;  // median time of one sum alone, and beside the others
  std::size_t devices = 0;
  // Bytes per second one device reaches alone, and all together (what a bandwidth_domain states).
  [[nodiscard]] double alone_bandwidth() const { return static_cast<double>(traffic) / alone; }
  [[nodiscard]] double together_bandwidth() const {
    return static_cast<double>(devices) * static_cast<double>(traffic) / together;
  }
  [[nodiscard]] double slowdown() const { return together / alone; }
};

// The probe graph: sums 0..devices-1, each vertices 3k (input), 3k + 1 (input), 3k + 2 (the sum).
// A backend that runs it needs its operations (operations_of(probe)).
[[nodiscard]] inline graph bandwidth_probe(std::size_t devices, std::uint64_t elements) {
  if (devices == 0 || elements == 0) throw invalid_input("bandwidth_probe: needs at least one device and one element");
  graph g;
  const byte_count bytes = 4 * elements;
  for (std::size_t k = 0; k < devices; ++k) {
    const std::string suffix = std::to_string(k);
    const auto a = g.add_vertex(vertex_properties{.name = "a" + suffix, .output = bytes, .op = "input"});
    const auto b = g.add_vertex(vertex_properties{.name = "b" + suffix, .output = bytes, .op = "input"});
    const auto sum =
        g.add_vertex(vertex_properties{.name = "sum" + suffix, .compute = 1e-3, .output = bytes, .op = "add"});
    g.add_edge(a, sum, bytes);
    g.add_edge(b, sum, bytes);
  }
  return g;
}

// Runs bandwidth_probe(devices, elements) on `backend` (which must run its operations for real)
// `repeats` times each way, after one warm-up, and returns the medians.
template <execution_backend B>
[[nodiscard]] domain_measurement measure_domain(B& backend, std::size_t devices, std::uint64_t elements,
                                                int repeats = 5) {
  if (devices < 1 || repeats < 1) throw invalid_input("measure_domain: needs at least one device and one repeat");
  const graph probe = bandwidth_probe(devices, elements);
  const cluster c = cluster::uniform(devices);
  const graph_model model(probe, c);
  std::vector<device_id> alone(probe.vertex_count(), 0), together(probe.vertex_count());
  for (vertex_id v = 0; v < together.size(); ++v) together[v] = static_cast<device_id>(v / 3);
  const auto median_sum_time = [&](const std::vector<device_id>& placement) {
    std::vector<seconds> times;
    for (int run = 0; run <= repeats; ++run) {
      const auto r = execute(probe, model, c, std::span<const device_id>(placement), backend);
      if (!r.ok()) throw invalid_input("measure_domain: the probe did not run: " + r.outcome.message);
      if (run == 0) continue;  // warm-up
      for (vertex_id v = 2; v < probe.vertex_count(); v += 3)
        times.push_back(r.schedule.finish[v] - r.schedule.start[v]);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
  domain_measurement out;
  out.traffic = 12 * elements;
  out.devices = devices;
  out.alone = median_sum_time(alone);
  out.together = median_sum_time(together);
  return out;
}

// Adds one bandwidth domain over every device of `c`, of the bandwidth all devices reached
// together, and `cores` processors they share (CPU device threads: the machine's hardware threads;
// 0 for devices with processors of their own, as GPU partitions).
inline void add_measured_domain(cluster& c, const domain_measurement& m, std::string name = "memory",
                                std::uint32_t cores = 0) {
  bandwidth_domain domain{.name = std::move(name), .devices = {}, .bandwidth = m.together_bandwidth(), .cores = cores};
  for (device_id d = 0; d < c.device_count(); ++d) domain.devices.push_back(d);
  c.add_domain(std::move(domain));
}

[[nodiscard]] inline cpu_calibration calibrate_cpu(const cpu_calibration_options& options = {}) {
  if (options.devices < 2) throw invalid_input("calibrate_cpu: needs at least 2 devices to time copies between");
  if (options.copy_sizes.size() < 2 || options.repeats < 1)
    throw invalid_input("calibrate_cpu: needs at least 2 copy sizes and 1 repeat");
  cpu_calibration out;
  out.hardware_threads = std::thread::hardware_concurrency();
  out.loop_rate = calibrate_busy_loop(options.loop_time);
  const byte_count largest = *std::max_element(options.copy_sizes.begin(), options.copy_sizes.end());
  cpu_backend backend(
      {.kernel = cpu_kernel::spin, .max_copy_bytes = static_cast<std::size_t>(largest), .pace_copies = false});
  auto measured = calibrate_backend(backend, {.devices = options.devices,
                                              .overhead_vertices = options.overhead_vertices,
                                              .copy_sizes = options.copy_sizes,
                                              .repeats = options.repeats});
  out.launch_overhead = measured.launch_overhead;
  out.link = measured.link;
  out.samples = std::move(measured.samples);
  return out;
}

// `count` CPU devices ("cpu0", ...; kind "cpu", speed 1) of `capacity` bytes each, linked by the
// calibrated link under `comm`.
[[nodiscard]] inline cluster calibrated_cluster(const cpu_calibration& calibration, std::size_t count,
                                                byte_count capacity = unlimited_memory,
                                                comm_mode comm = comm_mode::parallel) {
  std::vector<device> list(count);
  for (std::size_t d = 0; d < count; ++d) {
    list[d].name = "cpu" + std::to_string(d);
    list[d].kind = "cpu";
    list[d].capacity = capacity;
  }
  return cluster(std::move(list), calibration.link.link, comm);
}

}  // namespace gantry
