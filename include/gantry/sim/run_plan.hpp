// What a run of the event loop (sim/event_loop.hpp) settles before it starts: each vertex's rank
// in the priority order, the bottom levels that ready_policy::bottom_level runs by, how long each
// vertex and copy takes, and each vertex's output and temporary bytes (read from the model once,
// in vertex order, so that the run finds them in one compact array: looked up in the order vertices
// become ready, a graph's own vertex records cost a cache miss each, about 40% of a run's time on
// bench_simulate's graphs). Durations are the model's, drawn around it when options.cv > 0 (a lognormal
// of mean 1, from detail::portable_random, so a seed gives the same run everywhere): the vertices'
// in vertex order at the start, then each copy's as the run makes it (options.vary_transfers), so
// the draws follow the run's own order of events.
#pragma once

#include <gantry/core/random.hpp>
#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/sim/run_options.hpp>
#include <gantry/sim/shared_bandwidth.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gantry::detail {

template <placement_model M>
class run_plan {
 public:
  // Ranks, levels and the vertices' durations for a run of `placement` on m devices (the arguments
  // are checked: detail::check_run_arguments). Throws not_a_dag, naming `who`, on a cycle.
  void reset(const csr_graph& g, const M& model, std::size_t m, std::span<const device_id> placement,
             const simulate_options& options, const char* who) {
    const std::size_t n = g.vertex_count();
    // Kahn order, once, where the ranks or the levels need it.
    std::vector<vertex_id> kahn;
    if (options.priority.empty() || options.policy == ready_policy::bottom_level) {
      kahn = kahn_on(g);
      if (kahn.size() != n) throw not_a_dag(std::string(who) + ": the graph has a cycle");
    }
    const std::span<const vertex_id> order =
        options.priority.empty() ? std::span<const vertex_id>(kahn) : std::span<const vertex_id>(options.priority);
    rank_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) rank_[order[i]] = static_cast<std::uint32_t>(i);
    bottom_.clear();
    if (options.policy == ready_policy::bottom_level) bottom_ = compute_levels(g, kahn, model, m).bottom;
    rng_ = portable_random(options.seed);
    cv_ = options.cv;
    vary_transfers_ = options.vary_transfers;
    sigma_ = std::sqrt(std::log1p(cv_ * cv_));
    duration_.resize(n);
    output_.resize(n);
    temporary_.resize(n);
    for (vertex_id v = 0; v < n; ++v) {
      duration_[v] = model.compute_time(v, placement[v]) * draw();
      output_[v] = model.output_bytes(v);
      temporary_[v] = model.temporary_bytes(v);
    }
    transfer_duration_.clear();
    traffic_.clear();
  }
  // Where devices share memory bandwidth (sim/shared_bandwidth.hpp): the bytes each vertex moves.
  void count_traffic(const csr_graph& g, const M& model) {
    traffic_.resize(g.vertex_count());
    for (vertex_id v = 0; v < g.vertex_count(); ++v) traffic_[v] = traffic_bytes(model, g, v);
  }

  // The run made its next copy, whose model time is `time`.
  void add_transfer(seconds time) { transfer_duration_.push_back(time * (vary_transfers_ ? draw() : 1.0)); }

  [[nodiscard]] const std::vector<std::uint32_t>& ranks() const noexcept { return rank_; }
  [[nodiscard]] std::uint32_t rank(vertex_id v) const { return rank_[v]; }
  // Empty unless the policy is bottom_level.
  [[nodiscard]] const std::vector<seconds>& bottom_levels() const noexcept { return bottom_; }
  [[nodiscard]] seconds duration(vertex_id v) const { return duration_[v]; }
  [[nodiscard]] seconds transfer_duration(std::uint32_t t) const { return transfer_duration_[t]; }
  // The model's output and temporary bytes of v (above).
  [[nodiscard]] byte_count output_bytes(vertex_id v) const { return output_[v]; }
  [[nodiscard]] std::span<const byte_count> output_bytes() const noexcept { return output_; }
  [[nodiscard]] byte_count temporary_bytes(vertex_id v) const { return temporary_[v]; }
  // 0 unless count_traffic() was called.
  [[nodiscard]] byte_count traffic(vertex_id v) const { return traffic_.empty() ? 0 : traffic_[v]; }

 private:
  double draw() {
    if (cv_ == 0) return 1.0;
    return std::exp(sigma_ * rng_.normal() - 0.5 * sigma_ * sigma_);
  }

  std::vector<std::uint32_t> rank_;
  std::vector<seconds> bottom_;
  portable_random rng_{0};
  double cv_ = 0, sigma_ = 0;
  bool vary_transfers_ = false;
  std::vector<seconds> duration_;
  std::vector<byte_count> output_, temporary_;
  std::vector<seconds> transfer_duration_;
  std::vector<byte_count> traffic_;
};

}  // namespace gantry::detail
