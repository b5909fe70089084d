// Everything gantry reads and writes: graph, cluster, placement and chain JSON (docs/format.md), DOT,
// Chrome traces, SVG Gantt charts, units, gzip, atomic file writing and the limits every reader
// enforces on adversarial input (io/limits.hpp). Only these headers need
// nlohmann-json and zlib.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/io/atomic_file.hpp>
#include <gantry/io/chrome_trace.hpp>
#include <gantry/io/dot.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/import_dot.hpp>
#include <gantry/io/import_pipedream.hpp>
#include <gantry/io/json_chain.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/io/json_placement.hpp>
#include <gantry/io/json_support.hpp>
#include <gantry/io/limits.hpp>
#include <gantry/io/markup.hpp>
#include <gantry/io/svg_gantt.hpp>
