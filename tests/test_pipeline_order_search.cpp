// The cut search over every ideal of a training graph: the lattice of ideals, the best cuts against
// brute force over every topological order, a model whose best cut none of the fixed and random
// orders holds, and the fallback to those orders when the search stops at its caps.
#include <gantry/io/import_pipedream.hpp>
#include <gantry/pipeline/ideals.hpp>
#include <gantry/pipeline/order_search.hpp>
#include <gantry/pipeline/plan.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace gantry;

namespace {

// A training graph of n forward vertices (i -> j, i < j, now and then twice) with a backward vertex
// for most of them.
graph random_training_graph(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  const auto draw = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
  graph g;
  std::vector<vertex_id> forward;
  for (std::size_t i = 0; i < n; ++i)
    forward.push_back(g.add_vertex({.name = "f" + std::to_string(i),
                                    .compute = static_cast<double>(draw(1, 6)) / 2,
                                    .persistent = draw(0, 3) * 100,
                                    .output = draw(1, 40) * 25}));
  const std::uint64_t density = draw(15, 60);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (draw(0, 99) < density) {
        g.add_edge(forward[i], forward[j], g[forward[i]].output);
        if (draw(0, 9) == 0) g.add_edge(forward[i], forward[j], g[forward[i]].output);
      }
  for (std::size_t i = 0; i < n; ++i) {
    if (draw(0, 3) == 0) continue;
    const auto b = g.add_vertex({.name = "b" + std::to_string(i), .compute = static_cast<double>(draw(1, 8)) / 2});
    g.set_forward(b, forward[i]);
    g.add_edge(forward[i], b, g[forward[i]].output);
  }
  return g;
}

// Every topological order of the forward vertices.
void for_each_order(const graph& g, const std::function<void(const std::vector<vertex_id>&)>& visit) {
  std::vector<vertex_id> forwards;
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (g.forward_of(v) == no_vertex) forwards.push_back(v);
  std::vector<int> waiting(g.vertex_count(), 0);
  for (edge_id e = 0; e < g.edge_count(); ++e)
    if (g.forward_of(g.target(e)) == no_vertex) ++waiting[g.target(e)];
  std::vector<bool> taken(g.vertex_count(), false);
  std::vector<vertex_id> order;
  const std::function<void()> extend = [&] {
    if (order.size() == forwards.size()) {
      visit(order);
      return;
    }
    for (const auto v : forwards) {
      if (taken[v] || waiting[v] != 0) continue;
      taken[v] = true;
      order.push_back(v);
      g.for_each_out_edge(v, [&](edge_id e) { --waiting[g.target(e)]; });
      extend();
      g.for_each_out_edge(v, [&](edge_id e) { ++waiting[g.target(e)]; });
      order.pop_back();
      taken[v] = false;
    }
  };
  extend();
}

// Weights counted twice (gradients), parameters once, as `gantry pipeline` prepares its chains.
void scale(chain& c) {
  for (auto& x : c.layers) {
    x.parameters = x.weights;
    x.weights *= 2;
  }
}

constexpr double none = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("Ideals: a chain, an antichain, a diamond, and a cycle") {
  graph chain_graph;
  for (int i = 0; i < 5; ++i) chain_graph.add_vertex("v" + std::to_string(i), 1.0);
  for (vertex_id v = 0; v + 1 < 5; ++v) chain_graph.add_edge(v, v + 1);
  const auto along = forward_ideals(chain_graph);
  CHECK(along.complete());
  CHECK(along.size() == 6);
  for (std::size_t k = 0; k < along.size(); ++k) CHECK(along.members(k) == k);

  graph apart;
  for (int i = 0; i < 6; ++i) apart.add_vertex("v" + std::to_string(i), 1.0);
  const auto all = forward_ideals(apart);
  CHECK(all.size() == 64);
  std::size_t covers = 0;
  for (std::size_t k = 0; k < all.size(); ++k) covers += all.covers(k).size();
  CHECK(covers == 6 * 32);  // each vertex is added to each of the 32 sets without it
  CHECK_FALSE(forward_ideals(apart, {.max_ideals = 10}).complete());

  //  x -> a -> j, x -> b -> j: {}, {x}, {x,a}, {x,b}, {x,a,b}, all
  graph diamond;
  const auto x = diamond.add_vertex("x", 1.0), a = diamond.add_vertex("a", 1.0), b = diamond.add_vertex("b", 1.0),
             j = diamond.add_vertex("j", 1.0);
  for (const auto& [u, v] : {std::pair{x, a}, {x, b}, {a, j}, {b, j}}) diamond.add_edge(u, v);
  const auto d = forward_ideals(diamond);
  CHECK(d.size() == 6);
  // Weights (work-free sources) add no ideals and no order positions: each travels with its reader.
  graph weighted = diamond;
  for (const auto v : {a, b, j}) {
    const auto w = weighted.add_vertex(vertex_properties{.name = "w" + std::to_string(v), .persistent = 4});
    weighted.add_edge(w, v);
  }
  CHECK(forward_ideals(weighted).size() == 6);
  for (const auto& order : candidate_orders(weighted)) CHECK(order.size() == 4);
  superset_walker walk(d);
  std::size_t above_empty = 0, above_x = 0;
  walk(0, [&](std::size_t) { ++above_empty; });
  walk(1, [&](std::size_t) { ++above_x; });
  CHECK(above_empty == 5);
  CHECK(above_x == 4);
  // The ideal {x, b} listed first: its members lead the order.
  std::uint32_t xb = 0;
  for (std::size_t k = 0; k < d.size(); ++k)
    if (d.members(k) == 2 && d.contains(k, 2)) xb = static_cast<std::uint32_t>(k);
  const std::uint32_t nested[] = {xb};
  CHECK(linear_extension(d, nested) == std::vector<vertex_id>{x, b, a, j});

  graph cycle;
  cycle.add_vertex("p", 1.0);
  cycle.add_vertex("q", 1.0);
  cycle.add_edge(0, 1);
  cycle.add_edge(1, 0);
  CHECK_THROWS_AS((void)forward_ideals(cycle), not_a_dag);
}

TEST_CASE("The best cuts equal the best plan over every topological order (brute force, random DAGs)") {
  const link_model link{0.1, 500};
  struct target_case {
    cut_target target;
    bool exact;
  };
  std::size_t compared = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const std::size_t n = 2 + seed % 7;  // 2 to 8 forward vertices
    const graph g = random_training_graph(seed, n);
    CAPTURE(seed);
    // A memory limit that binds for some partitions: the largest layer twice, plus a third of the rest.
    chain kahn = chain_from_graph(g);
    scale(kahn);
    byte_count largest = 0, total = 0;
    for (const auto& x : kahn.layers) {
      largest = std::max(largest, x.weights + 2 * x.activation);
      total += x.weights + x.activation;
    }
    const byte_count capacity = largest + total / 3;
    const std::vector<target_case> cases = {
        {{.workers = 2}, true},
        {{.workers = 3}, true},
        {{.workers = 3, .comm = {.link = link}}, true},
        {{.workers = 3, .comm = {.link = link, .overlap = transfer_overlap::on_processors}, .max_replicas = 3}, true},
        {{.workers = 4, .max_replicas = 2}, true},
        {{.workers = 3, .capacity = capacity, .comm = {.link = link}, .max_replicas = 2}, true},
        {{.workers = 3, .capacity = capacity}, false},  // 1F1B*'s memory: the orders stay candidates
    };
    for (std::size_t t = 0; t < cases.size(); ++t) {
      CAPTURE(t);
      const auto& target = cases[t].target;
      const auto plan = [&](const chain& c) {
        return plan_pipeline(c, target.workers, target.capacity,
                             {.comm = target.comm, .max_replicas = target.max_replicas});
      };
      // comm_aware_partition's rule, the one the search optimises, and the planner's period.
      double brute_rule = none, brute_plan = none;
      for_each_order(g, [&](const std::vector<vertex_id>& order) {
        chain c = chain_from_graph(g, {.order = order});
        scale(c);
        const auto rule = comm_aware_partition(c, target.workers, target.capacity,
                                               {.comm = target.comm, .max_replicas = target.max_replicas});
        if (rule.ok()) brute_rule = std::min(brute_rule, rule.period);
        if (const auto p = plan(c); p.ok()) brute_plan = std::min(brute_plan, p.period());
      });
      const auto cuts = best_cut_order(g, target, scale);
      REQUIRE(cuts.complete);
      if (brute_rule == none) {
        CHECK(cuts.order.empty());
      } else {
        CHECK(cuts.period == doctest::Approx(brute_rule).epsilon(1e-12));
        // The order's own chain plans that period.
        chain c = chain_from_graph(g, {.order = cuts.order});
        scale(c);
        const auto again = comm_aware_partition(c, target.workers, target.capacity,
                                                {.comm = target.comm, .max_replicas = target.max_replicas});
        REQUIRE(again.ok());
        CHECK(again.period == doctest::Approx(brute_rule).epsilon(1e-12));
      }
      auto [found, best] = best_over_orders(g, plan, scale, {.cuts = target});
      CHECK(found.exact == cases[t].exact);
      REQUIRE(found.cuts);
      if (cases[t].exact) {
        CHECK(found.orders_tried == 1);
        if (brute_plan == none) {
          CHECK_FALSE(best.ok());
        } else {
          REQUIRE(best.ok());
          CHECK(best.period() == doctest::Approx(brute_plan).epsilon(1e-12));
          ++compared;
        }
      } else {
        // Not exact: never worse than the orders alone, never better than every order.
        auto [plain_found, plain] = best_over_orders(g, plan, scale);
        CHECK(found.orders_tried >= plain_found.orders_tried);
        if (plain.ok()) {
          REQUIRE(best.ok());
          CHECK(best.period() <= plain.period());
          CHECK(best.period() >= brute_plan * (1 - 1e-12));
        }
      }
      // The found order is one of the graph's topological orders, and the chain is its chain.
      CHECK(found.layers.size() == n);
      CHECK(found.order.size() == n);
    }
  }
  CHECK(compared >= 200);
}

TEST_CASE("Six skip branches: the best cut is in none of the fixed and random orders") {
  //        +-> a1 -> a2 -+
  //   x ---+   ...       +--> join      two workers: the best cut takes every first half (period 43);
  //        +-> f1 -> f2 -+              the orders tried before each leave a second half before a first
  graph g;
  const auto x = g.add_vertex({.name = "x", .compute = 1, .output = 10});
  std::vector<vertex_id> firsts;
  std::vector<vertex_id> seconds_half;
  for (char branch = 'a'; branch <= 'f'; ++branch) {
    firsts.push_back(g.add_vertex({.name = std::string(1, branch) + "1", .compute = 7, .output = 10}));
    seconds_half.push_back(g.add_vertex({.name = std::string(1, branch) + "2", .compute = 2, .output = 10}));
    g.add_edge(x, firsts.back(), 10);
    g.add_edge(firsts.back(), seconds_half.back(), 10);
  }
  const auto join = g.add_vertex({.name = "join", .compute = 31});
  for (const auto v : seconds_half) g.add_edge(v, join, 10);
  const auto plan = [](const chain& c) { return plan_pipeline(c, 2, unlimited_memory); };
  const auto none_prepared = [](chain&) {};
  auto [old_found, old_best] = best_over_orders(g, plan, none_prepared);
  REQUIRE(old_best.ok());
  CHECK(old_found.orders_tried >= 3);  // Kahn's, two depth-first and five random ones, repeats dropped
  CHECK(old_best.period() >= 44);
  auto [found, best] = best_over_orders(g, plan, none_prepared, {.cuts = cut_target{.workers = 2}});
  REQUIRE(best.ok());
  CHECK(found.exact);
  CHECK(found.cuts->ideals == 1 + 3 * 3 * 3 * 3 * 3 * 3 + 1);  // {}, x with a prefix of each branch, all
  CHECK(best.period() == doctest::Approx(43));
  // The first stage is x and the six first halves.
  REQUIRE(best.partition.partition.stage_count() == 2);
  CHECK(best.partition.partition.first[1] == 7);
  std::vector<vertex_id> head(found.order.begin(), found.order.begin() + 7);
  std::sort(head.begin(), head.end());
  std::vector<vertex_id> expected{x};
  expected.insert(expected.end(), firsts.begin(), firsts.end());
  CHECK(head == expected);
  // Deterministic: the same order again.
  auto [again, again_best] = best_over_orders(g, plan, none_prepared, {.cuts = cut_target{.workers = 2}});
  CHECK(again.order == found.order);
  // The full family plus the cuts' order when the target is not exact for the planner (memory with
  // no links nor replicas): the cuts' order still wins.
  auto [limited, limited_best] =
      best_over_orders(g, plan, none_prepared, {.cuts = cut_target{.workers = 2, .capacity = 1 << 20}});
  CHECK_FALSE(limited.exact);
  CHECK(limited.orders_tried == old_found.orders_tried + 1);
  CHECK(limited_best.period() == doctest::Approx(43));
}

TEST_CASE("Past its caps the cut search stops and the fixed and random orders plan alone") {
  // Twelve independent layers: 4,096 ideals and 3^12 pairs of nested ones.
  graph g;
  for (int i = 0; i < 12; ++i) g.add_vertex({.name = "v" + std::to_string(i), .compute = 1.0 + i % 3, .output = 10});
  const auto plan = [](const chain& c) { return plan_pipeline(c, 3, unlimited_memory, {.max_replicas = 2}); };
  const auto none_prepared = [](chain&) {};
  const cut_target target{.workers = 3, .max_replicas = 2};
  auto [plain_found, plain] = best_over_orders(g, plan, none_prepared);
  REQUIRE(plain.ok());
  auto [all, all_best] = best_over_orders(g, plan, none_prepared, {.cuts = target});
  CHECK(all.exact);
  CHECK(all.cuts->ideals == 4096);
  CHECK(all_best.period() == doctest::Approx(8));  // 24 s of work on 3 workers
  CHECK(plain.period() >= all_best.period());
  const std::uint64_t cells = 4096 * 3 * 2;  // ideals × workers × replicas
  for (const auto limits : {cut_search_options{.max_ideals = 100},
                            cut_search_options{.max_steps = 64 * cells},         // the tables fit, the pairs do not
                            cut_search_options{.max_steps = 64 * cells - 1}}) {  // the tables do not fit
    auto [found, best] = best_over_orders(g, plan, none_prepared, {.cuts = target, .cut_limits = limits});
    REQUIRE(found.cuts);
    CHECK_FALSE(found.cuts->complete);
    CHECK(found.cuts->order.empty());
    CHECK_FALSE(found.exact);
    CHECK(found.orders_tried == plain_found.orders_tried);
    CHECK(found.order == plain_found.order);
    REQUIRE(best.ok());
    CHECK(best.period() == plain.period());
  }
  CHECK(best_cut_order(g, target, none_prepared, {.max_ideals = 100}).ideals == 100);
  // No target: the orders alone, as before.
  CHECK_FALSE(plain_found.cuts);
  CHECK_FALSE(plain_found.exact);
}

TEST_CASE("PipeDream's resnet50 on 8 workers: every cut beats the orders' 0.059091 s") {
  const auto g =
      read_graph_pipedream(std::string(GANTRY_TEST_DATA_DIR) + "/pipedream/resnet50.txt.gz", {.zero_input_time = true});
  const auto plan = [](const chain& c) { return plan_pipeline(c, 8, unlimited_memory); };
  auto [old_found, old_best] = best_over_orders(g, plan, [](chain&) {});
  auto [found, best] = best_over_orders(g, plan, [](chain&) {}, {.cuts = cut_target{.workers = 8}});
  REQUIRE(best.ok());
  CHECK(found.exact);
  CHECK(found.cuts->ideals == 241);  // the input, work-free with zero_input_time, travels with conv1
  CHECK(old_best.period() == doctest::Approx(0.059091).epsilon(1e-5));
  CHECK(best.period() == doctest::Approx(0.056684).epsilon(1e-5));
}
