// GLPK without its two ways of reaching past the caller: its terminal output and its fatal errors.
// GLPK ends the process on an internal error (a failed assertion in its simplex, say) unless an
// error hook jumps out; glpk_guarded() installs one, and a hook that drops the output, around the
// GLPK calls it is given. Also GLPK's return codes and statuses in words. Used by lp/glpk.hpp,
// place/exact.hpp and pipeline/lp_allocation.hpp.
#pragma once

#include <glpk.h>

#include <csetjmp>
#include <string>

namespace gantry::detail {

struct glpk_escape {
  std::jmp_buf where;
};
extern "C" inline void glpk_on_error(void* info) { std::longjmp(static_cast<glpk_escape*>(info)->where, 1); }
extern "C" inline int glpk_drop_output(void*, const char*) { return 1; }

// GLPK's return codes and solution statuses in words, for messages.
inline std::string glpk_code_text(int code) {
  switch (code) {
    case 0:
      return "0 (solved)";
    case GLP_EBADB:
      return "GLP_EBADB (invalid initial basis)";
    case GLP_ESING:
      return "GLP_ESING (singular basis matrix)";
    case GLP_ECOND:
      return "GLP_ECOND (ill-conditioned basis matrix)";
    case GLP_EBOUND:
      return "GLP_EBOUND (incorrect bounds)";
    case GLP_EFAIL:
      return "GLP_EFAIL (solver failure)";
    case GLP_EOBJLL:
      return "GLP_EOBJLL (objective below its lower limit)";
    case GLP_EOBJUL:
      return "GLP_EOBJUL (objective above its upper limit)";
    case GLP_EITLIM:
      return "GLP_EITLIM (iteration limit reached)";
    case GLP_ETMLIM:
      return "GLP_ETMLIM (time limit reached)";
    case GLP_ENOPFS:
      return "GLP_ENOPFS (no primal feasible solution)";
    case GLP_ENODFS:
      return "GLP_ENODFS (no dual feasible solution)";
    case GLP_ENOCVG:
      return "GLP_ENOCVG (no convergence)";
    case GLP_EINSTAB:
      return "GLP_EINSTAB (numerical instability)";
    default:
      return std::to_string(code);
  }
}
inline std::string glpk_status_text(int status) {
  switch (status) {
    case GLP_OPT:
      return "GLP_OPT (optimal)";
    case GLP_FEAS:
      return "GLP_FEAS (feasible, not proven optimal)";
    case GLP_INFEAS:
      return "GLP_INFEAS (infeasible)";
    case GLP_NOFEAS:
      return "GLP_NOFEAS (no feasible solution)";
    case GLP_UNBND:
      return "GLP_UNBND (unbounded)";
    case GLP_UNDEF:
      return "GLP_UNDEF (undefined)";
    default:
      return std::to_string(status);
  }
}

// Runs `calls` with GLPK's output dropped and its fatal errors caught. Returns true when `calls`
// returned, false when GLPK stopped on an internal error: then GLPK's environment has been freed,
// and with it every GLPK object of this thread (GLPK's state is thread-local), so the caller must
// neither use nor delete a problem it created before. The jump leaves `calls` without unwinding it:
// `calls` must hold no object with a destructor, and write its results through references to
// objects outside it.
template <class F>
[[nodiscard]] bool glpk_guarded(F&& calls) {
  glpk_escape escape;
  glp_term_hook(glpk_drop_output, nullptr);
  glp_error_hook(glpk_on_error, &escape);
  if (setjmp(escape.where) != 0) {
    glp_error_hook(nullptr, nullptr);
    glp_term_hook(nullptr, nullptr);
    glp_free_env();
    return false;
  }
  calls();
  glp_error_hook(nullptr, nullptr);
  glp_term_hook(nullptr, nullptr);
  return true;
}

}  // namespace gantry::detail
