// libFuzzer target: gantry::fuzz::pipedream (fuzz_targets.hpp). Build with -DGANTRY_BUILD_FUZZERS=ON and
// clang; scripts/fuzz.sh runs it on its seed corpus.
#include "fuzz_targets.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)gantry::fuzz::pipedream(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
