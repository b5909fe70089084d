// The parts of the simulator's event loop (sim/), each on its own: the checks of a run's arguments,
// ranks and durations, the devices' memory, who holds what, the ready queues, when transfers go,
// the admission rule's copies, and what a start and a finish do to the run's state. The loop as a
// whole is tested in test_simulator.cpp and test_memory_replay.cpp.
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/sim/admission.hpp>
#include <gantry/sim/device_memory.hpp>
#include <gantry/sim/holdings.hpp>
#include <gantry/sim/ready_queues.hpp>
#include <gantry/sim/run_options.hpp>
#include <gantry/sim/run_plan.hpp>
#include <gantry/sim/run_state.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/sim/transfer_dispatch.hpp>
#include <gantry/sim/virtual_clock.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace gantry;

namespace {

// Names vertex v "v<v>" in messages.
const auto v_name = [](vertex_id v) { return "v" + std::to_string(v); };

cluster two_devices(comm_mode comm, byte_count capacity = unlimited_memory) {
  return cluster::uniform(2, capacity, {.latency = 1, .bandwidth = 100}, comm);
}

schedule empty_schedule(std::size_t devices) {
  schedule s;
  s.peak_memory.assign(devices, 0);
  s.peak_memory_time.assign(devices, 0);
  return s;
}

}  // namespace

TEST_CASE("check_run_arguments names the placement, priority or cv that is wrong") {
  graph g;
  g.add_vertex("a", 1.0);
  g.add_vertex("b", 1.0);
  g.add_edge(0, 1, 10);
  const cluster c = two_devices(comm_mode::parallel);
  const graph_model model(g, c);
  const csr_graph csr = snapshot(g);
  const std::vector<device_id> ok{0, 1};
  const auto check = [&](std::vector<device_id> placement, simulate_options options = {}) {
    detail::check_run_arguments("simulate", csr, model, 2, placement, options, false, v_name);
  };
  CHECK_NOTHROW(check(ok));
  CHECK_THROWS_WITH_AS(check({0}), "simulate: the placement has 1 entries for 2 vertices", invalid_input);
  CHECK_THROWS_WITH_AS(check({0, 2}), "simulate: vertex v1 is placed on device 2 but there are 2 devices",
                       invalid_input);
  const std::vector<vertex_id> twice{1, 1};
  CHECK_THROWS_WITH_AS(check(ok, {.priority = twice}), "simulate: the priority order lists vertex 1 twice",
                       invalid_input);
  const std::vector<vertex_id> missing{0, 5};
  CHECK_THROWS_WITH_AS(check(ok, {.priority = missing}),
                       "simulate: the priority order lists vertex 5 which does not exist", invalid_input);
  CHECK_THROWS_AS(check(ok, {.cv = -0.5}), invalid_input);
  // A measured run also needs finite compute times >= 0.
  g[1].compute = -1;
  const graph_model negative(g, c);
  CHECK_NOTHROW(detail::check_run_arguments("run", csr, negative, 2, ok, {}, false, v_name));
  CHECK_THROWS_WITH_AS(detail::check_run_arguments("run", csr, negative, 2, ok, {}, true, v_name),
                       doctest::Contains("vertex v1 has compute time -1"), invalid_input);
}

TEST_CASE("run_plan: ranks follow the priority (else Kahn order), and drawn durations follow the seed") {
  // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3; vertex 2 is the long one.
  graph g;
  for (const seconds compute : {1.0, 1.0, 4.0, 1.0}) g.add_vertex({.compute = compute});
  g.add_edge(0, 1, 10);
  g.add_edge(0, 2, 10);
  g.add_edge(1, 3, 10);
  g.add_edge(2, 3, 10);
  const cluster c = two_devices(comm_mode::parallel);
  const graph_model model(g, c);
  const csr_graph csr = snapshot(g);
  const std::vector<device_id> placement{0, 0, 1, 1};
  detail::run_plan<graph_model> plan;
  plan.reset(csr, model, 2, placement, {}, "simulate");
  CHECK(plan.ranks() == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(plan.bottom_levels().empty());
  for (vertex_id v = 0; v < 4; ++v) CHECK(plan.duration(v) == model.compute_time(v, placement[v]));
  CHECK(plan.traffic(0) == 0);
  plan.add_transfer(2.5);
  CHECK(plan.transfer_duration(0) == 2.5);

  const std::vector<vertex_id> priority{0, 2, 1, 3};
  plan.reset(csr, model, 2, placement, {.policy = ready_policy::bottom_level, .priority = priority}, "simulate");
  CHECK(plan.ranks() == std::vector<std::uint32_t>{0, 2, 1, 3});
  REQUIRE(plan.bottom_levels().size() == 4);
  CHECK(plan.bottom_levels()[2] > plan.bottom_levels()[1]);
  CHECK(plan.bottom_levels()[0] > plan.bottom_levels()[2]);
  plan.count_traffic(csr, model);
  CHECK(plan.traffic(3) == detail::traffic_bytes(model, csr, 3));

  // Drawn durations: the same seed draws the same, in vertex order, then the copies' as made.
  const auto drawn = [&](std::uint64_t seed, bool vary_transfers) {
    detail::run_plan<graph_model> p;
    p.reset(csr, model, 2, placement, {.cv = 0.3, .seed = seed, .vary_transfers = vary_transfers}, "simulate");
    p.add_transfer(1.0);
    std::vector<seconds> out;
    for (vertex_id v = 0; v < 4; ++v) out.push_back(p.duration(v));
    out.push_back(p.transfer_duration(0));
    return out;
  };
  const auto a = drawn(7, true);
  CHECK(a == drawn(7, true));
  CHECK(a != drawn(8, true));
  CHECK(a[0] != model.compute_time(0, 0));
  CHECK(a[4] != 1.0);
  const auto fixed_copies = drawn(7, false);
  CHECK(std::vector<seconds>(fixed_copies.begin(), fixed_copies.begin() + 4) ==
        std::vector<seconds>(a.begin(), a.begin() + 4));
  CHECK(fixed_copies[4] == 1.0);

  graph cyclic = g;
  cyclic.add_edge(3, 0, 1);
  const csr_graph loop = snapshot(cyclic);
  const graph_model cyclic_model(cyclic, c);
  CHECK_THROWS_WITH_AS(plan.reset(loop, cyclic_model, 2, placement, {}, "simulate"), "simulate: the graph has a cycle",
                       not_a_dag);
}

TEST_CASE("device_memory: an allocation that does not fit fails at once, and a wait is remembered") {
  const cluster c = two_devices(comm_mode::parallel, 100);
  detail::device_memory<cluster> memory;
  memory.reset(c, /*per_instant=*/false, /*wait=*/true);
  schedule s = empty_schedule(2);
  CHECK_FALSE(memory.allocate(0, 60, 3, "output", 1.0, s));
  CHECK(memory.in_use(0) == 60);
  CHECK(s.peak_memory[0] == 60);
  CHECK(s.peak_memory_time[0] == 1.0);
  const auto f = memory.allocate(0, 50, 4, "temporary", 2.0, s);
  REQUIRE(f);
  CHECK(f->device == 0);
  CHECK(f->vertex == 4);
  CHECK(f->bytes == 50);
  CHECK(f->in_use == 60);
  CHECK(memory.in_use(0) == 60);  // nothing taken
  const outcome failed = memory.failure(*f, "'b'");
  CHECK(failed.code == status::out_of_memory);
  CHECK(failed.vertex == 4);
  CHECK(failed.device == 0);
  CHECK(failed.time == 2.0);
  CHECK(failed.needed == 50);
  CHECK(failed.available == 40);
  CHECK(failed.message ==
        "device 0 runs out of memory at time 2 s: 'b' needs 50 B (temporary) with 60 B "
        "of 100 B in use");
  memory.release(0, 20);
  CHECK(memory.in_use(0) == 40);
  CHECK(s.peak_memory[0] == 60);

  // room_for counts what a start frees first; a no is remembered as the last wait.
  CHECK(memory.room_for(0, 60, 0, 5, "output"));
  CHECK_FALSE(memory.waited());
  CHECK_FALSE(memory.room_for(0, 70, 0, 5, "output"));
  CHECK(memory.waited());
  CHECK(memory.waiting().vertex == 5);
  CHECK(memory.waiting().available == 60);
  CHECK(memory.room_for(0, 70, 10, 5, "output"));
  const outcome stuck = memory.wait_failure(3.0, "'c'");
  CHECK(stuck.code == status::out_of_memory);
  CHECK(stuck.vertex == 5);
  CHECK(stuck.time == 3.0);
  CHECK(stuck.needed == 70);
  CHECK(stuck.available == 60);
  CHECK(stuck.message ==
        "device 0 runs out of memory at time 3 s: 'c' needs 70 output bytes with 60 of 100 bytes free, and nothing "
        "running can free more");
  memory.forget_wait();
  CHECK(memory.waiting().vertex == no_vertex);
  CHECK(memory.waited());  // since reset()
  CHECK_FALSE(memory.held_back(1, 6, 10, "received"));
  CHECK(memory.waiting().device == 1);
  CHECK(memory.waiting().available == 100);

  // Without waiting for memory every start is let through: allocation judges.
  memory.reset(c, false, false);
  CHECK(memory.room_for(0, 1000, 0, 5, "output"));
  CHECK_FALSE(memory.waited());
}

TEST_CASE("device_memory: judged per instant, a device over capacity fails only if it still is when time moves on") {
  const cluster c = two_devices(comm_mode::parallel, 100);
  detail::device_memory<cluster> memory;
  memory.reset(c, /*per_instant=*/true, /*wait=*/false);
  schedule s = empty_schedule(2);
  CHECK_FALSE(memory.allocate(0, 80, 1, "output", 0.0, s));
  CHECK_FALSE(memory.allocate(0, 40, 2, "output", 0.0, s));  // over for the moment
  CHECK(memory.in_use(0) == 120);
  CHECK(s.peak_memory[0] == 120);
  memory.release(0, 80);
  CHECK_FALSE(memory.settle());  // back within capacity by the end of the instant

  CHECK_FALSE(memory.allocate(1, 90, 3, "output", 1.0, s));
  CHECK_FALSE(memory.allocate(1, 20, 4, "received", 1.0, s));
  CHECK_FALSE(memory.allocate(0, 70, 5, "output", 1.0, s));  // device 0 over too, later
  const auto f = memory.settle();
  REQUIRE(f);
  CHECK(f->device == 1);  // the first device that went over
  CHECK(f->vertex == 4);
  CHECK(f->in_use == 90);
  CHECK_FALSE(memory.settle());  // reported once

  // An allocation larger than the device fails at once, even per instant.
  const auto alone = memory.allocate(0, 101, 6, "temporary", 2.0, s);
  REQUIRE(alone);
  CHECK(alone->vertex == 6);
}

TEST_CASE("run_holdings: a holding is freed by its last reader, and freed_by_inputs says so in advance") {
  // 0 -> 2, 1 -> 2 and 1 -> 3; vertex 3 on device 1, the others on device 0.
  graph g;
  for (const char* name : {"v0", "v1", "v2", "v3"})
    g.add_vertex({.name = name, .compute = 1, .output = 10 + g.vertex_count()});
  const edge_id e02 = g.add_edge(0, 2, 10);
  g.add_edge(1, 2, 11);
  const edge_id e13 = g.add_edge(1, 3, 11);
  const cluster c = two_devices(comm_mode::parallel);
  const graph_model model(g, c);
  const csr_graph csr = snapshot(g);
  const std::vector<device_id> placement{0, 0, 0, 1};
  std::vector<byte_count> outputs;
  for (vertex_id v = 0; v < 4; ++v) outputs.push_back(model.output_bytes(v));
  detail::run_holdings holdings;
  holdings.reset(csr, placement, outputs);
  std::vector<transfer> transfers;
  CHECK(holdings.transfer_of(e02) == detail::no_transfer);

  holdings.take_output(0, 1.0, 1);  // read by 2
  holdings.take_output(1, 1.0, 2);  // read by 2 and by the copy to device 1
  transfers.push_back({1, e13, 0, 1, 0, 0, 11});
  holdings.add_copy();
  holdings.serve(e13, 0);
  CHECK(holdings.transfer_of(e13) == 0);

  std::vector<std::pair<device_id, byte_count>> freed;
  const auto release = [&](device_id d, byte_count bytes) { freed.emplace_back(d, bytes); };
  // Vertex 2 is the last reader of 0's output, not of 1's (the copy still reads it).
  CHECK(holdings.freed_by_inputs(2, transfers) == 10);
  holdings.release_inputs(2, transfers, 2.0, false, release);
  CHECK(freed == std::vector<std::pair<device_id, byte_count>>{{0, 10}});
  freed.clear();
  CHECK(holdings.read_output(1, 2.5));  // the copy arrived: 1's output is free
  // Vertex 3 reads the copy of 1's output on device 1.
  CHECK(holdings.freed_by_inputs(3, transfers) == 11);
  holdings.release_inputs(3, transfers, 3.0, false, release);
  CHECK(freed == std::vector<std::pair<device_id, byte_count>>{{1, 11}});
}

TEST_CASE("ready_queues: each policy's order, skipped vertices stay queued, strict order waits for its next") {
  const std::vector<device_id> placement{0, 0, 0, 1};
  const std::vector<std::uint32_t> rank{2, 0, 1, 3};
  const std::vector<seconds> bottom{3, 1, 5, 0};
  const std::vector<std::uint32_t> none_pending(4, 0);
  const auto yes = [](vertex_id) { return true; };
  detail::ready_queues ready;
  const auto fill = [&](ready_policy policy) {
    ready.reset(policy, 2, placement, rank, bottom);
    ready.push(0, 0, 0.0);  // ready first
    ready.push(2, 0, 1.0);
    ready.push(1, 0, 2.0);
  };
  const auto drain = [&] {
    std::vector<vertex_id> out;
    for (vertex_id v; (v = ready.take(0, none_pending, yes, yes)) != no_vertex;) out.push_back(v);
    return out;
  };
  fill(ready_policy::placement_order);
  CHECK(drain() == std::vector<vertex_id>{1, 2, 0});
  fill(ready_policy::fifo);
  CHECK(drain() == std::vector<vertex_id>{0, 2, 1});
  fill(ready_policy::bottom_level);
  CHECK(drain() == std::vector<vertex_id>{2, 0, 1});
  CHECK(ready.take(1, none_pending, yes, yes) == no_vertex);

  // A vertex that does not fit (or is not admitted) is passed over and stays queued.
  fill(ready_policy::placement_order);
  std::vector<vertex_id> asked;
  const auto not_1 = [&](vertex_id v) {
    asked.push_back(v);
    return v != 1;
  };
  CHECK(ready.take(0, none_pending, not_1, yes) == 2);
  CHECK(asked == std::vector<vertex_id>{1, 2});
  asked.clear();
  CHECK(ready.take(0, none_pending, yes, not_1) == 0);  // fits, but is not admitted
  CHECK(asked == std::vector<vertex_id>{1, 0});
  CHECK(drain() == std::vector<vertex_id>{1});

  // Strict order: device 0 runs 1, 2, 0 in rank order, each only once its inputs are there.
  ready.reset(ready_policy::strict_order, 2, placement, rank, bottom);
  std::vector<std::uint32_t> pending{0, 1, 0, 0};
  CHECK(ready.strict_next(0) == 1);
  CHECK(ready.take(0, pending, yes, yes) == no_vertex);  // 1 waits for an input; 2 may not overtake it
  pending[1] = 0;
  CHECK(ready.take(0, pending, yes, yes) == 1);
  CHECK(ready.take(0, pending, yes, yes) == 2);
  CHECK(ready.take(0, pending, yes, yes) == 0);
  CHECK(ready.strict_next(0) == no_vertex);
  CHECK(ready.strict_next(1) == 3);
}

TEST_CASE("transfer_dispatch: parallel links never queue; shared ones serve by readiness or by a booked order") {
  CHECK(detail::transfer_dispatch{}.parallel());
  const cluster parallel = two_devices(comm_mode::parallel);
  const cluster sequential = two_devices(comm_mode::sequential);
  detail::transfer_dispatch dispatch;
  dispatch.reset(parallel, {}, true, false, 2, "simulate", v_name);
  CHECK(dispatch.parallel());

  // Two tensors from device 0 to device 1 over one sequential link; the replayed schedule sent 1 first.
  const std::vector<transfer> order{{1, 1, 0, 1, 0, 0, 10}, {0, 0, 0, 1, 0, 0, 10}};
  const std::vector<transfer> made{{0, 0, 0, 1, 0, 0, 10}, {1, 1, 0, 1, 0, 0, 10}};
  const auto run = [&](bool bookings) {
    dispatch.reset(sequential, order, true, bookings, 2, "simulate", v_name);
    CHECK_FALSE(dispatch.parallel());
    for (const transfer& t : made) dispatch.made(t);
    dispatch.enqueue(0.0, 0, 0, 0);  // ready together; 0 first by rank
    dispatch.enqueue(0.0, 1, 1, 1);
    std::vector<std::uint32_t> started;
    const auto ok = [] { return true; };
    const auto admit = [](std::uint32_t) { return true; };
    const auto start = [&](std::uint32_t t) {
      started.push_back(t);
      dispatch.occupy(t, made[t]);
    };
    dispatch.serve(made, ok, admit, start);
    CHECK(started.size() == 1);  // the link is busy now
    dispatch.serve(made, ok, admit, start);
    CHECK(started.size() == 1);
    dispatch.vacate(made[started.back()]);
    dispatch.serve(made, ok, admit, start);
    return started;
  };
  CHECK(run(false) == std::vector<std::uint32_t>{0, 1});  // by readiness
  CHECK(run(true) == std::vector<std::uint32_t>{1, 0});   // as booked

  // A transfer that may not start (memory) stays queued, and the next one is looked at.
  dispatch.reset(sequential, {}, true, false, 2, "simulate", v_name);
  const std::vector<transfer> two_links{{0, 0, 0, 1, 0, 0, 10}, {1, 1, 1, 0, 0, 0, 10}};
  for (const transfer& t : two_links) dispatch.made(t);
  dispatch.enqueue(0.0, 0, 0, 0);
  dispatch.enqueue(0.0, 1, 1, 1);
  std::vector<std::uint32_t> started;
  dispatch.serve(
      two_links, [] { return true; }, [](std::uint32_t t) { return t == 1; },
      [&](std::uint32_t t) { started.push_back(t); });
  CHECK(started == std::vector<std::uint32_t>{1});

  // A transfer order naming what cannot be, or listing one tensor twice.
  const std::vector<transfer> out_of_range{{5, 0, 0, 1, 0, 0, 10}};
  CHECK_THROWS_WITH_AS(dispatch.reset(sequential, out_of_range, true, true, 2, "simulate", v_name),
                       "simulate: transfer_order entry 0 names a vertex or device out of range", invalid_input);
  const std::vector<transfer> twice{{0, 0, 0, 1, 0, 0, 10}, {0, 0, 0, 1, 0, 0, 10}};
  CHECK_THROWS_WITH_AS(dispatch.reset(sequential, twice, true, true, 2, "simulate", v_name),
                       "simulate: transfer_order lists the tensor of v0 to device 1 twice", invalid_input);
  CHECK_NOTHROW(dispatch.reset(parallel, twice, true, true, 2, "simulate", v_name));  // nothing to book
}

TEST_CASE("memory_admission: a copy's first reader is looked up once, and a no comes back until a start") {
  // One device of 100 bytes; 0 -> 1 -> 2, every output 40 bytes: the order fits (80 at most).
  graph g;
  for (const char* name : {"v0", "v1", "v2"}) g.add_vertex({.name = name, .compute = 1, .output = 40});
  g.add_edge(0, 1, 40);
  g.add_edge(1, 2, 40);
  const cluster c = cluster::uniform(1, 100, {.latency = 1, .bandwidth = 100}, comm_mode::parallel);
  const graph_model model(g, c);
  const csr_graph csr = snapshot(g);
  const std::vector<device_id> placement{0, 0, 0};
  const std::vector<std::uint32_t> rank{0, 1, 2};
  detail::memory_admission admission;
  admission.init(csr, model, c, placement, rank, true);
  REQUIRE(admission.engaged());
  int asked = 0;
  const auto first_reader = [&] {
    ++asked;
    return std::uint32_t{2};
  };
  // 30 bytes held until step 2 fit beside step 0 (40) and step 1 (80)? 80 + 30 > 100: no.
  CHECK_FALSE(admission.admit_copy(0, 1, 3, 0, 30, first_reader));
  CHECK_FALSE(admission.admit_copy(0, 1, 3, 0, 30, first_reader));
  CHECK(asked == 1);
  CHECK(admission.admit_copy(1, 2, 3, 0, 20, first_reader));  // another copy: 80 + 20 fits
  CHECK(asked == 2);
  CHECK(admission.admit_start(0, 0, 40, 0));
  detail::memory_admission off;
  CHECK(off.admit_copy(7, 8, 3, 0, 1000, first_reader));  // not engaged: every copy is admitted
  CHECK(asked == 2);
}

namespace {

// a (output 10) feeds b on device 0 and c, d on device 1, all three edges of a's 10 bytes; b and c
// feed e on device 1 (4 bytes from b). Every vertex takes 1 s; a link takes 1 s + bytes / 100.
struct fan_out {
  graph g;
  cluster c;
  std::vector<device_id> placement{0, 0, 1, 1, 1};
  fan_out(comm_mode comm, byte_count capacity) : c(two_devices(comm, capacity)) {
    for (const char* name : {"a", "b", "c", "d", "e"}) g.add_vertex({.name = name, .compute = 1, .output = 10});
    g[1].output = 4;
    g[0].temporary = 5;
    g.add_edge(0, 1, 10);
    g.add_edge(0, 2, 10);
    g.add_edge(0, 3, 10);
    g.add_edge(1, 4, 4);
    g.add_edge(2, 4, 10);
  }
};

using fan_state = detail::run_state<graph_model, cluster, virtual_clock, simulation_result>;

// Pops the next completion and hands it to the state, as the loop does.
completion next(fan_state& run, virtual_clock& clock) {
  clock.advance();
  completion done{};
  REQUIRE(clock.pop_due(done));
  --run.in_flight;
  run.finish(done);
  return done;
}

}  // namespace

TEST_CASE("run_state: a start takes its bytes, a finish hands the output on, one cached copy per tensor and device") {
  for (const bool cache : {true, false}) {
    CAPTURE(cache);
    const fan_out f(comm_mode::parallel, unlimited_memory);
    const graph_model model(f.g, f.c);
    const csr_graph csr = snapshot(f.g);
    virtual_clock clock;
    fan_state run(csr, model, f.c, f.placement, clock, {.cache_transfers = cache}, "simulate",
                  [&](vertex_id v) { return "'" + f.g[v].name + "'"; });
    run.reset();
    clock.begin(2);
    CHECK(run.vertex_fits(0));
    run.start_vertex(0);
    CHECK(run.in_flight == 1);
    CHECK(run.busy[0] == 1);
    CHECK(run.memory.in_use(0) == 15);  // temporary and output
    CHECK(run.result.schedule.finish[0] == 1.0);

    CHECK_FALSE(next(run, clock).is_copy);
    CHECK(run.finished == 1);
    CHECK(run.busy[0] == 0);
    CHECK(run.memory.in_use(0) == 10);  // the temporary bytes are back
    CHECK(run.pending[1] == 0);         // b's input is on its device
    // c and d read one copy when cached, one each otherwise; on parallel links they start at once.
    const auto& transfers = run.result.schedule.transfers;
    REQUIRE(transfers.size() == (cache ? 1u : 2u));
    CHECK(run.in_flight == transfers.size());
    CHECK(run.memory.in_use(1) == 10 * transfers.size());
    CHECK(run.result.schedule.bytes_moved == 10 * transfers.size());
    CHECK(transfers[0].start == 1.0);
    CHECK(transfers[0].finish == doctest::Approx(2.1));

    while (run.in_flight > 0) CHECK(next(run, clock).is_copy);
    CHECK(run.pending[2] == 0);
    CHECK(run.pending[3] == 0);
    CHECK(run.memory.in_use(0) == 10);  // b still reads a's output

    run.start_vertex(1);  // b: its output to e is a copy of 4 bytes
    CHECK(run.memory.in_use(0) == 10 + 4);
    next(run, clock);
    CHECK(run.memory.in_use(0) == 4);  // b was a's last reader; the copy still reads b's output
    REQUIRE(transfers.size() == (cache ? 2u : 3u));
    CHECK(transfers.back().bytes == 4);
    next(run, clock);
    CHECK(run.memory.in_use(0) == 0);
    CHECK(run.pending[4] == 1);  // still waiting for c
  }
}

TEST_CASE("run_state: a start that does not fit waits when it may, else fails the run naming the vertex") {
  const fan_out f(comm_mode::sequential, 12);
  const graph_model model(f.g, f.c);
  const csr_graph csr = snapshot(f.g);
  const auto name = [&](vertex_id v) { return "'" + f.g[v].name + "'"; };
  {
    virtual_clock clock;
    fan_state run(csr, model, f.c, f.placement, clock, {.wait_for_memory = true}, "simulate", name);
    run.reset();
    clock.begin(2);
    CHECK_FALSE(run.vertex_fits(0));  // 5 temporary + 10 output > 12
    CHECK(run.memory.waiting().vertex == 0);
    CHECK(run.memory.waiting().needed == 15);
    CHECK(run.result.ok());
  }
  virtual_clock clock;
  fan_state run(csr, model, f.c, f.placement, clock, {.wait_for_memory = false}, "simulate", name);
  run.reset();
  clock.begin(2);
  // Without waiting, on a virtual clock, memory is judged when the instant is over (settle()).
  run.start_vertex(0);
  CHECK(run.result.ok());
  CHECK(run.in_flight == 1);
  run.settle();
  CHECK(run.result.outcome.code == status::out_of_memory);
  CHECK(run.result.outcome.vertex == 0);
  CHECK(run.result.outcome.device == 0);
  CHECK(run.result.outcome.message ==
        "device 0 runs out of memory at time 0 s: 'a' needs 10 B (output) with 5 B of 12 B in use");
}
