// The tool's CUDA translation unit (cuda_tool.hpp): cuda_backend behind any_backend, built by nvcc
// into gantry-cuda only, so that the plain gantry needs no CUDA runtime.
#include "cuda_tool.hpp"

#include <gantry/exec/cuda_backend.cuh>

#include <stdexcept>
#include <string>
#include <utility>

namespace gantry::cli {
namespace {

// What the backend says it ran on, where it can say so. A template: a discarded branch is only
// left unchecked there.
template <class B>
concept self_describing = requires(const B& b) {
  { b.description() } -> std::convertible_to<std::string>;
};

// cuda_backend and what the tool asked it for, so the tool can say what ran even where the
// backend cannot describe itself.
class tool_backend {
 public:
  explicit tool_backend(const cuda_tool_options& o)
      : options_(o), backend_(cuda_backend_options{.gpus = o.gpus,
                                                   .gpu = o.gpu,
                                                   .sms_per_partition = o.sms_per_partition,
                                                   .max_copy_bytes = o.max_copy_bytes,
                                                   .operations = o.operations}) {}

  void begin(std::size_t devices) {
    devices_ = devices;
    backend_.begin(devices);
  }
  void launch_vertex(const vertex_launch& v) { backend_.launch_vertex(v); }
  void launch_copy(const copy_launch& c) { backend_.launch_copy(c); }
  void wait(std::vector<completion>& out) { backend_.wait(out); }
  [[nodiscard]] seconds now() const { return backend_.now(); }

  [[nodiscard]] std::vector<seconds> profile(const graph& g, std::size_t devices) {
    devices_ = devices;
    return backend_.profile(g, devices);
  }

  [[nodiscard]] std::string description() const { return describe(backend_); }

 private:
  template <class B>
  [[nodiscard]] std::string describe(const B& b) const {
    if constexpr (self_describing<B>) {
      return b.description();
    } else {
      // What was asked for: the backend itself refuses a split the GPU cannot make.
      if (!options_.gpus.empty()) {
        std::string text = std::to_string(options_.gpus.size()) + " whole GPUs (";
        for (std::size_t i = 0; i < options_.gpus.size(); ++i) text += (i ? ", " : "") + gpu_name(options_.gpus[i]);
        return text + ")";
      }
      return std::to_string(devices_) + " SM partitions of " + gpu_name(options_.gpu) + " (green contexts, " +
             (options_.sms_per_partition != 0 ? std::to_string(options_.sms_per_partition) + " SMs each"
                                              : std::string("its SMs divided evenly")) +
             ")";
    }
  }

  [[nodiscard]] static std::string gpu_name(int gpu) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, gpu) != cudaSuccess) return "GPU " + std::to_string(gpu);
    return "GPU " + std::to_string(gpu) + " " + p.name + " (" + std::to_string(p.multiProcessorCount) + " SMs)";
  }

  cuda_tool_options options_;
  cuda_backend backend_;
  std::size_t devices_ = 0;
};

using tool_adaptor = backend_adaptor<tool_backend>;

tool_backend& unwrap(any_backend& backend, const char* who) {
  auto* adaptor = dynamic_cast<tool_adaptor*>(&backend);
  if (adaptor == nullptr) throw std::invalid_argument(std::string(who) + ": the backend does not come from make_cuda_backend()");
  return adaptor->get();
}

}  // namespace

std::unique_ptr<any_backend> make_cuda_backend(const cuda_tool_options& options) {
  return std::make_unique<tool_adaptor>(options);
}

std::vector<seconds> cuda_profile(any_backend& backend, const graph& g, std::size_t devices) {
  return unwrap(backend, "cuda_profile").profile(g, devices);
}

std::string cuda_description(any_backend& backend) { return unwrap(backend, "cuda_description").description(); }

int cuda_gpu_count(std::string& why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    why = cudaGetErrorString(e);
    cudaGetLastError();  // clear it, so later calls do not report it again
    return 0;
  }
  if (count == 0) why = "the CUDA runtime sees no device";
  return count;
}

}  // namespace gantry::cli
