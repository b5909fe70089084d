// The best non-contiguous allocation of a small chain (Euro-Par 2021, §6), exactly, as a mixed
// integer program solved by GLPK's branch and bound (lp/glpk.hpp): minimise T subject to every layer on one processor,
// each processor's load <= T and its memory (weights plus reserved activations) <= M. Needs GLPK (link gantry::lp); not
// included by the umbrella header.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/lp/glpk.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/non_contiguous.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <string>
#include <vector>

namespace gantry {

struct exact_allocation_options {
  std::size_t max_layers = 24;             // larger chains are refused (the program grows as L·P)
  int time_limit_ms = 10000;               // GLPK's branch and bound stops here with its best so far
  std::uint32_t reserved_activations = 1;  // activations per layer counted in the memory rows
};

// Symmetric processors are broken by allowing layer l only on processors 0..l (relabel the
// processors by the first layer each holds). The returned pattern is allocation_pattern() of the
// optimum; status out_of_memory when its activations (NCA) exceed M although the weights and
// reserved activations fit, infeasible when no allocation fits at all.
[[nodiscard]] inline allocation_result exact_allocation(const chain& c, std::size_t processors,
                                                        byte_count capacity = unlimited_memory,
                                                        exact_allocation_options options = {}) {
  check_chain(c);
  if (processors == 0) throw invalid_input("exact_allocation: at least one processor is needed");
  const std::size_t L = c.size();
  if (L > options.max_layers)
    throw invalid_input("exact_allocation: the chain has " + std::to_string(L) + " layers, more than max_layers = " +
                        std::to_string(options.max_layers) + " (use greedy_allocation for long chains)");
  allocation_result r;
  if (L == 0) return r;
  const std::size_t P = processors;
  linear_program lp;
  // Columns: x(l, p) at l·P + p, then T.
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t p = 0; p < P; ++p) lp.add_integer_column(0, 0, p > l ? 0 : 1);
  const int period_col = lp.add_column(1, 0, lp_infinity);
  // Rows: one processor per layer, then each processor's load, then its memory.
  const bool limited = capacity != unlimited_memory;
  for (std::size_t l = 0; l < L; ++l) lp.add_row(1, 1);
  for (std::size_t p = 0; p < P; ++p) lp.add_row(-lp_infinity, 0);
  if (limited)
    for (std::size_t p = 0; p < P; ++p) lp.add_row(-lp_infinity, static_cast<double>(capacity));
  const auto x = [&](std::size_t l, std::size_t p) { return static_cast<int>(l * P + p); };
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t p = 0; p < P; ++p) lp.add_entry(static_cast<int>(l), x(l, p), 1);
  for (std::size_t p = 0; p < P; ++p) {
    const int load_row = static_cast<int>(L + p);
    for (std::size_t l = 0; l < L; ++l) lp.add_entry(load_row, x(l, p), c.cost(l));
    lp.add_entry(load_row, period_col, -1);
    if (!limited) continue;
    const int memory_row = static_cast<int>(L + P + p);
    for (std::size_t l = 0; l < L; ++l)
      lp.add_entry(
          memory_row, x(l, p),
          static_cast<double>(c[l].weights) + options.reserved_activations * static_cast<double>(c[l].activation));
  }
  const glpk_backend solver{.time_limit = options.time_limit_ms / 1000.0, .presolve = true};
  const mip_solution found = solver.solve_mip(lp);
  if (found.outcome.code == status::infeasible) {
    r.outcome.code = status::infeasible;
    r.outcome.message = "no allocation of the " + std::to_string(L) + " layers on " + std::to_string(P) +
                        " processors of " + format_bytes(capacity) + " holds their weights and " +
                        std::to_string(options.reserved_activations) + " activation(s) per layer";
    return r;
  }
  if (!found.ok()) {
    r.outcome = found.outcome;
    return r;
  }
  r.processor.assign(L, 0);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t p = 0; p < P; ++p)
      if (found.values[static_cast<std::size_t>(x(l, p))] > 0.5) r.processor[l] = static_cast<device_id>(p);
  detail::finish_allocation(r, c, P, capacity);
  if (r.ok() && !found.proven)
    r.outcome.message = (found.time_limit_reached
                             ? "the time limit of " + format_seconds(options.time_limit_ms / 1000.0) + " was reached"
                             : found.stopped) +
                        ": the best allocation found, not proven optimal";
  return r;
}

}  // namespace gantry
