// The library's default instances (ETF to PEFT, m-TOPO, simulate(), validate() on gantry's own
// types), compiled once for the whole tool, which is built with GANTRY_SEPARATE_COMPILATION
// (gantry/compiled.hpp).
#include <gantry/place/instances.hpp>
