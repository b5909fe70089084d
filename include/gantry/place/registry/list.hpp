// The registry's first entries: every vertex on device 0, m-TOPO, and the five list schedulers
// (ETF, Critical Path, HEFT, CPOP, PEFT), each with and without device memory.
// A family of the registry (place/placers.hpp): defined inline here, or compiled once in a source
// file of its own with GANTRY_SEPARATE_COMPILATION.
#pragma once

#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/kahn_one_device.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/place/registry/common.hpp>
#include <gantry/place/single_device.hpp>

namespace gantry {
namespace detail {

GANTRY_DECL void add_list_placers(std::vector<placer_entry>& out) {
  out.push_back({"single-device", "every vertex on device 0: the baseline", false, [](const placer_request& r) {
                   return placer_result{single_device(r.g, r.devices), std::nullopt};
                 }});
  out.push_back({"m-topo", "Baechi's m-TOPO: Kahn order, devices filled one by one up to a balanced cap", true,
                 [](const placer_request& r) {
                   placement p = m_topo(r.g, r.model, r.devices,
                                        {.group = colocation_groups(r.g), .cache_transfers = r.cache_transfers});
                   if (p.outcome.code != status::out_of_memory || !r.one_device_answer)
                     return placer_result{std::move(p), std::nullopt};
                   // m-TOPO counts every byte a device ever holds; where that is too much, one
                   // device that frees what it no longer needs may still hold the run.
                   auto alone = place_on_one_device(
                       r.g, r.model, r.devices,
                       {.cache_transfers = r.cache_transfers, .memory_retries = r.memory_retries}, "m-TOPO");
                   if (!alone) return placer_result{std::move(p), std::nullopt};
                   alone->placement.outcome.message = p.outcome.message + "; " + alone->placement.outcome.message;
                   return placer_result{std::move(alone->placement), std::move(alone->schedule)};
                 }});
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
