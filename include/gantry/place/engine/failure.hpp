// detail::no_fit_outcome: the out_of_memory outcome of a list-scheduling run whose vertex fits on
// no device it may use, with the device where it came closest and, per device, what it needs
// there and what the device has.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/place/engine/options.hpp>
#include <gantry/schedule/schedule.hpp>

#include <optional>
#include <string>
#include <utility>

namespace gantry::detail {

// What placing a vertex on a device would take there and what the device has, from `from` on
// (dynamic accounting) or for the rest of the run (nullopt: Baechi's reservation).
struct device_room {
  byte_count needed = 0, available = 0;
  std::optional<seconds> from;
};

// `heading` says what vertex v needs ("m-etf: no device can hold vertex ..."); v may use every
// device, or only `bound` when its group has a device; room(d) is a device_room. No device is
// excluded here: the engine opens excluded devices again before it gives up (list_scheduler::exclude).
template <class View, class Room>
[[nodiscard]] outcome no_fit_outcome(const View& view, vertex_id v, std::string heading, device_id bound, bool timed,
                                     Room&& room) {
  const device_id first = bound == no_device ? 0 : bound;
  const device_id last = bound == no_device ? static_cast<device_id>(view.device_count()) : bound + 1;
  std::string text = std::move(heading);
  if (bound != no_device) text += " and must go to " + list_device_label(view.devices(), bound);
  text += timed ? "; with its incoming tensors, free memory from when it would start taking it:"
                : "; with its incoming tensors, free memory:";
  const auto short_by = [](const device_room& r) { return r.needed > r.available ? r.needed - r.available : 0; };
  device_id closest = no_device;
  device_room best;
  for (device_id d = first; d < last; ++d) {
    const device_room here = room(d);
    text += (d == first ? " " : ", ") + list_device_label(view.devices(), d) + " needs " + format_bytes(here.needed) +
            ", has " + format_bytes(here.available);
    if (closest == no_device || short_by(here) < short_by(best)) {
      closest = d;
      best = here;
    }
  }
  return {.code = status::out_of_memory,
          .vertex = v,
          .device = closest,
          .time = best.from,
          .needed = best.needed,
          .available = best.available,
          .message = std::move(text)};
}

}  // namespace gantry::detail
