// The CUDA backend of the executor (exec/executor.hpp), compiled by nvcc only (CUDA >= 12.4). A
// device of the cluster is either a whole GPU or a virtual device: an SM partition of one GPU made
// with green contexts (cuDevSmResourceSplitByCount, cuGreenCtxCreate, cuGreenCtxStreamCreate).
// Each device has a compute stream and a copy stream. A vertex is either its real work
// (cuda_backend_options::operations, from exec/operations.hpp: a cuBLAS SGEMM of the product's
// shape, or an element-wise kernel that reads every operand element and writes the output) or a
// spin kernel of its modelled duration (clock64 cycles at the GPU's clock rate). A copy is a
// device-to-device copy between partitions of one GPU, cudaMemcpyPeerAsync between GPUs with peer
// access, or staged through the sender's pinned host memory between GPUs without it. Events
// bracket every activity; times come from them, relative to an event recorded on every device at
// begin() (devices of different GPUs are aligned only as well as those epochs, recorded together,
// are). The executor decides on the host, so each vertex costs a host round trip (event query,
// launch). The driver API is looked up at run time, so a program using this backend starts
// without the NVIDIA driver. It compiles with nvcc; it has not yet run on a GPU (docs/executors.md).
#pragma once

#include <gantry/exec/executor.hpp>
#include <gantry/exec/operations.hpp>

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
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
    throw std::runtime_error(std::string("cuda_backend: ") + what + ": cuBLAS status " + std::to_string(static_cast<int>(e)));
}

// One thread spins until `cycles` of the SM clock have passed: a vertex of a profiled graph.
__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
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
      case elementwise_op::relu: v = fmaxf(v, 0.0f); break;
      case elementwise_op::silu: v = v / (1.0f + __expf(-v)); break;
      case elementwise_op::rope: v = v * 0.5f + v * v * 0.25f; break;
      case elementwise_op::rmsnorm: v = v * rsqrtf(v * v + 1e-6f); break;
      case elementwise_op::softmax: v = __expf(v) / (1.0f + __expf(v)); break;
      default: break;
    }
    y[i] = v;
  }
}
}  // namespace detail

struct cuda_backend_options {
  // Whole GPUs: device d of the cluster is GPU gpus[d]. Empty: one GPU cut into partitions.
  std::vector<int> gpus{};
  int gpu = 0;                    // the GPU to partition when gpus is empty
  unsigned sms_per_partition = 0; // SMs per virtual device; 0: the GPU's SMs divided evenly
  std::size_t max_copy_bytes = std::size_t{256} << 20;  // buffer per device; larger copies move this much
  // One per vertex (operations_of()): vertices run their real work, products with cuBLAS. Empty:
  // every vertex spins for its modelled duration.
  std::vector<operation> operations{};
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
    activity a{false, v.vertex, v.device, v.device, take_event(v.device), take_event(v.device)};
    detail::cuda_check(cudaEventRecord(a.begin, dev.stream), "record a start");
    run(v, dev);
    detail::cuda_check(cudaEventRecord(a.end, dev.stream), "record an end");
    pending_.push_back(a);
  }

  void launch_copy(const copy_launch& c) {
    auto& from = devices_.at(c.from);
    auto& to = devices_.at(c.to);
    const std::size_t bytes = static_cast<std::size_t>(std::min<byte_count>(c.bytes, options_.max_copy_bytes));
    const bool staged = from.gpu != to.gpu && !peer_access(c.from, c.to);
    set_device(c.from);
    activity a{true, c.id, c.from, staged ? c.to : c.from, take_event(c.from), nullptr};
    detail::cuda_check(cudaEventRecord(a.begin, from.copy_stream), "record a copy's start");
    if (!staged) {
      if (bytes > 0 && from.gpu == to.gpu)
        detail::cuda_check(cudaMemcpyAsync(to.buffer, from.buffer, bytes, cudaMemcpyDeviceToDevice, from.copy_stream),
                           "copy between partitions");
      else if (bytes > 0)
        detail::cuda_check(cudaMemcpyPeerAsync(to.buffer, to.gpu, from.buffer, from.gpu, bytes, from.copy_stream),
                           "copy between GPUs");
      a.end = take_event(c.from);
      detail::cuda_check(cudaEventRecord(a.end, from.copy_stream), "record a copy's end");
    } else {
      // No peer access: device to host into the sender's pinned buffer, then host to device on the
      // receiver's copy stream once that is done. The end is the receiver's event.
      if (bytes > 0)
        detail::cuda_check(cudaMemcpyAsync(from.staging, from.buffer, bytes, cudaMemcpyDeviceToHost, from.copy_stream),
                           "stage a copy to the host");
      const cudaEvent_t staged_event = take_event(c.from);
      detail::cuda_check(cudaEventRecord(staged_event, from.copy_stream), "record a staged copy");
      set_device(c.to);
      detail::cuda_check(cudaStreamWaitEvent(to.copy_stream, staged_event, 0), "wait for a staged copy");
      if (bytes > 0)
        detail::cuda_check(cudaMemcpyAsync(to.buffer, from.staging, bytes, cudaMemcpyHostToDevice, to.copy_stream),
                           "copy from the host");
      a.end = take_event(c.to);
      detail::cuda_check(cudaEventRecord(a.end, to.copy_stream), "record a copy's end");
      a.staged = staged_event;
    }
    pending_.push_back(a);
  }

  // Polls the events of what is running until at least one has finished.
  void wait(std::vector<completion>& out) {
    for (;;) {
      for (std::size_t i = 0; i < pending_.size();) {
        const activity a = pending_[i];
        set_device(a.end_device);
        const cudaError_t state = cudaEventQuery(a.end);
        if (state == cudaErrorNotReady) {
          ++i;
          continue;
        }
        detail::cuda_check(state, "query an event");
        // Each event against the epoch of its own device (events of two contexts cannot be compared).
        float begin_ms = 0, end_ms = 0;
        detail::cuda_check(cudaEventElapsedTime(&end_ms, devices_[a.end_device].epoch, a.end), "time an end");
        set_device(a.device);
        detail::cuda_check(cudaEventElapsedTime(&begin_ms, devices_[a.device].epoch, a.begin), "time a start");
        out.push_back({a.is_copy, a.id, 1e-3 * begin_ms, 1e-3 * end_ms});
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
    CUgreenCtx green = nullptr;  // null for a whole GPU
    CUcontext context = nullptr; // the green context's, or the GPU's primary context
    std::vector<cudaEvent_t> free_events;  // made in this context: events belong to one
    cudaEvent_t epoch = nullptr;
    cudaStream_t stream = nullptr, copy_stream = nullptr;
    void* buffer = nullptr;
    void* staging = nullptr;  // pinned host memory, for copies to GPUs without peer access
    double clock_hz = 1e9;
    int sms = 0;              // SMs the device runs on: its partition's, or the GPU's
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
  };

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
      detail::blas_check(cublasSgemm(dev.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dev.a, m, dev.b, k, &zero, dev.c, m),
                         "run a product");
      return;
    }
    if (o != nullptr && o->kind == operation_kind::elementwise) {
      const unsigned threads = 256;
      const auto blocks = static_cast<unsigned>(
          std::min<std::uint64_t>((o->elements + threads - 1) / threads, std::uint64_t{8} * static_cast<unsigned>(dev.sms)));
      detail::elementwise_kernel<<<std::max(blocks, 1u), threads, 0, dev.stream>>>(dev.x, o->reads, dev.y, o->elements,
                                                                                   static_cast<int>(o->op));
      detail::cuda_check(cudaGetLastError(), "launch an element-wise kernel");
      return;
    }
    const auto cycles = static_cast<long long>(v.duration * dev.clock_hz);
    detail::spin_kernel<<<1, 1, 0, dev.stream>>>(cycles);
    detail::cuda_check(cudaGetLastError(), "launch a spin kernel");
  }

  [[nodiscard]] bool peer_access(device_id from, device_id to) const {
    return std::find(peers_.begin(), peers_.end(), std::pair{devices_[from].gpu, devices_[to].gpu}) != peers_.end();
  }

  void recycle(const activity& a) {
    devices_[a.device].free_events.push_back(a.begin);
    devices_[a.end_device].free_events.push_back(a.end);
    if (a.staged) devices_[a.device].free_events.push_back(a.staged);
  }

  // Every call for a device runs with its context current, so that its streams, events and
  // kernels meet in one context.
  void set_device(device_id d) { detail::cu_check(detail::driver().ctx_set_current(devices_[d].context), "make a context current"); }

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
    detail::cu_check(detail::driver().init(0), "cuInit");
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
        detail::cu_check(detail::driver().ctx_get_current(&dev.context), "cuCtxGetCurrent");
        detail::cuda_check(cudaStreamCreateWithFlags(&dev.stream, cudaStreamNonBlocking), "create a stream");
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
    } else {
      // Virtual devices: SM partitions of one GPU, each a green context with its own stream.
      CUdevice cu_device = 0;
      detail::cu_check(detail::driver().device_get(&cu_device, options_.gpu), "cuDeviceGet");
      CUdevResource sms{};
      detail::cu_check(detail::driver().device_get_dev_resource(cu_device, &sms, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
      const unsigned per = options_.sms_per_partition != 0
                               ? options_.sms_per_partition
                               : sms.sm.smCount / static_cast<unsigned>(devices);
      std::vector<CUdevResource> groups(devices);
      unsigned count = static_cast<unsigned>(devices);
      CUdevResource remaining{};
      detail::cu_check(detail::driver().dev_sm_resource_split_by_count(groups.data(), &count, &sms, &remaining, 0, per),
                       "cuDevSmResourceSplitByCount");
      if (count < devices)
        throw invalid_input("cuda_backend: GPU " + std::to_string(options_.gpu) + " has " +
                            std::to_string(sms.sm.smCount) + " SMs: not " + std::to_string(devices) +
                            " partitions of " + std::to_string(per));
      for (std::size_t d = 0; d < devices; ++d) {
        auto& dev = devices_[d];
        dev.gpu = options_.gpu;
        CUdevResourceDesc desc{};
        detail::cu_check(detail::driver().dev_resource_generate_desc(&desc, &groups[d], 1), "cuDevResourceGenerateDesc");
        detail::cu_check(detail::driver().green_ctx_create(&dev.green, desc, cu_device, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
        detail::cu_check(detail::driver().ctx_from_green_ctx(&dev.context, dev.green), "cuCtxFromGreenCtx");
        CUstream stream = nullptr;
        detail::cu_check(detail::driver().green_ctx_stream_create(&stream, dev.green, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
        dev.stream = reinterpret_cast<cudaStream_t>(stream);
        detail::cu_check(detail::driver().green_ctx_stream_create(&stream, dev.green, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
        dev.copy_stream = reinterpret_cast<cudaStream_t>(stream);
        dev.sms = static_cast<int>(groups[d].sm.smCount);
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
      if (dev.sms == 0) detail::cuda_check(cudaDeviceGetAttribute(&dev.sms, cudaDevAttrMultiProcessorCount, dev.gpu), "count SMs");
      if (options_.gpus.size() > 1)  // pinned staging for copies to GPUs without peer access
        detail::cuda_check(cudaMallocHost(&dev.staging, options_.max_copy_bytes), "allocate a pinned staging buffer");
      allocate_work_buffers(dev);
    }
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
          throw invalid_input("cuda_backend: a product of " + std::to_string(o.m) + " x " + std::to_string(o.k) + " x " +
                              std::to_string(o.n) + " is beyond cuBLAS's 32-bit sizes");
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
    for (auto& dev : devices_) {
      if (dev.context) detail::driver().ctx_set_current(dev.context);
      if (dev.copy_stream) cudaStreamSynchronize(dev.copy_stream);
      if (dev.stream) cudaStreamSynchronize(dev.stream);
    }
    for (auto& dev : devices_) {
      if (dev.context) detail::driver().ctx_set_current(dev.context);
      if (dev.blas) cublasDestroy(dev.blas);
      for (float* buffer : {dev.a, dev.b, dev.c, dev.x, dev.y})
        if (buffer) cudaFree(buffer);
      if (dev.staging) cudaFreeHost(dev.staging);
      for (const cudaEvent_t e : dev.free_events) cudaEventDestroy(e);
      if (dev.epoch) cudaEventDestroy(dev.epoch);
      if (dev.buffer) cudaFree(dev.buffer);
      if (dev.copy_stream) cudaStreamDestroy(dev.copy_stream);
      if (dev.stream) cudaStreamDestroy(dev.stream);
      if (dev.green) detail::driver().green_ctx_destroy(dev.green);
    }
    devices_.clear();
    pending_.clear();
    peers_.clear();
  }

  cuda_backend_options options_;
  std::vector<device_state> devices_;
  std::vector<activity> pending_;
  std::vector<std::pair<int, int>> peers_;  // (from, to) GPUs with peer access enabled
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

static_assert(execution_backend<cuda_backend>);

}  // namespace gantry
