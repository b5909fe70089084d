// COIN-OR CLP as an LP backend (lp/linear_program.hpp): dual or primal simplex, or the barrier
// method. Optional: gantry::lp defines GANTRY_HAS_CLP and links CLP when configure found it
// (Debian: coinor-libclp-dev). CLP's log is switched off; its exceptions become
// status::solver_error. A starting basis in the LP (linear_program::column_basis) is handed to
// the simplex methods.
#pragma once

#include <gantry/lp/linear_program.hpp>

#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinError.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace gantry {

enum class clp_method { dual_simplex, primal_simplex, barrier };

[[nodiscard]] constexpr const char* to_string(clp_method m) noexcept {
  switch (m) {
    case clp_method::dual_simplex:
      return "dual simplex";
    case clp_method::primal_simplex:
      return "primal simplex";
    case clp_method::barrier:
      return "barrier";
  }
  return "unknown";
}

struct clp_backend {
  clp_method method = clp_method::dual_simplex;
  double time_limit = 0;  // wall-clock seconds, 0: none

  [[nodiscard]] std::string name() const { return "clp " CLP_VERSION; }

  [[nodiscard]] lp_solution solve(const linear_program& lp) const {
    lp.check("clp_backend");
    detail::refuse_integer_columns(lp, "clp_backend");
    lp_solution out;
    out.solver = name();
    out.method = to_string(method);
    const int rows = static_cast<int>(lp.row_count()), columns = static_cast<int>(lp.column_count());
    // Compressed columns.
    std::vector<CoinBigIndex> start(static_cast<std::size_t>(columns) + 1, 0);
    for (const int j : lp.entry_column) ++start[static_cast<std::size_t>(j) + 1];
    for (int j = 0; j < columns; ++j) start[j + 1] += start[j];
    std::vector<int> index(lp.entry_count());
    std::vector<double> value(lp.entry_count());
    {
      std::vector<CoinBigIndex> fill(start.begin(), start.end() - 1);
      for (std::size_t k = 0; k < lp.entry_count(); ++k) {
        const auto at = fill[lp.entry_column[k]]++;
        index[at] = lp.entry_row[k];
        value[at] = lp.entry_value[k];
      }
    }
    const auto finite = [](std::vector<double> v) {
      for (double& x : v) x = std::isfinite(x) ? x : (x > 0 ? COIN_DBL_MAX : -COIN_DBL_MAX);
      return v;
    };
    const std::vector<double> column_lower = finite(lp.column_lower), column_upper = finite(lp.column_upper);
    const std::vector<double> row_lower = finite(lp.row_lower), row_upper = finite(lp.row_upper);
    const auto t0 = std::chrono::steady_clock::now();
    int state = -1;
    try {
      ClpSimplex model;
      model.setLogLevel(0);
      model.messageHandler()->setLogLevel(0);
      model.loadProblem(columns, rows, start.data(), index.data(), value.data(), column_lower.data(),
                        column_upper.data(), lp.objective.data(), row_lower.data(), row_upper.data());
      if (time_limit > 0) model.setMaximumSeconds(time_limit);
      if (!lp.column_basis.empty() && method != clp_method::barrier) {
        const auto stat = [](basis_status b) {
          return b == basis_status::basic      ? ClpSimplex::basic
                 : b == basis_status::at_upper ? ClpSimplex::atUpperBound
                                               : ClpSimplex::atLowerBound;
        };
        for (int j = 0; j < columns; ++j) model.setColumnStatus(j, stat(lp.column_basis[j]));
        for (int i = 0; i < rows; ++i) model.setRowStatus(i, stat(lp.row_basis[i]));
      }
      switch (method) {
        case clp_method::dual_simplex:
          model.dual();
          break;
        case clp_method::primal_simplex:
          model.primal();
          break;
        case clp_method::barrier: {
          ClpSolve options;
          options.setSolveType(ClpSolve::useBarrier);
          options.setPresolveType(ClpSolve::presolveOn);
          model.initialSolve(options);
          break;
        }
      }
      state = model.status();
      if (state == 0) {
        out.objective = model.objectiveValue();
        const double* solution = model.primalColumnSolution();
        out.values.assign(solution, solution + columns);
      }
    } catch (const CoinError& e) {
      out.outcome = {
          .code = status::solver_error,
          .message = "CLP " + out.method + " failed in " + e.className() + "::" + e.methodName() + ": " + e.message()};
      return out;
    }
    out.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (state == 0) return out;
    const char* text = state == 1   ? "1 (primal infeasible)"
                       : state == 2 ? "2 (dual infeasible: unbounded)"
                       : state == 3 ? "3 (stopped on the iteration or time limit)"
                       : state == 4 ? "4 (stopped on errors)"
                                    : "5 (stopped by an event handler)";
    out.outcome = {.code = state == 1 || state == 2 ? status::infeasible : status::solver_error,
                   .time = state == 3 && time_limit > 0 ? std::optional<seconds>(time_limit) : std::nullopt,
                   .message = "CLP " + out.method + " ended with status " + text};
    return out;
  }
};

static_assert(lp_backend<clp_backend>);

}  // namespace gantry
