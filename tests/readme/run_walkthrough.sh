#!/usr/bin/env bash
# Runs the README's walk-through (the ```sh block whose first line is "# walk-through:") as it
# stands there, with the gantry tool under test, in a scratch directory that sees the repository's
# tools/ and examples/. Exits 77 (skipped) where Python cannot import torch.
#   run_walkthrough.sh GANTRY_BINARY SOURCE_DIR SCRATCH_DIR
set -euo pipefail
gantry=$(realpath "$1")
source_dir=$(realpath "$2")
scratch=$3
python=${PYTHON:-python3}

if ! "$python" -c "import torch" >/dev/null 2>&1; then
  echo "skipped: '$python' cannot import torch (install python3-torch)"
  exit 77
fi

block=$(awk '/^```sh$/ { inside = 1; lines = ""; next }
             inside && /^```$/ { if (lines ~ /^# walk-through:/) { printf "%s", lines; exit } inside = 0; next }
             inside { lines = lines $0 "\n" }' "$source_dir/README.md")
if [[ -z $block ]]; then
  echo "FAIL: README.md has no \`\`\`sh block whose first line is '# walk-through:'" >&2
  exit 1
fi

rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch"
ln -s "$source_dir/tools" tools
ln -s "$source_dir/examples" examples
{
  echo 'set -euo pipefail'
  printf 'gantry() { %q "$@"; }\n' "$gantry"
  printf 'python3() { %q "$@"; }\n' "$python"
  printf '%s\n' "$block"
} >walkthrough.sh
bash walkthrough.sh >stdout.txt 2>stderr.txt || {
  echo "FAIL: the README's walk-through failed:" >&2
  cat stdout.txt stderr.txt >&2
  exit 1
}

failures=0
check() {
  if ! grep -qE -- "$2" "$1"; then
    echo "FAIL: $3" >&2
    failures=$((failures + 1))
  fi
}
check stdout.txt '^rank  algorithm' "compare printed no ranked table"
check stdout.txt '^ +1  m-|^ +1  celeritas' "compare ranked no placer first"
check stdout.txt '^lower bound ' "compare printed no lower bound"
check stdout.txt '^algorithm     m-etf' "place did not report m-etf"
check stdout.txt '^measured ' "execute did not report a measured makespan"
check stdout.txt '^validate      ok' "execute's measured runs were not all valid"
check gantt.svg 'model.json: m-etf on ' "the Gantt chart's title does not name graph and placer"
for f in model.json placement.json gantt.svg run.simulated.json run.measured.json; do
  [[ -s $f ]] || { echo "FAIL: the walk-through did not write $f" >&2; failures=$((failures + 1)); }
done
if ((failures > 0)); then
  cat stdout.txt stderr.txt >&2
  exit 1
fi
echo "README walk-through ran: $(wc -l <stdout.txt) lines of output"
