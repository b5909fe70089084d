// detail::group_table: the colocation groups a list-scheduling run places as units (place/
// colocation.hpp merges the options' groups, co-placed consumers and forward/backward pairs into
// one group per vertex). Per group: its members in Kahn order, their bytes, and the device the
// group must use (fixed by the options, or bound when its first member is placed).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/model.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/engine/options.hpp>
#include <gantry/place/engine/placed.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::detail {

class group_table {
 public:
  // Groups from `options` over g, members listed in `kahn` order. Throws invalid_input (naming
  // `who` and the vertex by quote(v)) when two members of a group are fixed to different devices.
  template <placement_model M, class Quote>
  void reset(const csr_graph& g, const M& model, const list_options& options, std::span<const vertex_id> kahn,
             std::string_view who, Quote&& quote) {
    const std::size_t n = g.vertex_count();
    const bool pairs = options.co_place_forward_backward || options.forward_only;
    if (!options.group.empty() || options.co_place_single_consumer || (pairs && !options.forward_of.empty())) {
      of_ = merge_groups(g, options.group, options.co_place_single_consumer,
                         pairs ? options.forward_of : std::vector<vertex_id>{});
    } else {
      of_.resize(n);
      for (vertex_id v = 0; v < n; ++v) of_[v] = v;
    }
    std::uint32_t groups = 0;
    for (const auto grp : of_) groups = std::max(groups, grp + 1);
    bytes_.assign(groups, 0);
    persistent_.assign(groups, 0);
    size_.assign(groups, 0);
    device_.assign(groups, no_device);
    bound_.assign(groups, 0);
    for (vertex_id v = 0; v < n; ++v) {
      const std::uint32_t grp = of_[v];
      bytes_[grp] = saturating_add(bytes_[grp], total_bytes(model, v));
      persistent_[grp] = saturating_add(persistent_[grp], model.persistent_bytes(v));
      ++size_[grp];
      if (options.fixed_device.empty() || options.fixed_device[v] == no_device) continue;
      device_id& fixed = device_[grp];
      if (fixed != no_device && fixed != options.fixed_device[v])
        throw invalid_input(std::string(who) + ": vertex " + quote(v) + " is fixed to device " +
                            std::to_string(options.fixed_device[v]) + " but its group is fixed to device " +
                            std::to_string(fixed));
      fixed = options.fixed_device[v];
    }
    self_.resize(n);
    for (vertex_id v = 0; v < n; ++v) self_[v] = v;
    member_first_.clear();
    member_list_.clear();
    if (std::none_of(size_.begin(), size_.end(), [](std::uint32_t s) { return s > 1; })) return;
    member_first_.assign(groups + 1, 0);
    for (vertex_id v = 0; v < n; ++v) ++member_first_[of_[v] + 1];
    for (std::size_t k = 0; k < groups; ++k) member_first_[k + 1] += member_first_[k];
    member_list_.resize(n);
    member_index_.resize(n);
    std::vector<std::uint32_t> fill(member_first_.begin(), member_first_.end() - 1);
    for (const vertex_id v : kahn) {
      member_index_[v] = fill[of_[v]] - member_first_[of_[v]];
      member_list_[fill[of_[v]]++] = v;
    }
  }

  [[nodiscard]] std::uint32_t of(vertex_id v) const { return of_[v]; }
  [[nodiscard]] std::size_t count() const noexcept { return size_.size(); }
  [[nodiscard]] std::uint32_t size(std::uint32_t grp) const { return size_[grp]; }
  // Persistent, output and temporary bytes of every member, and persistent bytes alone.
  [[nodiscard]] byte_count bytes(std::uint32_t grp) const { return bytes_[grp]; }
  [[nodiscard]] byte_count persistent(std::uint32_t grp) const { return persistent_[grp]; }
  // The device the group must use: fixed by the options or bound by a placed member; no_device
  // while it is free.
  [[nodiscard]] device_id device(std::uint32_t grp) const { return device_[grp]; }
  // Whether a member is placed (its persistent bytes are then held on its device).
  [[nodiscard]] bool bound(std::uint32_t grp) const { return bound_[grp] != 0; }
  // The group's first member is placed on d.
  void bind(std::uint32_t grp, device_id d) {
    bound_[grp] = 1;
    device_[grp] = d;
  }
  // Whether v's group has several members and no device yet: its first member decides for all.
  [[nodiscard]] bool unbound_several(vertex_id v) const { return size_[of_[v]] > 1 && device_[of_[v]] == no_device; }
  // Whether some group has several members.
  [[nodiscard]] bool any_several() const noexcept { return !member_first_.empty(); }
  // The members of v's group in Kahn order (v alone when no group has several members).
  [[nodiscard]] std::span<const vertex_id> members(vertex_id v) const {
    if (member_first_.empty()) return {&self_[v], 1};
    const std::uint32_t grp = of_[v];
    return {member_list_.data() + member_first_[grp], member_first_[grp + 1] - member_first_[grp]};
  }
  // For a vertex of a group of several no member of which is placed yet: when the inputs that the
  // group's other members receive from vertices already placed could be on d (edges timed alone,
  // no channels). 0 otherwise. O(the members' inputs).
  template <placement_model M>
  [[nodiscard]] seconds ready_on(const csr_graph& g, const M& model, const placed_vertices& placed, vertex_id v,
                                 device_id d) const {
    if (!unbound_several(v)) return 0;
    const std::uint32_t grp = of_[v];
    seconds ready = 0;
    for (const vertex_id w : members(v)) {
      if (w == v || placed.placed(w)) continue;
      const auto pred = g.predecessors(w);
      const auto in = g.in_edges(w);
      for (std::size_t i = 0; i < pred.size(); ++i) {
        const vertex_id u = pred[i];
        if (!placed.placed(u) || of_[u] == grp) continue;
        ready = std::max(ready, placed.finish[u] + model.transfer_time(in[i], placed.device[u], d));
      }
    }
    return ready;
  }
  // v's position in members(v); only when any_several().
  [[nodiscard]] std::uint32_t member_index(vertex_id v) const { return member_index_[v]; }

 private:
  std::vector<std::uint32_t> of_;  // per vertex
  std::vector<byte_count> bytes_, persistent_;
  std::vector<std::uint32_t> size_;
  std::vector<device_id> device_;
  std::vector<std::uint8_t> bound_;
  std::vector<std::uint32_t> member_first_;  // per group, into member_list_ (only when any_several())
  std::vector<vertex_id> member_list_;
  std::vector<std::uint32_t> member_index_;
  std::vector<vertex_id> self_;  // v itself, for members() without groups
};

}  // namespace gantry::detail
