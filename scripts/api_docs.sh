#!/usr/bin/env bash
# The API reference of every header, from the headers' own comments (docs/architecture.md, "API
# reference"): Doxygen (Debian package doxygen) with docs/api/Doxyfile writes OUT_DIR/html.
# Fails, printing them, on any Doxygen warning.
#   scripts/api_docs.sh [OUT_DIR]      (default: build/api)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/api}
command -v doxygen >/dev/null || { echo "api_docs: doxygen is not installed (Debian: apt-get install doxygen)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "api_docs: python3 is not installed (the comment filter needs it)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/html" "$out/warnings.txt" "$out/input"
# The headers with their comments as Doxygen's (scripts/doxygen_filter.py), written once: as
# Doxygen's FILTER_PATTERNS, the filter's Python would start twice per header.
python3 scripts/doxygen_filter.py --tree include "$out/input"
GANTRY_API_OUT="$out" GANTRY_API_INPUT="$out/input" doxygen docs/api/Doxyfile
if [[ -s "$out/warnings.txt" ]]; then
  echo "api_docs: Doxygen warned ($(wc -l <"$out/warnings.txt") lines):" >&2
  # Where the filtered copy stands, the header itself (the filter keeps every line where it was).
  sed "s|$out/input/|include/|g" "$out/warnings.txt" >&2
  exit 1
fi
echo "api_docs: $(find "$out/html" -name '*.html' | wc -l) pages in $out/html, no warnings"
