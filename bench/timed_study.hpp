// What the executors' studies with timed kernels share (bench_execute, bench_execute_starpu): how
// a workload's times are stretched so that a run is long enough to measure.
#pragma once

#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>

#include <algorithm>
#include <cstddef>

namespace bench {

struct timed_scaling {
  double scale = 1;         // every compute time is multiplied by it
  gantry::link_model link;  // the link the study's cluster uses
};

// The factor that makes g's compute last at least `target_work` in all and 0.5 ms per vertex that
// computes, so that a backend's cost per vertex (tens of microseconds) is a small part of each;
// and a reference link of 12 GB/s and 10 us slowed by the same factor, so that the balance of
// compute and transfers is the workload's own, but never faster than this machine's memcpy (as
// calibrated): a copy cannot beat the memory it runs on.
inline timed_scaling timed_scaling_of(const gantry::graph& g, gantry::seconds target_work,
                                      const gantry::link_model& memcpy_link) {
  gantry::seconds work = 0;
  std::size_t working = 0;
  for (const auto& v : g.vertices()) {
    work += v.compute;
    working += v.compute > 0 ? 1 : 0;
  }
  const double scale = std::max(target_work, 0.5e-3 * static_cast<double>(working)) / work;
  return {scale,
          {.latency = std::max(10e-6 * scale, memcpy_link.latency),
           .bandwidth = std::min(12e9 / scale, memcpy_link.bandwidth)}};
}

}  // namespace bench
