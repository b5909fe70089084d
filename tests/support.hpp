// What several test files need: a scratch directory that is empty when a test starts and gone when
// it ends.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <string>
#include <system_error>

namespace gantry::test {

struct scratch_directory {
  std::filesystem::path path;
  // `name` must be unique among the tests of the whole suite; the process id keeps concurrent runs apart.
  explicit scratch_directory(const std::string& name) {
    path = std::filesystem::temp_directory_path() / ("gantry_test_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~scratch_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  scratch_directory(const scratch_directory&) = delete;
  scratch_directory& operator=(const scratch_directory&) = delete;

  [[nodiscard]] std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator(path), std::filesystem::directory_iterator()));
  }
};

}  // namespace gantry::test
