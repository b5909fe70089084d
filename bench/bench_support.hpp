// What every benchmark needs: the median wall-clock time of repeated runs, the process's peak
// resident memory, and the closing `TARGET <name> measured=<x> limit=<y> ok|FAIL` line.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace bench {

// Median of `repeats` timed calls of f, in seconds.
template <class F>
double median_seconds(int repeats, F&& f) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Peak resident set size of this process so far, in KiB (Linux reports KiB).
inline long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// A target is met when measured <= limit.
inline void print_target(const char* name, double measured, double limit) {
  std::printf("TARGET %s measured=%.4g limit=%.4g %s\n", name, measured, limit, measured <= limit ? "ok" : "FAIL");
}

// A throughput target is met when measured >= limit; its name should say so ("..._at_least").
inline void print_target_at_least(const char* name, double measured, double limit) {
  std::printf("TARGET %s measured=%.4g limit=%.4g %s\n", name, measured, limit, measured >= limit ? "ok" : "FAIL");
}

}  // namespace bench
