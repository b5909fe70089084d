// What GANTRY_SEPARATE_COMPILATION compiles once (core/config.hpp). Header-only is the default:
// every unit that includes a header compiles what it calls. With GANTRY_SEPARATE_COMPILATION
// defined in every unit of a program, these are only declared where they are used, and the program
// includes this header in one source file of its own:
//   - place/instances.hpp: ETF, m-ETF, Critical Path, HEFT, CPOP, PEFT, m-TOPO, simulate() and
//     validate() for gantry::graph, gantry::graph_model and gantry::cluster;
//   - io/impl/json_graph.hpp: the graph file's readers and writers;
//   - place/registry/*.hpp: the families of the placer registry (place/placers.hpp).
// A program may instead compile the parts in units of their own, as gantry::compiled and the
// gantry tool do (src/compiled/), to build them in parallel, or link the CMake target
// gantry::compiled, which is those units compiled.
#pragma once

#if !defined(GANTRY_SEPARATE_COMPILATION)
#error \
    "gantry/compiled.hpp: define GANTRY_SEPARATE_COMPILATION in every unit of the program (header-only needs no compiled part)"
#endif

#include <gantry/io/impl/json_graph.hpp>
#include <gantry/place/instances.hpp>
#include <gantry/place/registry/backward.hpp>
#include <gantry/place/registry/celeritas.hpp>
#include <gantry/place/registry/guards.hpp>
#include <gantry/place/registry/list.hpp>
#include <gantry/place/registry/lp.hpp>
