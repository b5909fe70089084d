// SCT, m-SCT and m-SCT with Baechi's time-driven dispatch (place/sct.hpp): ETF that keeps favorite
// children from an LP relaxation. Only with
// gantry::lp (GANTRY_HAS_LP); without it the family is empty.
// A family of the registry (place/placers.hpp): defined inline here, or compiled once in a source
// file of its own with GANTRY_SEPARATE_COMPILATION.
#pragma once

#include <gantry/place/registry/common.hpp>
#ifdef GANTRY_HAS_LP
#include <gantry/place/sct.hpp>
#endif

namespace gantry {
namespace detail {

GANTRY_DECL void add_lp_placers(std::vector<placer_entry>& out) {
#ifdef GANTRY_HAS_LP
  const auto sct_entry = [&](std::string name, std::string description, bool memory,
                             sct_dispatch dispatch = sct_dispatch::list) {
    out.push_back({std::move(name), std::move(description), memory, [memory, dispatch](const placer_request& r) {
                     sct_options options;
                     options.dispatch = dispatch;
                     options.list = {.cache_transfers = r.cache_transfers,
                                     .group = colocation_groups(r.g),
                                     .memory_retries = r.memory_retries,
                                     .one_device_answer = r.one_device_answer};
                     sct_result run = memory ? m_sct(r.g, r.model, r.devices, std::move(options))
                                             : sct(r.g, r.model, r.devices, std::move(options));
                     placer_result result = list_entry_result(std::move(run.scheduled), r.g.vertex_count());
                     const auto& f = run.favorites;
                     result.metadata.insert(result.metadata.begin(), {{"lp_solver", f.solver},
                                                                      {"lp_method", f.method},
                                                                      {"lp_threshold", std::to_string(f.threshold)},
                                                                      {"lp_seconds", std::to_string(f.solve_seconds)}});
                     return result;
                   }});
  };
  sct_entry("sct", "SCT: ETF that keeps favorite children (from an LP relaxation) on their parent's device", false);
  sct_entry("m-sct", "Baechi's m-SCT: SCT within device memory, excluding devices that ran out of it", true);
  sct_entry("m-sct-baechi",
            "m-SCT dispatched as Baechi's code does: a clock, and a free device waits for its favorite child "
            "unless a vertex could start now on every device",
            true, sct_dispatch::time_driven);
#else
  (void)out;
#endif
}

}  // namespace detail
}  // namespace gantry
