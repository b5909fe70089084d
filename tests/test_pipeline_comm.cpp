// Communication and replicated stages in the partition search (PipeDream's planner on the Euro-Par
// 2021 chain model, §3.1: a transfer is one more stage of time 2·a/β): hand-worked chains, brute
// force over every partition and replica count, and every resulting pattern unrolled and validated.
#include <gantry/io/import_pipedream.hpp>
#include <gantry/pipeline/comm_partition.hpp>
#include <gantry/pipeline/gpipe.hpp>
#include <gantry/pipeline/k_periodic.hpp>
#include <gantry/pipeline/one_f_one_b.hpp>
#include <gantry/pipeline/one_f_one_b_star.hpp>
#include <gantry/pipeline/order_search.hpp>
#include <gantry/pipeline/partition.hpp>
#include <gantry/pipeline/plan.hpp>
#include <gantry/pipeline/unroll.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

using namespace gantry;

namespace {

std::uint64_t draw(std::mt19937_64& rng, std::uint64_t low, std::uint64_t high) {
  return low + rng() % (high - low + 1);
}

// Layers a, b, c, d of cost 2 each (1 forward, 1 backward); cuts after them move 400, 1000, 10 bytes.
chain four_layers() {
  chain c;
  c.layers = {{"a", 1, 1, 10, 400}, {"b", 1, 1, 10, 1000}, {"c", 1, 1, 10, 10}, {"d", 1, 1, 10, 1}};
  return c;
}

void require_valid(const chain& c, const pipeline_pattern& p) {
  REQUIRE_MESSAGE(p.ok(), p.outcome.message);
  const auto report = check_pattern(c, p);
  INFO(p.name << ", period " << p.period);
  REQUIRE_MESSAGE(report.ok(), report.to_string());
}

// Every partition of [0, L) into at most `workers` stages and every replica count per stage.
void for_each_plan(std::size_t layers, std::size_t workers, std::size_t max_replicas,
                   const std::function<void(const chain_partition&, const std::vector<std::uint32_t>&)>& visit) {
  for (std::uint32_t mask = 0; mask < (1u << (layers - 1)); ++mask) {
    chain_partition p{{0}};
    for (std::uint32_t l = 1; l < layers; ++l)
      if (mask & (1u << (l - 1))) p.first.push_back(l);
    if (p.stage_count() > workers) continue;
    std::vector<std::uint32_t> replicas(p.stage_count(), 1);
    while (true) {
      std::size_t used = 0;
      for (const auto r : replicas) used += r;
      if (used <= workers) visit(p, replicas);
      std::size_t s = 0;
      while (s < replicas.size() && replicas[s] == max_replicas) replicas[s++] = 1;
      if (s == replicas.size()) break;
      ++replicas[s];
    }
  }
}

}  // namespace

TEST_CASE("A cut pays its transfer: the search avoids the large activation") {
  const auto c = four_layers();
  const pipeline_comm comm{.link = link_model{0, 100}};  // 100 bytes/s
  // Without communication the middle cut (loads 4 | 4) is best.
  CHECK(optimal_contiguous_partition(c, 2).partition == partition_from_sizes({2, 2}));
  // With it, that cut costs 2·1000/100 = 20 s per batch on its link; cutting after a costs loads
  // 2 | 6 and a link of 2·400/100 = 8, after c loads 6 | 2 and 0.2: period 6.
  const auto found = comm_aware_partition(c, 2, unlimited_memory, {.comm = comm});
  REQUIRE_MESSAGE(found.ok(), found.outcome.message);
  CHECK(found.period == doctest::Approx(6));
  CHECK(found.partition == partition_from_sizes({3, 1}));
  REQUIRE(found.stages.size() == 3);  // stage, link, stage
  CHECK(found.stages[1].link);
  CHECK(found.stages[1].load() == doctest::Approx(0.2));
  // On the processors the transfers add to both ends: after c, 6 + 0.2 and 2 + 0.2.
  const auto stalled = comm_aware_partition(
      c, 2, unlimited_memory, {.comm = {.link = link_model{0, 100}, .overlap = transfer_overlap::on_processors}});
  CHECK(stalled.period == doctest::Approx(6.2));
  CHECK(stalled.partition == partition_from_sizes({3, 1}));
  CHECK(stalled.stages.size() == 2);  // no link stages
  // Every schedule on those stages, transfers included, is a valid pattern.
  for (const auto& stages : {found.stages, stalled.stages}) {
    require_valid(c, one_f_one_b_star(c, stages, detail::largest_load(stages)));
    require_valid(c, one_f_one_b(c, stages));
    require_valid(c, gpipe(c, stages));
    require_valid(c, k_periodic(c, stages, 2));
  }
}

TEST_CASE("A replicated stage pays a ring all-reduce of its gradients") {
  // One layer of 8 s, 100 bytes of parameters, links of 100 bytes/s: on 2 workers each takes every
  // other batch and all-reduces 2·(2-1)/2·100/100 = 1 s: (8 + 1) / 2 = 4.5 s per batch.
  chain c;
  c.layers = {{"big", 3, 5, 400, 50, 100}};
  const pipeline_comm comm{.link = link_model{0, 100}};
  CHECK(comm.allreduce(100, 2) == doctest::Approx(1));
  CHECK(comm.allreduce(100, 4) == doctest::Approx(1.5));  // 2·3/4·100/100
  CHECK(comm.allreduce(100, 1) == 0);
  const auto straight = comm_aware_partition(c, 2, unlimited_memory, {.comm = comm});
  CHECK(straight.period == doctest::Approx(8));
  const auto replicated = comm_aware_partition(c, 2, unlimited_memory, {.comm = comm, .max_replicas = 2});
  REQUIRE(replicated.ok());
  CHECK(replicated.period == doctest::Approx(4.5));
  CHECK(replicated.replicas == std::vector<std::uint32_t>{2});
  // Gradients of 1600 bytes cost 16 s to all-reduce: (8 + 16) / 2 > 8, so one worker stays idle.
  c.layers[0].parameters = 1600;
  const auto idle = comm_aware_partition(c, 2, unlimited_memory, {.comm = comm, .max_replicas = 2});
  CHECK(idle.period == doctest::Approx(8));
  CHECK(idle.workers() == 1);
}

TEST_CASE("Memory per worker counts the replicated weights and 1/r of the activations in flight") {
  chain c;
  c.layers = {{"x", 1, 1, 1000, 10, 1}, {"y", 4, 4, 2000, 10, 1}};
  const pipeline_comm comm{.link = link_model{0, 1e6}};
  const auto found = comm_aware_partition(c, 3, unlimited_memory, {.comm = comm, .max_replicas = 2});
  REQUIRE(found.ok());
  CHECK(found.replicas == std::vector<std::uint32_t>{1, 2});
  const auto p = one_f_one_b(c, found.stages);
  // Stage 0 keeps 3 activations (itself, the link, stage 1); stage 1 keeps 1 over its 2 workers.
  CHECK(p.stage_nca[0] == 3);
  CHECK(p.memory[0] == 1000 + 3 * 10);
  CHECK(p.memory[1] == 2000 + 1 * 10);
  // A capacity below a replica's weights refuses the layer outright.
  const auto tight = comm_aware_partition(c, 3, 1500, {.comm = comm, .max_replicas = 2});
  CHECK(tight.outcome.code == status::out_of_memory);
  CHECK(tight.outcome.message.find("'y'") != std::string::npos);
}

TEST_CASE("The search matches brute force over every partition and replica count (seeded chains)") {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 60; ++trial) {
    chain c;
    const auto layers = draw(rng, 1, 6);
    for (std::uint64_t l = 0; l < layers; ++l)
      c.layers.push_back({"l" + std::to_string(l), static_cast<double>(draw(rng, 0, 9)),
                          static_cast<double>(draw(rng, 1, 9)), draw(rng, 1, 50), draw(rng, 1, 400),
                          draw(rng, 0, 300)});
    const std::size_t workers = draw(rng, 1, 4), max_replicas = draw(rng, 1, 3);
    const pipeline_comm comm{
        .link = link_model{static_cast<double>(draw(rng, 0, 2)) * 0.1, static_cast<double>(draw(rng, 50, 500))},
        .overlap = draw(rng, 0, 1) == 0 ? transfer_overlap::link_stages : transfer_overlap::on_processors};
    double brute = std::numeric_limits<double>::infinity();
    for_each_plan(c.size(), workers, max_replicas, [&](const chain_partition& p, const std::vector<std::uint32_t>& r) {
      brute = std::min(brute, detail::largest_load(pipeline_stages(c, p, r, comm)));
    });
    const auto found = comm_aware_partition(c, workers, unlimited_memory, {.comm = comm, .max_replicas = max_replicas});
    INFO("trial " << trial << ", " << c.size() << " layers, " << workers << " workers, r <= " << max_replicas);
    REQUIRE_MESSAGE(found.ok(), found.outcome.message);
    CHECK(found.period == doctest::Approx(brute).epsilon(1e-12));
    CHECK(found.period == doctest::Approx(detail::largest_load(found.stages)).epsilon(1e-12));
    CHECK(found.workers() <= workers);
    for (const auto r : found.replicas) CHECK(r <= max_replicas);
    require_valid(c, one_f_one_b(c, found.stages));
    require_valid(c, one_f_one_b_star(c, found.stages, found.period * 1.5));
    require_valid(c, gpipe(c, found.stages));
  }
}

TEST_CASE("The search matches brute force under a memory limit, with and without links (seeded chains)") {
  // The rule the search states: a stage on r workers with w workers after it holds its weights and
  // ceil((w·(2 with link stages, else 1) + 1) / r) activations.
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 150; ++trial) {
    chain c;
    const auto layers = draw(rng, 1, 7);
    for (std::uint64_t l = 0; l < layers; ++l)
      c.layers.push_back({"l" + std::to_string(l), static_cast<double>(draw(rng, 0, 9)),
                          static_cast<double>(draw(rng, 1, 9)), draw(rng, 1, 50), draw(rng, 1, 40), draw(rng, 0, 300)});
    const std::size_t workers = draw(rng, 1, 6), max_replicas = draw(rng, 1, 3);
    pipeline_comm comm;
    if (draw(rng, 0, 2) > 0)
      comm = {.link = link_model{static_cast<double>(draw(rng, 0, 2)) * 0.1, static_cast<double>(draw(rng, 50, 500))},
              .overlap = draw(rng, 0, 1) == 0 ? transfer_overlap::link_stages : transfer_overlap::on_processors};
    const bool links = comm.link && comm.overlap == transfer_overlap::link_stages;
    const byte_count capacity = draw(rng, 0, 3) == 0 ? unlimited_memory : draw(rng, 40, 400);
    double brute = std::numeric_limits<double>::infinity();
    for_each_plan(c.size(), workers, max_replicas, [&](const chain_partition& p, const std::vector<std::uint32_t>& r) {
      std::size_t after = 0;
      for (const auto x : r) after += x;
      for (std::size_t s = 0; s < p.stage_count(); ++s) {
        after -= r[s];
        byte_count weights = 0, activation = 0;
        for (auto l = p.first[s]; l < p.end(s, c.size()); ++l) {
          weights += c[l].weights;
          activation += c[l].activation;
        }
        const std::uint64_t held = (after * (links ? 2 : 1) + r[s]) / r[s];
        if (capacity != unlimited_memory && weights + held * activation > capacity) return;
      }
      brute = std::min(brute, detail::largest_load(pipeline_stages(c, p, r, comm)));
    });
    const auto found = comm_aware_partition(c, workers, capacity, {.comm = comm, .max_replicas = max_replicas});
    INFO("trial " << trial << ", " << c.size() << " layers, " << workers << " workers, r <= " << max_replicas
                  << ", capacity " << capacity);
    if (std::isinf(brute)) {
      CHECK(found.outcome.code == status::out_of_memory);
      continue;
    }
    REQUIRE_MESSAGE(found.ok(), found.outcome.message);
    CHECK(found.period == doctest::Approx(brute).epsilon(1e-12));
    CHECK(found.period == doctest::Approx(detail::largest_load(found.stages)).epsilon(1e-12));
  }
}

TEST_CASE("Without links or replicas the search finds the compute-only optimum") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 30; ++trial) {
    chain c;
    for (std::uint64_t l = 0, n = draw(rng, 1, 12); l < n; ++l)
      c.layers.push_back(
          {"l" + std::to_string(l), static_cast<double>(draw(rng, 0, 9)), static_cast<double>(draw(rng, 1, 9)), 1, 1});
    const std::size_t workers = draw(rng, 1, 5);
    CHECK(comm_aware_partition(c, workers).period == doctest::Approx(optimal_contiguous_partition(c, workers).period));
  }
}

TEST_CASE("A plan with links and replicas names the layers of each stage and validates") {
  const auto c = four_layers();
  const auto plan = plan_pipeline(c, 3, unlimited_memory, {.comm = {.link = link_model{0, 100}}, .max_replicas = 2});
  REQUIRE_MESSAGE(plan.ok(), plan.partition.outcome.message);
  // a, b, c on 2 workers: (6 + 2·(2-1)/2·30/100) / 2 = 3.15 s; d alone 2 s; the link after c 0.2 s.
  CHECK(plan.period() == doctest::Approx(3.15));
  CHECK(plan.replicas == std::vector<std::uint32_t>{2, 1});
  for (const auto& p : plan.compared) require_valid(c, p);
  const auto text = describe(c, plan);
  CHECK(text.find("layers: a, b, c") != std::string::npos);
  CHECK(text.find("link after 'c'") != std::string::npos);
  CHECK(text.find("(3.1499999999999999 s)") != std::string::npos);  // full precision beside the readable form
}

TEST_CASE("Cuts beyond one order: a depth-first order finds the cut Kahn's order lacks") {
  //      +-> p1 -> p2 -+
  //  x --+             +--> join      Kahn by id: x p1 q1 p2 q2 join; depth-first: x q1 q2 p1 p2 join
  //      +-> q1 -> q2 -+
  graph g;
  const auto add = [&](const char* name, double time) {
    return g.add_vertex({.name = name, .compute = time, .output = 1});
  };
  const auto x = add("x", 1), p1 = add("p1", 2), q1 = add("q1", 2), p2 = add("p2", 3), q2 = add("q2", 3),
             join = add("join", 1);
  for (const auto& [u, v] : {std::pair{x, p1}, {x, q1}, {p1, p2}, {q1, q2}, {p2, join}, {q2, join}})
    g.add_edge(u, v, 1);
  const auto kahn = chain_from_graph(g);
  CHECK(comm_aware_partition(kahn, 2).period == doctest::Approx(7));
  const auto orders = candidate_orders(g, {.random_orders = 0});
  CHECK(orders.size() >= 2);
  auto [found, best] = best_over_orders(
      g, [](const chain& c) { return comm_aware_partition(c, 2); }, [](chain&) {});
  REQUIRE(best.ok());
  CHECK(best.period == doctest::Approx(6));
  const auto& layers = found.layers;
  std::vector<std::string> first_stage;
  for (auto l = best.stages[0].first_layer; l < best.stages[0].end_layer; ++l) first_stage.push_back(layers[l].name);
  std::sort(first_stage.begin(), first_stage.end());
  CHECK((first_stage == std::vector<std::string>{"p1", "p2", "x"} ||
         first_stage == std::vector<std::string>{"q1", "q2", "x"}));
  // The crossing of a cut between the branches counts the tensor that skips over it.
  CHECK(layers.crossing_bytes(2) == 2);
}

TEST_CASE("PipeDream's vgg16 profile: counting transfers avoids the 1.64 GB cut") {
  const auto g =
      read_graph_pipedream(std::string(GANTRY_TEST_DATA_DIR) + "/pipedream/vgg16.txt.gz", {.zero_input_time = true});
  const auto c = chain_from_graph(g);
  const pipeline_comm comm{.link = link_model{0, 1e9}};
  const auto blind = optimal_contiguous_partition(c, 4);
  const auto blind_with_links = detail::largest_load(pipeline_stages(c, blind.partition, {}, comm));
  const auto found = comm_aware_partition(c, 4, unlimited_memory, {.comm = comm});
  REQUIRE(found.ok());
  CHECK(found.period < blind_with_links);
  for (std::size_t s = 1; s < found.partition.stage_count(); ++s)
    CHECK(c.crossing_bytes(found.partition.first[s] - 1) < 1'000'000'000);
  require_valid(c, one_f_one_b(c, found.stages));
}
