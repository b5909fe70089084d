#!/usr/bin/env bash
# A compiler launcher (CMAKE_CXX_COMPILER_LAUNCHER) that runs the compile it is given and appends
# "<seconds> <object>" to $GANTRY_COMPILE_TIMES, so that scripts/test.sh can name the slowest
# compile units. Without that variable it only runs the compile.
set -uo pipefail
[[ -n "${GANTRY_COMPILE_TIMES:-}" ]] || exec "$@"
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
object=unknown
args=("$@")
for ((i = 0; i < ${#args[@]} - 1; i++)); do
  [[ "${args[i]}" == -o ]] && object=${args[i + 1]}
done
# One short line per write: lines from parallel compiles do not interleave.
awk -v a="$start" -v b="$end" -v o="$object" 'BEGIN { printf "%.1f %s\n", b - a, o }' >>"$GANTRY_COMPILE_TIMES"
exit $rc
