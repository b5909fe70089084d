// The list schedulers in the gantry tool: etf, m-etf, critical-path and heft. Colocation groups
// named in the graph are honoured; the cluster's comm mode selects sequential transfers, and m-etf
// respects the cluster's capacities.
#pragma once

#include "algorithms.hpp"

#include <gantry/place/colocation.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>

#include <vector>

namespace gantry::cli {

inline void add_list_scheduling_algorithms(std::vector<algorithm_entry>& out) {
  out.push_back({"etf", "ETF: the (vertex, device) pair that can start earliest goes first; memory ignored",
                 [](const graph& g, const graph_model& m, const cluster& c) {
                   return etf(g, m, c, {.group = colocation_groups(g)}).placement;
                 }});
  out.push_back({"m-etf", "Baechi's m-ETF: ETF skipping devices whose free memory cannot hold the vertex",
                 [](const graph& g, const graph_model& m, const cluster& c) {
                   return m_etf(g, m, c, {.group = colocation_groups(g)}).placement;
                 }});
  out.push_back({"critical-path", "DOPPLER's baseline: largest bottom level first, on the earliest-start device",
                 [](const graph& g, const graph_model& m, const cluster& c) {
                   return critical_path_schedule(g, m, c, {.group = colocation_groups(g)}).placement;
                 }});
  out.push_back({"heft", "HEFT: largest upward rank first, on the earliest-finish device, into idle gaps",
                 [](const graph& g, const graph_model& m, const cluster& c) {
                   return heft(g, m, c, {.group = colocation_groups(g)}).placement;
                 }});
}

}  // namespace gantry::cli
