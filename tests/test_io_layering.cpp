// The layering docs/format.md and README.md promise, checked on the headers themselves: only
// headers in io/ reach nlohmann-json or zlib (directly or through the headers they include),
// and a link fit needs no Eigen.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path include_root = fs::path(GANTRY_SOURCE_DIR) / "include";

// The #include <...> targets of one header.
std::vector<std::string> includes_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("#include <")) continue;
    const auto close = line.find('>');
    if (close != std::string::npos) out.push_back(line.substr(10, close - 10));
  }
  return out;
}

// Every header a gantry header reaches, itself excluded, by following gantry includes.
std::set<std::string> reached_from(const std::string& header) {
  std::set<std::string> seen;
  std::vector<std::string> stack{header};
  while (!stack.empty()) {
    const std::string next = stack.back();
    stack.pop_back();
    for (const auto& target : includes_of(include_root / next))
      if (seen.insert(target).second && target.starts_with("gantry/")) stack.push_back(target);
  }
  return seen;
}

bool reaches(const std::set<std::string>& headers, std::string_view prefix) {
  for (const auto& h : headers)
    if (h.starts_with(prefix)) return true;
  return false;
}

}  // namespace

TEST_CASE("only io/ headers reach nlohmann-json or zlib") {
  std::size_t checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(include_root / "gantry")) {
    if (entry.path().extension() != ".hpp") continue;
    const std::string header = fs::relative(entry.path(), include_root).generic_string();
    // The umbrella and the compiled part of separate compilation include io/ by design.
    if (header.starts_with("gantry/io/") || header == "gantry/gantry.hpp" || header == "gantry/compiled.hpp") continue;
    CAPTURE(header);
    const auto reached = reached_from(header);
    CHECK_FALSE(reaches(reached, "nlohmann/"));
    CHECK_FALSE(reached.contains("zlib.h"));
    ++checked;
  }
  CHECK(checked > 50);
}

TEST_CASE("the link fit and the concepts of models need no Eigen") {
  for (const std::string header : {"gantry/model/link_fit.hpp", "gantry/model/model.hpp", "gantry/graph/adaptor.hpp"}) {
    CAPTURE(header);
    CHECK_FALSE(reaches(reached_from(header), "Eigen/"));
  }
  // The concepts of graphs name no concrete graph type.
  CHECK_FALSE(reached_from("gantry/graph/adaptor.hpp").contains("gantry/graph/graph.hpp"));
}
