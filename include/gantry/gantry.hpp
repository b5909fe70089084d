// Everything in gantry that needs neither GLPK nor CUDA, in pipeline order:
// graph -> models -> orders -> placers -> simulator -> I/O. The LP-based headers (SCT, the exact
// non-contiguous pipeline allocation) are included on their own and need the gantry::lp target.
#pragma once

#include <gantry/core/random.hpp>
#include <gantry/core/types.hpp>

#include <gantry/graph/adaptor.hpp>
#include <gantry/graph/boost.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/generate/random_dag.hpp>

#include <gantry/model/cluster.hpp>
#include <gantry/model/link_fit.hpp>
#include <gantry/model/model.hpp>

#include <gantry/order/levels.hpp>
#include <gantry/order/topological.hpp>

#include <gantry/place/m_topo.hpp>
#include <gantry/place/single_device.hpp>

#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/schedule/validate.hpp>

#include <gantry/sim/simulator.hpp>
