// The five list schedulers from the exits back (place/backward.hpp), replayed forward, and ETF's
// schedule justified by forward-backward passes (place/justification.hpp).
// A family of the registry (place/placers.hpp): defined inline here, or compiled once in a source
// file of its own with GANTRY_SEPARATE_COMPILATION.
#pragma once

#include <gantry/place/backward.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/justification.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/place/registry/common.hpp>

namespace gantry {
namespace detail {

GANTRY_DECL void add_backward_placers(std::vector<placer_entry>& out) {
  const auto backward_entry = [&]<class Policy>(std::string name, std::string what) {
    add_list_entry(out, std::move(name),
                   what + " on the reversed graph, from the exits back, replayed forward in mirrored order", false,
                   [](const placer_request& r, list_options o) {
                     return backward_list_schedule(r.g, r.model, r.devices, Policy{}, std::move(o));
                   });
  };
  backward_entry.operator()<etf_policy>("backward-etf", "ETF");
  backward_entry.operator()<critical_path_policy>("backward-critical-path", "Critical Path");
  backward_entry.operator()<heft_policy>("backward-heft", "HEFT");
  backward_entry.operator()<cpop_policy>("backward-cpop", "CPOP");
  backward_entry.operator()<peft_policy>("backward-peft", "PEFT");
  add_list_entry(out, "justified-etf",
                 "ETF, then forward-backward passes while they shorten it: backward by decreasing finish, forward "
                 "by the backward start, into idle gaps",
                 false, [](const placer_request& r, list_options o) {
                   list_schedule_result start = etf(r.g, r.model, r.devices, o);
                   return justify(r.g, r.model, r.devices, std::move(start), {.list = std::move(o)}).scheduled;
                 });
}

}  // namespace detail
}  // namespace gantry
