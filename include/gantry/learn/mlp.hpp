// A small feed-forward scorer for the learned placers (learn/doppler.hpp): one tanh hidden layer
// and a scalar output, applied row by row to a matrix of candidate features, with hand-written
// backpropagation and Adam. The parameters live in one flat vector so that gradient checks,
// optimisers and weight files see them the same way. Needs Eigen (the gantry::learn component).
#pragma once

#include <gantry/core/random.hpp>
#include <gantry/core/types.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <cstddef>
#include <string>

namespace gantry::learn {

using matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using vector = Eigen::VectorXd;

// score(x) = w2 · tanh(W1 x + b1) + b2 for every row x of a candidate matrix.
// Layout of parameters(): W1 (hidden x inputs, row-major), b1 (hidden), w2 (hidden), b2.
class mlp {
 public:
  mlp() = default;
  mlp(std::size_t inputs, std::size_t hidden) : inputs_(inputs), hidden_(hidden) {
    if (inputs == 0 || hidden == 0)
      throw invalid_input("mlp: inputs and hidden must be > 0, got " + std::to_string(inputs) + " and " +
                          std::to_string(hidden));
    theta_ = vector::Zero(static_cast<Eigen::Index>(size()));
    gradient_ = vector::Zero(theta_.size());
  }

  // Glorot-scaled normal draws for W1 and w2, zero biases; the same on every platform for a seed.
  void initialize(detail::portable_random& random) {
    const double scale1 = std::sqrt(2.0 / static_cast<double>(inputs_ + hidden_));
    const double scale2 = std::sqrt(2.0 / static_cast<double>(hidden_ + 1));
    theta_.setZero();
    for (Eigen::Index i = 0; i < w1_size(); ++i) theta_[i] = scale1 * random.normal();
    for (Eigen::Index i = 0; i < h(); ++i) theta_[w2_offset() + i] = scale2 * random.normal();
  }

  [[nodiscard]] std::size_t inputs() const noexcept { return inputs_; }
  [[nodiscard]] std::size_t hidden() const noexcept { return hidden_; }
  [[nodiscard]] std::size_t size() const noexcept { return hidden_ * inputs_ + 2 * hidden_ + 1; }
  [[nodiscard]] vector& parameters() noexcept { return theta_; }
  [[nodiscard]] const vector& parameters() const noexcept { return theta_; }
  [[nodiscard]] vector& gradient() noexcept { return gradient_; }
  [[nodiscard]] const vector& gradient() const noexcept { return gradient_; }
  void zero_gradient() { gradient_.setZero(); }

  // One score per row of x (rows: candidates, columns: inputs()).
  [[nodiscard]] vector forward(const matrix& x) const {
    check(x);
    return hidden_of(x) * w2() + vector::Constant(x.rows(), b2());
  }

  // Adds d(Σ_i upstream_i · score_i)/dθ to gradient(): backpropagation through both layers.
  void backward(const matrix& x, const vector& upstream) {
    check(x);
    const matrix hid = hidden_of(x);
    Eigen::Map<matrix> dw1(gradient_.data(), h(), in());
    auto db1 = gradient_.segment(w1_size(), h());
    auto dw2 = gradient_.segment(w2_offset(), h());
    dw2 += hid.transpose() * upstream;
    gradient_[b2_offset()] += upstream.sum();
    // dZ = (upstream w2^T) .* (1 - H^2)
    matrix dz = (upstream * w2().transpose()).array() * (1.0 - hid.array().square());
    dw1 += dz.transpose() * x;
    db1 += dz.colwise().sum().transpose();
  }

 private:
  [[nodiscard]] Eigen::Index in() const { return static_cast<Eigen::Index>(inputs_); }
  [[nodiscard]] Eigen::Index h() const { return static_cast<Eigen::Index>(hidden_); }
  [[nodiscard]] Eigen::Index w1_size() const { return h() * in(); }
  [[nodiscard]] Eigen::Index w2_offset() const { return w1_size() + h(); }
  [[nodiscard]] Eigen::Index b2_offset() const { return w2_offset() + h(); }
  [[nodiscard]] Eigen::Map<const matrix> w1() const { return {theta_.data(), h(), in()}; }
  [[nodiscard]] Eigen::Map<const vector> b1() const { return {theta_.data() + w1_size(), h()}; }
  [[nodiscard]] Eigen::Map<const vector> w2() const { return {theta_.data() + w2_offset(), h()}; }
  [[nodiscard]] double b2() const { return theta_[b2_offset()]; }
  [[nodiscard]] matrix hidden_of(const matrix& x) const {
    matrix z = x * w1().transpose();
    z.rowwise() += b1().transpose();
    return z.array().tanh().matrix();
  }
  void check(const matrix& x) const {
    if (x.cols() != in())
      throw invalid_input("mlp: a candidate matrix has " + std::to_string(x.cols()) + " columns, the network takes " +
                          std::to_string(inputs_));
  }

  std::size_t inputs_ = 0, hidden_ = 0;
  vector theta_, gradient_;
};

// Adam (Kingma & Ba 2015) over one parameter vector.
class adam {
 public:
  adam() = default;
  explicit adam(std::size_t size, double rate = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double epsilon = 1e-8)
      : rate_(rate), beta1_(beta1), beta2_(beta2), epsilon_(epsilon),
        first_(vector::Zero(static_cast<Eigen::Index>(size))), second_(vector::Zero(static_cast<Eigen::Index>(size))) {}
  void set_rate(double rate) noexcept { rate_ = rate; }
  [[nodiscard]] double rate() const noexcept { return rate_; }
  // θ -= rate · m̂ / (sqrt(v̂) + ε), from the gradient of a loss to minimise.
  void step(vector& theta, const vector& gradient) {
    ++steps_;
    first_ = beta1_ * first_ + (1 - beta1_) * gradient;
    second_ = beta2_ * second_ + (1 - beta2_) * gradient.cwiseProduct(gradient);
    const double c1 = 1 - std::pow(beta1_, static_cast<double>(steps_));
    const double c2 = 1 - std::pow(beta2_, static_cast<double>(steps_));
    theta.array() -= rate_ * (first_.array() / c1) / ((second_.array() / c2).sqrt() + epsilon_);
  }

 private:
  double rate_ = 1e-3, beta1_ = 0.9, beta2_ = 0.999, epsilon_ = 1e-8;
  vector first_, second_;
  std::size_t steps_ = 0;
};

// Log-softmax over scores, and the gradient of a loss with respect to the scores.
// For a chosen candidate c with weight a, and an entropy bonus β:
//   loss = -a · log p_c - β · H(p),  d loss / d s_i = -a (1[i=c] - p_i) + β p_i (log p_i + H).
[[nodiscard]] inline vector softmax(const vector& scores, double temperature = 1.0) {
  const vector z = scores / temperature;
  const double top = z.maxCoeff();
  vector p = (z.array() - top).exp().matrix();
  return p / p.sum();
}

[[nodiscard]] inline vector choice_gradient(const vector& p, Eigen::Index chosen, double weight, double entropy_bonus) {
  vector g = weight * p;
  g[chosen] -= weight;
  if (entropy_bonus != 0) {
    const vector logp = p.array().max(1e-300).log().matrix();
    const double entropy = -p.dot(logp);
    g.array() += entropy_bonus * p.array() * (logp.array() + entropy);
  }
  return g;
}

}  // namespace gantry::learn
