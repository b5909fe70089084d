// Everything in gantry that does not need GLPK, in pipeline order:
// graph -> models -> orders -> bounds -> placers and pipelines -> schedules -> simulator -> I/O
// (link gantry::gantry). gantry/algorithms.hpp is the same without the readers and writers, far
// cheaper to compile (gantry::core). The LP-based headers (place/exact.hpp, the exact placer;
// pipeline/lp_allocation.hpp, the exact non-contiguous allocation) are included on their own and
// need the gantry::lp target.
#pragma once

#include <gantry/core/random.hpp>
#include <gantry/core/types.hpp>

#include <gantry/fusion/coarsen.hpp>
#include <gantry/fusion/fusion.hpp>
#include <gantry/workloads/random_dag.hpp>
#include <gantry/graph/adaptor.hpp>
#include <gantry/graph/boost.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/workloads/doppler.hpp>

#include <gantry/model/capacity_scaled.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/link_fit.hpp>
#include <gantry/model/model.hpp>
#include <gantry/model/topology.hpp>

#include <gantry/order/levels.hpp>
#include <gantry/order/topological.hpp>

#include <gantry/order/lower_bound.hpp>

#include <gantry/fusion/kernighan.hpp>

#include <gantry/place/adjusting_placement.hpp>
#include <gantry/place/backward.hpp>
#include <gantry/place/celeritas.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/enumerative.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/justification.hpp>
#include <gantry/place/kahn_one_device.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/local_search.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/order_place.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/place/single_device.hpp>

#include <gantry/io/pipeline_svg.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/gpipe.hpp>
#include <gantry/pipeline/k_periodic.hpp>
#include <gantry/pipeline/non_contiguous.hpp>
#include <gantry/pipeline/one_f_one_b.hpp>
#include <gantry/pipeline/one_f_one_b_star.hpp>
#include <gantry/pipeline/partition.hpp>
#include <gantry/pipeline/pattern.hpp>
#include <gantry/pipeline/plan.hpp>
#include <gantry/pipeline/unroll.hpp>

#include <gantry/schedule/memory_ledger.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/memory_timeline.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/schedule/validate.hpp>

#include <gantry/sim/simulator.hpp>

#include <gantry/io/io.hpp>
