// The registry's first entries: every vertex on device 0, m-TOPO, and the five list schedulers
// (ETF, Critical Path, HEFT, CPOP, PEFT), each with and without device memory.
// A family of the registry (place/placers.hpp): defined inline here, or compiled once in a source
// file of its own with GANTRY_SEPARATE_COMPILATION.
#pragma once

#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/kahn_one_device.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/place/registry/common.hpp>
#include <gantry/place/single_device.hpp>

namespace gantry {
namespace detail {

// m-TOPO as an entry. m-TOPO counts every byte a device ever holds; where that is too much, its
// fallbacks are a list scheduler's (memory_fallback()): within less memory, then its placements in
// Kahn order as far as they fit and m-ETF's choices for the rest, at last one device, which frees
// what it no longer needs.
inline placer_result place_m_topo(const placer_request& r) {
  const m_topo_options topo{.group = colocation_groups(r.g), .cache_transfers = r.cache_transfers};
  placement p = m_topo(r.g, r.model, r.devices, topo);
  if (p.outcome.code != status::out_of_memory) return placer_result{std::move(p), std::nullopt, {}};
  const auto as_run = [](placement q) {
    list_schedule_result out;
    for (const vertex_id v : q.order) {
      if (q.device[v] == no_device) break;
      out.steps.push_back(v);
    }
    out.placement = std::move(q);
    return out;
  };
  return list_entry_result(memory_fallback(r.g, r.model, r.devices,
                                           {.respect_memory = true,
                                            .cache_transfers = r.cache_transfers,
                                            .group = topo.group,
                                            .memory_retries = r.memory_retries,
                                            .one_device_answer = r.one_device_answer},
                                           as_run(std::move(p)), "m-TOPO",
                                           [&](const auto& on) { return as_run(m_topo(r.g, r.model, on, topo)); }),
                           r.g.vertex_count());
}

GANTRY_DECL void add_list_placers(std::vector<placer_entry>& out) {
  out.push_back({"single-device", "every vertex on device 0: the baseline", false, [](const placer_request& r) {
                   return placer_result{single_device(r.g, r.devices), std::nullopt};
                 }});
  out.push_back(
      {"m-topo", "Baechi's m-TOPO: Kahn order, devices filled one by one up to a balanced cap", true, place_m_topo});
  const auto etf_run = [](const placer_request& r, list_options o) {
    return etf(r.g, r.model, r.devices, std::move(o));
  };
  const auto m_etf_run = [](const placer_request& r, list_options o) {
    return m_etf(r.g, r.model, r.devices, std::move(o));
  };
  const auto cp_run = [](const placer_request& r, list_options o) {
    return critical_path_schedule(r.g, r.model, r.devices, std::move(o));
  };
  const auto heft_run = [](const placer_request& r, list_options o) {
    return heft(r.g, r.model, r.devices, std::move(o));
  };
  const auto cpop_run = [](const placer_request& r, list_options o) {
    return cpop(r.g, r.model, r.devices, std::move(o));
  };
  const auto peft_run = [](const placer_request& r, list_options o) {
    return peft(r.g, r.model, r.devices, std::move(o));
  };
  add_list_entry(out, "etf", "ETF: the (vertex, device) pair that can start earliest goes first", false, etf_run);
  add_list_entry(out, "m-etf", "Baechi's m-ETF: ETF on devices whose memory can hold the vertex", true, m_etf_run);
  add_list_entry(out, "critical-path", "DOPPLER's baseline: largest bottom level first, on the earliest-start device",
                 false, cp_run);
  add_list_entry(out, "m-critical-path", "Critical Path on devices whose memory can hold the vertex", true, cp_run);
  add_list_entry(out, "heft", "HEFT: largest upward rank first, on the earliest-finish device, into idle gaps", false,
                 heft_run);
  add_list_entry(out, "m-heft", "HEFT on devices whose memory can hold the vertex", true, heft_run);
  add_list_entry(out, "cpop", "CPOP: critical-path vertices on one device, the others on the earliest-finish device",
                 false, cpop_run);
  add_list_entry(out, "m-cpop", "CPOP on devices whose memory can hold the vertex", true, cpop_run);
  add_list_entry(out, "peft", "PEFT: optimistic cost table ranks vertices and looks one step ahead for the device",
                 false, peft_run);
  add_list_entry(out, "m-peft", "PEFT on devices whose memory can hold the vertex", true, peft_run);
}

}  // namespace detail
}  // namespace gantry
