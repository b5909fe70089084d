// DOPPLER's EnumerativeOptimizer (Appendix A, Algorithm 4): meta-ops (the shards of one operation,
// labelled by workloads/doppler.hpp) are placed one at a time in topological order. For each, every
// assignment of its shard ops to devices that spreads them evenly (at most ceil(k/m) per device:
// one per device when k <= m) is tried, costing the time to move each shard's inputs from where
// they were placed (the model's transfer times; a tensor sent to a device once); the cheapest
// wins. Its reduce ops are then placed the same way. Greedy by meta-op; optimal only under
// lock-step execution.
// Departures: the enumeration is a branch and bound over devices in increasing id, capped at
// `max_nodes` search nodes per group (the cheapest assignment found so far is kept past the cap);
// ties in transfer cost go to the assignment whose busiest device has the least compute so far
// (balance_ties; false keeps the first assignment found, the paper's rule).
// Colocation groups are honoured: a vertex whose group is placed goes with it.
// Never worse than one device (single_device_fallback): the greedy costs transfers only, so on a
// graph whose meta-ops have one shard each (no labels) every vertex follows the first one, onto
// whichever device won its tie; the placement and every vertex on the device with the least total
// compute are both simulated, and the shorter is kept (the outcome's message says when that is the
// single device).
// Cost: O(groups · nodes · inputs) with nodes <= max_nodes, plus two simulations.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/sim/simulator.hpp>
#include <gantry/workloads/doppler.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace gantry {

struct enumerative_options {
  std::size_t max_nodes = 100000;  // search nodes per group of shard or reduce ops
  bool cache_transfers = true;     // a tensor moves to a device once (false: once per consumer)
  bool balance_ties = true;        // equal transfer cost: the assignment with the least-loaded busiest device
  // Simulate the placement and every vertex on the device with the least total compute; keep the
  // shorter (false: the meta-op placement as it is, the paper's rule).
  bool single_device_fallback = true;
  // Colocation group per vertex (no_group: alone; empty: none): a group goes where its first
  // member went, outside the even spread.
  std::vector<std::uint32_t> group{};
};

namespace detail {

template <placement_model M>
class enumerative_search {
 public:
  enumerative_search(const csr_graph& g, const M& model, std::size_t devices, const enumerative_options& o)
      : g_(g), model_(model), m_(devices), options_(o), device_(g.vertex_count(), no_device),
        sent_(g.vertex_count() * devices, 0), load_(devices, 0) {
    std::uint32_t groups = 0;
    for (const auto k : o.group)
      if (k != no_group) groups = std::max(groups, k + 1);
    group_device_.assign(groups, no_device);
  }

  // Places `group` (vertices whose inputs outside the group are placed, or never will be).
  void place(const std::vector<vertex_id>& group) {
    if (group.empty()) return;
    group_ = group;
    cap_ = (group.size() + m_ - 1) / m_;
    count_.assign(m_, 0);
    current_.assign(group.size(), no_device);
    best_.clear();
    best_cost_ = std::numeric_limits<seconds>::infinity();
    best_balance_ = std::numeric_limits<seconds>::infinity();
    nodes_ = 0;
    trial_load_ = load_;
    search(0, 0);
    for (std::size_t i = 0; i < group_.size(); ++i) {
      const vertex_id v = group_[i];
      const device_id d = best_[i];
      device_[v] = d;
      if (const auto k = group_of(v); k != no_group) group_device_[k] = d;
      load_[d] += model_.compute_time(v, d);
      for (const vertex_id u : g_.predecessors(v))
        if (device_[u] != no_device && device_[u] != d) sent_[u * m_ + d] = 1;
    }
  }

  [[nodiscard]] const std::vector<device_id>& devices() const noexcept { return device_; }

 private:
  // Cost of v on d given what is placed and what this trial placed before it.
  [[nodiscard]] seconds input_cost(vertex_id v, device_id d) {
    seconds cost = 0;
    const auto pred = g_.predecessors(v);
    const auto in = g_.in_edges(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      const device_id from = device_[u];
      if (from == no_device || from == d) continue;
      if (options_.cache_transfers) {
        auto& mark = sent_[u * m_ + d];
        if (mark != 0) continue;
        mark = 2;  // counted in this trial; cleared on the way back
        marked_.push_back(u * m_ + d);
      }
      cost += model_.transfer_time(in[i], from, d);
    }
    return cost;
  }

  void search(std::size_t index, seconds cost) {
    if (cost > best_cost_ || (nodes_ >= options_.max_nodes && !best_.empty())) return;
    ++nodes_;
    if (index == group_.size()) {
      const seconds balance = options_.balance_ties ? *std::max_element(trial_load_.begin(), trial_load_.end()) : 0;
      if (cost < best_cost_ || (cost == best_cost_ && balance < best_balance_)) {
        best_cost_ = cost;
        best_balance_ = balance;
        best_ = current_;
      }
      return;
    }
    const vertex_id v = group_[index];
    const std::uint32_t colocated = group_of(v);
    const device_id fixed = colocated == no_group ? no_device : group_device_[colocated];
    for (device_id d = 0; d < m_; ++d) {
      if (fixed != no_device ? d != fixed : count_[d] >= cap_) continue;
      if (colocated != no_group && fixed == no_device) group_device_[colocated] = d;  // bound for this trial
      const std::size_t mark_from = marked_.size();
      const seconds added = input_cost(v, d);
      ++count_[d];
      current_[index] = d;
      const seconds compute = model_.compute_time(v, d);
      trial_load_[d] += compute;
      search(index + 1, cost + added);
      trial_load_[d] -= compute;
      --count_[d];
      for (std::size_t i = mark_from; i < marked_.size(); ++i) sent_[marked_[i]] = 0;
      marked_.resize(mark_from);
      if (colocated != no_group && fixed == no_device) group_device_[colocated] = no_device;
    }
  }

  [[nodiscard]] std::uint32_t group_of(vertex_id v) const {
    return options_.group.empty() ? no_group : options_.group[v];
  }

  const csr_graph& g_;
  const M& model_;
  std::size_t m_;
  enumerative_options options_;
  std::vector<device_id> device_;
  std::vector<device_id> group_device_;  // per colocation group, no_device while unbound
  std::vector<std::uint8_t> sent_;       // per (producer, device): 1 the tensor is there, 2 counted in this trial
  std::vector<seconds> load_, trial_load_;
  std::vector<vertex_id> group_;
  std::size_t cap_ = 1, nodes_ = 0;
  std::vector<std::size_t> count_, marked_;
  std::vector<device_id> current_, best_;
  seconds best_cost_ = 0, best_balance_ = 0;
};

}  // namespace detail

// Places `graph` meta-op by meta-op. labels.meta_op and labels.role have one entry per vertex;
// meta-ops are visited in the order their first vertex appears in Kahn's order. The order of the
// result is Kahn's. Throws invalid_input for labels of the wrong size and not_a_dag for a cycle.
// With single_device_fallback, the result is every vertex on one device when that simulates
// shorter (or when only it fits in memory); colocation groups are then trivially kept.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] placement enumerative_optimizer(const G& graph, const M& model, const D& devices,
                                              const meta_op_labels& labels, enumerative_options options = {}) {
  const detail::csr_view<G> view(graph);
  const csr_graph& g = *view;
  const std::size_t n = g.vertex_count(), m = devices.device_count();
  if (labels.meta_op.size() != n || labels.role.size() != n)
    throw invalid_input("enumerative_optimizer: the labels cover " + std::to_string(labels.meta_op.size()) + " and " +
                        std::to_string(labels.role.size()) + " vertices, the graph has " + std::to_string(n));
  if (m == 0) throw invalid_input("enumerative_optimizer: there are no devices");
  if (options.max_nodes == 0) throw invalid_input("enumerative_optimizer: max_nodes must be > 0");
  if (!options.group.empty() && options.group.size() != n)
    throw invalid_input("enumerative_optimizer: group has " + std::to_string(options.group.size()) +
                        " entries, the graph has " + std::to_string(n) + " vertices");
  placement p;
  p.order = detail::kahn_on(g);
  if (p.order.size() != n)
    throw not_a_dag("enumerative_optimizer: the graph has a cycle: " + describe_cycle(graph, g.find_cycle()));
  std::uint32_t meta_ops = 0;
  for (const auto k : labels.meta_op) meta_ops = std::max(meta_ops, k + 1);
  // Members of each meta-op in Kahn order, shards then reduces; meta-ops by first appearance.
  std::vector<std::vector<vertex_id>> shards(meta_ops), reduces(meta_ops);
  std::vector<std::uint32_t> visit;
  std::vector<std::uint8_t> seen(meta_ops, 0);
  for (const vertex_id v : p.order) {
    const auto k = labels.meta_op[v];
    if (!seen[k]) {
      seen[k] = 1;
      visit.push_back(k);
    }
    (labels.role[v] == meta_op_role::reduce ? reduces[k] : shards[k]).push_back(v);
  }
  detail::enumerative_search<M> search(g, model, m, options);
  for (const auto k : visit) {
    search.place(shards[k]);
    search.place(reduces[k]);
  }
  p.device = search.devices();
  if (!options.single_device_fallback || n == 0) return p;
  device_id fastest = 0;
  seconds least = std::numeric_limits<seconds>::infinity();
  for (device_id d = 0; d < m; ++d) {
    seconds total = 0;
    for (vertex_id v = 0; v < n; ++v) total += model.compute_time(v, d);
    if (total < least) {
      least = total;
      fastest = d;
    }
  }
  const simulate_options replay{.priority = p.order, .cache_transfers = options.cache_transfers};
  const simulation_result spread = simulate(graph, model, devices, std::span<const device_id>(p.device), replay);
  const std::vector<device_id> alone(n, fastest);
  const simulation_result single = simulate(graph, model, devices, std::span<const device_id>(alone), replay);
  if (!single.ok() || (spread.ok() && spread.schedule.makespan <= single.schedule.makespan)) return p;
  const auto text = [](seconds t) {
    std::ostringstream out;
    out << t << " s";
    return out.str();
  };
  std::string label = "device " + std::to_string(fastest);
  if constexpr (requires { devices[fastest].name; })
    if (!devices[fastest].name.empty()) label = devices[fastest].name;
  p.outcome.message = "placed every vertex on " + label + " instead: " + text(single.schedule.makespan) + ", " +
                      (spread.ok() ? "shorter than the meta-op placement's " + text(spread.schedule.makespan)
                                   : "where the meta-op placement runs out of memory (" + spread.outcome.message + ")");
  p.device = alone;
  return p;
}

}  // namespace gantry
