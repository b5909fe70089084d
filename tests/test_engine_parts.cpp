// The parts of the list-scheduling engine (place/engine/), each on its own: what is placed and the
// result's order, colocation groups, readiness, transfer planning and the two memory accountings.
// The engine as a whole is tested in test_list_scheduler.cpp and test_list_memory.cpp.
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/engine/groups.hpp>
#include <gantry/place/engine/memory.hpp>
#include <gantry/place/engine/placed.hpp>
#include <gantry/place/engine/readiness.hpp>
#include <gantry/place/engine/transfers.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace gantry;

namespace {

std::string name_of(vertex_id v) { return "v" + std::to_string(v); }

// A graph with its snapshot, model and cluster, and the engine's parts over them.
struct parts_fixture {
  graph g;
  cluster c;
  csr_graph csr;
  std::vector<vertex_id> kahn;
  list_options options;
  detail::placed_vertices placed;
  detail::group_table groups;

  parts_fixture(graph graph_in, cluster cluster_in)
      : g(std::move(graph_in)), c(std::move(cluster_in)), csr(snapshot(g)) {
    kahn = detail::kahn_on(csr);
    placed.reset(g.vertex_count());
  }
  void make_groups() { groups.reset(csr, graph_model(g, c), options, kahn, "test", name_of); }
};

}  // namespace

TEST_CASE("placed_vertices: the result's order merges the devices' lists, or sorts when a list is out of order") {
  detail::placed_vertices p;
  p.reset(5);
  CHECK(p.order_by_start(2).empty());
  p.record(0, 0, 0.0, 1.0);
  p.record(1, 1, 0.5, 2.0);
  p.record(2, 0, 1.0, 3.0);
  p.record(3, 1, 1.0, 1.5);  // starts with vertex 2: the shorter first
  CHECK(p.count == 4);
  CHECK(p.placed(3));
  CHECK_FALSE(p.placed(4));
  CHECK(p.order_by_start(2) == std::vector<vertex_id>{0, 1, 3, 2});
  // Inserted into an idle gap before vertex 2 on device 0: the list is out of order, sorted.
  p.record(4, 0, 0.2, 0.4);
  CHECK(p.step[4] == 4);
  CHECK(p.order_by_start(2) == std::vector<vertex_id>{0, 4, 1, 3, 2});
}

TEST_CASE("group_table: members in Kahn order, their bytes, fixed and bound devices, the group's inputs") {
  graph g;
  const auto x = g.add_vertex({.name = "x", .compute = 1.0, .output = 4});
  const auto a = g.add_vertex({.name = "a", .compute = 1.0, .persistent = 8, .output = 1});
  const auto b = g.add_vertex({.name = "b", .compute = 1.0, .output = 2, .temporary = 3});
  const auto y = g.add_vertex({.name = "y", .compute = 1.0});
  g.add_edge(a, b, 1);
  g.add_edge(x, b, 10);
  g.add_edge(b, y, 2);
  parts_fixture f(std::move(g), cluster::uniform(2, unlimited_memory, {.latency = 0.0, .bandwidth = 5.0}));
  f.options.group = {no_group, 7, 7, no_group};
  f.make_groups();
  const auto& groups = f.groups;
  CHECK(groups.of(a) == groups.of(b));
  CHECK(groups.of(x) != groups.of(a));
  CHECK(groups.any_several());
  REQUIRE(groups.members(b).size() == 2);
  CHECK(groups.members(b)[0] == a);  // Kahn order
  CHECK(groups.members(b)[1] == b);
  CHECK(groups.member_index(b) == 1);
  CHECK(groups.members(x).size() == 1);
  const auto grp = groups.of(a);
  CHECK(groups.size(grp) == 2);
  CHECK(groups.bytes(grp) == 8 + 1 + 2 + 3);
  CHECK(groups.persistent(grp) == 8);
  CHECK(groups.unbound_several(a));
  CHECK_FALSE(groups.unbound_several(x));

  // b's input from x, placed on device 0 and done at 2: on device 1 after a 10-byte transfer at
  // 5 bytes/s; a (b's group-mate, not yet placed) goes where the group can run.
  const graph_model model(f.g, f.c);
  f.placed.record(x, 0, 1.0, 2.0);
  CHECK(groups.ready_on(f.csr, model, f.placed, a, 0) == doctest::Approx(2.0));
  CHECK(groups.ready_on(f.csr, model, f.placed, a, 1) == doctest::Approx(4.0));
  CHECK(groups.ready_on(f.csr, model, f.placed, x, 1) == 0.0);  // alone

  f.groups.bind(grp, 1);
  CHECK(groups.bound(grp));
  CHECK(groups.device(grp) == 1);
  CHECK_FALSE(groups.unbound_several(a));
  CHECK(groups.ready_on(f.csr, model, f.placed, a, 1) == 0.0);

  // Two members fixed to different devices: an error naming the vertex.
  f.options.fixed_device = {no_device, 0, 1, no_device};
  CHECK_THROWS_WITH_AS(f.make_groups(),
                       doctest::Contains("test: vertex v2 is fixed to device 1 but its group is fixed to device 0"),
                       invalid_input);
  f.options.fixed_device = {no_device, no_device, 1, no_device};
  f.make_groups();
  CHECK(f.groups.device(f.groups.of(a)) == 1);
  CHECK_FALSE(f.groups.bound(f.groups.of(a)));
}

TEST_CASE("readiness: inputs placed, a group's source released with its consumer, backward vertices behind the gate") {
  // w is a weight of group {w, m}; m also reads x. f -> k is a forward vertex and its backward one.
  graph g;
  const auto x = g.add_vertex("x", 1.0);
  const auto w = g.add_vertex("w", 1.0);
  const auto m = g.add_vertex("m", 1.0);
  const auto k = g.add_vertex("k", 1.0);
  g.add_edge(x, m);
  g.add_edge(w, m);
  g.add_edge(m, k);
  parts_fixture f(std::move(g), cluster::uniform(2));
  f.options.group = {no_group, 3, 3, no_group};
  f.options.forward_of = {no_vertex, no_vertex, no_vertex, m};  // k is m's backward vertex
  f.make_groups();
  std::vector<std::uint32_t> rank(4);
  for (std::uint32_t i = 0; i < f.kahn.size(); ++i) rank[f.kahn[i]] = i;

  detail::readiness r;
  r.reset(f.csr, f.groups, rank, f.options.forward_of, /*gate=*/true);
  std::vector<vertex_id> became;
  const auto on_ready = [&](vertex_id v) { became.push_back(v); };
  r.start(f.csr, f.groups, on_ready);
  CHECK(became == std::vector<vertex_id>{x});  // w waits for m's other input
  CHECK(r.first_ready() == x);
  CHECK(r.gated());

  r.leave(x);
  r.count_forward(x, on_ready);
  r.placed(f.csr, f.groups, x, false, on_ready);
  CHECK(became == std::vector<vertex_id>{x, w});  // m waits for nothing but w now
  CHECK(r.is_ready(w));
  CHECK_FALSE(r.is_ready(m));

  r.leave(w);
  r.count_forward(w, on_ready);
  r.placed(f.csr, f.groups, w, true, on_ready);
  CHECK(became == std::vector<vertex_id>{x, w, m});

  r.leave(m);
  r.count_forward(m, on_ready);  // the last forward vertex: the gate opens (nothing parked yet)
  r.placed(f.csr, f.groups, m, false, on_ready);
  CHECK(became.back() == k);
  CHECK_FALSE(r.any_parked());

  // With a forward vertex left, a backward vertex whose inputs are placed is parked until the gate opens.
  detail::readiness held;
  f.options.group.clear();
  f.options.forward_of = {no_vertex, no_vertex, no_vertex, x};  // k is x's backward vertex; w and m stay forward
  f.make_groups();
  held.reset(f.csr, f.groups, rank, f.options.forward_of, true);
  became.clear();
  held.start(f.csr, f.groups, on_ready);
  CHECK(became == std::vector<vertex_id>{x, w});
  for (const vertex_id v : {x, w, m}) {
    held.leave(v);
    if (v != m) held.count_forward(v, on_ready);
    if (v == m) {
      held.placed(f.csr, f.groups, v, false, on_ready);  // k's input is placed; m not counted yet
      CHECK(held.any_parked());
      CHECK_FALSE(held.is_ready(k));
      held.count_forward(v, on_ready);
    } else {
      held.placed(f.csr, f.groups, v, false, on_ready);
    }
  }
  CHECK(held.is_ready(k));
  CHECK_FALSE(held.any_parked());
}

TEST_CASE(
    "transfer_book: inputs once per tensor, probes that leave no trace, queues on shared channels, cached copies") {
  // p1 and p2 on device 0 feed c and e; with sequential channels their transfers to device 1 queue.
  graph g;
  const auto p1 = g.add_vertex({.name = "p1", .compute = 1.0, .output = 4});
  const auto p2 = g.add_vertex({.name = "p2", .compute = 2.0, .output = 3});
  const auto c = g.add_vertex("c", 1.0);
  const auto e = g.add_vertex("e", 1.0);
  g.add_edge(p2, c, 3);
  g.add_edge(p1, c, 4);
  g.add_edge(p1, c, 4);  // the same tensor twice: one input when cached
  g.add_edge(p1, e, 4);
  for (const comm_mode mode : {comm_mode::sequential, comm_mode::parallel}) {
    CAPTURE(static_cast<int>(mode));
    parts_fixture f(g, cluster::uniform(2, unlimited_memory, {.latency = 0.0, .bandwidth = 1.0}, mode));
    const graph_model model(f.g, f.c);
    const topology topo = detail::topology_of(f.c);
    detail::transfer_book book;
    book.reset(4, f.csr.edge_count(), topo, true);
    CHECK(book.inputs(c).empty());
    f.placed.record(p1, 0, 0.0, 1.0);
    f.placed.record(p2, 0, 0.0, 2.0);
    book.collect(f.csr, model, c, f.placed);
    const auto inputs = book.inputs(c);
    REQUIRE(inputs.size() == 2);
    if (mode == comm_mode::sequential) {  // in order of the producers' finish
      CHECK(inputs[0].producer == p1);
      CHECK(inputs[1].producer == p2);
    }
    detail::planned_transfers plan;
    const seconds there = book.arrival(inputs, 1, f.placed, model, &plan);
    // Sequential: p1's 4 bytes take [1, 5), p2's 3 bytes wait for the channel: [5, 8).
    CHECK(there == doctest::Approx(mode == comm_mode::sequential ? 8.0 : 5.0));
    CHECK(book.arrival(inputs, 1, f.placed, model) == doctest::Approx(there));  // nothing left behind
    CHECK(book.arrival(inputs, 0, f.placed, model) == doctest::Approx(2.0));    // no transfer on device 0
    REQUIRE(plan.size() == 2);
    CHECK(book.received_bytes(inputs, 1, f.placed, model) == 7);
    CHECK(book.received_bytes(inputs, 0, f.placed, model) == 0);
    std::vector<seconds> all(2);
    if (mode == comm_mode::parallel) {
      book.arrival_all(inputs, f.placed, model, all);
      CHECK(all[0] == doctest::Approx(2.0));
      CHECK(all[1] == doctest::Approx(5.0));
    }

    book.commit({plan.data(), plan.size()});
    REQUIRE(book.all().size() == 2);
    const auto copy = book.cached(p1, 1, 4);
    REQUIRE(copy != detail::transfer_book::none);
    CHECK(book.all()[copy].finish == doctest::Approx(5.0));
    CHECK(book.cached(p1, 0, 4) == detail::transfer_book::none);
    CHECK(book.first_copy(p1) == copy);
    CHECK(book.next_copy(copy) == detail::transfer_book::none);
    // e reads p1's tensor: on device 1 it uses the copy, nothing new to receive.
    book.collect(f.csr, model, e, f.placed);
    CHECK(book.arrival(book.inputs(e), 1, f.placed, model) == doctest::Approx(5.0));
    CHECK(book.received_bytes(book.inputs(e), 1, f.placed, model) == 0);
    if (mode == comm_mode::parallel) {
      book.arrival_all(book.inputs(e), f.placed, model, all);
      CHECK(all[1] == doctest::Approx(5.0));
    }
  }
}

TEST_CASE("reserved_memory: a group's bytes once, received tensors, what is left") {
  graph g;
  const auto a = g.add_vertex({.name = "a", .persistent = 10, .output = 5});
  const auto b = g.add_vertex({.name = "b", .output = 1});
  g.add_edge(a, b, 5);
  parts_fixture f(std::move(g), cluster::uniform(1, 100));
  f.options.group = {0, 0};
  f.make_groups();
  detail::reserved_memory memory;
  memory.reset(f.c);
  CHECK(memory.free(0) == 100);
  const byte_count first = detail::reserved_memory::need(f.groups, a, 0);
  CHECK(first == 16);
  CHECK(memory.fits(0, first));
  memory.record(0, first);
  f.groups.bind(f.groups.of(a), 0);
  CHECK(detail::reserved_memory::need(f.groups, b, 5) == 5);  // the group is reserved already
  CHECK(memory.free(0) == 84);
  CHECK_FALSE(memory.fits(0, 85));
  memory.record(0, 200);
  CHECK(memory.free(0) == 0);
}

TEST_CASE("dynamic_memory: a group's reserve, holds freed by their last reader, fits over time") {
  // A chain group a -> b -> c -> d (outputs 1, 2, 4, 8 bytes); x, outside the group, sends c 16 bytes.
  graph g;
  const auto a = g.add_vertex({.name = "a", .compute = 1.0, .output = 1});
  const auto b = g.add_vertex({.name = "b", .compute = 1.0, .output = 2});
  const auto c = g.add_vertex({.name = "c", .compute = 1.0, .output = 4});
  const auto d = g.add_vertex({.name = "d", .compute = 1.0, .output = 8});
  const auto x = g.add_vertex({.name = "x", .compute = 1.0, .output = 16});
  g.add_edge(a, b, 1);
  g.add_edge(b, c, 2);
  g.add_edge(c, d, 4);
  g.add_edge(x, c, 16);
  parts_fixture f(std::move(g), cluster::uniform(2, 100));
  f.options.group = {0, 0, 0, 0, no_group};
  f.make_groups();
  const graph_model model(f.g, f.c);
  const topology topo = detail::topology_of(f.c);
  detail::transfer_book book;
  book.reset(5, f.csr.edge_count(), topo, true);
  detail::dynamic_memory<graph_model, cluster> memory;
  memory.reset({&f.csr, &model, &f.c, &f.placed, &f.groups, &book, false});
  CHECK(memory.tracked(0));
  CHECK(memory.free_from(0, 0) == 100);
  CHECK(memory.roomy(a, 0));

  // x on device 1. Placing a, the rest of the group runs b, c, d after it, beyond a's output held
  // already: while c runs, b's output, c's and the copy of x's (16, unless x is on the group's
  // device), less a's, freed by b: 2 + 4 + 16 - 1 = 21; without the copy, d's 8 + c's 4 - 1 = 11.
  f.placed.record(x, 1, 0.0, 1.0);
  memory.record(x, 1, true, 0, 0);
  CHECK(memory.group_reserve(a, 0) == 21);
  CHECK(memory.group_reserve(a, 1) == 11);
  CHECK(memory.group_reserve(x, 0) == 0);  // alone
  // x's output waits for c: held on device 1 from 0 on.
  CHECK(memory.free_from(1, 0) == 84);

  // a goes to device 0 with its reserve; then the room kept shrinks as members are placed.
  const byte_count keep = memory.group_reserve(a, 0);
  detail::dynamic_memory<graph_model, cluster>::hold_list holds;
  const byte_count added = memory.new_holds(a, 0, 1.0, 2.0, {}, keep, 0.0, holds);
  CHECK(added == 1 + 21);  // a's output and the reserve
  CHECK(memory.holds_fit(0, added, holds));
  f.groups.bind(f.groups.of(a), 0);
  f.placed.record(a, 0, 1.0, 2.0);
  memory.record(a, 0, true, keep, 0);
  CHECK(memory.free_from(0, 0) == 100 - 1 - 21);
  CHECK(memory.changed(0));
  memory.clear_changed();
  CHECK_FALSE(memory.changed(0));
  // 80 more bytes would not fit while a's output and the reserve are held; 78 would.
  CHECK_FALSE(memory.fits_anyway(0, 80));
  CHECK(memory.fits_anyway(0, 78));

  // b reads a's output, the last reader: a's output is freed when b ends, and the reserve shrinks.
  const byte_count keep_b = memory.group_reserve(b, 0);
  CHECK(keep_b == 20);  // while c runs: its output and x's copy
  f.placed.record(b, 0, 2.0, 3.0);
  memory.record(b, 0, false, keep_b, 0);
  CHECK(memory.changed(0));
  CHECK(memory.free_from(0, 3.0) == 100 - 2 - keep_b);
}
