// The CUDA backend of the executor (exec/executor.hpp), compiled by nvcc only (CUDA >= 12.4). A
// device of the cluster is either a whole GPU or a virtual device: an SM partition of one GPU made
// with green contexts (cuDevSmResourceSplitByCount, cuGreenCtxCreate, cuGreenCtxStreamCreate). Each
// device has a compute stream; a vertex is a spin kernel of its modelled duration (clock64 cycles at
// the GPU's clock rate); a copy is cudaMemcpyPeerAsync between whole GPUs (or a device-to-device
// copy between partitions of one GPU) on a stream of its own, with events around every activity.
// The executor decides on the host, so each vertex costs a host round trip (event query, launch);
// times come from the events, relative to an event recorded on every device at begin() (devices
// of different GPUs are aligned only as well as those epochs, recorded together, are).
// It compiles here; it has not yet run on a GPU (docs/executors.md).
#pragma once

#include <gantry/exec/executor.hpp>

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace gantry {

namespace detail {
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("cuda_backend: ") + what + ": " + cudaGetErrorString(e));
}
inline void cu_check(CUresult e, const char* what) {
  if (e != CUDA_SUCCESS) {
    const char* text = nullptr;
    cuGetErrorString(e, &text);
    throw std::runtime_error(std::string("cuda_backend: ") + what + ": " + (text ? text : "unknown error"));
  }
}

// One thread spins until `cycles` of the SM clock have passed: a vertex of a profiled graph.
__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
}  // namespace detail

struct cuda_backend_options {
  // Whole GPUs: device d of the cluster is GPU gpus[d]. Empty: one GPU cut into partitions.
  std::vector<int> gpus{};
  int gpu = 0;                    // the GPU to partition when gpus is empty
  unsigned sms_per_partition = 0; // SMs per virtual device; 0: the GPU's SMs divided evenly
  std::size_t max_copy_bytes = std::size_t{256} << 20;  // buffer per device; larger copies move this much
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
    pending_.clear();
    // An epoch per device (events of different contexts cannot be compared), recorded together.
    for (device_id d = 0; d < devices_.size(); ++d) {
      set_device(d);
      detail::cuda_check(cudaEventRecord(devices_[d].epoch, devices_[d].stream), "record an epoch");
    }
    for (device_id d = 0; d < devices_.size(); ++d) {
      set_device(d);
      detail::cuda_check(cudaEventSynchronize(devices_[d].epoch), "wait for an epoch");
    }
    epoch_ = std::chrono::steady_clock::now();
  }

  void launch_vertex(const vertex_launch& v) {
    auto& dev = devices_.at(v.device);
    set_device(v.device);
    activity a{false, v.vertex, v.device, take_event(v.device), take_event(v.device)};
    detail::cuda_check(cudaEventRecord(a.begin, dev.stream), "record a start");
    const auto cycles = static_cast<long long>(v.duration * dev.clock_hz);
    detail::spin_kernel<<<1, 1, 0, dev.stream>>>(cycles);
    detail::cuda_check(cudaGetLastError(), "launch a spin kernel");
    detail::cuda_check(cudaEventRecord(a.end, dev.stream), "record an end");
    pending_.push_back(a);
  }

  void launch_copy(const copy_launch& c) {
    auto& from = devices_.at(c.from);
    auto& to = devices_.at(c.to);
    set_device(c.from);
    activity a{true, c.id, c.from, take_event(c.from), take_event(c.from)};
    const std::size_t bytes = static_cast<std::size_t>(std::min<byte_count>(c.bytes, options_.max_copy_bytes));
    detail::cuda_check(cudaEventRecord(a.begin, from.copy_stream), "record a copy's start");
    if (bytes > 0) {
      if (from.gpu == to.gpu)
        detail::cuda_check(cudaMemcpyAsync(to.buffer, from.buffer, bytes, cudaMemcpyDeviceToDevice, from.copy_stream),
                           "copy between partitions");
      else
        detail::cuda_check(cudaMemcpyPeerAsync(to.buffer, to.gpu, from.buffer, from.gpu, bytes, from.copy_stream),
                           "copy between GPUs");
    }
    detail::cuda_check(cudaEventRecord(a.end, from.copy_stream), "record a copy's end");
    pending_.push_back(a);
  }

  // Polls the events of what is running until at least one has finished.
  void wait(std::vector<completion>& out) {
    for (;;) {
      for (std::size_t i = 0; i < pending_.size();) {
        const activity a = pending_[i];
        set_device(a.device);
        const cudaError_t state = cudaEventQuery(a.end);
        if (state == cudaErrorNotReady) {
          ++i;
          continue;
        }
        detail::cuda_check(state, "query an event");
        float begin_ms = 0, end_ms = 0;
        const cudaEvent_t epoch = devices_[a.device].epoch;
        detail::cuda_check(cudaEventElapsedTime(&begin_ms, epoch, a.begin), "time a start");
        detail::cuda_check(cudaEventElapsedTime(&end_ms, epoch, a.end), "time an end");
        out.push_back({a.is_copy, a.id, 1e-3 * begin_ms, 1e-3 * end_ms});
        devices_[a.device].free_events.push_back(a.begin);
        devices_[a.device].free_events.push_back(a.end);
        pending_[i] = pending_.back();
        pending_.pop_back();
      }
      if (!out.empty() || pending_.empty()) return;
    }
  }

  [[nodiscard]] seconds now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
  }

 private:
  struct device_state {
    int gpu = 0;
    CUgreenCtx green = nullptr;  // null for a whole GPU
    CUcontext context = nullptr; // the green context's, or the GPU's primary context
    std::vector<cudaEvent_t> free_events;  // made in this context: events belong to one
    cudaEvent_t epoch = nullptr;
    cudaStream_t stream = nullptr, copy_stream = nullptr;
    void* buffer = nullptr;
    double clock_hz = 1e9;
  };
  struct activity {
    bool is_copy;
    std::uint32_t id;
    device_id device;  // whose context and epoch its events belong to
    cudaEvent_t begin, end;
  };

  // Every call for a device runs with its context current, so that its streams, events and
  // kernels meet in one context.
  void set_device(device_id d) { detail::cu_check(cuCtxSetCurrent(devices_[d].context), "make a context current"); }

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

  void create(std::size_t devices) {
    detail::cu_check(cuInit(0), "cuInit");
    devices_.resize(devices);
    if (!options_.gpus.empty()) {
      if (options_.gpus.size() != devices)
        throw invalid_input("cuda_backend: " + std::to_string(options_.gpus.size()) + " GPUs for " +
                            std::to_string(devices) + " devices");
      for (std::size_t d = 0; d < devices; ++d) {
        auto& dev = devices_[d];
        dev.gpu = options_.gpus[d];
        detail::cuda_check(cudaSetDevice(dev.gpu), "select a GPU");
        detail::cuda_check(cudaFree(nullptr), "start the GPU's primary context");
        detail::cu_check(cuCtxGetCurrent(&dev.context), "cuCtxGetCurrent");
        detail::cuda_check(cudaStreamCreateWithFlags(&dev.stream, cudaStreamNonBlocking), "create a stream");
        for (std::size_t e = 0; e < devices; ++e)  // peer access where the hardware has it
          if (e != d && options_.gpus[e] != dev.gpu) {
            int can = 0;
            cudaDeviceCanAccessPeer(&can, dev.gpu, options_.gpus[e]);
            if (can) cudaDeviceEnablePeerAccess(options_.gpus[e], 0);
            cudaGetLastError();  // "already enabled" is not an error here
          }
      }
    } else {
      // Virtual devices: SM partitions of one GPU, each a green context with its own stream.
      CUdevice cu_device = 0;
      detail::cu_check(cuDeviceGet(&cu_device, options_.gpu), "cuDeviceGet");
      CUdevResource sms{};
      detail::cu_check(cuDeviceGetDevResource(cu_device, &sms, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
      const unsigned per = options_.sms_per_partition != 0
                               ? options_.sms_per_partition
                               : sms.sm.smCount / static_cast<unsigned>(devices);
      std::vector<CUdevResource> groups(devices);
      unsigned count = static_cast<unsigned>(devices);
      CUdevResource remaining{};
      detail::cu_check(cuDevSmResourceSplitByCount(groups.data(), &count, &sms, &remaining, 0, per),
                       "cuDevSmResourceSplitByCount");
      if (count < devices)
        throw invalid_input("cuda_backend: GPU " + std::to_string(options_.gpu) + " has " +
                            std::to_string(sms.sm.smCount) + " SMs: not " + std::to_string(devices) +
                            " partitions of " + std::to_string(per));
      for (std::size_t d = 0; d < devices; ++d) {
        auto& dev = devices_[d];
        dev.gpu = options_.gpu;
        CUdevResourceDesc desc{};
        detail::cu_check(cuDevResourceGenerateDesc(&desc, &groups[d], 1), "cuDevResourceGenerateDesc");
        detail::cu_check(cuGreenCtxCreate(&dev.green, desc, cu_device, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
        detail::cu_check(cuCtxFromGreenCtx(&dev.context, dev.green), "cuCtxFromGreenCtx");
        CUstream stream = nullptr;
        detail::cu_check(cuGreenCtxStreamCreate(&stream, dev.green, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
        dev.stream = reinterpret_cast<cudaStream_t>(stream);
        detail::cu_check(cuGreenCtxStreamCreate(&stream, dev.green, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
        dev.copy_stream = reinterpret_cast<cudaStream_t>(stream);
      }
    }
    for (device_id d = 0; d < devices_.size(); ++d) {
      auto& dev = devices_[d];
      set_device(d);
      if (dev.copy_stream == nullptr)
        detail::cuda_check(cudaStreamCreateWithFlags(&dev.copy_stream, cudaStreamNonBlocking), "create a copy stream");
      detail::cuda_check(cudaEventCreate(&dev.epoch), "create an epoch event");
      detail::cuda_check(cudaMalloc(&dev.buffer, options_.max_copy_bytes), "allocate a device buffer");
      int khz = 0;
      detail::cuda_check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev.gpu), "read the clock rate");
      dev.clock_hz = 1e3 * static_cast<double>(khz);
    }
  }

  void release() noexcept {
    for (const auto& a : pending_) devices_[a.device].free_events.push_back(a.begin), devices_[a.device].free_events.push_back(a.end);
    for (auto& dev : devices_) {
      if (dev.context) cuCtxSetCurrent(dev.context);
      if (dev.copy_stream) cudaStreamSynchronize(dev.copy_stream);
      if (dev.stream) cudaStreamSynchronize(dev.stream);
      for (const cudaEvent_t e : dev.free_events) cudaEventDestroy(e);
      if (dev.epoch) cudaEventDestroy(dev.epoch);
      if (dev.buffer) cudaFree(dev.buffer);
      if (dev.copy_stream) cudaStreamDestroy(dev.copy_stream);
      if (dev.stream) cudaStreamDestroy(dev.stream);
      if (dev.green) cuGreenCtxDestroy(dev.green);
    }
    devices_.clear();
    pending_.clear();
  }

  cuda_backend_options options_;
  std::vector<device_state> devices_;
  std::vector<activity> pending_;
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

static_assert(execution_backend<cuda_backend>);

}  // namespace gantry
