// How well a simulation predicts measured runs: relative makespan error, per-vertex start-time
// error, and the Pearson and Spearman correlations between simulated and measured makespans over
// many placements (DOPPLER Appendix H.1 reports these for its simulator: 0.79 and 0.69).
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace gantry {

// The median of xs (the mean of the two middle values for an even count); 0 when empty.
[[nodiscard]] inline double median_of(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  const std::size_t k = xs.size() / 2;
  return xs.size() % 2 ? xs[k] : 0.5 * (xs[k - 1] + xs[k]);
}

// Pearson's correlation of two equally long series; 0 when either is constant or has fewer than
// two values. Throws invalid_input for series of different lengths.
[[nodiscard]] inline double pearson(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size())
    throw invalid_input("pearson: series of " + std::to_string(x.size()) + " and " + std::to_string(y.size()) +
                        " values");
  const std::size_t n = x.size();
  if (n < 2) return 0;
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

// Ranks from 1, ties sharing the mean of their ranks.
[[nodiscard]] inline std::vector<double> ranks_of(std::span<const double> x) {
  std::vector<std::size_t> index(x.size());
  std::iota(index.begin(), index.end(), 0);
  std::sort(index.begin(), index.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> rank(x.size());
  for (std::size_t i = 0; i < index.size();) {
    std::size_t j = i;
    while (j < index.size() && x[index[j]] == x[index[i]]) ++j;
    const double mean = 0.5 * static_cast<double>(i + 1 + j);  // mean of ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) rank[index[k]] = mean;
    i = j;
  }
  return rank;
}

// Spearman's rank correlation: Pearson's on the ranks, ties averaged.
[[nodiscard]] inline double spearman(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size())
    throw invalid_input("spearman: series of " + std::to_string(x.size()) + " and " + std::to_string(y.size()) +
                        " values");
  const auto rx = ranks_of(x), ry = ranks_of(y);
  return pearson(rx, ry);
}

// How far a measured schedule's vertex starts are from a simulated one's, over the same vertices.
struct start_time_error {
  seconds mean = 0, median = 0, max = 0;  // absolute, in seconds
  vertex_id worst = no_vertex;            // the vertex of the largest error
};

[[nodiscard]] inline start_time_error compare_start_times(const schedule& simulated, const schedule& measured) {
  if (simulated.start.size() != measured.start.size())
    throw invalid_input("compare_start_times: schedules of " + std::to_string(simulated.start.size()) + " and " +
                        std::to_string(measured.start.size()) + " vertices");
  start_time_error out;
  std::vector<double> errors(simulated.start.size());
  for (vertex_id v = 0; v < errors.size(); ++v) {
    errors[v] = std::abs(measured.start[v] - simulated.start[v]);
    if (out.worst == no_vertex || errors[v] > out.max) {
      out.max = errors[v];
      out.worst = v;
    }
  }
  if (!errors.empty())
    out.mean = std::accumulate(errors.begin(), errors.end(), 0.0) / static_cast<double>(errors.size());
  out.median = median_of(std::move(errors));
  return out;
}

// measured / simulated - 1: positive when the run took longer than predicted.
[[nodiscard]] inline double relative_error(seconds simulated, seconds measured) {
  return simulated > 0 ? measured / simulated - 1.0 : 0.0;
}

}  // namespace gantry
