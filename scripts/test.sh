#!/usr/bin/env bash
# One command from a fresh Debian machine to a tested build: installs missing packages, builds every
# test, example and the tool with AddressSanitizer + UndefinedBehaviorSanitizer, runs the suite with
# ctest (after checking that no header includes a layer above its own: scripts/check_layers.sh),
# fuzzes each reader for a short fixed time (scripts/fuzz.sh; skipped without clang), then
# proves that an installed gantry is usable from a separate project via find_package.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --tests
# No header includes a layer above its own (core < graph < model < ... < learn).
scripts/check_layers.sh
build=${GANTRY_TEST_BUILD:-build-test}
jobs=$(nproc)
# lld (installed with --tests) links the sanitized executables two to three times faster than ld.bfd.
linker=()
command -v ld.lld >/dev/null && linker=(-DGANTRY_DEV_LINKER=lld)
# -O0 -g1: with the sanitizers, -O1 makes the template-heavy tests compile ten times slower. The
# compiled part that the tests and the tool link (gantry_dev_compiled: the placer registry, the
# default instances) is compiled at -O1: twice its compile time (about 3 CPU minutes more), and the
# tests that place thousands of seeded DAGs through it run about three times faster.
# Each compile's wall time goes to compile-times.txt (scripts/time_compile.sh), each test's to
# ctest's log; the ten slowest of each are printed after the tests, to say where the time goes.
# sed, not head, keeps them: head exits after ten lines, and under pipefail sort's SIGPIPE would
# fail the run.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DGANTRY_SANITIZE=ON \
      -DGANTRY_DEV_COMPILED_OPTIONS=-O1 "${linker[@]}" \
      -DGANTRY_BUILD_TESTS=ON -DGANTRY_BUILD_EXAMPLES=ON -DGANTRY_BUILD_TOOLS=ON -DGANTRY_BUILD_BENCHMARKS=ON \
      -DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/scripts/time_compile.sh"
compile_times=$PWD/$build/compile-times.txt
rm -f "$compile_times"
GANTRY_COMPILE_TIMES=$compile_times cmake --build "$build" -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$build" --output-on-failure -j"$jobs" | tee "$build/ctest.log"
if [[ -s "$compile_times" ]]; then
  echo "slowest compile units (seconds of wall time, $jobs at once):"
  sort -rn "$compile_times" | sed -n "1,10{s|$PWD/||; s|^|  |; p}"
fi
echo "slowest tests (seconds):"
sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .*Passed *\([0-9.]*\) sec$/\2 \1/p' "$build/ctest.log" |
  sort -rn | sed -n '1,10s/^/  /p'

# Each reader's libFuzzer target for 25 s, a core each (about 75 s for all five on 2 cores).
GANTRY_FUZZ_BUILD="$build-fuzz" scripts/fuzz.sh "${GANTRY_FUZZ_SECONDS:-25}"

# Install into a scratch prefix and build a consumer that uses find_package(gantry).
prefix=$(mktemp -d)
consumer=$(mktemp -d)
trap 'rm -rf "$prefix" "$consumer"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S tests/install -B "$consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$consumer" -j"$jobs" >/dev/null
"$consumer/consumer"
"$consumer/consumer_compiled"
"$consumer/consumer_core"
# Without CMake: the pkg-config file's flags are all a core consumer needs.
if command -v pkg-config >/dev/null; then
  flags=$(PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --cflags gantry)
  # shellcheck disable=SC2086
  g++ $flags tests/install/consumer_core.cpp -o "$consumer/consumer_core_pc"
  "$consumer/consumer_core_pc"
fi
echo "install test passed: find_package(gantry) (header-only and gantry::compiled) and pkg-config from a separate project"
