// GLPK as an LP backend (lp/linear_program.hpp): primal or dual simplex, or the interior-point
// method; and as a mixed-integer backend, by its branch and bound (solve_mip). GLPK never writes to
// the terminal from here and never aborts the process: its output goes to a hook that drops it,
// and its fatal-error hook jumps back to solve(), which frees GLPK's environment and returns
// status::solver_error. Needs gantry::lp (GLPK) at link time.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/lp/glpk_guard.hpp>
#include <gantry/lp/linear_program.hpp>

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csetjmp>
#include <span>
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

// The matrix of `lp` as GLPK's 1-based coordinate arrays (entry 0 unused).
struct glpk_matrix {
  std::vector<int> row, column;
  std::vector<double> value;
  explicit glpk_matrix(const linear_program& lp)
      : row(lp.entry_count() + 1), column(lp.entry_count() + 1), value(lp.entry_count() + 1) {
    for (std::size_t k = 0; k < lp.entry_count(); ++k) {
      row[k + 1] = lp.entry_row[k] + 1;
      column[k + 1] = lp.entry_column[k] + 1;
      value[k + 1] = lp.entry_value[k];
    }
  }
};

// Loads `lp` (objective, bounds, matrix; minimisation) into the empty problem `p`.
inline void glpk_load(glp_prob* p, const linear_program& lp, glpk_matrix& matrix) {
  const int rows = static_cast<int>(lp.row_count()), columns = static_cast<int>(lp.column_count());
  glp_set_obj_dir(p, GLP_MIN);
  if (columns > 0) glp_add_cols(p, columns);
  if (rows > 0) glp_add_rows(p, rows);
  for (int j = 0; j < columns; ++j) {
    glp_set_obj_coef(p, j + 1, lp.objective[j]);
    glp_set_col_bnds(p, j + 1, glpk_bound_type(lp.column_lower[j], lp.column_upper[j]),
                     std::isfinite(lp.column_lower[j]) ? lp.column_lower[j] : 0.0,
                     std::isfinite(lp.column_upper[j]) ? lp.column_upper[j] : 0.0);
  }
  for (int i = 0; i < rows; ++i)
    glp_set_row_bnds(p, i + 1, glpk_bound_type(lp.row_lower[i], lp.row_upper[i]),
                     std::isfinite(lp.row_lower[i]) ? lp.row_lower[i] : 0.0,
                     std::isfinite(lp.row_upper[i]) ? lp.row_upper[i] : 0.0);
  glp_load_matrix(p, static_cast<int>(lp.entry_count()), matrix.row.data(), matrix.column.data(), matrix.value.data());
}

// What solve_mip's callback keeps from GLPK's branch and bound. It allocates nothing: the
// incumbent's storage is sized before the search.
struct glpk_mip_search {
  const std::vector<double>* start = nullptr;  // 1-based column values offered once, or null
  bool offered = false;
  double bound = 0;  // the best global bound seen
  // The last integer solution the search reported (1-based), kept in case GLPK stops on an
  // internal error.
  std::vector<double>* incumbent = nullptr;
  bool has_incumbent = false;
};

inline void glpk_mip_callback(glp_tree* tree, void* info) {
  auto& search = *static_cast<glpk_mip_search*>(info);
  switch (glp_ios_reason(tree)) {
    case GLP_IHEUR:
      if (search.start != nullptr && !search.offered) {
        search.offered = true;
        glp_ios_heur_sol(tree, search.start->data());
      }
      break;
    case GLP_ISELECT:
    case GLP_IBRANCH:
      if (const int node = glp_ios_best_node(tree); node != 0)
        search.bound = std::max(search.bound, glp_ios_node_bound(tree, node));
      break;
    case GLP_IBINGO: {
      glp_prob* const lp = glp_ios_get_prob(tree);
      auto& values = *search.incumbent;
      for (std::size_t j = 1; j < values.size(); ++j) values[j] = glp_mip_col_val(lp, static_cast<int>(j));
      search.has_incumbent = true;
      break;
    }
    default:
      break;
  }
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
  // solve_mip: GLPK's Gomory mixed-integer and mixed-integer rounding cuts.
  bool cuts = false;

  [[nodiscard]] std::string name() const { return std::string("glpk ") + glp_version(); }

  [[nodiscard]] lp_solution solve(const linear_program& lp) const {
    lp.check("glpk_backend");
    detail::refuse_integer_columns(lp, "glpk_backend::solve");
    lp_solution out;
    out.solver = name();
    out.method = to_string(method);
    const int rows = static_cast<int>(lp.row_count()), columns = static_cast<int>(lp.column_count());
    detail::glpk_matrix matrix(lp);
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
    detail::glpk_load(p, lp, matrix);
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

  // Solves `lp` with its integer columns by GLPK's branch and bound within time_limit. Without
  // presolve, the relaxation is solved first by the simplex `method` names from GLPK's standard
  // basis, `start` (a feasible solution, one value per column) is offered to the search as its
  // first incumbent, and where GLPK stops on an internal error the last incumbent it reported is
  // returned with the bound proven until then. With presolve, GLPK's presolver renumbers the
  // columns and solves the relaxation itself: no start is taken, and the bound is known only for a
  // proven optimum. `known_bound` is a bound on the objective known beforehand.
  [[nodiscard]] mip_solution solve_mip(const linear_program& lp, std::span<const double> start = {},
                                       double known_bound = -lp_infinity) const {
    const char* const who = "glpk_backend::solve_mip";
    lp.check(who);
    if (method == glpk_method::interior_point)
      throw invalid_input(std::string(who) +
                          ": branch and bound needs a simplex method, not the interior point method");
    if (!start.empty() && start.size() != lp.column_count())
      throw invalid_input(std::string(who) + ": a start of " + std::to_string(start.size()) + " values for " +
                          std::to_string(lp.column_count()) + " columns");
    if (!start.empty() && presolve)
      throw invalid_input(std::string(who) +
                          ": a start is taken only without presolve (its presolver renumbers columns)");
    mip_solution out;
    out.solver = name();
    out.method = std::string("branch and bound, ") + (presolve ? "presolved" : to_string(method)) + " relaxation";
    out.bound = known_bound;
    const int columns = static_cast<int>(lp.column_count());
    detail::glpk_matrix matrix(lp);
    // GLPK counts columns from 1; entry 0 of these is unused.
    std::vector<double> offered, incumbent(lp.column_count() + 1, 0.0), values(lp.column_count());
    if (!start.empty()) {
      offered.assign(lp.column_count() + 1, 0.0);
      std::copy(start.begin(), start.end(), offered.begin() + 1);
    }
    detail::glpk_mip_search search{offered.empty() ? nullptr : &offered, false, known_bound, &incumbent, false};
    const int limit_ms = time_limit > 0 ? static_cast<int>(std::lround(std::min(time_limit * 1e3, 2e9))) : 0;
    glp_smcp simplex;
    glp_init_smcp(&simplex);
    simplex.msg_lev = GLP_MSG_OFF;
    simplex.meth = method == glpk_method::dual_simplex ? GLP_DUALP : GLP_PRIMAL;
    if (limit_ms > 0) simplex.tm_lim = limit_ms;
    glp_iocp parameters;
    glp_init_iocp(&parameters);
    parameters.msg_lev = GLP_MSG_OFF;
    parameters.presolve = presolve ? GLP_ON : GLP_OFF;
    parameters.gmi_cuts = cuts ? GLP_ON : GLP_OFF;
    parameters.mir_cuts = cuts ? GLP_ON : GLP_OFF;
    if (limit_ms > 0) parameters.tm_lim = limit_ms;
    if (!presolve) {  // the callback's columns are the program's own only without the presolver
      parameters.cb_func = detail::glpk_mip_callback;
      parameters.cb_info = &search;
    }
    int lp_code = 0, lp_status = GLP_OPT, code = 0, state = GLP_UNDEF;
    double value = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const bool returned = detail::glpk_guarded([&] {
      glp_prob* const p = glp_create_prob();
      detail::glpk_load(p, lp, matrix);
      for (int j = 0; j < columns; ++j)
        if (!lp.column_integer.empty() && lp.column_integer[j] != 0) glp_set_col_kind(p, j + 1, GLP_IV);
      if (!presolve) {
        lp_code = glp_simplex(p, &simplex);
        lp_status = glp_get_status(p);
        if (lp_code != 0 || lp_status != GLP_OPT) {
          glp_delete_prob(p);
          return;
        }
        search.bound = std::max(search.bound, glp_get_obj_val(p));
      }
      code = glp_intopt(p, &parameters);
      state = glp_mip_status(p);
      if (code != GLP_ENOPFS && code != GLP_ENODFS && (state == GLP_OPT || state == GLP_FEAS)) {
        value = glp_mip_obj_val(p);
        for (int j = 0; j < columns; ++j) values[j] = glp_mip_col_val(p, j + 1);
      }
      glp_delete_prob(p);
    });
    out.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto objective_of = [&](const std::vector<double>& x) {
      double sum = 0;
      for (std::size_t j = 0; j < x.size(); ++j) sum += lp.objective[j] * x[j];
      return sum;
    };
    if (!returned) {
      out.stopped = "GLPK stopped on an internal error in its branch and bound, and its environment was reset";
      out.bound = std::max(out.bound, search.bound);
      if (search.has_incumbent) {
        out.values.assign(incumbent.begin() + 1, incumbent.end());
        out.objective = objective_of(out.values);
      } else {
        out.outcome = {.code = status::solver_error, .message = out.stopped};
      }
      return out;
    }
    if (lp_code != 0 || lp_status != GLP_OPT) {
      const bool no_solution = lp_code == 0 && (lp_status == GLP_NOFEAS || lp_status == GLP_UNBND);
      out.outcome = {.code = no_solution ? status::infeasible : status::solver_error,
                     .message = "GLPK's glp_simplex returned " + detail::glpk_code_text(lp_code) + " with status " +
                                detail::glpk_status_text(lp_status) + " on the relaxation"};
      return out;
    }
    if (code == GLP_ENOPFS || code == GLP_ENODFS || state == GLP_NOFEAS) {
      out.outcome = {.code = status::infeasible,
                     .message = "GLPK's branch and bound found no integer solution: glp_intopt returned " +
                                detail::glpk_code_text(code) + " with status " + detail::glpk_status_text(state)};
      return out;
    }
    out.time_limit_reached = code == GLP_ETMLIM;
    if (code != 0 && code != GLP_ETMLIM)
      out.stopped = "GLPK's branch and bound stopped early: glp_intopt returned " + detail::glpk_code_text(code);
    if (state == GLP_OPT || state == GLP_FEAS) {
      out.values = std::move(values);
      out.objective = value;
      out.proven = state == GLP_OPT && code == 0;
      out.bound = out.proven ? value : std::min(search.bound, value);
      return out;
    }
    out.bound = std::max(out.bound, search.bound);
    out.outcome = {.code = status::solver_error,
                   .time = out.time_limit_reached ? std::optional<seconds>(time_limit) : std::nullopt,
                   .message = out.time_limit_reached
                                  ? "GLPK's branch and bound found no integer solution within the time limit of " +
                                        format_seconds(time_limit)
                                  : "GLPK's glp_intopt returned " + detail::glpk_code_text(code) + " with status " +
                                        detail::glpk_status_text(state)};
    return out;
  }
};

static_assert(lp_backend<glpk_backend>);
static_assert(mip_backend<glpk_backend>);

}  // namespace gantry
