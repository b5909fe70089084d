// Fits the linear link model (time = latency + bytes / bandwidth) to measured transfers by least
// squares, as Baechi §4.1 does from profiled (bytes, seconds) pairs. Uses Eigen's QR solver.
#pragma once

#include <gantry/model/cluster.hpp>

#include <Eigen/Dense>

#include <cmath>
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
};

// Throws invalid_input when there are fewer than two samples, a sample is not finite or negative,
// or all samples have the same size (the slope is then undetermined). A fitted negative latency is
// clamped to 0 and a non-positive slope gives infinite bandwidth, and the fit is refitted for the
// remaining parameter, so the model stays physical.
[[nodiscard]] inline link_fit fit_link(std::span<const transfer_sample> samples) {
  if (samples.size() < 2)
    throw invalid_input("fit_link: need at least 2 samples, got " + std::to_string(samples.size()));
  Eigen::MatrixXd a(samples.size(), 2);
  Eigen::VectorXd b(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    if (!std::isfinite(s.bytes) || !std::isfinite(s.time) || s.bytes < 0 || s.time < 0)
      throw invalid_input("fit_link: sample " + std::to_string(i) + " (bytes " + std::to_string(s.bytes) +
                          ", time " + std::to_string(s.time) + ") must be finite and >= 0");
    a(static_cast<Eigen::Index>(i), 0) = 1.0;
    a(static_cast<Eigen::Index>(i), 1) = s.bytes;
    b(static_cast<Eigen::Index>(i)) = s.time;
  }
  if (a.col(1).maxCoeff() == a.col(1).minCoeff())
    throw invalid_input("fit_link: every sample has the same size; vary the transfer sizes");
  Eigen::Vector2d x = a.colPivHouseholderQr().solve(b);
  double latency = x(0), per_byte = x(1);
  if (per_byte <= 0) {  // time does not grow with size: latency only
    per_byte = 0;
    latency = std::max(0.0, b.mean());
  } else if (latency < 0) {  // refit the slope through the origin
    latency = 0;
    per_byte = a.col(1).dot(b) / a.col(1).squaredNorm();
  }
  const Eigen::VectorXd predicted = latency * a.col(0) + per_byte * a.col(1);
  const double residual = (b - predicted).squaredNorm();
  const double variance = (b.array() - b.mean()).matrix().squaredNorm();
  link_fit fit;
  fit.link.latency = latency;
  fit.link.bandwidth = per_byte > 0 ? 1.0 / per_byte : std::numeric_limits<double>::infinity();
  fit.r_squared = variance > 0 ? 1.0 - residual / variance : 1.0;
  fit.rms_residual = std::sqrt(residual / static_cast<double>(samples.size()));
  return fit;
}

}  // namespace gantry
