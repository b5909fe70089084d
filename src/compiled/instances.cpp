// The library's default instances (ETF to PEFT, m-TOPO, simulate(), validate() on gantry's own
// types), compiled once in gantry::compiled (and in the gantry tool), both built with
// GANTRY_SEPARATE_COMPILATION (gantry/compiled.hpp).
#include <gantry/place/instances.hpp>
