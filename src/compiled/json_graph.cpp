// The graph file's reader and writer, compiled once in gantry::compiled (and in the gantry tool),
// both built with GANTRY_SEPARATE_COMPILATION (gantry/compiled.hpp).
#include <gantry/io/impl/json_graph.hpp>
