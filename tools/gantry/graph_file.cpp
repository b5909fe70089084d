// The graph file's reader and writer, compiled once for the whole tool, which is built with
// GANTRY_SEPARATE_COMPILATION (gantry/compiled.hpp).
#include <gantry/io/impl/json_graph.hpp>
