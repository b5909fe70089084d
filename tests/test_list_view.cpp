// list_view (place/list_policy.hpp): the engine models it, and every shipped list-scheduling policy
// runs on a test double that offers the concept's queries and nothing else, so a policy that reads
// beyond the concept does not compile here. A user's policy that reads only the basic layer
// (basic_list_view) runs on a double of its ten queries and on the engine.
#include <gantry/order/levels.hpp>
#include <gantry/place/adjusting_placement.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/kahn_one_device.hpp>
#include <gantry/place/list_scheduler.hpp>
#include <gantry/place/order_place.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/place/sct.hpp>
#include <gantry/schedule/validate.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

using namespace gantry;

namespace {

// The state before the first placement: nothing placed, the sources ready, every device free at 0,
// room everywhere. Each query is the engine's answer in that state.
class view_double {
 public:
  view_double(const graph& g, const cluster& c)
      : snapshot_(g), model_(g, c), devices_(c), levels_(compute_levels(g, model_, c)), rank_(g.vertex_count()) {
    const auto kahn = detail::kahn_on(*snapshot_);
    for (std::uint32_t i = 0; i < kahn.size(); ++i) rank_[kahn[i]] = i;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
      if (snapshot_->predecessors(v).empty()) ready_.push_back(v);
      self_.push_back(v);
    }
  }
  [[nodiscard]] std::string_view name() const { return "double"; }
  [[nodiscard]] std::size_t vertex_count() const { return snapshot_->vertex_count(); }
  [[nodiscard]] std::size_t device_count() const { return devices_.device_count(); }
  [[nodiscard]] const csr_graph& graph() const { return *snapshot_; }
  [[nodiscard]] const graph_model& model() const { return model_; }
  [[nodiscard]] const cluster& devices() const { return devices_; }
  [[nodiscard]] const list_options& options() const { return options_; }
  [[nodiscard]] const std::vector<transfer>& transfers() const { return transfers_; }
  [[nodiscard]] std::span<const vertex_id> ready() const { return ready_; }
  [[nodiscard]] bool is_ready(vertex_id v) const { return std::find(ready_.begin(), ready_.end(), v) != ready_.end(); }
  [[nodiscard]] std::size_t placed_count() const { return 0; }
  [[nodiscard]] vertex_id last_placed() const { return no_vertex; }
  [[nodiscard]] bool last_bound_group() const { return false; }
  [[nodiscard]] bool is_placed(vertex_id) const { return false; }
  [[nodiscard]] device_id device_of(vertex_id) const { return no_device; }
  [[nodiscard]] seconds start_of(vertex_id) const { return 0; }
  [[nodiscard]] seconds finish_of(vertex_id) const { return 0; }
  [[nodiscard]] seconds available_at(device_id) const { return 0; }
  [[nodiscard]] vertex_id last_on(device_id) const { return no_vertex; }
  [[nodiscard]] seconds now() const { return 0; }
  [[nodiscard]] std::uint32_t kahn_rank(vertex_id v) const { return rank_[v]; }
  [[nodiscard]] seconds bottom_level(vertex_id v) const { return levels_.bottom[v]; }
  [[nodiscard]] seconds top_level(vertex_id v) const { return levels_.top[v]; }
  [[nodiscard]] bool allowed(vertex_id, device_id) const { return true; }
  [[nodiscard]] bool excluded(device_id) const { return false; }
  [[nodiscard]] device_id bound_device(vertex_id) const { return no_device; }
  [[nodiscard]] std::span<const vertex_id> group_members(vertex_id v) const { return {&self_[v], 1}; }
  [[nodiscard]] bool channels_shared() const { return false; }
  [[nodiscard]] bool ready_may_change(vertex_id) const { return false; }
  [[nodiscard]] seconds data_ready(vertex_id, device_id) const { return 0; }
  void data_ready_all(vertex_id, std::span<seconds> out) const { std::fill(out.begin(), out.end(), 0.0); }
  [[nodiscard]] seconds earliest_start(vertex_id, device_id) const { return 0; }
  [[nodiscard]] seconds earliest_finish(vertex_id v, device_id d) const { return model_.compute_time(v, d); }
  [[nodiscard]] seconds earliest_start_appended(vertex_id, device_id) const { return 0; }
  [[nodiscard]] bool fits(vertex_id, device_id) const { return true; }
  [[nodiscard]] byte_count free_memory(device_id d) const { return devices_.capacity(d); }
  [[nodiscard]] bool memory_changed(device_id) const { return false; }

 private:
  detail::csr_view<gantry::graph> snapshot_;
  graph_model model_;
  const cluster& devices_;
  levels levels_;
  list_options options_{};
  std::vector<transfer> transfers_;
  std::vector<std::uint32_t> rank_;
  std::vector<vertex_id> ready_, self_;
};

// One query short: fits is a data member, not callable as fits(v, d).
struct without_fits : view_double {
  using view_double::view_double;
  int fits = 0;
};

static_assert(list_view<view_double>);
static_assert(!list_view<without_fits>);
static_assert(!list_view<int>);
static_assert(list_view<list_scheduler<graph, graph_model, cluster, etf_policy>>);
static_assert(list_view<list_scheduler<graph, graph_model, cluster, kahn_one_device_policy>>);
static_assert(list_policy_for<etf_policy, view_double>);
static_assert(!list_policy_for<etf_policy, without_fits>);

// The basic layer alone: ten queries, answered as view_double answers them.
class basic_double {
 public:
  basic_double(const graph& g, const cluster& c) : full_(g, c) {}
  [[nodiscard]] std::size_t vertex_count() const { return full_.vertex_count(); }
  [[nodiscard]] std::size_t device_count() const { return full_.device_count(); }
  [[nodiscard]] const graph_model& model() const { return full_.model(); }
  [[nodiscard]] std::span<const vertex_id> ready() const { return full_.ready(); }
  [[nodiscard]] seconds bottom_level(vertex_id v) const { return full_.bottom_level(v); }
  [[nodiscard]] seconds top_level(vertex_id v) const { return full_.top_level(v); }
  [[nodiscard]] bool allowed(vertex_id v, device_id d) const { return full_.allowed(v, d); }
  [[nodiscard]] bool fits(vertex_id v, device_id d) const { return full_.fits(v, d); }
  [[nodiscard]] seconds earliest_start(vertex_id v, device_id d) const { return full_.earliest_start(v, d); }
  [[nodiscard]] seconds earliest_finish(vertex_id v, device_id d) const { return full_.earliest_finish(v, d); }

 private:
  view_double full_;
};

// A user's policy that reads only the basic layer: the ready vertex with the largest bottom level,
// on the allowed device with room where it finishes first.
struct largest_level_earliest_finish {
  template <class View>
  std::optional<list_choice> choose(const View& view) {
    vertex_id next = no_vertex;
    for (const vertex_id v : view.ready())
      if (next == no_vertex || view.bottom_level(v) > view.bottom_level(next)) next = v;
    if (next == no_vertex) return std::nullopt;
    std::optional<list_choice> best;
    for (device_id d = 0; d < view.device_count(); ++d)
      if (view.allowed(next, d) && view.fits(next, d) &&
          (!best || view.earliest_finish(next, d) < view.earliest_finish(next, best->device)))
        best = list_choice{next, d};
    return best;
  }
};

static_assert(basic_list_view<basic_double>);
static_assert(!list_view<basic_double>);
static_assert(basic_list_view<view_double>);
static_assert(list_policy_for<largest_level_earliest_finish, basic_double>);
static_assert(list_policy_for<largest_level_earliest_finish,
                              list_scheduler<graph, graph_model, cluster, largest_level_earliest_finish>>);

// Runs a policy's first step on the double: start, every source made ready, choose.
template <class P, class View>
list_choice first_choice(P policy, const View& view) {
  detail::policy_start(policy, view);
  for (const vertex_id v : view.ready()) detail::policy_on_ready(policy, view, v);
  const auto choice = policy.choose(view);
  REQUIRE(choice.has_value());
  return *choice;
}

//   a (3 s) -> c (1 s)      b (1 s) -> c
// Before anything is placed, a and b are ready; a has the longest path below it.
graph fork_join() {
  graph g;
  const auto a = g.add_vertex(vertex_properties{.name = "a", .compute = 3.0, .output = 100});
  const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 1.0, .output = 100});
  const auto c = g.add_vertex(vertex_properties{.name = "c", .compute = 1.0, .output = 100});
  g.add_edge(a, c, 100);
  g.add_edge(b, c, 100);
  return g;
}

}  // namespace

TEST_CASE("list_view: every shipped policy runs on a view that offers the concept's queries and nothing else") {
  const graph g = fork_join();
  const vertex_id a = 0, b = 1, c = 2;
  const auto two = cluster::uniform(2, unlimited_memory, {.latency = 1e-3, .bandwidth = 1e9});
  const view_double view(g, two);
  REQUIRE(view.ready().size() == 2);

  // Priority lists pick the vertex with the longest path below it first.
  CHECK(first_choice(critical_path_policy{}, view).vertex == a);
  CHECK(first_choice(heft_policy{}, view).vertex == a);
  CHECK(first_choice(cpop_policy{}, view).vertex == a);
  CHECK(first_choice(peft_policy{}, view).vertex == a);
  // ETF and SCT: the earliest start, 0 for both sources; static level breaks the tie.
  CHECK(first_choice(etf_policy{}, view).vertex == a);
  CHECK(first_choice(sct_policy(std::vector<vertex_id>(g.vertex_count(), no_vertex)), view).vertex == a);
  // Order-driven policies follow their order, Kahn's when none is given.
  CHECK(first_choice(order_place_policy("Order-Place", {b, a, c}), view).vertex == b);
  CHECK(first_choice(adjusting_placement_policy("Adjusting Placement", {b, a, c}), view).vertex == b);
  CHECK(first_choice(adjusting_placement_earliest_policy{}, view).device < 2);
  const auto one = first_choice(kahn_one_device_policy("one device", 1), view);
  CHECK(one.vertex == a);
  CHECK(one.device == 1);
}

TEST_CASE("basic_list_view: a policy that reads levels, fits and earliest starts runs on ten queries") {
  // fork_join() on two devices, d1 twice as fast as d0.
  const graph g = fork_join();
  const vertex_id a = 0;
  std::vector<device> d(2);
  d[1].speed = 2;
  const cluster two(std::move(d), link_model{.latency = 1e-3, .bandwidth = 1e9});
  const basic_double view(g, two);
  // a has the longest path below it and finishes first on the faster device.
  const auto mine = first_choice(largest_level_earliest_finish{}, view);
  CHECK(mine.vertex == a);
  CHECK(mine.device == 1);
  // The engine runs the same policy to a valid schedule: a on d1 first.
  const graph_model model(g, two);
  const auto run = list_schedule(g, model, two, largest_level_earliest_finish{});
  REQUIRE(run.ok());
  CHECK(run.placement.device[a] == 1);
  CHECK(validate(run.schedule, g, model, two).ok());
}
