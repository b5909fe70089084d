// Fits the linear link model (time = latency + bytes / bandwidth) to measured transfers by least
// squares, as Baechi §4.1 does from profiled (bytes, seconds) pairs. Two parameters have a closed
// form: the slope is the covariance of size and time over the variance of size, taken about the
// means so that large byte counts lose no precision. O(samples).
#pragma once

#include <gantry/model/cluster.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>

namespace gantry {

struct transfer_sample {
  double bytes = 0;
  seconds time = 0;
};

struct link_fit {
  link_model link;
  double r_squared = 0;      // fraction of the variance in time that the model explains
  seconds rms_residual = 0;  // root-mean-square error of the fit, in seconds

  // Below this r^2 the samples do not follow a line (a busy machine, a link shared while measuring,
  // copies too small to rise above the noise): the latency and bandwidth are rough.
  static constexpr double least_trusted_r_squared = 0.9;
  [[nodiscard]] bool trusted() const noexcept { return r_squared >= least_trusted_r_squared; }
};

// Throws invalid_input when there are fewer than two samples, a sample is not finite or negative,
// or all samples have the same size (the slope is then undetermined). A fitted negative latency is
// clamped to 0 and a non-positive slope gives infinite bandwidth, and the fit is refitted for the
// remaining parameter, so the model stays physical.
[[nodiscard]] inline link_fit fit_link(std::span<const transfer_sample> samples) {
  if (samples.size() < 2)
    throw invalid_input("fit_link: need at least 2 samples, got " + std::to_string(samples.size()));
  const auto count = static_cast<double>(samples.size());
  double mean_bytes = 0, mean_time = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    if (!std::isfinite(s.bytes) || !std::isfinite(s.time) || s.bytes < 0 || s.time < 0)
      throw invalid_input("fit_link: sample " + std::to_string(i) + " (bytes " + std::to_string(s.bytes) + ", time " +
                          std::to_string(s.time) + ") must be finite and >= 0");
    mean_bytes += s.bytes;
    mean_time += s.time;
  }
  mean_bytes /= count;
  mean_time /= count;
  const auto [smallest, largest] = std::minmax_element(samples.begin(), samples.end(),
                                                       [](const auto& x, const auto& y) { return x.bytes < y.bytes; });
  if (smallest->bytes == largest->bytes)
    throw invalid_input("fit_link: every sample has the same size; vary the transfer sizes");
  double spread = 0, covariance = 0;
  for (const auto& s : samples) {
    spread += (s.bytes - mean_bytes) * (s.bytes - mean_bytes);
    covariance += (s.bytes - mean_bytes) * (s.time - mean_time);
  }
  double per_byte = covariance / spread;
  double latency = mean_time - per_byte * mean_bytes;
  if (per_byte <= 0) {  // time does not grow with size: latency only
    per_byte = 0;
    latency = std::max(0.0, mean_time);
  } else if (latency < 0) {  // refit the slope through the origin
    latency = 0;
    double cross = 0, square = 0;
    for (const auto& s : samples) {
      cross += s.bytes * s.time;
      square += s.bytes * s.bytes;
    }
    per_byte = cross / square;
  }
  double residual = 0, variance = 0;
  for (const auto& s : samples) {
    const double error = s.time - (latency + per_byte * s.bytes);
    residual += error * error;
    variance += (s.time - mean_time) * (s.time - mean_time);
  }
  link_fit fit;
  fit.link.latency = latency;
  fit.link.bandwidth = per_byte > 0 ? 1.0 / per_byte : std::numeric_limits<double>::infinity();
  fit.r_squared = variance > 0 ? 1.0 - residual / variance : 1.0;
  fit.rms_residual = std::sqrt(residual / count);
  return fit;
}

}  // namespace gantry
