// The five list schedulers from the exits back (place/backward.hpp), replayed forward.
// A family of the registry (place/placers.hpp): defined inline here, or compiled once in a source
// file of its own with GANTRY_SEPARATE_COMPILATION.
#pragma once

#include <gantry/place/backward.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/heft.hpp>
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
}

}  // namespace detail
}  // namespace gantry
