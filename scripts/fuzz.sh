#!/usr/bin/env bash
# Builds the readers' libFuzzer targets with clang and runs each for a fixed time on its seed
# corpus and regression inputs, as many at once as there are cores. Skips (exit 0, with a line
# saying why) where clang or libFuzzer is missing. New crash inputs are left in the build folder;
# copy them into tests/fuzz/regressions/<target>/ once fixed, so the doctest replays them on every
# run.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 25)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-25}
build=${GANTRY_FUZZ_BUILD:-build-fuzz}

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
if ! command -v clang++ >/dev/null ||
   ! printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n' |
     clang++ -x c++ -fsanitize=fuzzer - -o "$probe/probe" 2>/dev/null; then
  echo "fuzz: skipped (clang++ with libFuzzer not found; install clang and libclang-rt-dev)"
  exit 0
fi

cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGANTRY_BUILD_FUZZERS=ON \
      -DGANTRY_BUILD_TESTS=OFF -DGANTRY_BUILD_EXAMPLES=OFF -DGANTRY_BUILD_TOOLS=OFF -DGANTRY_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_targets

declare -A seeds=(
  [graph_json]="examples/graphs/tiny.json"  # the large example graphs make each run slow
  [cluster_json]="examples/clusters"
  [placement_json]="tests/fuzz/seeds/placement"
  [dot]="tests/data/import/annotated.dot tests/data/import/bad_value.dot tests/data/import/cycle.dot"
  [pipedream]="tests/data/import/graph.txt tests/data/import/bad_graph.txt"
)
# Runs one target for the given time; prints its last line of stats, or fails with its log's tail.
fuzz_one() {
  local target=$1
  if ! "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=8192 \
       -artifact_prefix="$build/crashes/$target/" -print_final_stats=0 \
       "$build/corpus/$target" "tests/fuzz/regressions/$target" >"$build/fuzz_$target.log" 2>&1; then
    echo "fuzz: $target FAILED; the input is in $build/crashes/$target/, the log in $build/fuzz_$target.log"
    tail -40 "$build/fuzz_$target.log"
    return 1
  fi
  echo "fuzz: $target: $(grep -E "^Done [0-9]+ runs" "$build/fuzz_$target.log" | tail -1)"
}

# The targets run side by side, one per core (each fuzzes on one thread for its full time).
targets=(graph_json cluster_json placement_json dot pipedream)
pids=()
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  mkdir -p "$corpus" "$build/crashes/$target"
  # The first folder collects new inputs; seeds and regressions are only read.
  for seed in ${seeds[$target]}; do
    if [[ -d $seed ]]; then cp -n "$seed"/* "$corpus"/ 2>/dev/null || true; else cp -n "$seed" "$corpus"/; fi
  done
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || true; done
  echo "fuzz: $target for ${seconds}s"
  fuzz_one "$target" >"$build/fuzz_$target.out" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  if wait "${pids[$i]}"; then
    cat "$build/fuzz_${targets[$i]}.out"
  else
    cat "$build/fuzz_${targets[$i]}.out" >&2
    status=1
  fi
done
exit $status
