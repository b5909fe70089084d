#!/usr/bin/env bash
# The library's layers, lowest first: a header may include headers of its own folder and of the
# folders before it, never of a folder after it. The umbrella headers (gantry/gantry.hpp,
# gantry/algorithms.hpp) sit above every layer. A new folder must be given its place here.
#   scripts/check_layers.sh [INCLUDE_DIR]     (default: include/gantry beside this script)
set -uo pipefail
root=${1:-$(dirname "$0")/../include/gantry}
layers=(core graph model order schedule fusion lp sim pipeline io workloads place exec learn)

declare -A rank
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done

failures=0
for dir in "$root"/*/; do
  folder=$(basename "$dir")
  if [[ -z ${rank[$folder]+set} ]]; then
    echo "check_layers: include/gantry/$folder/ is not a layer: add it to scripts/check_layers.sh" >&2
    failures=$((failures + 1))
  fi
done

while IFS= read -r header; do
  folder=${header#"$root"/}
  folder=${folder%%/*}
  [[ -z ${rank[$folder]+set} ]] && continue
  while IFS= read -r line; do
    number=${line%%:*}
    target=$(sed -E 's/.*#include <gantry\/([a-z_]+)\/.*/\1/' <<<"$line")
    if [[ -z ${rank[$target]+set} ]]; then
      echo "${header#"$root"/}:$number includes gantry/$target/, which is not a layer" >&2
      failures=$((failures + 1))
    elif ((rank[$target] > rank[$folder])); then
      echo "${header#"$root"/}:$number: $folder/ includes $target/, a layer above it (order: ${layers[*]})" >&2
      failures=$((failures + 1))
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include <gantry/[a-z_]+/' "$header")
done < <(find "$root" -mindepth 2 -name '*.hpp' | sort)

if ((failures > 0)); then
  echo "check_layers: $failures include(s) against the layers" >&2
  exit 1
fi
echo "check_layers: every header includes only its own layer and those below (${layers[*]})"
