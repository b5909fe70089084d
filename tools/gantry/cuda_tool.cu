// The tool's CUDA translation unit (cuda_tool.hpp): cuda_backend behind any_backend, built by nvcc
// into gantry-cuda only, so that the plain gantry needs no CUDA runtime.
#include "cuda_tool.hpp"

#include <gantry/exec/cuda_backend.cuh>

#include <stdexcept>
#include <string>
#include <utility>

namespace gantry::cli {
namespace {

// cuda_backend built from the tool's options, with its profiler and description reachable
// through the adaptor.
class tool_backend {
 public:
  explicit tool_backend(const cuda_tool_options& o)
      : backend_(cuda_backend_options{.gpus = o.gpus,
                                      .gpu = o.gpu,
                                      .sms_per_partition = o.sms_per_partition,
                                      .max_copy_bytes = o.max_copy_bytes,
                                      .operations = o.operations}) {}

  void begin(std::size_t devices) { backend_.begin(devices); }
  void launch_vertex(const vertex_launch& v) { backend_.launch_vertex(v); }
  void launch_copy(const copy_launch& c) { backend_.launch_copy(c); }
  void wait(std::vector<completion>& out) { backend_.wait(out); }
  [[nodiscard]] seconds now() const { return backend_.now(); }
  [[nodiscard]] std::vector<seconds> profile(const graph& g, std::size_t devices) {
    return backend_.profile(g, devices);
  }
  [[nodiscard]] std::string description() const { return backend_.description(); }

 private:
  cuda_backend backend_;
};

using tool_adaptor = backend_adaptor<tool_backend>;

tool_backend& unwrap(any_backend& backend, const char* who) {
  auto* adaptor = dynamic_cast<tool_adaptor*>(&backend);
  if (adaptor == nullptr)
    throw std::invalid_argument(std::string(who) + ": the backend does not come from make_cuda_backend()");
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
