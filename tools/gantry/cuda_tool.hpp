// What the tool's CUDA translation unit (cuda_tool.cu, compiled by nvcc into gantry-cuda) offers
// the rest of the tool (compiled by the C++ compiler): the CUDA backend behind any_backend, its
// profiler and description, and how many GPUs there are. Plain C++: no CUDA header here.
#pragma once

#include <gantry/exec/any_backend.hpp>
#include <gantry/exec/operations.hpp>
#include <gantry/graph/graph.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gantry::cli {

// cuda_backend_options (exec/cuda_backend.cuh), field for field.
struct cuda_tool_options {
  std::vector<int> gpus{};         // whole GPUs, one device each; empty: partitions of `gpu`
  int gpu = 0;                     // the GPU cut into SM partitions (green contexts)
  unsigned sms_per_partition = 0;  // 0: the largest equal split the GPU allows
  std::size_t max_copy_bytes = std::size_t{256} << 20;
  std::vector<operation> operations{};  // one per vertex: real work; empty: spin kernels
};

// The backend; nothing touches a GPU before its first begin() or profile().
[[nodiscard]] std::unique_ptr<any_backend> make_cuda_backend(const cuda_tool_options& options);
// Each vertex's time alone on device 0 (cuda_backend::profile); `backend` must come from
// make_cuda_backend() with operations.
[[nodiscard]] std::vector<seconds> cuda_profile(any_backend& backend, const graph& g, std::size_t devices);
// The GPUs or partitions the backend runs on, once it has begun.
[[nodiscard]] std::string cuda_description(any_backend& backend);
// GPUs the CUDA runtime sees; 0 where there is none or no driver, with the runtime's reason in `why`.
[[nodiscard]] int cuda_gpu_count(std::string& why);

}  // namespace gantry::cli
