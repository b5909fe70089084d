// The real work of `gantry execute --kernel work` and of calibrate's memory-bandwidth probe: a
// graph's products and element-wise passes run with Eigen (exec/eigen_operations.hpp), compiled in
// a unit of its own (eigen_work.cpp, shared by gantry and gantry-cuda) so that execute_cpu.cpp and
// calibrate_command.cpp, compiled once for each, do not compile Eigen. Only in a tool built with
// Eigen (GANTRY_CLI_HAS_LEARN).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/exec/operations.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/sim/backend.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace gantry::cli {

// The Eigen operations of every vertex, with buffers for `devices` devices.
class eigen_work {
 public:
  eigen_work(std::vector<operation> operations, std::size_t devices);
  ~eigen_work();
  eigen_work(eigen_work&&) noexcept;
  eigen_work& operator=(eigen_work&&) noexcept;

  // Runs vertex v's operation on its device's buffers (the CPU backend's work for v).
  void operator()(const vertex_launch& v);
  // Each vertex's time, run here alone (exec/eigen_operations.hpp: profile_operations).
  [[nodiscard]] std::vector<seconds> profile(const graph& g);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace gantry::cli
