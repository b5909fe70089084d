// The best non-contiguous allocation of a small chain (Euro-Par 2021, §6), exactly, as a mixed
// integer program solved by GLPK: minimise T subject to every layer on one processor, each
// processor's load <= T and its memory (weights plus reserved activations) <= M. Needs GLPK
// (link gantry::lp); not included by the umbrella header.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/lp/glpk_guard.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/non_contiguous.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <glpk.h>

#include <memory>
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
  std::unique_ptr<glp_prob, decltype(&glp_delete_prob)> owner(glp_create_prob(), &glp_delete_prob);
  glp_prob* lp = owner.get();
  glp_set_obj_dir(lp, GLP_MIN);
  // Columns: x(l, p) at 1 + l·P + p, then T.
  const int period_col = static_cast<int>(L * P) + 1;
  glp_add_cols(lp, period_col);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t p = 0; p < P; ++p) {
      const int col = static_cast<int>(l * P + p) + 1;
      glp_set_col_kind(lp, col, GLP_BV);
      if (p > l) glp_set_col_bnds(lp, col, GLP_FX, 0, 0);
    }
  glp_set_col_bnds(lp, period_col, GLP_LO, 0, 0);
  glp_set_obj_coef(lp, period_col, 1);
  const bool limited = capacity != unlimited_memory;
  const int rows = static_cast<int>(L + P + (limited ? P : 0));
  glp_add_rows(lp, rows);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  const auto put = [&](int row, int col, double value) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(value);
  };
  for (std::size_t l = 0; l < L; ++l) {
    const int row = static_cast<int>(l) + 1;
    glp_set_row_bnds(lp, row, GLP_FX, 1, 1);
    for (std::size_t p = 0; p < P; ++p) put(row, static_cast<int>(l * P + p) + 1, 1);
  }
  for (std::size_t p = 0; p < P; ++p) {
    const int load_row = static_cast<int>(L + p) + 1;
    glp_set_row_bnds(lp, load_row, GLP_UP, 0, 0);
    for (std::size_t l = 0; l < L; ++l) put(load_row, static_cast<int>(l * P + p) + 1, c.cost(l));
    put(load_row, period_col, -1);
    if (!limited) continue;
    const int memory_row = static_cast<int>(L + P + p) + 1;
    glp_set_row_bnds(lp, memory_row, GLP_UP, 0, static_cast<double>(capacity));
    for (std::size_t l = 0; l < L; ++l)
      put(memory_row, static_cast<int>(l * P + p) + 1,
          static_cast<double>(c[l].weights) + options.reserved_activations * static_cast<double>(c[l].activation));
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_iocp parameters;
  glp_init_iocp(&parameters);
  parameters.msg_lev = GLP_MSG_OFF;
  parameters.presolve = GLP_ON;
  parameters.tm_lim = options.time_limit_ms;
  int code = 0, state = GLP_UNDEF;
  if (!detail::glpk_guarded([&] {
        code = glp_intopt(lp, &parameters);
        state = glp_mip_status(lp);
      })) {
    static_cast<void>(owner.release());  // freed with GLPK's environment
    r.outcome.code = status::solver_error;
    r.outcome.message = "GLPK stopped on an internal error in its branch and bound, and its environment was reset";
    return r;
  }
  if (state == GLP_NOFEAS || code == GLP_ENOPFS || code == GLP_ENODFS) {
    r.outcome.code = status::infeasible;
    r.outcome.message = "no allocation of the " + std::to_string(L) + " layers on " + std::to_string(P) +
                        " processors of " + format_bytes(capacity) + " holds their weights and " +
                        std::to_string(options.reserved_activations) + " activation(s) per layer";
    return r;
  }
  if ((code != 0 && code != GLP_ETMLIM) || (state != GLP_OPT && state != GLP_FEAS)) {
    r.outcome.code = status::solver_error;
    r.outcome.message =
        "GLPK's glp_intopt returned " + std::to_string(code) + " with MIP status " + std::to_string(state);
    return r;
  }
  r.processor.assign(L, 0);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t p = 0; p < P; ++p)
      if (glp_mip_col_val(lp, static_cast<int>(l * P + p) + 1) > 0.5) r.processor[l] = static_cast<device_id>(p);
  detail::finish_allocation(r, c, P, capacity);
  if (r.ok() && state != GLP_OPT)
    r.outcome.message = "the time limit of " + format_seconds(options.time_limit_ms / 1000.0) +
                        " was reached: the best allocation "
                        "found, not proven optimal";
  return r;
}

}  // namespace gantry
