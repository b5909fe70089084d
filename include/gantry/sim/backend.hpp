// What the event loop (sim/event_loop.hpp) asks of a backend: the launches it makes, the
// completions it takes back, and the two kinds of backend it runs over (a measured one, such as
// the CPU and CUDA executors' in exec/, and a virtual-time one, such as sim/virtual_clock.hpp).
#pragma once

#include <gantry/core/types.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <vector>

namespace gantry {

// What the loop asks a backend to do. Durations are the model's (drawn around it with cv > 0): a
// backend whose kernels stand in for the real work (a calibrated busy loop, a paced copy, the
// virtual clock) runs them that long; one that runs the real work ignores them.
struct vertex_launch {
  vertex_id vertex = no_vertex;
  device_id device = no_device;
  seconds duration = 0;
  byte_count traffic = 0;  // bytes it reads and writes in memory (a virtual clock sharing bandwidth uses them)
};
struct copy_launch {
  std::uint32_t id = 0;  // the transfer's index in the schedule
  vertex_id tensor = no_vertex;
  device_id from = no_device, to = no_device;
  byte_count bytes = 0;
  seconds duration = 0;
};
// A finished activity, with the times the backend measured on its clock (seconds since begin()).
struct completion {
  bool is_copy = false;
  std::uint32_t id = 0;  // the vertex, or the transfer's index
  seconds start = 0, finish = 0;
};

// A backend runs what it is launched, in launch order per device, and reports each completion
// once. The loop launches a vertex only to an idle device and a copy only when its route is free,
// so a backend needs no queueing policy of its own.
template <class B>
concept execution_backend = requires(B& b, const vertex_launch& v, const copy_launch& c, std::vector<completion>& out) {
  b.begin(std::size_t{});  // a run on this many devices starts now: the clock's zero
  b.launch_vertex(v);
  b.launch_copy(c);
  b.wait(out);  // blocks until at least one launched activity has finished, appends what has
  { b.now() } -> std::convertible_to<seconds>;
};

// A backend whose clock is the model's: every launch finishes exactly its duration after it, so
// times are known when a launch is decided (where it stretches durations, stretches() says so
// and finishes come from the completions: a virtual_clock whose devices share bandwidth).
// advance() moves the clock to the earliest finish;
// pop_due() hands over, one at a time in launch order, what finishes by now (launches made while
// handing over included). Over such a backend the loop is the simulator: a start is recorded when
// it is decided (a failed run keeps what was under way), and a vertex of zero modelled time takes
// no launch: it frees its inputs and then takes its output, at once (an empty interval holds
// nothing, schedule.hpp). Over a measured backend a launch takes time, so a vertex holds its
// inputs, temporary and output bytes together, zero modelled time or not.
template <class B>
concept virtual_time_backend = execution_backend<B> && requires(B& b, completion& c) {
  b.advance();
  { b.pop_due(c) } -> std::same_as<bool>;
};

namespace detail {
// This thread's CPU clock where POSIX offers it, else the steady clock: what a measured run reports
// as host_cpu_seconds (read twice a run: it is a system call).
inline seconds thread_cpu_seconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
#else
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}
}  // namespace detail

}  // namespace gantry
