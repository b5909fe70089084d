// What every benchmark needs: the median wall-clock time of repeated runs, the process's peak
// resident memory, a child process's costs, and the closing `TARGET <name> measured=<x>
// limit=<y> ok|FAIL` line.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

extern char** environ;

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

// What a child process cost, from wait4(): its (and its children's) CPU time, its wall time and
// the largest resident set among them; ok when it exited with 0.
struct child_cost {
  double cpu_seconds = 0, wall_seconds = 0, peak_mb = 0;
  bool ok = false;
};

// Runs args (args[0] looked up in PATH when it has no slash) to its end; `quiet`: its standard
// output and error go to /dev/null.
inline child_cost run_child(const std::vector<std::string>& args, bool quiet = false) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return {};
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return {};
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return {.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime),
          .wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
          .peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0,
          .ok = WIFEXITED(status) && WEXITSTATUS(status) == 0};
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
