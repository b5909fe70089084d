// What each vertex of a DOPPLER workload computes (workloads/doppler.hpp), in shapes a backend can
// run as real work: a matrix product (m x k) times (k x n), or an element-wise pass that reads the
// vertex's operand tensors and writes its output. exec/eigen_operations.hpp runs them on the CPU.
//
// The shapes are read back from what the graph already holds, so a workload written to a file and
// read again keeps them: the op name, the FLOPs, the output bytes and the bytes on the in-edges
// (one edge per operand tensor), with `element_bytes` bytes per element. For a "matmul" producing E
// elements with F FLOPs from operands of A elements in all:
//   k = F / 2E,  m n = E,  m + n = A / k   (m, n the roots of t^2 - (A/k) t + E),
// which is the product's own shape for every unbatched product of the four workloads. A batched
// product (the attention's scores and context, one product per head) runs as one product of the
// same FLOPs, output size and inner dimension k, m the divisor of E nearest the larger root.
//
// Other vertices: the element-wise ops of the workloads ("add", "bias_add", "sum", "mul", "relu",
// "silu", "rope", "rmsnorm", "softmax", "softmax_stats", "embedding") read every operand and write
// the output; "input" vertices and every op this header does not know are `timed`: a backend runs
// their modelled duration (a profiled graph's Conv2D has no shape here).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gantry {

enum class operation_kind : std::uint8_t {
  timed,        // no shape: the vertex's modelled duration
  matmul,       // (m x k) times (k x n)
  elementwise,  // reads `reads` elements over `operands` tensors, writes `elements`
};

// The element-wise ops the workloads use, by what their kernel does to the combined operands.
enum class elementwise_op : std::uint8_t { add, mul, relu, silu, rope, rmsnorm, softmax, reduce_exp, select };

struct operation {
  operation_kind kind = operation_kind::timed;
  elementwise_op op = elementwise_op::add;  // elementwise only
  std::uint64_t m = 0, k = 0, n = 0;        // matmul only
  std::uint64_t elements = 0;               // elements written (m n for a matmul)
  std::uint64_t reads = 0;                  // elements read, all operands together
  std::uint32_t operands = 0;               // in-edges

  [[nodiscard]] double flops() const noexcept {
    return kind == operation_kind::matmul
               ? 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n)
               : 0.0;
  }
};

namespace detail {
struct named_elementwise {
  std::string_view name;
  elementwise_op op;
};
inline constexpr std::array<named_elementwise, 11> elementwise_ops{{
    {"add", elementwise_op::add},
    {"bias_add", elementwise_op::add},
    {"sum", elementwise_op::add},
    {"mul", elementwise_op::mul},
    {"relu", elementwise_op::relu},
    {"silu", elementwise_op::silu},
    {"rope", elementwise_op::rope},
    {"rmsnorm", elementwise_op::rmsnorm},
    {"softmax", elementwise_op::softmax},
    {"softmax_stats", elementwise_op::reduce_exp},
    {"embedding", elementwise_op::select},
}};

// m and n of a product writing `elements` from operands of `reads` elements with inner dimension k.
inline std::pair<std::uint64_t, std::uint64_t> product_sides(std::uint64_t elements, std::uint64_t reads,
                                                             std::uint64_t k) {
  const double e = static_cast<double>(elements), s = static_cast<double>(reads) / static_cast<double>(k);
  const double discriminant = s * s - 4 * e;
  // Fewer operand elements than any product of E outputs can read: the inputs are broadcast, so
  // take the squarest shape of E outputs.
  const double larger = discriminant >= 0 ? (s + std::sqrt(discriminant)) / 2 : std::sqrt(e);
  // The divisor of E nearest that root: the product's own side where it is whole (the workloads'
  // unbatched products), else the nearest shape with exactly E outputs.
  std::uint64_t best = 1;
  for (std::uint64_t i = 1; i * i <= elements; ++i) {
    if (elements % i != 0) continue;
    for (const std::uint64_t d : {i, elements / i})
      if (std::abs(static_cast<double>(d) - larger) < std::abs(static_cast<double>(best) - larger)) best = d;
  }
  return {best, elements / best};
}
}  // namespace detail

// The operation of every vertex of g (indexed by vertex id). Throws invalid_input naming the vertex
// for a "matmul" whose FLOPs are not 2 x its output elements x a whole inner dimension (to 0.1%),
// or whose output or operand bytes are not whole elements.
[[nodiscard]] inline std::vector<operation> operations_of(const graph& g, unsigned element_bytes = 4) {
  if (element_bytes == 0) throw invalid_input("operations_of: element_bytes must be > 0");
  std::vector<operation> out(g.vertex_count());
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& p = g[v];
    const auto where = [&] { return "operations_of: vertex '" + p.name + "' (" + p.op + ")"; };
    operation& o = out[v];
    const auto known = std::find_if(detail::elementwise_ops.begin(), detail::elementwise_ops.end(),
                                    [&](const auto& e) { return e.name == p.op; });
    if (p.op != "matmul" && known == detail::elementwise_ops.end()) continue;  // timed
    if (p.output % element_bytes != 0)
      throw invalid_input(where() + ": output of " + std::to_string(p.output) + " bytes is not whole " +
                          std::to_string(element_bytes) + "-byte elements");
    o.elements = p.output / element_bytes;
    g.for_each_in_edge(v, [&](edge_id e) {
      if (g.bytes(e) % element_bytes != 0)
        throw invalid_input(where() + ": operand from '" + g[g.source(e)].name + "' of " + std::to_string(g.bytes(e)) +
                            " bytes is not whole " + std::to_string(element_bytes) + "-byte elements");
      o.reads += g.bytes(e) / element_bytes;
      ++o.operands;
    });
    if (o.elements == 0) throw invalid_input(where() + ": writes no elements");
    if (known != detail::elementwise_ops.end()) {
      o.kind = operation_kind::elementwise;
      o.op = known->op;
      if (o.operands == 0) throw invalid_input(where() + ": has no operands");
      continue;
    }
    const double inner = p.flops / (2.0 * static_cast<double>(o.elements));
    const auto k = static_cast<std::uint64_t>(std::llround(inner));
    if (!(inner >= 0.5) || std::abs(inner - static_cast<double>(k)) > 1e-3 * inner)
      throw invalid_input(where() + ": " + std::to_string(p.flops) + " FLOPs are not 2 x " +
                          std::to_string(o.elements) + " output elements x a whole inner dimension");
    if (o.operands < 2 || o.reads < 2 * k) throw invalid_input(where() + ": a product needs two operands");
    o.kind = operation_kind::matmul;
    o.k = k;
    std::tie(o.m, o.n) = detail::product_sides(o.elements, o.reads, k);
    o.elements = o.m * o.n;
  }
  return out;
}

namespace detail {
// The profile that every backend's profiler shares: `runs` timed rounds after a warm-up round, every
// round running each shaped vertex once in id order (so a vertex does not find its own data still
// in cache); a vertex's time is its median (the upper middle one for an even count), and a timed
// vertex keeps g's compute time. time_one(v) runs v once and returns how long it took. Throws
// invalid_input, naming `who`, for operations of another graph or runs < 1.
inline void check_profile(const char* who, const graph& g, std::span<const operation> operations, int runs) {
  if (operations.size() != g.vertex_count())
    throw invalid_input(std::string(who) + ": " + std::to_string(operations.size()) + " operations for a graph of " +
                        std::to_string(g.vertex_count()) + " vertices");
  if (runs < 1) throw invalid_input(std::string(who) + ": runs must be >= 1");
}
template <class TimeOne>
[[nodiscard]] std::vector<seconds> profile_rounds(const char* who, const graph& g,
                                                  std::span<const operation> operations, int runs, TimeOne time_one) {
  check_profile(who, g, operations, runs);
  std::vector<std::vector<seconds>> samples(g.vertex_count());
  for (int round = 0; round <= runs; ++round)
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
      if (operations[v].kind == operation_kind::timed) continue;
      const seconds took = time_one(v);
      if (round > 0) samples[v].push_back(took);  // round 0 warms caches and pages up
    }
  std::vector<seconds> out(g.vertex_count());
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    auto& s = samples[v];
    if (s.empty()) {
      out[v] = g[v].compute;
      continue;
    }
    std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
    out[v] = s[s.size() / 2];
  }
  return out;
}
}  // namespace detail

// g with every vertex's compute time (and its time on every device kind) set to `times`.
[[nodiscard]] inline graph with_profiled_times(const graph& g, std::span<const seconds> times) {
  if (times.size() != g.vertex_count())
    throw invalid_input("with_profiled_times: " + std::to_string(times.size()) + " times for a graph of " +
                        std::to_string(g.vertex_count()) + " vertices");
  graph out = g;
  for (vertex_id v = 0; v < out.vertex_count(); ++v) {
    out[v].compute = times[v];
    for (const auto& [kind, time] : g.kind_times(v)) out.set_compute(v, kind, times[v]);
  }
  return out;
}

}  // namespace gantry
