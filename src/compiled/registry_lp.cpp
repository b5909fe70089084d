// One family of the library's placer registry (place/placers.hpp), compiled in a unit of its own
// of gantry::compiled (and of the gantry tool), both built with GANTRY_SEPARATE_COMPILATION.
#include <gantry/place/registry/lp.hpp>
