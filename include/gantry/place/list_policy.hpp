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
}  // namespace detail

}  // namespace gantry
