// Real work for the CPU backend (exec/cpu_backend.hpp, cpu_kernel::work): each vertex of a DOPPLER
// workload runs its own operation (exec/operations.hpp) with Eigen, on its device's buffers, in
// single precision. A matrix product is an Eigen GEMM of the vertex's shape; an element-wise op
// reads all its operand elements and writes its output with the op's arithmetic (exp for softmax
// and SiLU, a mean of squares for RMSNorm, ...); a timed vertex spins for its modelled duration.
// The values are fixed filler: what is real is the arithmetic and the memory it streams.
//
// Such a graph's compute times come from profiling it here (profile_operations), so that the
// placer and the simulator see the machine's own durations. Needs Eigen (the gantry::learn
// component brings it). Eigen runs a product on the calling thread unless built with OpenMP, so a
// device is one thread, as the backend assumes.
#pragma once

#include <gantry/exec/executor.hpp>
#include <gantry/exec/operations.hpp>
#include <gantry/graph/graph.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace gantry {

class eigen_operations {
 public:
  // `operations`, one per vertex (operations_of()); `devices`: how many devices run them, each with
  // buffers for the largest operation, allocated and filled here (not during a run).
  eigen_operations(std::vector<operation> operations, std::size_t devices) : operations_(std::move(operations)) {
    if (devices == 0) throw invalid_input("eigen_operations: needs at least 1 device");
    std::uint64_t a = 0, b = 0, c = 0, x = 0, y = 0;
    for (const auto& o : operations_) {
      if (o.kind == operation_kind::matmul) {
        a = std::max(a, o.m * o.k);
        b = std::max(b, o.k * o.n);
        c = std::max(c, o.m * o.n);
      } else if (o.kind == operation_kind::elementwise) {
        x = std::max(x, o.reads);
        y = std::max(y, o.elements);
      }
    }
    buffers_.resize(devices);
    for (auto& buf : buffers_) {
      buf.a = filler(a, 0.01f);
      buf.b = filler(b, 0.02f);
      buf.c.assign(c, 0.0f);
      buf.x = filler(x, 0.1f);
      buf.y.assign(y, 0.0f);
    }
  }

  [[nodiscard]] std::size_t device_count() const noexcept { return buffers_.size(); }
  [[nodiscard]] std::span<const operation> operations() const noexcept { return operations_; }

  // Runs vertex v.vertex on the buffers of v.device: one caller per device at a time (the backend
  // runs one vertex per device at a time). Throws invalid_input for a vertex or device it has no
  // operation or buffers for.
  void operator()(const vertex_launch& v) {
    if (v.vertex >= operations_.size())
      throw invalid_input("eigen_operations: vertex " + std::to_string(v.vertex) + " of a graph with " +
                          std::to_string(operations_.size()) + " operations");
    if (v.device >= buffers_.size())
      throw invalid_input("eigen_operations: device " + std::to_string(v.device) + " of " +
                          std::to_string(buffers_.size()));
    run(operations_[v.vertex], buffers_[v.device], v.duration);
  }

 private:
  using array = Eigen::Map<Eigen::ArrayXf>;
  using matrix = Eigen::Map<Eigen::MatrixXf>;
  struct buffers {
    std::vector<float> a, b, c;  // a product's operands and result
    std::vector<float> x, y;     // an element-wise op's operands (all of them, end to end) and result
  };

  // Small values of both signs, so that products, exponentials and sums stay normal floats.
  static std::vector<float> filler(std::uint64_t n, float scale) {
    std::vector<float> out(n);
    for (std::uint64_t i = 0; i < n; ++i) out[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6);
    return out;
  }

  static void run(const operation& o, buffers& buf, seconds duration) {
    switch (o.kind) {
      case operation_kind::timed: {
        const auto until =
            std::chrono::steady_clock::now() +
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(duration));
        while (std::chrono::steady_clock::now() < until) {
        }
        return;
      }
      case operation_kind::matmul: {
        const auto m = static_cast<Eigen::Index>(o.m), k = static_cast<Eigen::Index>(o.k),
                   n = static_cast<Eigen::Index>(o.n);
        matrix(buf.c.data(), m, n).noalias() = matrix(buf.a.data(), m, k) * matrix(buf.b.data(), k, n);
        sink(buf.c[0]);
        return;
      }
      case operation_kind::elementwise:
        elementwise(o, buf);
        return;
    }
  }

  // Combines the operands into the output (their elements end to end, folded over the output's
  // length: a bias is broadcast, a reduction folds), then applies the op.
  static void elementwise(const operation& o, buffers& buf) {
    const auto e = static_cast<Eigen::Index>(o.elements);
    array y(buf.y.data(), e);
    const auto reads = static_cast<Eigen::Index>(o.reads);
    const Eigen::Index first = std::min(reads, e);
    const bool exp_first = o.op == elementwise_op::reduce_exp;
    if (exp_first) y.head(first) = array(buf.x.data(), first).exp();
    else y.head(first) = array(buf.x.data(), first);
    if (first < e) y.tail(e - first) = 1.0f;
    for (Eigen::Index at = first; at < reads;) {
      const Eigen::Index c = std::min(e, reads - at);
      const array x(buf.x.data() + at, c);
      if (o.op == elementwise_op::mul) y.head(c) *= x;
      else if (exp_first) y.head(c) += x.exp();
      else y.head(c) += x;
      at += c;
    }
    switch (o.op) {
      case elementwise_op::add:
      case elementwise_op::mul:
      case elementwise_op::select:
      case elementwise_op::reduce_exp:
        break;
      case elementwise_op::relu:
        y = y.max(0.0f);
        break;
      case elementwise_op::silu:
        y = y / (1.0f + (-y).exp());
        break;
      case elementwise_op::rope:
        y = y * 0.5f + y * y * 0.25f;
        break;
      case elementwise_op::rmsnorm:
        y *= 1.0f / std::sqrt(y.square().mean() + 1e-6f);
        break;
      case elementwise_op::softmax: {
        y = (y - y.maxCoeff()).exp();
        y *= 1.0f / y.sum();
        break;
      }
    }
    sink(y[0]);
  }

  // Keeps a result observable, so the optimiser cannot drop the work.
  static void sink(float value) {
    static std::atomic<float> out{0};
    out.store(value, std::memory_order_relaxed);
  }

  std::vector<operation> operations_;
  std::vector<buffers> buffers_;
};

struct profile_options {
  int runs = 5;  // timed rounds after one warm-up round; a vertex's time is its median
  // Threads that run every shaped vertex in a loop, on devices 1, 2, ... while the vertices are
  // timed on device 0: a vertex's time when that many other devices compute beside it (they share
  // the cores' caches and the memory bandwidth). 0: each vertex alone.
  std::size_t co_runners = 0;
};

// Each vertex's time on the calling thread, with device 0's buffers (alone, or beside co_runners
// busy devices): the median of `runs` rounds, every round running every vertex once in id order
// (so a vertex does not find its own data still in cache). A timed vertex keeps g's compute time.
[[nodiscard]] inline std::vector<seconds> profile_operations(eigen_operations& ops, const graph& g,
                                                             const profile_options& options = {}) {
  detail::check_profile("profile_operations", g, ops.operations(), options.runs);  // before any co-runner starts
  if (options.co_runners + 1 > ops.device_count())
    throw invalid_input("profile_operations: " + std::to_string(options.co_runners) + " co-runners need " +
                        std::to_string(options.co_runners + 1) + " devices' buffers, the operations have " +
                        std::to_string(ops.device_count()));
  std::atomic<bool> stop = false;
  std::vector<std::jthread> co_runners;
  for (std::size_t d = 1; d <= options.co_runners; ++d)
    co_runners.emplace_back([&, d] {
      while (!stop.load(std::memory_order_relaxed))
        for (vertex_id v = 0; v < g.vertex_count() && !stop.load(std::memory_order_relaxed); ++v)
          if (ops.operations()[v].kind != operation_kind::timed) ops({v, static_cast<device_id>(d), 0});
    });
  struct stopper {
    std::atomic<bool>& flag;
    ~stopper() { flag = true; }  // before the threads join, also when timing throws
  } stop_on_exit{stop};
  return detail::profile_rounds("profile_operations", g, ops.operations(), options.runs, [&](vertex_id v) {
    const auto t0 = std::chrono::steady_clock::now();
    ops({v, 0, 0});
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
}

}  // namespace gantry
