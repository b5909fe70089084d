// What a list-scheduling policy is: a small type that, shown the engine's state read-only, names
// the next (vertex, device) pair. The engine (place/engine/scheduler.hpp) owns the state; ETF, m-ETF,
// Critical Path, HEFT, CPOP and PEFT are policies in their own headers, and a user writes one the same way.
//
//   struct my_policy {
//     std::string_view name() const { return "mine"; }                   // optional, for messages
//     static constexpr bool insertion = false;                             // optional: idle-gap insertion
//     template <class View> void start(const View&);                       // optional: once, after init
//     template <class View> void on_ready(const View&, vertex_id);         // optional: v became ready
//     template <class View> void on_placed(const View&, vertex_id, device_id);  // optional
//     template <class View> std::optional<list_choice> choose(const View&);     // required
//   };
//
// choose() returns nullopt when no ready vertex fits on any device it may use; the engine then
// fails the run naming the vertex (or, with forward-only placement, first releases backward vertices).
//
// Optional hooks are checked by name when the engine is instantiated: an on_ready or on_placed
// that cannot be called as above (say on_placed(view, v) without the device), and a member named
// like a misspelt hook (on_place, on_placement, on_readied, on_start, onPlaced, ...), whatever its
// kind or access, are compile errors that name the hook, not hooks that are silently never called.
// (start is not checked so: a policy may well hold a data member of that name.)
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace gantry {

// The next placement a policy asks for.
struct list_choice {
  vertex_id vertex = no_vertex;
  device_id device = no_device;
  friend bool operator==(const list_choice&, const list_choice&) = default;
};

// What a policy reads: the engine's const queries (list_scheduler models it). Costs for a vertex
// v with k inputs (with those of the members of v's group while the group is not bound), m
// devices and h memory holds on a device; each input also looks at its route's channels (at most
// four) and the copies its tensor already has (at most m):
//   O(1)      name (the policy's), vertex_count, device_count, graph (the CSR snapshot), model,
//             devices, options (list_options), transfers (reserved so far, in order: a
//             std::vector<transfer>), ready (in no particular order), is_ready, placed_count,
//             last_placed, last_bound_group (the last placement bound a group), is_placed, device_of,
//             start_of, finish_of, available_at (when d finishes its last vertex), last_on,
//             kahn_rank, allowed (v's group's device, or any device not excluded), excluded,
//             bound_device, group_members, channels_shared, ready_may_change, memory_changed;
//             bottom_level and top_level (mean times; the first call computes every level, O((n + e)
//             m) for models with mean times, O(n m + e m^2) otherwise)
//   O(m)      now (the earliest time a device is free)
//   O(k)      data_ready (when v's inputs could be on d, with the copies placing v there would
//             start), earliest_start_appended, and earliest_start and earliest_finish (plus the idle
//             gaps of d when the policy inserts)
//   O(k m)    data_ready_all (every device at once, one pass over the inputs)
//   fits      O(1) while d has room for the most v can add; else O(k) (reserved memory) or
//             O(k log k + k log h) (dynamic memory)
//   free_memory  O(1) reserved, O(log h) dynamic (a device's first query builds its timeline)
//   (with a colocation group of g members bound or being bound, fits adds O(g + their edges): the
//   room the group keeps for its members still to come)
// Queries are const and keep no scratch: one may call another in any order (the engine lists a
// vertex's inputs once, when it becomes ready, and probes channels without touching them). The
// bottom levels and a device's memory timeline are caches built by the first query that needs
// them, so one view serves one thread.
// A policy written against this concept runs on any engine that models it (a test double included).
//
// The concept comes in two layers. basic_list_view is what most policies read: the sizes, the
// model, the ready vertices, their levels, where each may go and when it could start or finish
// there (ten queries). list_view adds the rest. A policy is checked against the view it is given
// (list_policy_for needs only the basic layer), so a policy that reads only the basic queries runs
// on a view, or a test double, that offers only those.
template <class V>
concept basic_list_view = requires(const V& view, vertex_id v, device_id d) {
  { view.vertex_count() } -> std::convertible_to<std::size_t>;
  { view.device_count() } -> std::convertible_to<std::size_t>;
  view.model();
  { view.ready() } -> std::convertible_to<std::span<const vertex_id>>;
  { view.bottom_level(v) } -> std::convertible_to<seconds>;
  { view.top_level(v) } -> std::convertible_to<seconds>;
  { view.allowed(v, d) } -> std::convertible_to<bool>;
  { view.fits(v, d) } -> std::convertible_to<bool>;
  { view.earliest_start(v, d) } -> std::convertible_to<seconds>;
  { view.earliest_finish(v, d) } -> std::convertible_to<seconds>;
};

template <class V>
concept list_view = basic_list_view<V> &&
    requires(const V& view, vertex_id v, device_id d, std::span<seconds> per_device) {
  { view.name() } -> std::convertible_to<std::string_view>;
  { view.graph() } -> std::convertible_to<const csr_graph&>;
  view.devices();
  view.options();
  view.transfers();
  { view.is_ready(v) } -> std::convertible_to<bool>;
  { view.placed_count() } -> std::convertible_to<std::size_t>;
  { view.last_placed() } -> std::convertible_to<vertex_id>;
  { view.last_bound_group() } -> std::convertible_to<bool>;
  { view.is_placed(v) } -> std::convertible_to<bool>;
  { view.device_of(v) } -> std::convertible_to<device_id>;
  { view.start_of(v) } -> std::convertible_to<seconds>;
  { view.finish_of(v) } -> std::convertible_to<seconds>;
  { view.available_at(d) } -> std::convertible_to<seconds>;
  { view.last_on(d) } -> std::convertible_to<vertex_id>;
  { view.now() } -> std::convertible_to<seconds>;
  { view.kahn_rank(v) } -> std::convertible_to<std::uint32_t>;
  { view.excluded(d) } -> std::convertible_to<bool>;
  { view.bound_device(v) } -> std::convertible_to<device_id>;
  { view.group_members(v) } -> std::convertible_to<std::span<const vertex_id>>;
  { view.channels_shared() } -> std::convertible_to<bool>;
  { view.ready_may_change(v) } -> std::convertible_to<bool>;
  { view.data_ready(v, d) } -> std::convertible_to<seconds>;
  view.data_ready_all(v, per_device);
  { view.earliest_start_appended(v, d) } -> std::convertible_to<seconds>;
  { view.free_memory(d) } -> std::convertible_to<byte_count>;
  { view.memory_changed(d) } -> std::convertible_to<bool>;
};

// A policy for the engine whose read-only view is View: its choose() can be called on that view,
// which must offer at least the basic layer.
template <class P, class View>
concept list_policy_for = basic_list_view<View> && requires(P& policy, const View& view) {
  { policy.choose(view) } -> std::convertible_to<std::optional<list_choice>>;
};

namespace detail {
template <class P>
[[nodiscard]] std::string_view policy_name(const P& policy) {
  if constexpr (requires {
                  { policy.name() } -> std::convertible_to<std::string_view>;
                })
    return policy.name();
  else return "list scheduling";
}
template <class P>
[[nodiscard]] constexpr bool policy_inserts() {
  if constexpr (requires {
                  { P::insertion } -> std::convertible_to<bool>;
                })
    return P::insertion;
  else return false;
}
template <class P, class View>
void policy_start(P& policy, const View& view) {
  if constexpr (requires { policy.start(view); }) policy.start(view);
}
template <class P, class View>
void policy_on_ready(P& policy, const View& view, vertex_id v) {
  if constexpr (requires { policy.on_ready(view, v); }) policy.on_ready(view, v);
}
template <class P, class View>
void policy_on_placed(P& policy, const View& view, vertex_id v, device_id d) {
  if constexpr (requires { policy.on_placed(view, v, d); }) policy.on_placed(view, v, d);
}

// Whether a class has a member of a given name, of any kind (function, function template, overload
// set, data member): a class deriving from it and from a probe that declares the name makes the
// name ambiguous exactly when the class has it too. Final classes and non-classes answer false.
#define GANTRY_DETAIL_MEMBER_PROBE(NAME)                                   \
  struct probe_##NAME {                                                    \
    int NAME;                                                              \
  };                                                                       \
  template <class P>                                                       \
  struct with_##NAME : P, probe_##NAME {};                                 \
  template <class P>                                                       \
  [[nodiscard]] consteval bool has_member_##NAME() {                       \
    if constexpr (!std::is_class_v<P> || std::is_final_v<P>) return false; \
    else return !requires {                                                \
        &with_##NAME<P>::NAME;                                             \
      };                                                                   \
  }
GANTRY_DETAIL_MEMBER_PROBE(on_ready)
GANTRY_DETAIL_MEMBER_PROBE(on_placed)
GANTRY_DETAIL_MEMBER_PROBE(on_start)
GANTRY_DETAIL_MEMBER_PROBE(onStart)
GANTRY_DETAIL_MEMBER_PROBE(on_readied)
GANTRY_DETAIL_MEMBER_PROBE(on_is_ready)
GANTRY_DETAIL_MEMBER_PROBE(onReady)
GANTRY_DETAIL_MEMBER_PROBE(on_place)
GANTRY_DETAIL_MEMBER_PROBE(on_placement)
GANTRY_DETAIL_MEMBER_PROBE(on_place_vertex)
GANTRY_DETAIL_MEMBER_PROBE(on_placed_vertex)
GANTRY_DETAIL_MEMBER_PROBE(onPlaced)
GANTRY_DETAIL_MEMBER_PROBE(on_choose)
#undef GANTRY_DETAIL_MEMBER_PROBE

// The hooks of P as the engine whose view is View calls them: true, or a static_assert that names
// what is wrong. Called once where the engine is instantiated.
template <class P, class View>
consteval bool check_policy_hooks() {
  static_assert(
      !has_member_on_placed<P>() ||
          requires(P & p, const View& view, vertex_id v, device_id d) { p.on_placed(view, v, d); },
      "the policy's on_placed cannot be called as on_placed(const View&, vertex_id, device_id): the engine would never "
      "call it");
  static_assert(
      !has_member_on_ready<P>() || requires(P & p, const View& view, vertex_id v) { p.on_ready(view, v); },
      "the policy's on_ready cannot be called as on_ready(const View&, vertex_id): the engine would never call it");
  static_assert(!has_member_on_place<P>() && !has_member_on_placement<P>() && !has_member_on_place_vertex<P>() &&
                    !has_member_on_placed_vertex<P>() && !has_member_onPlaced<P>(),
                "the policy has a member named like a misspelt hook: the hook is on_placed(const View&, vertex_id, "
                "device_id)");
  static_assert(!has_member_on_readied<P>() && !has_member_on_is_ready<P>() && !has_member_onReady<P>(),
                "the policy has a member named like a misspelt hook: the hook is on_ready(const View&, vertex_id)");
  static_assert(!has_member_on_start<P>() && !has_member_onStart<P>(),
                "the policy has a member named like a misspelt hook: the hook is start(const View&)");
  static_assert(!has_member_on_choose<P>(), "the policy has on_choose: the required member is choose(const View&)");
  return true;
}
}  // namespace detail

}  // namespace gantry
