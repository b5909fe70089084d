// The algorithms most programs call, instantiated for gantry's own graph, model and cluster types
// (gantry::graph, gantry::graph_model, gantry::cluster): ETF and m-ETF, Critical Path, HEFT, CPOP,
// PEFT, m-TOPO, simulate() and validate(). With GANTRY_SEPARATE_COMPILATION defined in every unit
// of a program, each algorithm's header declares these instances (extern template), so a unit that
// calls them compiles none of them; the program compiles them once, in a source file of its own
// that includes this header (as gantry::compiled does: src/compiled/instances.cpp). Without
// GANTRY_SEPARATE_COMPILATION this header is empty and every unit instantiates what it calls.
// Instances for other types (your graph, your model, a capacity_scaled view) are compiled where
// they are called, in either mode.
#pragma once

#include <gantry/core/config.hpp>

#if defined(GANTRY_SEPARATE_COMPILATION)
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

namespace gantry {

template list_schedule_result etf(const graph&, const graph_model&, const cluster&, etf_options, etf_tie_break);
template list_schedule_result m_etf(const graph&, const graph_model&, const cluster&, etf_options, etf_tie_break);
template list_schedule_result critical_path_schedule(const graph&, const graph_model&, const cluster&, list_options);
template list_schedule_result heft(const graph&, const graph_model&, const cluster&, list_options);
template list_schedule_result cpop(const graph&, const graph_model&, const cluster&, list_options);
template list_schedule_result peft(const graph&, const graph_model&, const cluster&, list_options);
template placement m_topo(const graph&, const graph_model&, const cluster&, m_topo_options);
template simulation_result simulate(const graph&, const graph_model&, const cluster&, std::span<const device_id>,
                                    simulate_options);
template validation_report validate(const schedule&, const graph&, const graph_model&, const cluster&,
                                    validate_options);

}  // namespace gantry
#endif
