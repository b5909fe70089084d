// A linear program in sparse form, optionally with integer columns, and what an LP backend is: any
// type with `solve(const linear_program&) -> lp_solution` and `name()`; a mixed-integer backend also
// has `solve_mip`. GLPK (lp/glpk.hpp, the default, both kinds) and COIN-OR CLP (lp/clp.hpp, LPs only,
// when found at configure time) are the backends gantry ships.
#pragma once

#include <gantry/core/types.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace gantry {

inline constexpr double lp_infinity = std::numeric_limits<double>::infinity();

// Where a column or row stands in a simplex basis: basic, or nonbasic at its lower or upper bound.
enum class basis_status : std::uint8_t { basic, at_lower, at_upper };

// minimise objective·x subject to row_lower <= A x <= row_upper and column_lower <= x <= column_upper.
// A is stored as coordinate entries (row, column, value); a bound of ±lp_infinity is no bound.
struct linear_program {
  std::vector<double> objective, column_lower, column_upper;
  std::vector<double> row_lower, row_upper;
  std::vector<int> entry_row, entry_column;
  std::vector<double> entry_value;
  // A starting basis, optional (both empty: the solver finds its own). A simplex backend starts
  // from it when it is a valid basis (as many basic entries as rows, nonsingular) and falls back
  // to its own otherwise; other methods ignore it.
  std::vector<basis_status> column_basis{}, row_basis{};
  // Nonzero for a column whose value must be an integer, per column; empty: none (a linear program).
  // Only a mixed-integer backend's solve_mip takes such a program; solve() refuses it.
  std::vector<std::uint8_t> column_integer{};

  [[nodiscard]] std::size_t column_count() const noexcept { return objective.size(); }
  [[nodiscard]] std::size_t row_count() const noexcept { return row_lower.size(); }
  [[nodiscard]] std::size_t entry_count() const noexcept { return entry_value.size(); }
  [[nodiscard]] bool has_integer_columns() const noexcept {
    return std::any_of(column_integer.begin(), column_integer.end(), [](std::uint8_t flag) { return flag != 0; });
  }

  // Both keep column_integer as long as the columns once an integer column was added.
  int add_column(double cost, double lower, double upper) {
    objective.push_back(cost);
    column_lower.push_back(lower);
    column_upper.push_back(upper);
    if (!column_integer.empty()) column_integer.push_back(0);
    return static_cast<int>(objective.size() - 1);
  }
  int add_integer_column(double cost, double lower, double upper) {
    const int column = add_column(cost, lower, upper);
    column_integer.resize(objective.size(), 0);
    column_integer[static_cast<std::size_t>(column)] = 1;
    return column;
  }
  int add_row(double lower, double upper) {
    row_lower.push_back(lower);
    row_upper.push_back(upper);
    return static_cast<int>(row_lower.size() - 1);
  }
  void add_entry(int row, int column, double value) {
    entry_row.push_back(row);
    entry_column.push_back(column);
    entry_value.push_back(value);
  }

  // Throws invalid_input when sizes disagree, an entry is out of range or a number is NaN.
  void check(const char* who) const {
    const std::string name(who);
    if (column_lower.size() != objective.size() || column_upper.size() != objective.size())
      throw invalid_input(name + ": " + std::to_string(objective.size()) + " objective entries but " +
                          std::to_string(column_lower.size()) + " lower and " + std::to_string(column_upper.size()) +
                          " upper column bounds");
    if (row_upper.size() != row_lower.size())
      throw invalid_input(name + ": " + std::to_string(row_lower.size()) + " lower but " +
                          std::to_string(row_upper.size()) + " upper row bounds");
    if (entry_column.size() != entry_row.size() || entry_value.size() != entry_row.size())
      throw invalid_input(name + ": matrix entries have " + std::to_string(entry_row.size()) + " rows, " +
                          std::to_string(entry_column.size()) + " columns and " + std::to_string(entry_value.size()) +
                          " values");
    for (std::size_t k = 0; k < entry_row.size(); ++k) {
      if (entry_row[k] < 0 || static_cast<std::size_t>(entry_row[k]) >= row_count() || entry_column[k] < 0 ||
          static_cast<std::size_t>(entry_column[k]) >= column_count())
        throw invalid_input(name + ": matrix entry " + std::to_string(k) + " at (" + std::to_string(entry_row[k]) +
                            ", " + std::to_string(entry_column[k]) + ") is outside " + std::to_string(row_count()) +
                            " rows and " + std::to_string(column_count()) + " columns");
      if (!(entry_value[k] == entry_value[k]))
        throw invalid_input(name + ": matrix entry " + std::to_string(k) + " is not a number");
    }
    for (std::size_t j = 0; j < column_count(); ++j)
      if (!(objective[j] == objective[j]) || !(column_lower[j] <= column_upper[j]))
        throw invalid_input(name + ": column " + std::to_string(j) + " has a NaN cost or lower bound " +
                            std::to_string(column_lower[j]) + " above upper bound " + std::to_string(column_upper[j]));
    if (!column_integer.empty() && column_integer.size() != column_count())
      throw invalid_input(name + ": " + std::to_string(column_integer.size()) + " integer flags for " +
                          std::to_string(column_count()) + " columns");
    if ((!column_basis.empty() || !row_basis.empty()) &&
        (column_basis.size() != column_count() || row_basis.size() != row_count()))
      throw invalid_input(name + ": a starting basis of " + std::to_string(column_basis.size()) + " columns and " +
                          std::to_string(row_basis.size()) + " rows for " + std::to_string(column_count()) +
                          " columns and " + std::to_string(row_count()) + " rows");
    for (std::size_t i = 0; i < row_count(); ++i)
      if (!(row_lower[i] <= row_upper[i]))
        throw invalid_input(name + ": row " + std::to_string(i) + " has lower bound " + std::to_string(row_lower[i]) +
                            " above upper bound " + std::to_string(row_upper[i]));
  }
};

// What a backend returns. outcome.code is ok (an optimal solution in `values`), infeasible (the
// LP has no solution, or is unbounded) or solver_error (the solver failed or hit its time limit);
// outcome.message then quotes the solver's own status.
struct lp_solution {
  gantry::outcome outcome;
  std::vector<double> values;  // per column, when optimal
  double objective = 0;
  std::string solver;  // e.g. "glpk 5.0"
  std::string method;  // e.g. "dual simplex"
  seconds solve_seconds = 0;

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
};

// What a mixed-integer backend returns. outcome.code is ok when `values` hold an integer solution:
// the optimum when `proven`, else the best found before the search stopped (at the time limit, or
// early for the reason `stopped` gives); infeasible when no integer solution exists; solver_error
// when the search ended without one (outcome.time set when the time limit ended it).
struct mip_solution {
  gantry::outcome outcome;
  std::vector<double> values;   // per column, when a solution was found
  double objective = 0;         // of `values`
  double bound = -lp_infinity;  // no integer solution's objective is below it
  bool proven = false;
  bool time_limit_reached = false;
  std::string stopped;  // why the search ended before proving, other than the time limit
  std::string solver;
  std::string method;
  seconds solve_seconds = 0;

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
};

// An LP solver gantry can call.
template <class B>
concept lp_backend = requires(const B& backend, const linear_program& lp) {
  { backend.solve(lp) } -> std::same_as<lp_solution>;
  { backend.name() } -> std::convertible_to<std::string>;
};

// A solver for programs with integer columns: `start` is a feasible solution to begin from (one
// value per column, or empty) and `known_bound` a bound on the objective known beforehand.
template <class B>
concept mip_backend = requires(const B& backend, const linear_program& lp, std::span<const double> start) {
  { backend.solve_mip(lp, start, 0.0) } -> std::same_as<mip_solution>;
  { backend.name() } -> std::convertible_to<std::string>;
};

namespace detail {
// An LP backend's refusal of a program with integer columns.
inline void refuse_integer_columns(const linear_program& lp, const char* who) {
  if (lp.has_integer_columns())
    throw invalid_input(std::string(who) + ": the program has integer columns, which an LP solve would relax; " +
                        "solve it with a mixed-integer backend's solve_mip (glpk_backend has one)");
}
}  // namespace detail

}  // namespace gantry
