// The memory of a run's devices (sim/event_loop.hpp): what each holds now and its peak, taken and
// given back by the rules of schedule/schedule.hpp, a device over its capacity within one instant,
// and the last start or transfer that waited for room.
//
// Without waiting for memory on a virtual clock (per_instant), memory is judged once each instant is
// over, as schedule.hpp's rules count it (frees at one time come before allocations, and an empty
// interval holds nothing): a zero-length vertex's output read at once by another zero-length
// vertex, or a start at the time a zero-length vertex frees its inputs, can leave a device over
// capacity for the moment, and the run fails only if it still is when time moves on (settle()). So
// a strict replay of a schedule that validate() accepts never runs out of memory. Otherwise, and
// for an allocation that alone exceeds the capacity, the first allocation that does not fit ends
// the run.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gantry::detail {

// An allocation that does not fit: the run fails naming it.
struct memory_shortfall {
  device_id device = no_device;
  vertex_id vertex = no_vertex;
  byte_count bytes = 0, in_use = 0;  // what it needs, and what the device held before
  const char* what = "";             // "output", "temporary", "received", "persistent"
  seconds time = 0;
};

// A start or transfer that waits for memory (wait_for_memory): the run reports the last one if
// nothing else can go on.
struct memory_wait {
  device_id device = no_device;
  vertex_id vertex = no_vertex;
  byte_count needed = 0, available = 0;
  const char* what = "";
};

template <device_set D>
class device_memory {
 public:
  // Every device empty. per_instant: judge capacity when an instant is over (above); wait: a start
  // asks room_for() first, and a no is remembered rather than failing the run.
  void reset(const D& devices, bool per_instant, bool wait) {
    devices_ = &devices;
    per_instant_ = per_instant;
    wait_ = wait;
    now_.assign(devices.device_count(), 0);
    over_.assign(devices.device_count(), {});
    over_devices_.clear();
    waiting_ = {};
    waited_ = false;
  }

  [[nodiscard]] byte_count in_use(device_id d) const { return now_[d]; }
  [[nodiscard]] byte_count capacity(device_id d) const { return devices_->capacity(d); }

  // Takes `bytes` on d for v at `time`, raising the schedule's peak; the shortfall when the run
  // fails now (nothing is taken then).
  [[nodiscard]] std::optional<memory_shortfall> allocate(device_id d, byte_count bytes, vertex_id v, const char* what,
                                                         seconds time, schedule& s) {
    if (bytes == 0) return std::nullopt;
    const byte_count cap = capacity(d);
    if (bytes > cap || now_[d] > cap - bytes) {
      if (!per_instant_ || bytes > cap || now_[d] > unlimited_memory - bytes)
        return memory_shortfall{d, v, bytes, now_[d], what, time};
      if (over_[d].vertex == no_vertex) {
        over_[d] = {d, v, bytes, now_[d], what, time};
        over_devices_.push_back(d);
      }
    }
    now_[d] += bytes;
    if (now_[d] > s.peak_memory[d]) {
      s.peak_memory[d] = now_[d];
      s.peak_memory_time[d] = time;
    }
    return std::nullopt;
  }
  void release(device_id d, byte_count bytes) {
    now_[d] -= bytes;
    if (!over_devices_.empty() && now_[d] <= capacity(d)) over_[d].vertex = no_vertex;
  }
  // The end of an instant (per_instant): the first allocation that took a device over its capacity
  // where that device still is (the first such device, in the order they went over).
  [[nodiscard]] std::optional<memory_shortfall> settle() {
    std::optional<memory_shortfall> first;
    for (const device_id d : over_devices_) {
      const memory_shortfall o = over_[d];
      over_[d].vertex = no_vertex;
      if (o.vertex != no_vertex && !first && now_[d] > capacity(d)) first = o;
    }
    over_devices_.clear();
    return first;
  }

  // Whether `bytes` more fit on d now, counting `freed` bytes released first. With wait a no is
  // remembered (the run reports it if nothing else can go on); without, allocation fails later as
  // it always did, so this says yes.
  bool room_for(device_id d, byte_count bytes, byte_count freed, vertex_id v, const char* what) {
    if (!wait_ || bytes == 0) return true;
    const byte_count cap = capacity(d);
    const byte_count held = now_[d] - std::min(freed, now_[d]);
    if (bytes <= cap && held <= cap - bytes) return true;
    waiting_ = {d, v, bytes, cap > held ? cap - held : 0, what};
    waited_ = true;
    return false;
  }
  // A start that fits but is held back (sim/admission.hpp): remembered like one that does not fit.
  bool held_back(device_id d, vertex_id v, byte_count bytes, const char* what) {
    waiting_ = {d, v, bytes, capacity(d) - in_use(d), what};
    return false;
  }
  void forget_wait() noexcept { waiting_ = {}; }
  [[nodiscard]] const memory_wait& waiting() const noexcept { return waiting_; }
  // Whether any start or transfer has waited for room since reset().
  [[nodiscard]] bool waited() const noexcept { return waited_; }

  // The run's outcome when f ends it: out_of_memory, naming f's vertex (`name`), device, time and
  // bytes, with the words "device 1 runs out of memory at time 2 s: #4 needs 1 KiB (output) with
  // 3 KiB of 4 KiB in use".
  [[nodiscard]] outcome failure(const memory_shortfall& f, const std::string& name) const {
    const byte_count cap = capacity(f.device);
    std::ostringstream text;
    text << "device " << f.device << " runs out of memory at time " << f.time << " s: " << name << " needs "
         << format_bytes(f.bytes) << " (" << f.what << ") with " << format_bytes(f.in_use) << " of "
         << format_bytes(cap) << " in use";
    return out_of_memory(f.device, f.vertex, f.bytes, cap > f.in_use ? cap - f.in_use : 0, text.str(), f.time);
  }
  // The same for the last wait (waiting()), at `time`, when nothing running can free more.
  [[nodiscard]] outcome wait_failure(seconds time, const std::string& name) const {
    const memory_wait& w = waiting_;
    std::ostringstream text;
    text << "device " << w.device << " runs out of memory at time " << time << " s: " << name << " needs " << w.needed
         << " " << w.what << " bytes with " << w.available << " of " << capacity(w.device)
         << " bytes free, and nothing running can free more";
    return out_of_memory(w.device, w.vertex, w.needed, w.available, text.str(), time);
  }

 private:
  static outcome out_of_memory(device_id d, vertex_id v, byte_count needed, byte_count available, std::string text,
                               seconds time) {
    return {.code = status::out_of_memory,
            .vertex = v,
            .device = d,
            .time = time,
            .needed = needed,
            .available = available,
            .message = std::move(text)};
  }

  const D* devices_ = nullptr;
  bool per_instant_ = false;
  bool wait_ = true;
  std::vector<byte_count> now_;
  // Per device: the first allocation of this instant that took it over capacity (per_instant).
  std::vector<memory_shortfall> over_;
  std::vector<device_id> over_devices_;  // devices that went over, in that order (may repeat)
  memory_wait waiting_;
  bool waited_ = false;
};

}  // namespace gantry::detail
