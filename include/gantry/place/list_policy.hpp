// What a list-scheduling policy is: a small type that, shown the engine's state read-only, names
// the next (vertex, device) pair. The engine (place/list_scheduler.hpp) owns the state; ETF, m-ETF,
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

#include <concepts>
#include <optional>
#include <string_view>
#include <type_traits>

namespace gantry {

// The next placement a policy asks for.
struct list_choice {
  vertex_id vertex = no_vertex;
  device_id device = no_device;
  friend bool operator==(const list_choice&, const list_choice&) = default;
};

// A policy for the engine whose read-only view is View.
template <class P, class View>
concept list_policy_for = requires(P& policy, const View& view) {
  { policy.choose(view) } -> std::convertible_to<std::optional<list_choice>>;
};

namespace detail {
template <class P>
[[nodiscard]] std::string_view policy_name(const P& policy) {
  if constexpr (requires { { policy.name() } -> std::convertible_to<std::string_view>; }) return policy.name();
  else return "list scheduling";
}
template <class P>
[[nodiscard]] constexpr bool policy_inserts() {
  if constexpr (requires { { P::insertion } -> std::convertible_to<bool>; }) return P::insertion;
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
#define GANTRY_DETAIL_MEMBER_PROBE(NAME)                                              \
  struct probe_##NAME {                                                               \
    int NAME;                                                                         \
  };                                                                                  \
  template <class P>                                                                  \
  struct with_##NAME : P, probe_##NAME {};                                            \
  template <class P>                                                                  \
  [[nodiscard]] consteval bool has_member_##NAME() {                                  \
    if constexpr (!std::is_class_v<P> || std::is_final_v<P>) return false;            \
    else return !requires { &with_##NAME<P>::NAME; };                                 \
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
  static_assert(!has_member_on_placed<P>() || requires(P& p, const View& view, vertex_id v, device_id d) {
    p.on_placed(view, v, d);
  }, "the policy's on_placed cannot be called as on_placed(const View&, vertex_id, device_id): the engine would never call it");
  static_assert(!has_member_on_ready<P>() || requires(P& p, const View& view, vertex_id v) { p.on_ready(view, v); },
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
