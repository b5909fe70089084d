// Compile-time checks in the LEMON style: minimal archetypes that satisfy exactly one concept each
// (adapted_graph, cost_model, memory_model, device_set), every algorithm instantiated with them,
// and types missing one function rejected by the concept and by the algorithms' constraints.
#include <gantry/order/lower_bound.hpp>
#include <gantry/graph/adaptor.hpp>
#include <gantry/graph/boost.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/place/cpop.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/place/m_topo.hpp>
#include <gantry/place/peft.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <span>
#include <vector>

namespace archetype {

using namespace gantry;

// A graph: three vertices 0 -> 1 -> 2, listed by a two-function adaptor (specialised below).
struct dag {};
// A graph type whose adaptor lacks for_each_edge.
struct edgeless {};

// Only compute_time and transfer_time.
struct cost {
  seconds compute_time(vertex_id, device_id) const { return 1.0; }
  seconds transfer_time(edge_id, device_id, device_id) const { return 0.5; }
};
// Only the four byte counts.
struct memory {
  byte_count persistent_bytes(vertex_id) const { return 1; }
  byte_count output_bytes(vertex_id) const { return 2; }
  byte_count temporary_bytes(vertex_id) const { return 3; }
  byte_count edge_bytes(edge_id) const { return 2; }
};
// Both, and nothing else.
struct both : cost, memory {};
// Only device_count, capacity and comm.
struct devices {
  std::size_t device_count() const { return 2; }
  byte_count capacity(device_id) const { return 1000; }
  comm_mode comm() const { return comm_mode::sequential; }
};

// One function short of each concept.
struct cost_without_transfer {
  seconds compute_time(vertex_id, device_id) const { return 1.0; }
};
struct memory_without_edges {
  byte_count persistent_bytes(vertex_id) const { return 0; }
  byte_count output_bytes(vertex_id) const { return 0; }
  byte_count temporary_bytes(vertex_id) const { return 0; }
};
struct devices_without_comm {
  std::size_t device_count() const { return 2; }
  byte_count capacity(device_id) const { return 1000; }
};
struct not_a_graph {};

}  // namespace archetype

template <>
struct gantry::graph_adaptor<archetype::dag> {
  static std::size_t vertex_count(const archetype::dag&) { return 3; }
  template <class F>
  static void for_each_edge(const archetype::dag&, F&& f) {
    f(std::size_t{0}, std::size_t{1});
    f(std::size_t{1}, std::size_t{2});
  }
};
template <>
struct gantry::graph_adaptor<archetype::edgeless> {
  static std::size_t vertex_count(const archetype::edgeless&) { return 3; }
};

namespace archetype {

// Each archetype satisfies its concept and no more.
static_assert(adapted_graph<dag>);
static_assert(!adapted_graph_with_edge_ids<dag>);
static_assert(cost_model<cost> && !memory_model<cost>);
static_assert(memory_model<memory> && !cost_model<memory>);
static_assert(placement_model<both>);
static_assert(placement_model<combined_model<cost, memory>>);
static_assert(device_set<devices>);

// One function short, or no adaptor at all: the concept says no (and does not fail to compile,
// even with the Boost bridge included).
static_assert(!cost_model<cost_without_transfer>);
static_assert(!memory_model<memory_without_edges>);
static_assert(!device_set<devices_without_comm>);
static_assert(!adapted_graph<edgeless>);
static_assert(!adapted_graph<not_a_graph>);
static_assert(!adapted_graph<std::vector<int>>);
static_assert(!adapted_graph<int>);

// The algorithms' constraints, as concepts over their argument types.
template <class G>
concept orders_accept = requires(const G& g) {
  kahn_order(g);
  dfs_topo_order(g);
};
template <class G, class M, class D>
concept levels_accept = requires(const G& g, const M& m, const D& d) {
  cpd_topo_order(g, m, d);
  compute_levels(g, m, d);
};
template <class G, class M, class D>
concept m_topo_accepts = requires(const G& g, const M& m, const D& d) {
  m_topo(g, m, d);
};
template <class G, class D>
concept single_device_accepts = requires(const G& g, const D& d) {
  single_device(g, d);
};
template <class G, class M, class D>
concept simulate_accepts = requires(const G& g, const M& m, const D& d, std::span<const device_id> p) {
  simulate(g, m, d, p);
  simulate_runs(g, m, d, p, std::size_t{1});
};
template <class G, class M, class D>
concept validate_accepts = requires(const schedule& s, const G& g, const M& m, const D& d) {
  validate(s, g, m, d);
};
// The makespan lower bound needs only a cost model.
template <class G, class M, class D>
concept bound_accepts = requires(const G& g, const M& m, const D& d) {
  makespan_lower_bound(g, m, d);
};

// Every list scheduler: the policies on one engine.
template <class G, class M, class D>
concept list_schedulers_accept = requires(const G& g, const M& m, const D& d) {
  etf(g, m, d);
  m_etf(g, m, d);
  critical_path_schedule(g, m, d);
  heft(g, m, d);
  cpop(g, m, d);
  peft(g, m, d);
};

// Each algorithm takes the weakest archetypes it needs...
static_assert(orders_accept<dag>);
static_assert(levels_accept<dag, cost, devices>);
static_assert(m_topo_accepts<dag, memory, devices>);
static_assert(single_device_accepts<dag, devices>);
static_assert(simulate_accepts<dag, both, devices>);
static_assert(validate_accepts<dag, both, devices>);
static_assert(list_schedulers_accept<dag, both, devices>);
static_assert(bound_accepts<dag, cost, devices>);

// ...and refuses a type that is one function short.
static_assert(!orders_accept<edgeless>);
static_assert(!orders_accept<not_a_graph>);
static_assert(!levels_accept<dag, cost_without_transfer, devices>);
static_assert(!levels_accept<dag, cost, devices_without_comm>);
static_assert(!m_topo_accepts<dag, memory_without_edges, devices>);
static_assert(!m_topo_accepts<dag, cost, devices>);
static_assert(!single_device_accepts<not_a_graph, devices>);
static_assert(!simulate_accepts<dag, cost, devices>);
static_assert(!simulate_accepts<dag, memory, devices>);
static_assert(!simulate_accepts<dag, both, devices_without_comm>);
static_assert(!validate_accepts<dag, cost, devices>);
static_assert(!validate_accepts<edgeless, both, devices>);
static_assert(!list_schedulers_accept<dag, cost, devices>);
static_assert(!list_schedulers_accept<dag, both, devices_without_comm>);
static_assert(!list_schedulers_accept<edgeless, both, devices>);
static_assert(!bound_accepts<dag, memory, devices>);
static_assert(!bound_accepts<dag, cost, devices_without_comm>);

// Instantiate every body, not only the declarations.
[[maybe_unused]] constexpr auto* kahn = &kahn_order<dag>;
[[maybe_unused]] constexpr auto* dfs = &dfs_topo_order<dag>;
[[maybe_unused]] constexpr auto* cpd = &cpd_topo_order<dag, cost, devices>;
[[maybe_unused]] constexpr auto* lv = &compute_levels<dag, cost, devices>;
[[maybe_unused]] constexpr auto* topo = &m_topo<dag, memory, devices>;
[[maybe_unused]] constexpr auto* single = &single_device<dag, devices>;
[[maybe_unused]] constexpr auto* sim = &simulate<dag, both, devices>;
[[maybe_unused]] constexpr auto* runs = &simulate_runs<dag, both, devices>;
[[maybe_unused]] constexpr auto* check = &validate<dag, both, devices>;
[[maybe_unused]] constexpr auto* etf_body = &etf<dag, both, devices>;
[[maybe_unused]] constexpr auto* m_etf_body = &m_etf<dag, both, devices>;
[[maybe_unused]] constexpr auto* cp_body = &critical_path_schedule<dag, both, devices>;
[[maybe_unused]] constexpr auto* heft_body = &heft<dag, both, devices>;
[[maybe_unused]] constexpr auto* cpop_body = &cpop<dag, both, devices>;
[[maybe_unused]] constexpr auto* peft_body = &peft<dag, both, devices>;
[[maybe_unused]] constexpr auto* bound_body = &makespan_lower_bound<dag, cost, devices>;

}  // namespace archetype

template class gantry::simulator<archetype::both, archetype::devices>;

// The archetypes also run: 0 -> 1 -> 2 on two devices of 1000 bytes, sequential links.
TEST_CASE("algorithms run on the archetypes") {
  using namespace gantry;
  const archetype::dag g;
  const archetype::devices d;
  CHECK(kahn_order(g) == std::vector<vertex_id>{0, 1, 2});
  CHECK(dfs_topo_order(g) == std::vector<vertex_id>{0, 1, 2});
  CHECK(cpd_topo_order(g, archetype::cost{}, d) == std::vector<vertex_id>{0, 1, 2});
  // Every vertex 1 s, every edge 0.5 s: critical path 1 + 0.5 + 1 + 0.5 + 1.
  CHECK(compute_levels(g, archetype::cost{}, d).critical_path == doctest::Approx(4.0));
  // The bound: the path without transfers, 3 s; the work, 3 s over two devices.
  const auto bound = makespan_lower_bound(g, archetype::cost{}, d);
  CHECK(bound.critical_path == doctest::Approx(3.0));
  CHECK(bound.work == doctest::Approx(1.5));
  CHECK(bound.value == doctest::Approx(3.0));
  // 6 bytes per vertex, cap 18 / 2 + 6 = 15: two vertices on d0, one on d1.
  const placement p = m_topo(g, archetype::memory{}, d);
  REQUIRE(p.ok());
  CHECK(p.device == std::vector<device_id>{0, 0, 1});
  CHECK(single_device(g, d, {.device = 1}).device == std::vector<device_id>(3, 1));
  const auto r = simulate(g, archetype::both{}, d, p.device);
  REQUIRE(r.ok());
  // 0 [0, 1), 1 [1, 2), transfer [2, 2.5), 2 [2.5, 3.5).
  CHECK(r.schedule.makespan == doctest::Approx(3.5));
  CHECK(validate(r.schedule, g, archetype::both{}, d).ok());
  // Every list scheduler, memory-aware, on the archetypes; each schedule is valid.
  for (const auto& l :
       {m_etf(g, archetype::both{}, d), critical_path_schedule(g, archetype::both{}, d, {.respect_memory = true}),
        heft(g, archetype::both{}, d, {.respect_memory = true}),
        cpop(g, archetype::both{}, d, {.respect_memory = true}),
        peft(g, archetype::both{}, d, {.respect_memory = true})}) {
    REQUIRE(l.ok());
    CHECK(validate(l.schedule, g, archetype::both{}, d).ok());
  }
}
