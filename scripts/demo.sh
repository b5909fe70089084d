#!/usr/bin/env bash
# One command from a fresh Debian machine to a comparison table: installs missing packages,
# configures and builds the gantry tool (Release), then compares every placer on a graph shipped
# in the repository on 4 devices, first with transfers in parallel, then one at a time per device.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
build=${GANTRY_DEMO_BUILD:-build-demo}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGANTRY_BUILD_TESTS=OFF -DGANTRY_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target gantry_cli -j"$(nproc)"

graph=examples/graphs/inception_v3.json.gz
[[ -f $graph ]] || graph=examples/graphs/tiny.json
echo
echo "== $graph on 4 devices with ample memory"
"$build/tools/gantry" compare --graph "$graph" --devices 4 --memory 64GiB
echo
echo "== the same with sequential transfers (one at a time per device)"
"$build/tools/gantry" compare --graph "$graph" --devices 4 --memory 64GiB --comm sequential
