#!/usr/bin/env bash
# Installs what gantry needs from Debian's packages, skipping what is already there.
#   scripts/install-deps.sh            build dependencies
#   scripts/install-deps.sh --tests    also python3-torch, for the exporter's smoke test, clang
#                                      with libFuzzer, for the readers' fuzz targets, lld, which
#                                      links the test build faster, doxygen,
#                                      for the API reference (scripts/api_docs.sh), and StarPU with
#                                      Open MPI, for the StarPU backend (exec/starpu_backend.hpp)
#   scripts/install-deps.sh --clp      also COIN-OR CLP, an optional faster LP backend for SCT
#                                      (found at configure time; the build never needs it)
set -euo pipefail

packages=(g++ cmake make libboost-graph-dev libglpk-dev doctest-dev
          nlohmann-json3-dev libcli11-dev zlib1g-dev libdeflate-dev libbenchmark-dev libeigen3-dev)
for arg in "$@"; do
  case "$arg" in
    --tests) packages+=(python3 python3-torch python3-torchvision clang libclang-rt-dev lld pkg-config doxygen
                      libstarpu-dev libopenmpi-dev openmpi-bin) ;;
    --clp) packages+=(coinor-libclp-dev) ;;
    *) echo "unknown option: $arg (use --tests and/or --clp)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "installing: ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
