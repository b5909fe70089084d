// The CUDA backend of the executor (exec/executor.hpp), compiled by nvcc only (CUDA >= 12.4). A
// device of the cluster is either a whole GPU or a virtual device: an SM partition of one GPU made
// with green contexts, sized by the GPU's SM granularity (exec/sm_partition.hpp). Each device has
// a compute stream and a copy stream per receiving device. A vertex is either its real work
// (cuda_backend_options::operations, from exec/operations.hpp: a cuBLAS SGEMM of the product's
// shape, or an element-wise kernel that reads every operand element and writes the output) or a
// spin kernel of its modelled duration (clock64 cycles at the GPU's clock rate). A copy is a
// device-to-device copy between partitions of one GPU, cudaMemcpyPeerAsync between GPUs with peer
// access, or staged through the sender's pinned host memory between GPUs without it. Events
// bracket every activity; every event of a GPU is timed from one epoch (align_clocks()). Under
// the executor each vertex costs a host round trip (event query, launch); run_ahead() enqueues a
// whole strict replay at once (exec/replay_ahead.hpp), on streams or as one CUDA graph. The driver
// API is looked up at run time, so a program using this backend starts without the NVIDIA driver.
#pragma once

#include <gantry/exec/executor.hpp>
#include <gantry/exec/operations.hpp>
#include <gantry/exec/replay_ahead.hpp>
#include <gantry/exec/sm_partition.hpp>

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace gantry {

namespace detail {
// The driver API's functions, looked up through the runtime (cudaGetDriverEntryPointByVersion)
// instead of linked, so that a program using this backend starts on a machine without the NVIDIA
// driver (libcuda.so.1) and can say there is no GPU.
struct driver_api {
  decltype(&::cuCtxFromGreenCtx) ctx_from_green_ctx = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuDevResourceGenerateDesc) dev_resource_generate_desc = nullptr;
  decltype(&::cuDevSmResourceSplitByCount) dev_sm_resource_split_by_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetDevResource) device_get_dev_resource = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuGreenCtxCreate) green_ctx_create = nullptr;
  decltype(&::cuGreenCtxDestroy) green_ctx_destroy = nullptr;
  decltype(&::cuGreenCtxStreamCreate) green_ctx_stream_create = nullptr;
  decltype(&::cuInit) init = nullptr;
};
template <class F>
void load(F& f, const char* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, CUDA_VERSION, cudaEnableDefault, &found);
  if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr)
    throw std::runtime_error(std::string("cuda_backend: the CUDA driver has no ") + symbol +
                             " (green contexts need a driver for CUDA 12.4 or later): " + cudaGetErrorString(e));
  f = reinterpret_cast<F>(p);
}
inline const driver_api& driver() {
  static const driver_api api = [] {
    driver_api a;
    load(a.ctx_from_green_ctx, "cuCtxFromGreenCtx");
    load(a.ctx_get_current, "cuCtxGetCurrent");
    load(a.ctx_set_current, "cuCtxSetCurrent");
    load(a.dev_resource_generate_desc, "cuDevResourceGenerateDesc");
    load(a.dev_sm_resource_split_by_count, "cuDevSmResourceSplitByCount");
    load(a.device_get, "cuDeviceGet");
    load(a.device_get_dev_resource, "cuDeviceGetDevResource");
    load(a.get_error_string, "cuGetErrorString");
    load(a.green_ctx_create, "cuGreenCtxCreate");
    load(a.green_ctx_destroy, "cuGreenCtxDestroy");
    load(a.green_ctx_stream_create, "cuGreenCtxStreamCreate");
    load(a.init, "cuInit");
    return a;
  }();
  return api;
}

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("cuda_backend: ") + what + ": " + cudaGetErrorString(e));
}
inline void cu_check(CUresult e, const char* what) {
  if (e != CUDA_SUCCESS) {
    const char* text = nullptr;
    detail::driver().get_error_string(e, &text);
    throw std::runtime_error(std::string("cuda_backend: ") + what + ": " + (text ? text : "unknown error"));
  }
}

inline void blas_check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuda_backend: ") + what + ": cuBLAS status " +
                             std::to_string(static_cast<int>(e)));
}

// One thread spins until `cycles` of the SM clock have passed: a vertex of a profiled graph.
__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Spins until the host sets *open (mapped pinned memory), or for at most `cycles` (then sets
// *expired): the gate that holds a plan's streams until the host has enqueued all of it.
__global__ void gate_kernel(const volatile int* open, long long cycles, int* expired) {
  const long long start = clock64();
  while (*open == 0) {
    if (clock64() - start > cycles) {
      *expired = 1;
      return;
    }
  }
}

// An element-wise op (exec/operations.hpp): output element i combines the operand elements i,
// i + E, i + 2E, ... of x (all operands end to end, folded over the output's E elements: a bias is
// broadcast, a reduction folds), then applies the op. Normalisations (RMSNorm, softmax) scale each
// element by its own value instead of a reduction over the tensor: the same memory traffic.
__global__ void elementwise_kernel(const float* x, unsigned long long reads, float* y, unsigned long long elements,
                                   int op) {
  const auto stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < elements; i += stride) {
    const auto kind = static_cast<elementwise_op>(op);
    float v = i < reads ? x[i] : 1.0f;
    if (kind == elementwise_op::reduce_exp) v = __expf(v);
    for (auto at = i + elements; at < reads; at += elements) {
      const float u = x[at];
      if (kind == elementwise_op::mul) v *= u;
      else if (kind == elementwise_op::reduce_exp) v += __expf(u);
      else v += u;
    }
    switch (kind) {
      case elementwise_op::relu:
        v = fmaxf(v, 0.0f);
        break;
      case elementwise_op::silu:
        v = v / (1.0f + __expf(-v));
        break;
      case elementwise_op::rope:
        v = v * 0.5f + v * v * 0.25f;
        break;
      case elementwise_op::rmsnorm:
        v = v * rsqrtf(v * v + 1e-6f);
        break;
      case elementwise_op::softmax:
        v = __expf(v) / (1.0f + __expf(v));
        break;
      default:
        break;
    }
    y[i] = v;
  }
}
}  // namespace detail

// How run_ahead() hands a plan to the GPU: enqueued call by call on the devices' streams, or
// captured once as a CUDA graph and launched with one call (the host then pays one launch per run,
// and the capture, instantiation and upload, reported by last_prepare_seconds(), once).
enum class cuda_replay { streams, graph };

struct cuda_backend_options {
  // Whole GPUs: device d of the cluster is GPU gpus[d]. Empty: one GPU cut into partitions.
  std::vector<int> gpus{};
  int gpu = 0;  // the GPU to partition when gpus is empty
  // SMs per virtual device; 0: the largest equal split the GPU's SM granularity allows
  // (exec/sm_partition.hpp). A size the driver does not allow is refused with the legal ones.
  unsigned sms_per_partition = 0;
  std::size_t max_copy_bytes = std::size_t{256} << 20;  // buffer per device; larger copies move this much
  // One per vertex (operations_of()): vertices run their real work, products with cuBLAS. Empty:
  // every vertex spins for its modelled duration.
  std::vector<operation> operations{};
  cuda_replay replay = cuda_replay::streams;  // how run_ahead() enqueues a plan
};

class cuda_backend {
 public:
  explicit cuda_backend(cuda_backend_options options = {}) : options_(std::move(options)) {}
  cuda_backend(const cuda_backend&) = delete;
  cuda_backend& operator=(const cuda_backend&) = delete;
  ~cuda_backend() { release(); }

  void begin(std::size_t devices) {
    if (devices != devices_.size()) {
      release();
      create(devices);
    }
    for (const auto& a : pending_) recycle(a);
    pending_.clear();
    // One start for every device: the epochs are recorded behind the gate, opened once every
    // stream waits at it, so they fire together instead of one host call apart.
    hold();
    release_hold();
    settle_clocks();
    epoch_ = std::chrono::steady_clock::now();
  }

  void launch_vertex(const vertex_launch& v) { pending_.push_back(enqueue_vertex(v, {}, false)); }

  void launch_copy(const copy_launch& c) { pending_.push_back(enqueue_copy(c, {}, false)); }

  // Polls the events of what is running until at least one has finished.
  void wait(std::vector<completion>& out) {
    for (;;) {
      for (std::size_t i = 0; i < pending_.size();) {
        const activity a = pending_[i];
        const cudaError_t state = in_context(a.end_device, [&] { return cudaEventQuery(a.end); });
        if (state == cudaErrorNotReady) {
          ++i;
          continue;
        }
        detail::cuda_check(state, "query an event");
        out.push_back({a.is_copy, a.id, time_of(a.device, a.begin), time_of(a.end_device, a.end)});
        recycle(a);
        pending_[i] = pending_.back();
        pending_.pop_back();
      }
      if (!out.empty() || pending_.empty()) return;
    }
  }

  [[nodiscard]] seconds now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
  }

  // Strict replay enqueued ahead (exec/replay_ahead.hpp): every activity of the plan goes onto its
  // stream at once, waiting on the events of what it depends on (cudaStreamWaitEvent), so the host
  // does not round-trip per vertex; then waits for all and reads every time from the events.
  // Returns the host time spent enqueueing (cuda_replay::streams) or launching the captured graph
  // (cuda_replay::graph; its capture and instantiation are last_prepare_seconds()).
  seconds run_ahead(const ahead_plan& plan, std::vector<completion>& out) {
    if (plan.devices != devices_.size())
      throw invalid_input("cuda_backend: a plan for " + std::to_string(plan.devices) + " devices on " +
                          std::to_string(devices_.size()));
    const std::size_t count = plan.activities.size();
    std::vector<activity> acts(count);
    // Enqueued device by device: each device's activities (its vertices and the copies it sends,
    // all in its context) go in plan order as far as their waits allow, then the next device's.
    // The plan's order is topological, so this never stalls.
    const auto context_of = [&](const ahead_activity& step) {
      return step.is_copy ? plan.copies.at(step.id).from : plan.vertices.at(step.id).device;
    };
    std::vector<std::vector<std::uint32_t>> queue(devices_.size());
    for (std::uint32_t i = 0; i < count; ++i) queue.at(context_of(plan.activities[i])).push_back(i);
    const auto enqueue_all = [&](bool capturing) {
      std::vector<bool> enqueued(count, false);
      std::vector<std::size_t> next(devices_.size(), 0);
      std::vector<cudaEvent_t> after;
      for (std::size_t done = 0, d = 0; done < count; d = (d + 1) % devices_.size()) {
        for (; next[d] < queue[d].size(); ++next[d], ++done) {
          const std::uint32_t i = queue[d][next[d]];
          const auto& step = plan.activities[i];
          after.clear();
          bool ready = true;
          for (const auto b : step.after) {
            ready = ready && enqueued[b];
            if (ready) after.push_back(acts[b].dependency());
          }
          if (!ready) break;
          acts[i] = step.is_copy ? enqueue_copy(plan.copies[step.id], after, capturing)
                                 : enqueue_vertex(plan.vertices[step.id], after, capturing);
          enqueued[i] = true;
        }
      }
    };
    seconds host = 0;
    last_prepare_seconds_ = 0;
    cudaGraphExec_t exec = nullptr;
    if (options_.replay == cuda_replay::graph) {
      const auto t0 = std::chrono::steady_clock::now();
      exec = capture(enqueue_all);
      last_prepare_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    // Every stream waits behind a gate until everything is enqueued, so the measured run is the
    // GPU's alone, not paced by the host's calls; the epochs are recorded behind the gate too. A
    // stream holds only so many calls before the host blocks (510 launch-and-record pairs measured
    // on an H200): a plan with more on one stream, unless captured, runs as it is enqueued.
    std::vector<std::size_t> calls(devices_.size() * (devices_.size() + 1), 0);  // per compute and pair stream
    for (const auto& step : plan.activities) {
      const std::size_t d = context_of(step);
      const std::size_t stream = step.is_copy ? devices_.size() * (d + 1) + plan.copies[step.id].to : d;
      calls[stream] += step.after.size() + 3;
    }
    const bool held = exec != nullptr || *std::max_element(calls.begin(), calls.end()) <= max_held_calls;
    if (held) hold();
    const auto t0 = std::chrono::steady_clock::now();
    cudaError_t launched = cudaSuccess;
    try {
      if (exec != nullptr) {
        set_device(0);
        launched = cudaGraphLaunch(exec, devices_[0].stream);
      } else {
        enqueue_all(false);
      }
    } catch (...) {  // open the gate, so what was enqueued runs out instead of holding the GPU
      if (held) release_hold();
      if (exec != nullptr) cudaGraphExecDestroy(exec);
      throw;
    }
    host = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (held) release_hold();
    if (exec != nullptr) {
      if (launched == cudaSuccess) detail::cuda_check(cudaStreamSynchronize(devices_[0].stream), "run a captured plan");
      cudaGraphExecDestroy(exec);
      detail::cuda_check(launched, "launch a captured plan");
    }
    for (const auto& a : acts) {
      set_device(a.end_device);
      detail::cuda_check(cudaEventSynchronize(a.end), "wait for a planned activity");
    }
    settle_clocks();
    last_host_paced_ = !held || gate_flags_[1] != 0;
    for (const auto& a : acts) {
      out.push_back({a.is_copy, a.id, time_of(a.device, a.begin), time_of(a.end_device, a.end)});
      recycle(a);
    }
    return host;
  }

  // Whether the last run_ahead() started before all of it was enqueued (too many calls on one
  // stream to hold, or enqueueing outlasted the gate's 2 s): its run was then partly paced by the
  // host's calls.
  [[nodiscard]] bool last_host_paced() const noexcept { return last_host_paced_; }
  static constexpr std::size_t max_held_calls = 800;

  void set_replay(cuda_replay replay) noexcept { options_.replay = replay; }

  // The capture, instantiation and upload of the last run_ahead() in cuda_replay::graph mode, in
  // seconds.
  [[nodiscard]] seconds last_prepare_seconds() const noexcept { return last_prepare_seconds_; }

  // What the devices are, once made (by begin() or profile()): "GPU 0 (NVIDIA H200, 132 SMs):
  // 4 partitions of 32 SMs (4 of 132 unused); one clock" or the whole GPUs.
  [[nodiscard]] std::string description() const {
    return clocks_.empty() ? description_ : description_ + "; " + clocks_;
  }

  // Each shaped vertex's time alone on device 0 (its events), the median of `runs` rounds after a
  // warm-up round, every round running every vertex once in id order; a timed vertex keeps g's
  // compute time (exec/eigen_operations.hpp's profile_operations() for the GPU). Needs operations.
  [[nodiscard]] std::vector<seconds> profile(const graph& g, std::size_t devices, int runs = 5) {
    detail::check_profile("cuda_backend::profile", g, options_.operations, runs);  // before the GPU is set up
    begin(devices);
    auto& dev = devices_[0];
    set_device(0);
    const cudaEvent_t start = take_event(0), stop = take_event(0);
    auto out = detail::profile_rounds("cuda_backend::profile", g, options_.operations, runs, [&](vertex_id v) {
      detail::cuda_check(cudaEventRecord(start, dev.stream), "record a start");
      run({v, 0, 0}, dev);
      detail::cuda_check(cudaEventRecord(stop, dev.stream), "record an end");
      detail::cuda_check(cudaEventSynchronize(stop), "wait for a profiled vertex");
      float ms = 0;
      detail::cuda_check(cudaEventElapsedTime(&ms, start, stop), "time a profiled vertex");
      return 1e-3 * ms;
    });
    dev.free_events.push_back(start);
    dev.free_events.push_back(stop);
    return out;
  }

 private:
  struct device_state {
    int gpu = 0;
    CUgreenCtx green = nullptr;            // null for a whole GPU
    CUcontext context = nullptr;           // the green context's, or the GPU's primary context
    std::vector<cudaEvent_t> free_events;  // made in this context: events belong to one
    cudaEvent_t epoch = nullptr;
    // Whose epoch this device's times are measured from, and that epoch's offset from this
    // device's: the first device of the same GPU where the driver times events of two contexts
    // (one clock), else its own (then devices agree only as well as the gate made their epochs).
    device_id clock = 0;
    float zero_ms = 0;  // the clock's earliest epoch, before its own, in ms
    cudaStream_t stream = nullptr;
    std::vector<cudaStream_t> send;     // a copy stream per receiving device (none to itself)
    std::vector<cudaStream_t> receive;  // per sending device: the second half of a staged copy
    void* buffer = nullptr;
    void* staging = nullptr;  // pinned host memory, for copies to GPUs without peer access
    double clock_hz = 1e9;
    int sms = 0;  // SMs the device runs on: its partition's, or the GPU's
    cublasHandle_t blas = nullptr;
    float *a = nullptr, *b = nullptr, *c = nullptr, *x = nullptr, *y = nullptr;  // real work's buffers
  };
  struct activity {
    bool is_copy;
    std::uint32_t id;
    device_id device;      // whose context and epoch its start event belongs to
    device_id end_device;  // its end event's: the receiver's for a staged copy
    cudaEvent_t begin, end;
    cudaEvent_t staged = nullptr;  // a staged copy's event between its two halves (the sender's)
    // In a capture, what other streams wait for: a plain record after `end` (a timed, external
    // record becomes a graph node but does not order captured streams). Null: `end` itself.
    cudaEvent_t after_end = nullptr, staged_dependency = nullptr;
    [[nodiscard]] cudaEvent_t dependency() const noexcept { return after_end ? after_end : end; }
  };

  void mark_dependency(activity& a, cudaStream_t stream) {
    a.after_end = take_event(a.end_device);
    detail::cuda_check(cudaEventRecord(a.after_end, stream), "mark an activity's end");
  }

  // Events recorded during a capture become event-record nodes only when marked external.
  static void record(cudaEvent_t e, cudaStream_t s, bool capturing) {
    detail::cuda_check(capturing ? cudaEventRecordWithFlags(e, s, cudaEventRecordExternal) : cudaEventRecord(e, s),
                       "record an event");
  }

  activity enqueue_vertex(const vertex_launch& v, const std::vector<cudaEvent_t>& after, bool capturing) {
    auto& dev = devices_.at(v.device);
    set_device(v.device);
    for (const cudaEvent_t e : after) detail::cuda_check(cudaStreamWaitEvent(dev.stream, e, 0), "wait for an input");
    activity a{false, v.vertex, v.device, v.device, take_event(v.device), take_event(v.device)};
    record(a.begin, dev.stream, capturing);
    run(v, dev);
    record(a.end, dev.stream, capturing);
    if (capturing) mark_dependency(a, dev.stream);
    return a;
  }

  // Closes the gate: device 0 runs a kernel that spins until release_hold() (or 2 s), and every
  // device's stream waits for it, then records its epoch.
  void hold() {
    gate_flags_[0] = 0;
    gate_flags_[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    set_device(0);
    auto& first = devices_[0];
    detail::gate_kernel<<<1, 1, 0, first.stream>>>(gate_device_flags_, static_cast<long long>(2.0 * first.clock_hz),
                                                   gate_device_flags_ + 1);
    detail::cuda_check(cudaGetLastError(), "launch the gate");
    detail::cuda_check(cudaEventRecord(gate_, first.stream), "record the gate");
    for (device_id d = 0; d < devices_.size(); ++d) {
      set_device(d);
      detail::cuda_check(cudaStreamWaitEvent(devices_[d].stream, gate_, 0), "wait for the gate");
      detail::cuda_check(cudaEventRecord(devices_[d].epoch, devices_[d].stream), "record an epoch");
    }
  }
  // Waits for every epoch hold() recorded, then times the devices against each other.
  void settle_clocks() {
    for (device_id d = 0; d < devices_.size(); ++d) {
      set_device(d);
      detail::cuda_check(cudaEventSynchronize(devices_[d].epoch), "wait for an epoch");
    }
    align_clocks();
  }
  void release_hold() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    gate_flags_[0] = 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  // A copy on the stream of its device pair, after the events in `after` (a plan's dependencies).
  activity enqueue_copy(const copy_launch& c, const std::vector<cudaEvent_t>& after, bool capturing) {
    auto& from = devices_.at(c.from);
    auto& to = devices_.at(c.to);
    if (c.from == c.to)
      throw invalid_input("cuda_backend: a copy from device " + std::to_string(c.from) + " to itself");
    const std::size_t bytes = static_cast<std::size_t>(std::min<byte_count>(c.bytes, options_.max_copy_bytes));
    const bool staged = from.gpu != to.gpu && !peer_access(c.from, c.to);
    const cudaStream_t stream = from.send[c.to];
    set_device(c.from);
    for (const cudaEvent_t e : after) detail::cuda_check(cudaStreamWaitEvent(stream, e, 0), "wait before a copy");
    activity a{true, c.id, c.from, staged ? c.to : c.from, take_event(c.from), nullptr};
    record(a.begin, stream, capturing);
    if (!staged) {
      if (bytes > 0 && from.gpu == to.gpu)
        detail::cuda_check(cudaMemcpyAsync(to.buffer, from.buffer, bytes, cudaMemcpyDeviceToDevice, stream),
                           "copy between partitions");
      else if (bytes > 0)
        detail::cuda_check(cudaMemcpyPeerAsync(to.buffer, to.gpu, from.buffer, from.gpu, bytes, stream),
                           "copy between GPUs");
      a.end = take_event(c.from);
      record(a.end, stream, capturing);
      if (capturing) mark_dependency(a, stream);
      return a;
    }
    // No peer access: device to host into the sender's pinned buffer, then host to device on the
    // receiver's stream once that is done. The end is the receiver's event.
    if (bytes > 0)
      detail::cuda_check(cudaMemcpyAsync(from.staging, from.buffer, bytes, cudaMemcpyDeviceToHost, stream),
                         "stage a copy to the host");
    a.staged = take_event(c.from);
    record(a.staged, stream, capturing);
    set_device(c.to);
    const cudaStream_t second = to.receive[c.from];
    if (capturing) {
      set_device(c.from);
      a.staged_dependency = take_event(c.from);
      detail::cuda_check(cudaEventRecord(a.staged_dependency, stream), "mark a staged copy");
      set_device(c.to);
    }
    detail::cuda_check(cudaStreamWaitEvent(second, a.staged_dependency ? a.staged_dependency : a.staged, 0),
                       "wait for a staged copy");
    if (bytes > 0)
      detail::cuda_check(cudaMemcpyAsync(to.buffer, from.staging, bytes, cudaMemcpyHostToDevice, second),
                         "copy from the host");
    a.end = take_event(c.to);
    record(a.end, second, capturing);
    if (capturing) mark_dependency(a, second);
    return a;
  }

  // Captures what `enqueue` issues on every device's streams as one CUDA graph and instantiates
  // it. Every stream joins the capture through a fork event of device 0's stream and joins back
  // at the end, as stream capture across streams requires.
  template <class F>
  cudaGraphExec_t capture(F&& enqueue) {
    auto& origin = devices_[0];
    set_device(0);
    detail::cuda_check(cudaStreamBeginCapture(origin.stream, cudaStreamCaptureModeRelaxed), "begin a capture");
    cudaGraph_t graph = nullptr;
    try {
      detail::cuda_check(cudaEventRecord(fork_, origin.stream), "fork a capture");
      for_each_stream([&](device_id d, cudaStream_t s) {
        if (d == 0 && s == origin.stream) return;
        set_device(d);
        detail::cuda_check(cudaStreamWaitEvent(s, fork_, 0), "join a stream to the capture");
      });
      enqueue(true);
      for_each_stream([&](device_id d, cudaStream_t s) {
        if (d == 0 && s == origin.stream) return;
        set_device(d);
        const cudaEvent_t joined = take_event(d);
        detail::cuda_check(cudaEventRecord(joined, s), "end a stream's capture");
        set_device(0);
        detail::cuda_check(cudaStreamWaitEvent(origin.stream, joined, 0), "join back a stream");
        devices_[d].free_events.push_back(joined);
      });
      set_device(0);
      detail::cuda_check(cudaStreamEndCapture(origin.stream, &graph), "end a capture");
    } catch (...) {
      set_device(0);
      cudaStreamEndCapture(origin.stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      cudaGetLastError();
      throw;
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    detail::cuda_check(made, "instantiate a captured plan");
    // A graph's first launch also uploads its work to the GPU unless it was uploaded before: done
    // here, so that the launch the host is timed on is the launch alone.
    cudaError_t uploaded = cudaGraphUpload(exec, origin.stream);
    if (uploaded == cudaSuccess) uploaded = cudaStreamSynchronize(origin.stream);
    if (uploaded != cudaSuccess) {
      cudaGraphExecDestroy(exec);
      detail::cuda_check(uploaded, "upload a captured plan");
    }
    return exec;
  }

  template <class F>
  void for_each_stream(F&& f) {
    for (device_id d = 0; d < devices_.size(); ++d) {
      auto& dev = devices_[d];
      f(d, dev.stream);
      for (const cudaStream_t s : dev.send)
        if (s) f(d, s);
      for (const cudaStream_t s : dev.receive)
        if (s) f(d, s);
    }
  }

  // A vertex on its device's stream: its real work, or a spin of its modelled duration.
  void run(const vertex_launch& v, device_state& dev) {
    const operation* o = v.vertex < options_.operations.size() ? &options_.operations[v.vertex] : nullptr;
    if (!options_.operations.empty() && o == nullptr)
      throw invalid_input("cuda_backend: vertex " + std::to_string(v.vertex) + " of a graph with " +
                          std::to_string(options_.operations.size()) + " operations");
    if (o != nullptr && o->kind == operation_kind::matmul) {
      // Column-major C (m x n) = A (m x k) B (k x n).
      const float one = 1.0f, zero = 0.0f;
      const int m = static_cast<int>(o->m), n = static_cast<int>(o->n), k = static_cast<int>(o->k);
      detail::blas_check(
          cublasSgemm(dev.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dev.a, m, dev.b, k, &zero, dev.c, m),
          "run a product");
      return;
    }
    if (o != nullptr && o->kind == operation_kind::elementwise) {
      const unsigned threads = 256;
      const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>(
          (o->elements + threads - 1) / threads, std::uint64_t{8} * static_cast<unsigned>(dev.sms)));
      detail::elementwise_kernel<<<std::max(blocks, 1u), threads, 0, dev.stream>>>(dev.x, o->reads, dev.y, o->elements,
                                                                                   static_cast<int>(o->op));
      detail::cuda_check(cudaGetLastError(), "launch an element-wise kernel");
      return;
    }
    const auto cycles = static_cast<long long>(v.duration * dev.clock_hz);
    detail::spin_kernel<<<1, 1, 0, dev.stream>>>(cycles);
    detail::cuda_check(cudaGetLastError(), "launch a spin kernel");
  }

  // Seconds from the run's start to event e of device d, on d's clock (align_clocks()).
  [[nodiscard]] seconds time_of(device_id d, cudaEvent_t e) {
    float ms = 0;
    detail::cuda_check(in_context(d, [&] { return cudaEventElapsedTime(&ms, devices_[devices_[d].clock].epoch, e); }),
                       "time an event");
    return 1e-3 * (static_cast<double>(ms) + static_cast<double>(devices_[d].zero_ms));
  }

  // Runs an event call (query, elapsed time) without making d's context current, as long as the
  // runtime accepts that: the polling loop then switches no context. Where it does not, it
  // switches from then on.
  template <class F>
  cudaError_t in_context(device_id d, F&& call) {
    if (events_need_context_) set_device(d);
    cudaError_t e = call();
    if (e != cudaSuccess && e != cudaErrorNotReady && !events_need_context_) {
      cudaGetLastError();
      events_need_context_ = true;
      set_device(d);
      e = call();
    }
    return e;
  }

  // Devices of one GPU share its clock; measuring every event of a GPU from one epoch makes a copy
  // and its consumer on two partitions comparable to the clock tick, where separate epochs are
  // microseconds apart. Where the driver refuses to time events of two contexts, each device keeps
  // its own epoch (the gate in begin() made them fire together) and the description says so.
  void align_clocks() {
    bool shared = true;
    std::vector<float> offset(devices_.size(), 0.0f);  // each epoch after its clock's, in ms
    for (device_id d = 0; d < devices_.size(); ++d) {
      auto& dev = devices_[d];
      dev.clock = d;
      for (device_id r = 0; r < d; ++r) {
        if (devices_[r].gpu != dev.gpu || devices_[r].clock != r) continue;
        set_device(d);
        if (cudaEventElapsedTime(&offset[d], devices_[r].epoch, dev.epoch) == cudaSuccess) {
          dev.clock = r;
        } else {
          cudaGetLastError();
          offset[d] = 0;
          shared = false;
        }
        break;
      }
    }
    // Zero is the earliest epoch of the clock: the epochs behind a gate fire microseconds apart,
    // and a device whose epoch fired first may start work before the clock's own epoch.
    for (auto& dev : devices_) dev.zero_ms = 0;
    for (device_id d = 0; d < devices_.size(); ++d)
      devices_[devices_[d].clock].zero_ms = std::max(devices_[devices_[d].clock].zero_ms, -offset[d]);
    for (auto& dev : devices_) dev.zero_ms = devices_[dev.clock].zero_ms;
    clocks_ = shared ? "one clock per GPU" : "an epoch per device (the driver does not time events across contexts)";
  }

  [[nodiscard]] bool peer_access(device_id from, device_id to) const {
    return std::find(peers_.begin(), peers_.end(), std::pair{devices_[from].gpu, devices_[to].gpu}) != peers_.end();
  }

  void recycle(const activity& a) {
    devices_[a.device].free_events.push_back(a.begin);
    devices_[a.end_device].free_events.push_back(a.end);
    if (a.staged) devices_[a.device].free_events.push_back(a.staged);
    if (a.staged_dependency) devices_[a.device].free_events.push_back(a.staged_dependency);
    if (a.after_end) devices_[a.end_device].free_events.push_back(a.after_end);
  }

  // Every call for a device runs with its context current, so that its streams, events and
  // kernels meet in one context. Setting a context costs a driver call; reading it does not.
  void set_device(device_id d) {
    CUcontext current = nullptr;
    detail::cu_check(detail::driver().ctx_get_current(&current), "read the current context");
    if (current != devices_[d].context)
      detail::cu_check(detail::driver().ctx_set_current(devices_[d].context), "make a context current");
  }

  cudaEvent_t take_event(device_id d) {
    auto& pool = devices_[d].free_events;
    if (!pool.empty()) {
      const cudaEvent_t e = pool.back();
      pool.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    detail::cuda_check(cudaEventCreate(&e), "create an event");
    return e;
  }

  cudaStream_t new_stream(device_state& dev) {
    if (dev.green) {
      CUstream stream = nullptr;
      detail::cu_check(detail::driver().green_ctx_stream_create(&stream, dev.green, CU_STREAM_NON_BLOCKING, 0),
                       "cuGreenCtxStreamCreate");
      return reinterpret_cast<cudaStream_t>(stream);
    }
    cudaStream_t stream = nullptr;
    detail::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "create a stream");
    return stream;
  }

  void create(std::size_t devices) {
    if (devices == 0) throw invalid_input("cuda_backend: no devices");
    detail::cu_check(detail::driver().init(0), "cuInit");
    devices_.resize(devices);
    if (!options_.gpus.empty()) {
      if (options_.gpus.size() != devices)
        throw invalid_input("cuda_backend: " + std::to_string(options_.gpus.size()) + " GPUs for " +
                            std::to_string(devices) + " devices");
      description_ = "GPUs";
      for (std::size_t d = 0; d < devices; ++d) {
        auto& dev = devices_[d];
        dev.gpu = options_.gpus[d];
        detail::cuda_check(cudaSetDevice(dev.gpu), "select a GPU");
        detail::cuda_check(cudaFree(nullptr), "start the GPU's primary context");
        detail::cu_check(detail::driver().ctx_get_current(&dev.context), "cuCtxGetCurrent");
        cudaDeviceProp prop{};
        detail::cuda_check(cudaGetDeviceProperties(&prop, dev.gpu), "read a GPU's properties");
        description_ += std::string(d == 0 ? " " : ", ") + std::to_string(dev.gpu) + " (" + prop.name + ")";
        for (std::size_t e = 0; e < devices; ++e)  // peer access where the hardware has it
          if (e != d && options_.gpus[e] != dev.gpu) {
            int can = 0;
            cudaDeviceCanAccessPeer(&can, dev.gpu, options_.gpus[e]);
            if (can) {
              const cudaError_t enabled = cudaDeviceEnablePeerAccess(options_.gpus[e], 0);
              if (enabled == cudaSuccess || enabled == cudaErrorPeerAccessAlreadyEnabled)
                peers_.emplace_back(dev.gpu, options_.gpus[e]);
            }
            cudaGetLastError();  // "already enabled" is not an error here
          }
      }
      description_ += " as whole devices";
    } else {
      // Virtual devices: SM partitions of one GPU, each a green context with its own streams.
      CUdevice cu_device = 0;
      detail::cu_check(detail::driver().device_get(&cu_device, options_.gpu), "cuDeviceGet");
      CUdevResource sms{};
      detail::cu_check(detail::driver().device_get_dev_resource(cu_device, &sms, CU_DEV_RESOURCE_TYPE_SM),
                       "cuDeviceGetDevResource");
      const sm_resource resource{sms.sm.smCount, sms.sm.minSmPartitionSize, sms.sm.smCoscheduledAlignment};
      const auto driver_makes = [&](unsigned per) {
        unsigned count = 0;
        return detail::driver().dev_sm_resource_split_by_count(nullptr, &count, &sms, nullptr, 0, per) == CUDA_SUCCESS
                   ? count
                   : 0u;
      };
      cudaDeviceProp prop{};
      detail::cuda_check(cudaGetDeviceProperties(&prop, options_.gpu), "read the GPU's properties");
      const std::string gpu = "GPU " + std::to_string(options_.gpu) + " (" + prop.name + ")";
      const auto plan = plan_sm_partitions(resource, devices, options_.sms_per_partition, driver_makes, gpu);
      std::vector<CUdevResource> groups(devices);
      unsigned count = static_cast<unsigned>(devices);
      CUdevResource remaining{};
      detail::cu_check(detail::driver().dev_sm_resource_split_by_count(groups.data(), &count, &sms, &remaining, 0,
                                                                       plan.per_partition),
                       "cuDevSmResourceSplitByCount");
      if (count < devices)
        throw invalid_input("cuda_backend: the driver made " + std::to_string(count) + " partitions of " +
                            std::to_string(plan.per_partition) + " SMs of " + gpu + ", not " + std::to_string(devices));
      description_ = gpu + ": " + describe(plan, resource);
      for (std::size_t d = 0; d < devices; ++d) {
        auto& dev = devices_[d];
        dev.gpu = options_.gpu;
        if (groups[d].sm.smCount != plan.per_partition)
          description_ += "; partition " + std::to_string(d) + " got " + std::to_string(groups[d].sm.smCount) + " SMs";
        CUdevResourceDesc desc{};
        detail::cu_check(detail::driver().dev_resource_generate_desc(&desc, &groups[d], 1),
                         "cuDevResourceGenerateDesc");
        detail::cu_check(detail::driver().green_ctx_create(&dev.green, desc, cu_device, CU_GREEN_CTX_DEFAULT_STREAM),
                         "cuGreenCtxCreate");
        detail::cu_check(detail::driver().ctx_from_green_ctx(&dev.context, dev.green), "cuCtxFromGreenCtx");
        dev.sms = static_cast<int>(groups[d].sm.smCount);
      }
    }
    for (device_id d = 0; d < devices_.size(); ++d) {
      auto& dev = devices_[d];
      set_device(d);
      dev.stream = new_stream(dev);
      dev.send.assign(devices, nullptr);
      dev.receive.assign(devices, nullptr);
      for (device_id e = 0; e < devices; ++e) {
        if (e == d) continue;
        dev.send[e] = new_stream(dev);
        if (options_.gpus.size() > 1) dev.receive[e] = new_stream(dev);
      }
      detail::cuda_check(cudaEventCreate(&dev.epoch), "create an epoch event");
      detail::cuda_check(cudaMalloc(&dev.buffer, options_.max_copy_bytes), "allocate a device buffer");
      int khz = 0;
      detail::cuda_check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev.gpu), "read the clock rate");
      dev.clock_hz = 1e3 * static_cast<double>(khz);
      if (dev.sms == 0)
        detail::cuda_check(cudaDeviceGetAttribute(&dev.sms, cudaDevAttrMultiProcessorCount, dev.gpu), "count SMs");
      if (options_.gpus.size() > 1)  // pinned staging for copies to GPUs without peer access
        detail::cuda_check(cudaMallocHost(&dev.staging, options_.max_copy_bytes), "allocate a pinned staging buffer");
      allocate_work_buffers(dev);
    }
    set_device(0);
    detail::cuda_check(cudaHostAlloc(reinterpret_cast<void**>(const_cast<int**>(&gate_flags_)), 2 * sizeof(int),
                                     cudaHostAllocMapped | cudaHostAllocPortable),
                       "allocate the gate's flags");
    gate_flags_[0] = 0;
    gate_flags_[1] = 0;
    detail::cuda_check(
        cudaHostGetDevicePointer(reinterpret_cast<void**>(&gate_device_flags_), const_cast<int*>(gate_flags_), 0),
        "map the gate's flags");
    detail::cuda_check(cudaEventCreateWithFlags(&gate_, cudaEventDisableTiming), "create the start gate");
    detail::cuda_check(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "create a capture's fork");
  }

  // Buffers for the largest product and element-wise op (zeros: the work's time does not depend on
  // the values), and a cuBLAS handle on the device's stream, created in its context.
  void allocate_work_buffers(device_state& dev) {
    if (options_.operations.empty()) return;
    std::uint64_t a = 0, b = 0, c = 0, x = 0, y = 0;
    for (const auto& o : options_.operations) {
      if (o.kind == operation_kind::matmul) {
        a = std::max(a, o.m * o.k), b = std::max(b, o.k * o.n), c = std::max(c, o.m * o.n);
        if (std::max({o.m, o.n, o.k}) > std::uint64_t{INT32_MAX})
          throw invalid_input("cuda_backend: a product of " + std::to_string(o.m) + " x " + std::to_string(o.k) +
                              " x " + std::to_string(o.n) + " is beyond cuBLAS's 32-bit sizes");
      } else if (o.kind == operation_kind::elementwise) {
        x = std::max(x, o.reads), y = std::max(y, o.elements);
      }
    }
    for (auto [buffer, n] : {std::pair{&dev.a, a}, {&dev.b, b}, {&dev.c, c}, {&dev.x, x}, {&dev.y, y}}) {
      detail::cuda_check(cudaMalloc(reinterpret_cast<void**>(buffer), std::max<std::uint64_t>(n, 1) * sizeof(float)),
                         "allocate a work buffer");
      detail::cuda_check(cudaMemset(*buffer, 0, std::max<std::uint64_t>(n, 1) * sizeof(float)), "clear a work buffer");
    }
    detail::blas_check(cublasCreate(&dev.blas), "create a cuBLAS handle");
    detail::blas_check(cublasSetStream(dev.blas, dev.stream), "set a cuBLAS stream");
  }

  void release() noexcept {
    for (const auto& a : pending_) recycle(a);
    for (device_id d = 0; d < devices_.size(); ++d) {
      auto& dev = devices_[d];
      if (dev.context) detail::driver().ctx_set_current(dev.context);
      for_each_stream([&](device_id e, cudaStream_t s) {
        if (e == d) cudaStreamSynchronize(s);
      });
    }
    if (!devices_.empty() && devices_[0].context) {  // made in device 0's context: before it goes
      detail::driver().ctx_set_current(devices_[0].context);
      if (gate_) cudaEventDestroy(gate_);
      if (fork_) cudaEventDestroy(fork_);
      if (gate_flags_) cudaFreeHost(const_cast<int*>(gate_flags_));
    }
    gate_ = fork_ = nullptr;
    gate_flags_ = nullptr;
    gate_device_flags_ = nullptr;
    for (auto& dev : devices_) {
      if (dev.context) detail::driver().ctx_set_current(dev.context);
      if (dev.blas) cublasDestroy(dev.blas);
      for (float* buffer : {dev.a, dev.b, dev.c, dev.x, dev.y})
        if (buffer) cudaFree(buffer);
      if (dev.staging) cudaFreeHost(dev.staging);
      for (const cudaEvent_t e : dev.free_events) cudaEventDestroy(e);
      if (dev.epoch) cudaEventDestroy(dev.epoch);
      if (dev.buffer) cudaFree(dev.buffer);
      for (const cudaStream_t s : dev.send)
        if (s) cudaStreamDestroy(s);
      for (const cudaStream_t s : dev.receive)
        if (s) cudaStreamDestroy(s);
      if (dev.stream) cudaStreamDestroy(dev.stream);
      if (dev.green) detail::driver().green_ctx_destroy(dev.green);
    }
    devices_.clear();
    pending_.clear();
    peers_.clear();
    description_.clear();
    clocks_.clear();
  }

  cuda_backend_options options_;
  std::vector<device_state> devices_;
  std::vector<activity> pending_;
  std::vector<std::pair<int, int>> peers_;  // (from, to) GPUs with peer access enabled
  cudaEvent_t gate_ = nullptr;              // hold()'s gate, in device 0's context
  cudaEvent_t fork_ = nullptr;              // a capture's fork, in device 0's context
  volatile int* gate_flags_ = nullptr;      // [open, expired], pinned and mapped
  int* gate_device_flags_ = nullptr;        // the same, as the GPU sees them
  bool last_host_paced_ = false;
  bool events_need_context_ = false;  // see in_context()
  std::string description_, clocks_;
  seconds last_prepare_seconds_ = 0;
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

static_assert(execution_backend<cuda_backend> && ahead_backend<cuda_backend>);

}  // namespace gantry
