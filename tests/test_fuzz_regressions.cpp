// The fuzz targets' inputs as ordinary tests, so every run checks them under ASan and UBSan:
// the regression inputs (crashes, hangs and wrong answers found before; each must be rejected
// with a parse_error or invalid_input) and the seed corpora (each must be accepted).
#include "fuzz/fuzz_targets.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gantry::fuzz::outcome;

namespace {

const fs::path source_dir = GANTRY_SOURCE_DIR;

struct target {
  const char* name;
  std::function<outcome(std::string_view)> run;
  std::vector<fs::path> seeds;  // files or folders of inputs that must be accepted
};

std::vector<target> targets() {
  return {{"graph_json", gantry::fuzz::graph_json, {source_dir / "examples" / "graphs"}},
          {"cluster_json", gantry::fuzz::cluster_json, {source_dir / "examples" / "clusters"}},
          {"placement_json", gantry::fuzz::placement_json, {source_dir / "tests" / "fuzz" / "seeds" / "placement"}},
          {"dot", gantry::fuzz::dot, {source_dir / "tests" / "data" / "import" / "annotated.dot"}},
          {"pipedream", gantry::fuzz::pipedream, {source_dir / "tests" / "data" / "import" / "graph.txt"}}};
}

std::vector<fs::path> files_in(const fs::path& path) {
  if (!fs::is_directory(path)) return {path};
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(path))
    if (entry.is_regular_file() && entry.path().extension() != ".md") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("every regression input of every fuzz target is rejected cleanly") {
  std::size_t count = 0;
  for (const auto& t : targets()) {
    for (const auto& file : files_in(source_dir / "tests" / "fuzz" / "regressions" / t.name)) {
      CAPTURE(file.string());
      outcome result = outcome::accepted;
      CHECK_NOTHROW(result = t.run(slurp(file)));
      CHECK(result == outcome::rejected);
      ++count;
    }
  }
  CHECK(count >= 15);
}

TEST_CASE("every seed of every fuzz target is accepted") {
  for (const auto& t : targets())
    for (const auto& seed : t.seeds)
      for (const auto& file : files_in(seed)) {
        CAPTURE(file.string());
        outcome result = outcome::rejected;
        CHECK_NOTHROW(result = t.run(slurp(file)));
        CHECK(result == outcome::accepted);
      }
}
