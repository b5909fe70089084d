// kahn_one_device_policy: a list-scheduling policy that puts every vertex on one device, in Kahn
// order or, skipping, the first ready vertex in Kahn order that fits going next.
// place_on_one_device() (place/list_scheduler.hpp) runs it as the last answer of a memory-aware
// placer that found no placement.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/place/list_policy.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gantry {

// O(r) a step for r ready vertices in Kahn order, O(r log r) skipping.
class kahn_one_device_policy {
 public:
  // skip: a ready vertex that does not fit yields to the next in Kahn order that does; else the
  // run follows Kahn order exactly, and fits where that order's peak fits.
  kahn_one_device_policy(std::string name, device_id device, bool skip = true)
      : name_(std::move(name)), device_(device), skip_(skip) {}
  [[nodiscard]] std::string_view name() const { return name_; }
  template <class View>
  [[nodiscard]] std::optional<list_choice> choose(const View& view) {
    const auto by_rank = [&](vertex_id a, vertex_id b) { return view.kahn_rank(a) < view.kahn_rank(b); };
    if (!skip_) {  // the next vertex in Kahn order, if it fits: O(r)
      const auto ready = view.ready();
      if (ready.empty()) return std::nullopt;
      const vertex_id next = *std::min_element(ready.begin(), ready.end(), by_rank);
      if (view.fits(next, device_)) return list_choice{next, device_};
      return std::nullopt;
    }
    ready_.assign(view.ready().begin(), view.ready().end());
    std::sort(ready_.begin(), ready_.end(), by_rank);
    for (const vertex_id v : ready_)
      if (view.fits(v, device_)) return list_choice{v, device_};
    return std::nullopt;
  }

 private:
  std::string name_;
  device_id device_;
  bool skip_;
  std::vector<vertex_id> ready_;
};

}  // namespace gantry
