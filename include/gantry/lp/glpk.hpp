// GLPK as an LP backend (lp/linear_program.hpp): primal or dual simplex, or the interior-point
// method. GLPK never writes to the terminal from here and never aborts the process: its output
// goes to a hook that drops it, and its fatal-error hook jumps back to solve(), which frees GLPK's
// environment and returns status::solver_error. Needs gantry::lp (GLPK) at link time.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/lp/glpk_guard.hpp>
#include <gantry/lp/linear_program.hpp>

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csetjmp>
#include <string>
#include <vector>

namespace gantry {

enum class glpk_method { primal_simplex, dual_simplex, interior_point };

[[nodiscard]] constexpr const char* to_string(glpk_method m) noexcept {
  switch (m) {
    case glpk_method::primal_simplex:
      return "primal simplex";
    case glpk_method::dual_simplex:
      return "dual simplex";
    case glpk_method::interior_point:
      return "interior point";
  }
  return "unknown";
}

namespace detail {
inline int glpk_bound_type(double lower, double upper) {
  const bool has_lower = std::isfinite(lower), has_upper = std::isfinite(upper);
  if (has_lower && has_upper) return lower == upper ? GLP_FX : GLP_DB;
  if (has_lower) return GLP_LO;
  if (has_upper) return GLP_UP;
  return GLP_FR;
}
}  // namespace detail

struct glpk_backend {
  glpk_method method = glpk_method::dual_simplex;
  // Wall-clock limit in seconds for the simplex methods (0: none); GLPK's interior-point method has none.
  double time_limit = 0;
  // GLPK's LP presolver; off, the simplex starts from the LP's starting basis, or else from GLPK's
  // advanced initial basis.
  bool presolve = false;
  // Start the simplex from the LP's starting basis when it has one (and presolve is off).
  bool warm_start = true;

  [[nodiscard]] std::string name() const { return std::string("glpk ") + glp_version(); }

  [[nodiscard]] lp_solution solve(const linear_program& lp) const {
    lp.check("glpk_backend");
    lp_solution out;
    out.solver = name();
    out.method = to_string(method);
    const int rows = static_cast<int>(lp.row_count()), columns = static_cast<int>(lp.column_count());
    // GLPK counts from 1; entry 0 of these arrays is unused.
    std::vector<int> ia(lp.entry_count() + 1), ja(lp.entry_count() + 1);
    std::vector<double> ar(lp.entry_count() + 1);
    for (std::size_t k = 0; k < lp.entry_count(); ++k) {
      ia[k + 1] = lp.entry_row[k] + 1;
      ja[k + 1] = lp.entry_column[k] + 1;
      ar[k + 1] = lp.entry_value[k];
    }
    std::vector<double> values(lp.column_count());
    const auto t0 = std::chrono::steady_clock::now();

    // Between setjmp and the end only C calls run, so a jump skips no destructor. GLPK's state is
    // thread-local: what the fatal-error path frees is this thread's.
    detail::glpk_escape escape;
    glp_term_hook(detail::glpk_drop_output, nullptr);
    glp_error_hook(detail::glpk_on_error, &escape);
    glp_prob* volatile problem = nullptr;
    volatile int code = 0, status = GLP_UNDEF;
    volatile double objective = 0;
    if (setjmp(escape.where) != 0) {
      glp_error_hook(nullptr, nullptr);
      glp_term_hook(nullptr, nullptr);
      glp_free_env();  // frees every GLPK object of this thread, the problem included
      out.outcome = {.code = status::solver_error,
                     .message = "GLPK " + out.method + " stopped on an internal error (its environment was reset)"};
      return out;
    }
    glp_prob* p = glp_create_prob();
    problem = p;
    glp_set_obj_dir(p, GLP_MIN);
    if (columns > 0) glp_add_cols(p, columns);
    if (rows > 0) glp_add_rows(p, rows);
    for (int j = 0; j < columns; ++j) {
      glp_set_obj_coef(p, j + 1, lp.objective[j]);
      glp_set_col_bnds(p, j + 1, detail::glpk_bound_type(lp.column_lower[j], lp.column_upper[j]),
                       std::isfinite(lp.column_lower[j]) ? lp.column_lower[j] : 0.0,
                       std::isfinite(lp.column_upper[j]) ? lp.column_upper[j] : 0.0);
    }
    for (int i = 0; i < rows; ++i)
      glp_set_row_bnds(p, i + 1, detail::glpk_bound_type(lp.row_lower[i], lp.row_upper[i]),
                       std::isfinite(lp.row_lower[i]) ? lp.row_lower[i] : 0.0,
                       std::isfinite(lp.row_upper[i]) ? lp.row_upper[i] : 0.0);
    glp_load_matrix(p, static_cast<int>(lp.entry_count()), ia.data(), ja.data(), ar.data());
    if (method == glpk_method::interior_point) {
      glp_iptcp parameters;
      glp_init_iptcp(&parameters);
      parameters.msg_lev = GLP_MSG_OFF;
      code = glp_interior(p, &parameters);
      status = glp_ipt_status(p);
      if (code == 0 && status == GLP_OPT) {
        objective = glp_ipt_obj_val(p);
        for (int j = 0; j < columns; ++j) values[j] = glp_ipt_col_prim(p, j + 1);
      }
    } else {
      glp_smcp parameters;
      glp_init_smcp(&parameters);
      parameters.msg_lev = GLP_MSG_OFF;
      parameters.meth = method == glpk_method::dual_simplex ? GLP_DUALP : GLP_PRIMAL;
      parameters.presolve = presolve ? GLP_ON : GLP_OFF;
      if (time_limit > 0) parameters.tm_lim = static_cast<int>(std::min(time_limit * 1e3, 2e9));
      const bool warm = warm_start && !presolve && !lp.column_basis.empty();
      if (warm) {
        const auto stat = [](basis_status b) {
          return b == basis_status::basic ? GLP_BS : b == basis_status::at_upper ? GLP_NU : GLP_NL;
        };
        for (int j = 0; j < columns; ++j) glp_set_col_stat(p, j + 1, stat(lp.column_basis[j]));
        for (int i = 0; i < rows; ++i) glp_set_row_stat(p, i + 1, stat(lp.row_basis[i]));
        if (glp_warm_up(p) != 0) glp_adv_basis(p, 0);  // not a valid basis: GLPK's own
      } else if (!presolve) {
        glp_adv_basis(p, 0);
      }
      code = glp_simplex(p, &parameters);
      status = glp_get_status(p);
      if (code == 0 && status == GLP_OPT) {
        objective = glp_get_obj_val(p);
        for (int j = 0; j < columns; ++j) values[j] = glp_get_col_prim(p, j + 1);
      }
    }
    glp_delete_prob(problem);
    glp_error_hook(nullptr, nullptr);
    glp_term_hook(nullptr, nullptr);
    out.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    if (code == 0 && status == GLP_OPT) {
      out.values = std::move(values);
      out.objective = objective;
      return out;
    }
    const bool no_solution = status == GLP_NOFEAS || status == GLP_UNBND || code == GLP_ENOPFS || code == GLP_ENODFS;
    out.outcome = {.code = no_solution ? status::infeasible : status::solver_error,
                   .time = code == GLP_ETMLIM ? std::optional<seconds>(time_limit) : std::nullopt,
                   .message = "GLPK " + out.method + " returned " + detail::glpk_code_text(code) + " with status " +
                              detail::glpk_status_text(status) +
                              (code == GLP_ETMLIM ? " after the time limit of " + format_seconds(time_limit) : "")};
    return out;
  }
};

static_assert(lp_backend<glpk_backend>);

}  // namespace gantry
