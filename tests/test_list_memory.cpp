// Memory accounting of the list-scheduling engine: dynamic accounting (the default) frees memory as
// the schedule does and so fits where the static reservation fails; every memory-aware schedule is
// valid, and in parallel mode the simulator replays it exactly without running out of memory.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/model/capacity_scaled.hpp>
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/schedule/memory_ledger.hpp>
#include <gantry/schedule/treap.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "support.hpp"

using namespace gantry;

namespace {
// Integer in [lo, hi] from the raw engine (portable).
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); }

cluster one_device(byte_count capacity) {
  return cluster({{.name = "gpu0", .capacity = capacity}}, link_model{.latency = 0, .bandwidth = 1e9});
}

template <class Ledger>
concept keeps_ends = requires(const Ledger& ledger) {
  ledger.end(0);
};

void require_valid(const list_schedule_result& r, const graph& g, const graph_model& model, const cluster& c) {
  INFO(r.placement.outcome.message);
  REQUIRE(r.ok());
  const auto report = validate(r.schedule, g, model, c);
  CHECK_MESSAGE(report.ok(), report.to_string());
}
}  // namespace

TEST_CASE("a chain whose temporaries do not overlap: reserved fails, dynamic fits exactly") {
  // a -> b -> c on one device; each takes 1 s, 6 temporary and 2 output bytes.
  // Reserved: a takes 8 of 10 bytes for good, so b (8) does not fit (2 left).
  // Dynamic: a [0,1), b [1,2), c [2,3). During b: a's output (held until b finishes) 2 + b's
  // temporary 6 + b's output 2 = 10; during c likewise 10; a's temporary is gone at 1. Peak 10.
  graph g;
  for (const char* name : {"a", "b", "c"})
    g.add_vertex(vertex_properties{.name = name, .compute = 1, .output = 2, .temporary = 6});
  g.add_edge(0, 1, 2);
  g.add_edge(1, 2, 2);
  const auto c = one_device(10);
  const graph_model model(g, c);

  const auto dynamic = m_etf(g, model, c);
  require_valid(dynamic, g, model, c);
  CHECK(dynamic.schedule.start == std::vector<seconds>{0, 1, 2});
  CHECK(dynamic.schedule.peak_memory[0] == 10);

  const auto reserved = m_etf(g, model, c, {.accounting = memory_accounting::reserved});
  CHECK(reserved.placement.outcome.code == status::out_of_memory);
  INFO(reserved.placement.outcome.message);
  CHECK(reserved.placement.outcome.vertex == 1);
  CHECK(reserved.placement.outcome.device == 0);
  CHECK(reserved.placement.outcome.needed == 8);
  CHECK(reserved.placement.outcome.available == 2);
  CHECK_FALSE(reserved.placement.outcome.time.has_value());  // the static rule has no time

  // One byte less: at 1 s a's output (2) and b's 8 would make 10 > 9. The message gives the bytes
  // b adds and the device's free memory from b's start on (9 - 2 = 7).
  const auto tight = one_device(9);
  const graph_model tight_model(g, tight);
  const auto failed = m_etf(g, tight_model, tight);
  CHECK(failed.placement.outcome.code == status::out_of_memory);
  INFO(failed.placement.outcome.message);
  CHECK(failed.placement.outcome.vertex == 1);
  CHECK(failed.placement.outcome.device == 0);
  CHECK(failed.placement.outcome.needed == 8);
  CHECK(failed.placement.outcome.available == 7);
  CHECK(failed.placement.outcome.message.find("m-ETF: no device can hold vertex 'b'") != std::string::npos);
  CHECK(failed.placement.device == std::vector<device_id>{0, no_device, no_device});
  CHECK(failed.schedule.start.empty());
}

TEST_CASE("a vertex that fits nowhere waits for a placement that frees memory") {
  // p -> y, and x alone; each takes 1 s, capacity 10. p [0,1) holds its 5 output bytes until y
  // finishes. x (8 temporary bytes, earlier in Kahn order than y) could start at 1 but 5 + 8 > 10
  // while y is unplaced; y goes first [1,2), p's output ends at 2, and x runs [2,3) with 8 bytes.
  // Reserved: p keeps 5, x needs 8: out of memory.
  graph g;
  const auto p = g.add_vertex(vertex_properties{.name = "p", .compute = 1, .output = 5});
  const auto x = g.add_vertex(vertex_properties{.name = "x", .compute = 1, .temporary = 8});
  const auto y = g.add_vertex(vertex_properties{.name = "y", .compute = 1});
  g.add_edge(p, y, 5);
  const auto c = one_device(10);
  const graph_model model(g, c);
  const auto r = m_etf(g, model, c);
  require_valid(r, g, model, c);
  CHECK(r.schedule.start == std::vector<seconds>{0, 2, 1});
  CHECK(r.placement.order == std::vector<vertex_id>{p, y, x});
  CHECK(r.schedule.peak_memory[0] == 8);
  CHECK(m_etf(g, model, c, {.accounting = memory_accounting::reserved}).placement.outcome.code ==
        status::out_of_memory);
  // Critical Path waits the same way: x has the larger priority but must let y go first.
  const auto cp = critical_path_schedule(g, model, c, {.respect_memory = true});
  require_valid(cp, g, model, c);
  CHECK(cp.schedule.start[x] == 2);
}

TEST_CASE("random DAGs with tight memory: dynamic schedules are valid, replayable, and fit more often") {
  struct tally {
    std::size_t reserved_ok = 0, dynamic_ok = 0, only_dynamic = 0;
  };
  tally etf_runs, cp_runs, heft_runs;
  std::size_t replayed = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    const comm_mode comm = seed % 3 == 0   ? comm_mode::sequential
                           : seed % 3 == 1 ? comm_mode::parallel
                                           : comm_mode::duplex;
    const auto n = static_cast<std::size_t>(draw(rng, 4, 40));
    graph g = random_layered_dag({.vertices = n,
                                  .layers = static_cast<std::size_t>(draw(rng, 2, 8)),
                                  .mean_out_degree = 1.0 + static_cast<double>(draw(rng, 0, 15)) / 10.0,
                                  .min_bytes = 1 << 10,
                                  .max_bytes = 1 << 20,
                                  .max_persistent = 1 << 19,
                                  .max_temporary = 1 << 20,
                                  .seed = seed});
    if (seed % 7 == 0)  // zero-length vertices: their memory is held for an instant
      for (vertex_id v = 0; v < n; v += 4) g[v].compute = 0;
    const auto m = static_cast<std::size_t>(draw(rng, 1, 4));
    byte_count total = 0, largest = 0;
    for (vertex_id v = 0; v < n; ++v) {
      const byte_count bytes = g[v].persistent + g[v].output + g[v].temporary;
      total += bytes;
      largest = std::max(largest, bytes);
    }
    // From well under a fair share to a little over one: the static rule often fails here.
    const byte_count capacity = largest + total * draw(rng, 2, 12) / (10 * m);
    const auto c = cluster::uniform(m, capacity, link_model{.latency = 2e-4, .bandwidth = 2e8}, comm);
    const graph_model model(g, c);
    CAPTURE(seed);
    CAPTURE(m);
    CAPTURE(capacity);

    const auto run = [&](const char* what, tally& t, auto&& place) {
      INFO(what);
      const auto reserved = place(memory_accounting::reserved);
      const auto dynamic = place(memory_accounting::dynamic);
      for (const auto* r : {&reserved, &dynamic}) {
        if (!r->ok()) {
          CHECK(r->placement.outcome.code == status::out_of_memory);
          CHECK(r->placement.outcome.message.find("no device can hold vertex") != std::string::npos);
          continue;
        }
        const auto report = validate(r->schedule, g, model, c);
        CHECK_MESSAGE(report.ok(), report.to_string());
      }
      t.reserved_ok += reserved.ok() ? 1 : 0;
      t.dynamic_ok += dynamic.ok() ? 1 : 0;
      t.only_dynamic += dynamic.ok() && !reserved.ok() ? 1 : 0;
      if (!dynamic.ok() || comm != comm_mode::parallel) return;
      const auto sim = simulate(g, model, c, std::span<const device_id>(dynamic.placement.device),
                                {.policy = ready_policy::strict_order, .priority = dynamic.placement.order});
      INFO(sim.outcome.message);
      REQUIRE(sim.ok());
      CHECK(sim.schedule.start == dynamic.schedule.start);
      CHECK(sim.schedule.finish == dynamic.schedule.finish);
      ++replayed;
    };
    run("m-ETF", etf_runs, [&](memory_accounting a) { return m_etf(g, model, c, {.accounting = a}); });
    run("Critical Path", cp_runs, [&](memory_accounting a) {
      return critical_path_schedule(g, model, c, {.respect_memory = true, .accounting = a});
    });
    run("HEFT", heft_runs,
        [&](memory_accounting a) { return heft(g, model, c, {.respect_memory = true, .accounting = a}); });
  }
  for (const auto& [name, t] :
       {std::pair{std::string("m-ETF"), etf_runs}, std::pair{std::string("Critical Path"), cp_runs},
        std::pair{std::string("HEFT"), heft_runs}}) {
    MESSAGE(name << ": reserved fits " << t.reserved_ok << ", dynamic fits " << t.dynamic_ok << " of 300 ("
                 << t.only_dynamic << " only dynamically)");
    CHECK(t.dynamic_ok >= t.reserved_ok);
    CHECK(t.only_dynamic > 0);
  }
  CHECK(replayed > 0);
}

TEST_CASE("Inception-V3 training on 4 devices of 3 GiB: m-ETF fits with dynamic accounting") {
  const std::filesystem::path file = std::string(GANTRY_SOURCE_DIR) + "/examples/graphs/inception_v3.json.gz";
  if (!std::filesystem::exists(file)) {
    MESSAGE("skipped: " << file.string() << " is missing");
    return;
  }
  const graph g = read_graph(file);
  const auto c = cluster::uniform(4, byte_count{3} << 30);
  const graph_model model(g, c);
  // The static rule runs out of memory here although one device's peak is 4.13 GiB.
  CHECK(m_etf(g, model, c, {.accounting = memory_accounting::reserved}).placement.outcome.code ==
        status::out_of_memory);
  const auto r = m_etf(g, model, c);
  require_valid(r, g, model, c);
  for (device_id d = 0; d < 4; ++d) CHECK(r.schedule.peak_memory[d] <= c.capacity(d));
}

namespace {
// A treap of integer keys whose nodes keep their subtree's size and key sum.
struct counted {
  int key, copies, size, sum;
};
struct counted_traits {
  using value_type = counted;
  static int key(const counted& x) { return x.key; }
  static void pull(counted& x, const counted* left, const counted* right) {
    x.size = x.copies + (left ? left->size : 0) + (right ? right->size : 0);
    x.sum = x.key * x.copies + (left ? left->sum : 0) + (right ? right->sum : 0);
  }
};
// In-order keys of subtree t, checking its heap order and summaries on the way.
void walk(const detail::treap<counted_traits>& tree, std::uint32_t t, std::vector<int>& keys) {
  if (t == detail::treap<counted_traits>::nil) return;
  walk(tree, tree.left(t), keys);
  for (int i = 0; i < tree.node(t).copies; ++i) keys.push_back(tree.node(t).key);
  walk(tree, tree.right(t), keys);
  const auto* l = tree.at(tree.left(t));
  const auto* r = tree.at(tree.right(t));
  CHECK(tree.node(t).size == tree.node(t).copies + (l ? l->size : 0) + (r ? r->size : 0));
}
}  // namespace

TEST_CASE("treap: ordered keys, summaries kept through inserts, combines and erasures, slots reused") {
  std::mt19937 random(7);
  detail::treap<counted_traits> tree;
  std::multiset<int> truth;
  for (int step = 0; step < 3000; ++step) {
    const int key = static_cast<int>(random() % 200);
    if (random() % 3 == 0) {
      tree.erase(key);  // removes the node, with every copy it combined
      truth.erase(key);
    } else {
      tree.insert_or_combine({key, 1, 0, 0}, [](counted& at, const counted&) { ++at.copies; });
      truth.insert(key);
    }
    if (step % 100 == 0 || step == 2999) {
      std::vector<int> keys;
      walk(tree, tree.root(), keys);
      CHECK(keys == std::vector<int>(truth.begin(), truth.end()));
      const auto* root = tree.at(tree.root());
      CHECK((root ? root->size : 0) == static_cast<int>(truth.size()));
      int sum = 0;
      for (const int k : truth) sum += k;
      CHECK((root ? root->sum : 0) == sum);
    }
  }
  // Without combining, equal keys are separate nodes in insertion order.
  detail::treap<counted_traits> plain;
  for (int i = 0; i < 10; ++i) plain.insert({i % 3, 1, 0, 0});
  CHECK(plain.size() == 10);
  plain.erase(1);
  CHECK(plain.size() == 9);
  plain.insert({5, 1, 0, 0});  // into the erased slot
  CHECK(plain.size() == 10);
  std::vector<int> keys;
  walk(plain, plain.root(), keys);
  CHECK(keys == std::vector<int>{0, 0, 0, 0, 1, 1, 2, 2, 2, 5});
  plain.clear();
  CHECK(plain.empty());
}

TEST_CASE("memory_timeline: peaks over ranges, before and after the treap is built") {
  // Held: 5 over [1, 4), 3 over [2, 3), 4 over [3, 6); frees at a time come before allocations there.
  detail::memory_timeline t;
  t.add(1, 5);
  t.add(4, -5);
  t.add(2, 3);
  t.add(3, -3);
  t.add(3, 4);
  t.add(6, -4);
  CHECK(t.ceiling() == 12);  // only logged so far: every allocation counted
  CHECK(t.peak_from(0) == 9);
  CHECK(t.peak_from(3.5) == 9);
  CHECK(t.peak_from(4) == 4);
  CHECK(t.peak_from(6) == 0);
  CHECK(t.peak_from(7) == 0);
  CHECK(t.peak(0, 1) == 0);
  CHECK(t.peak(0, 2) == 5);
  CHECK(t.peak(2, 3) == 8);
  CHECK(t.peak(3, 4) == 9);
  CHECK(t.peak(4, 10) == 4);
  CHECK(t.ceiling() == 9);  // exact once built
  CHECK(t.peak_from(2.5) == 9);
  CHECK(t.peak_from(4) == 4);
  t.add(0, 2);  // persistent-like: from 0 on
  CHECK(t.peak(5, 6) == 6);
  CHECK(t.peak(6, 100) == 2);
  t.clear();
  CHECK(t.peak(0, 1) == 0);
  CHECK(t.ceiling() == 0);
}

TEST_CASE("memory_ledger: a holding is freed at the latest end of its owner and readers, after the last read") {
  // Two vertices, one copy. Output of 0 ends at 3 with two readers: one done at 5, one at 4 (it
  // stays until 5). Output of 1 has no reader: free at its own end. The copy is kept open by one
  // reader while others are done without being counted (extend), as the engine does with caching.
  detail::memory_ledger<> ledger;
  ledger.reset(2);
  const auto out0 = ledger.output(0), out1 = ledger.output(1);
  ledger.take(out0, 3, 2);
  ledger.take(out1, 2, 0);
  CHECK(ledger.readers(out1) == 0);
  CHECK(ledger.end(out1) == 2);
  CHECK_FALSE(ledger.read(out0, 5));
  CHECK(ledger.readers(out0) == 1);
  CHECK(ledger.read(out0, 4));
  CHECK(ledger.end(out0) == 5);
  const auto copy = ledger.add_copy();
  CHECK(copy == ledger.copy(0));
  CHECK(ledger.copies() == 1);
  ledger.take(copy, 6, 1);
  ledger.extend(copy, 9);
  ledger.extend(copy, 7);
  CHECK(ledger.readers(copy) == 1);
  CHECK(ledger.read(copy, 0));
  CHECK(ledger.end(copy) == 9);
  // Readers announced one by one (the event loop counts a copy's consumers as it hands an output).
  const auto counted = ledger.add_copy();
  ledger.expect(counted);
  ledger.expect(counted);
  CHECK_FALSE(ledger.read(counted, 1));
  CHECK(ledger.read(counted, 2));
  CHECK(ledger.end(counted) == 2);
  // Counting only (the event loop frees at once): the same answers, and no ends to ask for.
  detail::memory_ledger<false> counts;
  counts.reset(1);
  counts.take(counts.output(0), 3, 2);
  CHECK_FALSE(counts.read(counts.output(0), 5));
  CHECK(counts.read(counts.output(0), 4));
  static_assert(!keeps_ends<detail::memory_ledger<false>>);
  static_assert(keeps_ends<detail::memory_ledger<>>);
}

TEST_CASE("free_memory is exact and changes no decision, asked every step or never") {
  // A policy may ask every device's free memory at every step (DOPPLER's features do): the first
  // question builds the device's timeline early. Schedules must be identical to a run that never
  // asks, and at the end free_memory is capacity less the peak of the schedule (parallel links:
  // the engine counts a received copy from its start, as the schedule does).
  std::size_t asked = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed * 104729);
    const comm_mode comm = seed % 3 == 0   ? comm_mode::sequential
                           : seed % 3 == 1 ? comm_mode::parallel
                                           : comm_mode::duplex;
    const auto n = static_cast<std::size_t>(draw(rng, 4, 30));
    const graph g = random_layered_dag({.vertices = n,
                                        .layers = static_cast<std::size_t>(draw(rng, 2, 6)),
                                        .mean_out_degree = 1.5,
                                        .min_bytes = 1 << 10,
                                        .max_bytes = 1 << 20,
                                        .max_persistent = 1 << 19,
                                        .max_temporary = 1 << 20,
                                        .seed = seed});
    const std::size_t m = 3;
    byte_count total = 0, largest = 0;
    for (vertex_id v = 0; v < n; ++v) {
      total += g[v].persistent + g[v].output + g[v].temporary;
      largest = std::max(largest, g[v].persistent + g[v].output + g[v].temporary);
    }
    const auto c = cluster::uniform(m, largest + total / (2 * m), link_model{.latency = 2e-4, .bandwidth = 2e8}, comm);
    const graph_model model(g, c);
    CAPTURE(seed);
    // Both bare runs: m_etf() would retry a run that fails within less memory.
    list_scheduler never(g, model, c, etf_policy{}, {.respect_memory = true});
    const auto quiet = never.run();
    list_scheduler asking(g, model, c, etf_policy{}, {.respect_memory = true});
    while (asking.step())
      for (device_id d = 0; d < m; ++d) {
        CHECK(asking.free_memory(d) <= c.capacity(d));
        ++asked;
      }
    const auto r = asking.result();
    CHECK(r.placement.outcome.code == quiet.placement.outcome.code);
    CHECK(r.placement.device == quiet.placement.device);
    CHECK(r.schedule.start == quiet.schedule.start);
    if (!r.ok()) continue;
    for (device_id d = 0; d < m; ++d) {
      if (comm == comm_mode::parallel) CHECK(asking.free_memory(d) == c.capacity(d) - r.schedule.peak_memory[d]);
      else CHECK(asking.free_memory(d) <= c.capacity(d) - r.schedule.peak_memory[d]);
    }
  }
  CHECK(asked > 500);
}

TEST_CASE("a colocation group keeps room for what its members hold at once, not for their sum") {
  // a -> b -> c -> d, one group, 100 output bytes each, one device of 250 bytes. Run in order, the
  // device holds two outputs at once (a reader and its input): 200. The static rule reserves the
  // group's 400 when a is placed and fails.
  graph g;
  for (const char* name : {"a", "b", "c", "d"})
    g.add_vertex(vertex_properties{.name = name, .compute = 0.01, .output = 100, .group = "chain"});
  for (vertex_id v = 0; v + 1 < 4; ++v) g.add_edge(v, v + 1, 100);
  const auto c = one_device(250);
  const graph_model model(g, c);
  const list_options grouped{.respect_memory = true, .group = colocation_groups(g)};
  const auto etf_run = m_etf(g, model, c, grouped);
  require_valid(etf_run, g, model, c);
  CHECK(etf_run.schedule.peak_memory[0] == 200);
  require_valid(critical_path_schedule(g, model, c, grouped), g, model, c);
  require_valid(heft(g, model, c, grouped), g, model, c);
  auto reserved = grouped;
  reserved.accounting = memory_accounting::reserved;
  CHECK(m_etf(g, model, c, reserved).placement.outcome.code == status::out_of_memory);

  // 199 bytes cannot hold a reader and its input: the first member is refused, the message says
  // what the group keeps besides it (b's output while b runs, after a's is freed: 100).
  const auto tight = one_device(199);
  const graph_model tight_model(g, tight);
  const auto failed = m_etf(g, tight_model, tight, grouped);
  REQUIRE(failed.placement.outcome.code == status::out_of_memory);
  INFO(failed.placement.outcome.message);
  CHECK(failed.placement.outcome.vertex == 0);
  CHECK(failed.placement.outcome.message.find("and 100 B kept for the rest of its group of 4 vertices") !=
        std::string::npos);
}

TEST_CASE("a group's reserve counts the copies its members receive, so a bound member is not stranded") {
  // x on device 0 (fixed) feeds b; a -> b in one group on device 1 of 300 bytes. b needs a's output
  // (100), its own (100) and a copy of x's output (90) at once: 290. The reserve kept when a is
  // placed covers b's copy, and a is placed only where b fits too.
  graph g;
  const auto x = g.add_vertex(vertex_properties{.name = "x", .compute = 0.01, .output = 90});
  const auto a = g.add_vertex(vertex_properties{.name = "a", .compute = 0.01, .output = 100, .group = "ab"});
  const auto b = g.add_vertex(vertex_properties{.name = "b", .compute = 0.01, .output = 100, .group = "ab"});
  g.add_edge(x, b, 90);
  g.add_edge(a, b, 100);
  const cluster c({{.name = "gpu0", .capacity = 100}, {.name = "gpu1", .capacity = 300}},
                  link_model{.latency = 0, .bandwidth = 1e9});
  const graph_model model(g, c);
  list_options options{.respect_memory = true, .group = colocation_groups(g)};
  options.fixed_device = {0, no_device, no_device};
  const auto r = m_etf(g, model, c, options);
  require_valid(r, g, model, c);
  CHECK(r.placement.device == std::vector<device_id>{0, 1, 1});
  CHECK(r.schedule.peak_memory[1] == 290);
}

TEST_CASE("seeded DAGs with groups on one device: memory-aware list placers fit where Kahn order fits") {
  // The capacity is the peak of the whole graph run in Kahn order on the device; a memory-aware
  // placer must not give up there (it may run it in another order within the same memory).
  std::size_t cases = 0;
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    auto rc = test::make_random_case(seed, comm_mode::parallel, false,
                                     {.seed_factor = 7727, .max_vertices = 30, .groups = true});
    const cluster roomy({{.name = "gpu0", .capacity = unlimited_memory}}, link_model{});
    const graph_model roomy_model(rc.g, roomy);
    const auto kahn = kahn_order(rc.g);
    const auto alone = simulate(rc.g, roomy_model, roomy, std::vector<device_id>(rc.g.vertex_count(), 0),
                                {.policy = ready_policy::strict_order, .priority = kahn});
    REQUIRE(alone.ok());
    const auto c = one_device(alone.schedule.peak_memory[0]);
    const graph_model model(rc.g, c);
    CAPTURE(seed);
    const list_options grouped{.respect_memory = true, .group = colocation_groups(rc.g)};
    require_valid(m_etf(rc.g, model, c, grouped), rc.g, model, c);
    require_valid(critical_path_schedule(rc.g, model, c, grouped), rc.g, model, c);
    require_valid(heft(rc.g, model, c, grouped), rc.g, model, c);
    ++cases;
  }
  CHECK(cases == 2000);
}

TEST_CASE("Baechi's GNMT (569 groups) fits at the one-device peak with every memory-aware list placer") {
  // Each group reserved the sum of its members' bytes before: every placer needed 1.41-1.56 GB per
  // device although one device alone peaks at 918 MB (bench/bench_memory.cpp bisects the minimum).
  const graph g = read_graph(std::string(GANTRY_SOURCE_DIR) + "/tests/data/baechi/gnmt.json.gz");
  const cluster roomy = cluster::uniform(1, unlimited_memory);
  const graph_model roomy_model(g, roomy);
  const auto kahn = kahn_order(g);
  const auto alone = simulate(g, roomy_model, roomy, std::vector<device_id>(g.vertex_count(), 0), {.priority = kahn});
  REQUIRE(alone.ok());
  const byte_count peak = alone.schedule.peak_memory[0];
  CHECK(peak / 1'000'000 == 917);
  for (const comm_mode comm : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
    const auto c = cluster::uniform(4, peak, link_model{.latency = 134e-6, .bandwidth = 5701254275.940706}, comm);
    const graph_model model(g, c);
    const list_options grouped{.respect_memory = true, .group = colocation_groups(g)};
    CAPTURE(to_string(comm));
    require_valid(m_etf(g, model, c, grouped), g, model, c);
    require_valid(critical_path_schedule(g, model, c, grouped), g, model, c);
    require_valid(heft(g, model, c, grouped), g, model, c);
  }
}

namespace {
// A policy that uses device 0 alone: its own choices run out of memory as soon as device 0 is full.
struct device_zero_policy {
  [[nodiscard]] std::string_view name() const { return "device zero"; }
  template <class View>
  [[nodiscard]] std::optional<list_choice> choose(const View& view) {
    for (const vertex_id v : view.ready())
      if (view.fits(v, 0)) return list_choice{v, 0};
    return std::nullopt;
  }
};
// The same, and not copyable: list_schedule() cannot run it again within less memory.
struct device_zero_once : device_zero_policy {
  device_zero_once() = default;
  device_zero_once(const device_zero_once&) = delete;
  device_zero_once(device_zero_once&&) = default;
};
}  // namespace

TEST_CASE("a run whose own choices find no device for a vertex is handed to m-ETF after the placements that fit") {
  // Eight independent vertices with 100 persistent bytes each on four devices of 250: device 0
  // holds two, so the policy fails at its third placement, at every capacity below as well. The
  // hand-off keeps its two placements (on device 0) and m-ETF places the other six, two a device.
  graph g;
  for (int i = 0; i < 8; ++i)
    g.add_vertex(vertex_properties{.name = "v" + std::to_string(i), .compute = 0.01, .persistent = 100});
  const cluster c = cluster::uniform(4, 250);
  const graph_model model(g, c);
  list_scheduler bare(g, model, c, device_zero_policy{}, {.respect_memory = true});
  const list_schedule_result own = bare.run();
  REQUIRE(own.placement.outcome.code == status::out_of_memory);
  REQUIRE(own.steps.size() == 2);
  const auto check = [&](const list_schedule_result& r) {
    REQUIRE_MESSAGE(r.ok(), r.placement.outcome.message);
    REQUIRE(r.etf_from_step);
    CHECK(*r.etf_from_step == 2);
    for (const vertex_id v : own.steps) CHECK(r.placement.device[v] == 0);
    std::vector<std::size_t> per_device(4, 0);
    for (const device_id d : r.placement.device) ++per_device[d];
    CHECK(per_device == std::vector<std::size_t>{2, 2, 2, 2});
    CHECK(r.placement.outcome.message.find("placed the other 6 vertices as m-ETF would instead, keeping its first 2 "
                                           "placements") != std::string::npos);
    CHECK(validate(r.schedule, g, model, c).ok());
  };
  check(list_schedule(g, model, c, device_zero_policy{}, {.respect_memory = true}));
  check(list_schedule(g, model, c, device_zero_once{}, {.respect_memory = true}));
  // Where m-ETF cannot fit either (nine such vertices), nothing is handed off; one device cannot
  // hold them, so the run fails, naming the vertex.
  g.add_vertex(vertex_properties{.name = "v8", .compute = 0.01, .persistent = 100});
  const graph_model more(g, c);
  const list_schedule_result none = list_schedule(g, more, c, device_zero_policy{}, {.respect_memory = true});
  CHECK(none.placement.outcome.code == status::out_of_memory);
  CHECK(!none.etf_from_step);
  CHECK(!m_etf(g, more, c).ok());
  // Without memory nothing is handed off: device 0 takes everything.
  const list_schedule_result roomy = list_schedule(g, more, c, device_zero_policy{});
  REQUIRE(roomy.ok());
  CHECK(!roomy.etf_from_step);
  CHECK(roomy.steps.empty());
}

namespace {
// Records the capacities its view gives, and checks the view's device-set type in every run.
struct watch {
  std::vector<byte_count>* seen;
  [[nodiscard]] std::string_view name() const { return "watch"; }
  template <class View>
  std::optional<list_choice> choose(const View& view) {
    static_assert(std::is_same_v<std::decay_t<decltype(view.devices())>, capacity_scaled<cluster>>);
    if (seen->empty())
      for (device_id d = 0; d < view.device_count(); ++d) seen->push_back(view.devices().capacity(d));
    if (view.ready().empty()) return std::nullopt;
    return list_choice{view.ready().front(), 1};
  }
};
}  // namespace

TEST_CASE("capped(): a capped view capped again keeps its type and the smaller cap; list_schedule's view is one") {
  const cluster devices({{.name = "a", .capacity = 1000}, {.name = "b"}, {.name = "c", .capacity = 3000}},
                        link_model{.latency = 1e-5, .bandwidth = 1e9});
  const auto whole = capped(devices);
  static_assert(std::is_same_v<decltype(whole), const capacity_scaled<cluster>>);
  CHECK(whole.capacity(0) == 1000);
  CHECK(whole.capacity(1) == unlimited_memory);
  CHECK(whole.capacity(2) == 3000);
  CHECK(whole[2].name == "c");
  const auto at_2000 = capped(whole, 2000);
  static_assert(std::is_same_v<decltype(at_2000), const capacity_scaled<cluster>>);  // not a view of a view
  static_assert(std::is_same_v<capped_t<capacity_scaled<cluster>>, capacity_scaled<cluster>>);
  CHECK(at_2000.capacity(0) == 1000);
  CHECK(at_2000.capacity(1) == unlimited_memory);
  CHECK(at_2000.capacity(2) == 2000);
  const auto at_1500 = capped(at_2000, 5000).capped(1500);  // a larger cap leaves the smaller one
  CHECK(at_1500.capacity(2) == 1500);
  // Half of each capacity, then capped: the halving stays.
  const capacity_scaled<cluster> half(devices, 8);
  CHECK(capped(half, 1200).capacity(2) == 1200);
  CHECK(capped(half, 1600).capacity(2) == 1500);
  CHECK(capped(half, 1600).capacity(0) == 500);

  // Every run of list_schedule, the first one too, gives the policy the same capped view type (watch
  // asserts it), with the devices' own capacities.
  graph g;
  const auto x = g.add_vertex({.name = "x", .compute = 1.0, .output = 10});
  const auto y = g.add_vertex({.name = "y", .compute = 1.0});
  g.add_edge(x, y, 10);
  const graph_model model(g, devices);
  std::vector<byte_count> seen;
  const auto result = list_schedule(g, model, devices, watch{&seen}, {.respect_memory = true});
  REQUIRE(result.ok());
  CHECK(seen == std::vector<byte_count>{1000, unlimited_memory, 3000});
  CHECK(result.placement.device == std::vector<device_id>{1, 1});
  CHECK(validate(result.schedule, g, model, devices).ok());
}

TEST_CASE("m-ETF whose static-level ties run out of memory places again with ties in Kahn order") {
  // 2,000 vertices in layers of 100, two edges out of each, on 8 devices of 60% of the peak of
  // the graph run in Kahn order on one device: by static level the long paths run ahead while
  // some vertex of an early layer waits, and memory fills with the tensors its descendants read.
  const graph g =
      random_layered_dag({.vertices = 2000, .layers = 20, .mean_out_degree = 2.0, .max_layer_skip = 1, .seed = 7});
  const cluster roomy = one_device(unlimited_memory);
  const auto alone = simulate(g, graph_model(g, roomy), roomy, std::vector<device_id>(g.vertex_count(), 0),
                              {.policy = ready_policy::strict_order, .priority = kahn_order(g)});
  REQUIRE(alone.ok());
  for (const double share : {0.6, 1.0}) {
    CAPTURE(share);
    const auto capacity = static_cast<byte_count>(share * static_cast<double>(alone.schedule.peak_memory[0]));
    const cluster c = cluster::uniform(8, capacity, {.latency = 1e-5, .bandwidth = 12e9});
    const graph_model model(g, c);
    const list_options once{.respect_memory = true, .memory_retries = 0, .one_device_answer = false};
    const auto by_level = list_schedule(g, model, c, etf_policy("m-ETF", etf_tie_break::static_level), once);
    REQUIRE(by_level.placement.outcome.code == status::out_of_memory);
    const auto kahn = list_schedule(g, model, c, etf_policy("m-ETF", etf_tie_break::kahn_order), once);
    require_valid(kahn, g, model, c);
    // m_etf() runs the first, then the second within the same memory, and says so.
    const auto placed = m_etf(g, model, c, once);
    require_valid(placed, g, model, c);
    CHECK(placed.placement.device == kahn.placement.device);
    CHECK(placed.placement.outcome.message.starts_with(by_level.placement.outcome.message));
    CHECK(placed.placement.outcome.message.ends_with("; placed with ties in Kahn order instead"));
    // Memory is what made the difference: without it, both tie rules reach nearly the same makespan.
    const auto free_run = etf(g, model, c);
    REQUIRE(free_run.ok());
    CHECK(placed.schedule.makespan <= 1.01 * free_run.schedule.makespan);
  }
}
