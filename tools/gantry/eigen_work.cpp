// The Eigen work of `gantry execute --kernel work` and `gantry calibrate` (eigen_work.hpp).
#include "eigen_work.hpp"

#include <gantry/exec/eigen_operations.hpp>

#include <utility>

namespace gantry::cli {

struct eigen_work::state {
  eigen_operations operations;
};

eigen_work::eigen_work(std::vector<operation> operations, std::size_t devices)
    : state_(std::make_unique<state>(state{eigen_operations(std::move(operations), devices)})) {}
eigen_work::~eigen_work() = default;
eigen_work::eigen_work(eigen_work&&) noexcept = default;
eigen_work& eigen_work::operator=(eigen_work&&) noexcept = default;

void eigen_work::operator()(const vertex_launch& v) { state_->operations(v); }

std::vector<seconds> eigen_work::profile(const graph& g) { return profile_operations(state_->operations, g); }

}  // namespace gantry::cli
