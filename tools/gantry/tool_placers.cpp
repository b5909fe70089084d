// The placers the tool offers: the library's registry (compiled in registry_*.cpp), and beside it,
// with GLPK, the exact placer (place/exact.hpp) and, with Eigen, DOPPLER (learn_training.cpp).
#include "bounds_report.hpp"

#include <gantry/place/colocation.hpp>
#include <gantry/place/placers.hpp>
#if GANTRY_CLI_HAS_GLPK
#include <gantry/place/exact.hpp>
#endif
#if GANTRY_CLI_HAS_LEARN
#include "learn_training.hpp"
#endif

#include <memory>
#include <optional>
#include <vector>

namespace gantry::cli {

std::vector<placer_entry> tool_placers([[maybe_unused]] int exact_time_limit_ms,
                                       [[maybe_unused]] std::shared_ptr<exact_proof> proof,
                                       [[maybe_unused]] std::optional<seconds> doppler_time_limit) {
  std::vector<placer_entry> all = placers();
#if GANTRY_CLI_HAS_GLPK
  all.push_back({"exact",
                 "optimal schedule of a graph of at most 30 vertices (GLPK MIP, static memory; "
                 "--exact-time-limit gives the best found and a proven bound)",
                 true, [exact_time_limit_ms, proof](const placer_request& r) {
                   if (const std::string why = exact_too_large(r.g.vertex_count(), r.devices.device_count());
                       !why.empty())
                     throw invalid_input("exact: " + why);
                   const auto group = colocation_groups(r.g);
                   exact_result e = exact_schedule(r.g, r.model, r.devices,
                                                   {.max_vertices = exact_vertex_limit,
                                                    .max_devices = exact_device_limit,
                                                    .time_limit_ms = exact_time_limit_ms,
                                                    .cache_transfers = r.cache_transfers,
                                                    .group = group});
                   if (proof)
                     *proof = {e.bound, e.optimal, e.time_limit_reached,
                               e.optimal || e.time_limit_reached ? std::string() : e.outcome.message};
                   placer_result out{std::move(e.placement), std::nullopt};
                   if (e.ok()) out.own_schedule = std::move(e.schedule);
                   return out;
                 }});
#endif
#if GANTRY_CLI_HAS_LEARN
  all.push_back(doppler_placer_entry(doppler_time_limit));
#endif
  return all;
}

}  // namespace gantry::cli
