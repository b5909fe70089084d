#!/usr/bin/env bash
# Bad input to the gantry tool: each case must exit with the expected status and print a message
# that names the option, file or field, and failed commands must leave no output file behind.
#   run_cli_checks.sh GANTRY_BINARY SOURCE_DIR SCRATCH_DIR
set -uo pipefail
gantry=$(realpath "$1")
source_dir=$(realpath "$2")
scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1
tiny=$source_dir/examples/graphs/tiny.json
failures=0

# expect STATUS PATTERN COMMAND...: the command exits with STATUS and its stderr contains PATTERN.
expect() {
  local status=$1 pattern=$2
  shift 2
  "$@" >stdout.txt 2>stderr.txt
  local got=$?
  if [[ $got -ne $status ]] || ! grep -qF -- "$pattern" stderr.txt; then
    echo "FAIL: $* -> exit $got (expected $status), stderr:" >&2
    cat stderr.txt >&2
    echo "      expected it to contain: $pattern" >&2
    failures=$((failures + 1))
  fi
}
absent() {
  for f in "$@"; do
    if [[ -e $f ]]; then
      echo "FAIL: $f was written by a command that failed" >&2
      failures=$((failures + 1))
    fi
  done
  if compgen -G '.*.tmp' >/dev/null; then
    echo "FAIL: temporary files left behind: $(ls -a | grep '\.tmp$')" >&2
    failures=$((failures + 1))
  fi
}

"$gantry" place -g "$tiny" --devices 2 -o placement.json >/dev/null || { echo "FAIL: a plain place failed" >&2; exit 1; }

# One grammar for every command: sizes, durations and rates need their unit (0 aside); a cluster
# file or the flags that describe devices, never both; counts and reals say their range.
printf '%s\n' '{"format":"gantry.chain","version":1,"layers":[{"forward":1e-3,"backward":2e-3},{"forward":1e-3,"backward":2e-3}]}' >c2.json
expect 2 "--latency: '10' has no unit; write it with one, e.g. 10us" "$gantry" place -g "$tiny" --devices 2 --latency 10
expect 2 "--memory: '8' has no unit" "$gantry" compare -g "$tiny" --devices 2 --memory 8
expect 2 "--bandwidth: '12' has no unit" "$gantry" place -g "$tiny" --devices 2 --bandwidth 12
expect 2 "--memory: '16' has no unit" "$gantry" pipeline --chain c2.json -d 2 --memory 16
expect 2 "--cluster-memory: '100' has no unit" "$gantry" place -g "$tiny" --devices 2 --fuse kernighan --cluster-memory 100
expect 2 "--op-overhead: '5' has no unit" "$gantry" workload ffnn --op-overhead 5
expect 2 "--launch-overhead: '3' has no unit" "$gantry" execute -g "$tiny" --devices 2 --launch-overhead 3
"$gantry" place -g "$tiny" --devices 2 --latency 0 >stdout.txt 2>stderr.txt ||
  { echo "FAIL: --latency 0 (no unit needed) was refused:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
grep -q "^cluster       2 devices of unlimited memory, parallel transfers, links " stdout.txt ||
  { echo "FAIL: place does not print the cluster and its link:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
printf '{"format":"gantry.cluster","version":1,"devices":[{"name":"a"},{"name":"b"}],"link":{"latency":1e-5,"bandwidth":1e9}}' >two.json
expect 2 "--cluster excludes --devices" "$gantry" place -g "$tiny" --cluster two.json --devices 2
expect 2 "--cluster excludes --memory" "$gantry" compare -g "$tiny" --cluster two.json --memory 1GiB
expect 2 "excludes --devices" "$gantry" pipeline --chain c2.json --cluster two.json -d 2
"$gantry" compare -g "$tiny" --cluster two.json --algorithms m-etf >stdout.txt 2>stderr.txt ||
  { echo "FAIL: compare --cluster:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
grep -q "parallel transfers, links 10.0 us + bytes / " stdout.txt ||
  { echo "FAIL: compare's header does not print the link:" >&2; head -2 stdout.txt >&2; failures=$((failures + 1)); }
expect 2 "--batch: expected a whole number of at least 1, got '0'" "$gantry" workload ffnn --batch 0
# A graph profiled on a CPU placed on GPUs is warned about; with per-kind times for the GPUs it is not.
printf '%s\n' '{"format":"gantry.graph","version":1,"metadata":{"device":"cpu: test"},"vertices":[{"name":"a","compute":1e-3},{"name":"b","compute":1e-3}],"edges":[{"from":"a","to":"b","bytes":100}]}' >cpu_profiled.json
printf '%s\n' '{"format":"gantry.graph","version":1,"metadata":{"device":"cpu: test"},"vertices":[{"name":"a","compute":{"default":1e-3,"gpu":1e-4}},{"name":"b","compute":1e-3}],"edges":[{"from":"a","to":"b","bytes":100}]}' >cpu_and_gpu.json
printf '%s\n' '{"format":"gantry.cluster","version":1,"devices":[{"name":"g0","kind":"gpu"},{"name":"g1","kind":"gpu"}],"link":{"latency":1e-5,"bandwidth":1e9}}' >gpus.json
"$gantry" place -g cpu_profiled.json --cluster gpus.json >stdout.txt 2>stderr.txt
grep -q "warning: the graph's times were profiled on cpu: test" stderr.txt ||
  { echo "FAIL: no warning for CPU times on GPUs:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
"$gantry" compare -g cpu_and_gpu.json --cluster gpus.json --algorithms m-etf >stdout.txt 2>stderr.txt
if grep -q "warning" stderr.txt; then
  echo "FAIL: a warning for a graph with GPU times:" >&2; cat stderr.txt >&2; failures=$((failures + 1))
fi
# One policy for every file: an unknown key is refused, naming it and the field it likely meant.
printf '%s\n' '{"format":"gantry.graph","version":1,"vertices":[{"name":"a","outputs":"4KiB"}]}' >misspelt.json
expect 2 'misspelt.json: /vertices/0/outputs: unknown field (did you mean "output"?)' "$gantry" place -g misspelt.json -d 2 -o misspelt_out.json
absent misspelt_out.json
printf '%s\n' '{"format":"gantry.cluster","version":1,"devices":[{"name":"a","memroy":"1GiB"}]}' >misspelt_cluster.json
expect 2 'misspelt_cluster.json: /devices/0/memroy: unknown field (did you mean "memory"?)' "$gantry" place -g "$tiny" --cluster misspelt_cluster.json

# Pictures say what they show: the Gantt chart names graph, placer and makespan and has a key;
# compare's bars have a legend.
"$gantry" place -g "$tiny" --devices 2 --svg gantt.svg >/dev/null 2>&1
grep -q "font-weight=\"bold\">tiny.json: m-etf on 2 devices.*, makespan " gantt.svg ||
  { echo "FAIL: the Gantt chart has no title naming graph, placer and makespan" >&2; failures=$((failures + 1)); }
grep -q "a colour per vertex, the same in every row" gantt.svg ||
  { echo "FAIL: the Gantt chart has no key" >&2; failures=$((failures + 1)); }
"$gantry" compare -g "$tiny" --devices 2 --algorithms m-etf,heft --svg bars.svg >/dev/null 2>&1
grep -q "at the lower bound (optimal)" bars.svg && grep -q "above the lower bound" bars.svg ||
  { echo "FAIL: compare's SVG has no legend" >&2; failures=$((failures + 1)); }

# The default placer is m-etf in place as in execute; pipeline writes an SVG only when asked.
"$gantry" place -g "$tiny" --devices 2 >stdout.txt 2>&1
grep -q "^algorithm     m-etf " stdout.txt || { echo "FAIL: place's default placer is not m-etf" >&2; failures=$((failures + 1)); }
"$gantry" pipeline --chain c2.json -d 2 >stdout.txt 2>stderr.txt ||
  { echo "FAIL: pipeline without --svg:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
[[ ! -e pipeline.svg ]] || { echo "FAIL: pipeline wrote pipeline.svg unasked" >&2; failures=$((failures + 1)); }
# pipeline's default link is place's (12 GB/s, 10 us), named in the report; unlimited and 0 is free.
grep -q "links 11.18 GiB/s, latency 10.0 us" stdout.txt ||
  { echo "FAIL: pipeline's default link is not place's:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
"$gantry" pipeline --chain c2.json -d 2 --bandwidth unlimited --latency 0 >stdout.txt 2>&1
grep -q "communication free" stdout.txt ||
  { echo "FAIL: pipeline --bandwidth unlimited --latency 0 is not free:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }

# compare ranks the placers by the fastest of the replay, the run in each placer's order and its own
# schedule replayed, and place prints them all.
"$gantry" place -g "$tiny" --devices 2 -a heft >stdout.txt 2>&1
grep -q "^in its order  " stdout.txt || { echo "FAIL: place does not print the run in the placer's order" >&2; failures=$((failures + 1)); }
"$gantry" compare -g "$tiny" --devices 2 --algorithms m-topo,heft,m-etf,critical-path --format json >ranked.json 2>stderr.txt ||
  { echo "FAIL: compare --format json:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
python3 - ranked.json <<'PY' || { echo "FAIL: compare's rows are not ranked by the faster of their two runs" >&2; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranked_by"].startswith("ranked_makespan"), d["ranked_by"]
rows = d["results"]
assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1)), rows
spans = [r["ranked_makespan"] for r in rows]
assert spans == sorted(spans), spans
for r in rows:
    runs = {"in_order": r["in_order_makespan"], "replay": r["makespan"], "own": r["own_makespan"]}
    assert r["ranked_makespan"] == min(x for x in runs.values() if x is not None), r
    assert runs[r["ranked_run"]] == r["ranked_makespan"], r
PY

# Where a list scheduler's own schedule, replayed with its transfers in the order it reserved them,
# beats both other runs (Topcuoglu's graph on 3 devices of one channel each), compare ranks the row
# by it and place keeps and writes it.
"$gantry" compare -g "$source_dir/examples/graphs/topcuoglu.json" --devices 3 --comm sequential -a etf,heft \
  --format json >own.json 2>stderr.txt || { echo "FAIL: compare on topcuoglu:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
python3 - own.json <<'PY' || { echo "FAIL: compare does not rank etf by its own schedule on topcuoglu" >&2; failures=$((failures + 1)); }
import json, sys
row = {r["algorithm"]: r for r in json.load(open(sys.argv[1]))["results"]}["etf"]
assert row["ranked_run"] == "own", row
assert row["ranked_makespan"] == row["own_makespan"] < row["in_order_makespan"] < row["makespan"], row
PY
"$gantry" place -g "$source_dir/examples/graphs/topcuoglu.json" --devices 3 --comm sequential -a etf --format json \
  -o own_placed.json >own_place.json 2>own_place.txt || { echo "FAIL: place on topcuoglu:" >&2; cat own_place.txt >&2; failures=$((failures + 1)); }
grep -q "^own schedule  .*reserved them, kept)" own_place.txt ||
  { echo "FAIL: place does not say it kept etf's own schedule:" >&2; cat own_place.txt >&2; failures=$((failures + 1)); }
python3 - own_place.json own_placed.json <<'PY' || { echo "FAIL: place's document on topcuoglu" >&2; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["run"] == "own schedule" and d["makespan"] == d["own_makespan"] < d["in_order_makespan"], d
assert json.load(open(sys.argv[2]))["metadata"]["run"] == "own schedule"
PY

# place --format json: the report as a document on stdout (the text on stderr), the same figures.
"$gantry" place -g "$tiny" --devices 2 --latency 1ms --local-search 50 --format json -o placed_json.json \
  >placed.json 2>stderr.txt || { echo "FAIL: place --format json:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
grep -q "^algorithm     m-etf" stderr.txt || { echo "FAIL: place --format json does not put its text on stderr" >&2; failures=$((failures + 1)); }
python3 - placed.json placed_json.json <<'PY' || { echo "FAIL: place --format json's document" >&2; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
placement = json.load(open(sys.argv[2]))
assert d["algorithm"].startswith("m-etf") and d["respects_memory"] is True, d
assert d["local_search"]["simulations"] >= 1, d
runs = {"placement-order": d["replay_makespan"], "strict-order": d["in_order_makespan"], "own schedule": d["own_makespan"]}
assert d["makespan"] == runs[d["run"]] == min(x for x in runs.values() if x is not None), d
assert len(d["devices"]) == 2 and d["units"]["time"] == "seconds", d
assert placement["metadata"]["run"] == d["run"], placement["metadata"]
PY

# Where the work-conserving replay runs out of memory and the placer's order fits (the memory the
# placer checked), place keeps and writes the run in its order, and simulate and compare agree.
oom=$source_dir/tests/data/replay_oom
for args in "oom_m-heft_seed3088 m-heft" "oom_adjusting-placement_seed845_nocache adjusting-placement --no-cache"; do
  read -r -a words <<<"$args"
  files=(-g "$oom/${words[0]}.graph.json" --cluster "$oom/${words[0]}.cluster.json")
  extra=("${words[@]:2}")
  if ! "$gantry" place "${files[@]}" -a "${words[1]}" "${extra[@]}" -o judged.json >place.txt 2>stderr.txt; then
    echo "FAIL: place refuses ${words[0]}, whose order fits:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); continue
  fi
  grep -q "^replayed      does not run (out of memory)" place.txt && grep -q "strict-order, kept)" place.txt ||
    { echo "FAIL: place does not say it kept the run in its order on ${words[0]}:" >&2; cat place.txt >&2; failures=$((failures + 1)); }
  "$gantry" simulate "${files[@]}" -p judged.json "${extra[@]}" --validate >simulate.txt 2>stderr.txt ||
    { echo "FAIL: simulate refuses the placement place wrote for ${words[0]}:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
  [[ "$(grep '^makespan' place.txt)" == "$(grep '^makespan' simulate.txt)" ]] && grep -q "^validate      ok" simulate.txt ||
    { echo "FAIL: simulate and place differ on ${words[0]}:" >&2; cat place.txt simulate.txt >&2; failures=$((failures + 1)); }
  "$gantry" compare "${files[@]}" -a "${words[1]}" "${extra[@]}" --format json >ranked.json 2>stderr.txt ||
    { echo "FAIL: compare on ${words[0]}:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
  python3 - ranked.json judged.json <<'PY' || { echo "FAIL: compare and place disagree on ${words[0]}" >&2; failures=$((failures + 1)); }
import json, sys
row = json.load(open(sys.argv[1]))["results"][0]
assert row["rank"] == 1 and row["ranked_run"] == "in_order" and row["makespan"] is None, row
placed = json.load(open(sys.argv[2]))
assert placed["metadata"]["run"] == "strict-order", placed["metadata"]
PY
done

# Numeric options: named, with the accepted range.
expect 2 "--devices: expected a whole number from 1 to 1048576, got '-1'" "$gantry" place -g "$tiny" --devices -1
expect 2 "--runs: expected a whole number from 0 to 1000000, got '-1'" "$gantry" simulate -g "$tiny" -p placement.json --runs -1 --cv 0.1
expect 2 "--cv: expected a finite number from 0 to 100, got '1e155'" "$gantry" simulate -g "$tiny" -p placement.json --runs 5 --cv 1e155
expect 2 "--cv: expected a finite number from 0 to 100, got 'nan'" "$gantry" simulate -g "$tiny" -p placement.json --runs 5 --cv nan
expect 2 "--runs 5 needs --cv" "$gantry" simulate -g "$tiny" -p placement.json --runs 5
expect 2 "--seed: expected a whole number" "$gantry" simulate -g "$tiny" -p placement.json --seed -3
expect 2 "--memory: invalid byte count '12XB'" "$gantry" compare -g "$tiny" --devices 2 --memory 12XB
expect 2 "--latency: invalid duration" "$gantry" compare -g "$tiny" --devices 2 --latency -1s
expect 2 "--cluster-memory: invalid byte count '3XB'" "$gantry" place -g "$tiny" --devices 2 --fuse kernighan --cluster-memory 3XB
expect 2 "--fuse: expected none, " "$gantry" compare -g "$tiny" --devices 2 --fuse nonsense
expect 2 "--window: expected a whole number from 1 to 1048576, got '0'" "$gantry" place -g "$tiny" --devices 2 -a celeritas --window 0
# Best effort is reported: celeritas places every vertex, but over capacity is a failure with no output.
expect 1 "celeritas failed (over capacity)" "$gantry" place -g "$tiny" --devices 2 --memory 1MiB -a celeritas -o over.json
absent over.json

# Deep nesting: a clear error, not a stack overflow.
printf '%*s' 100000 '' | tr ' ' '[' >deep.json
expect 2 "deep.json: line 1, column 257 (byte offset 256): arrays and objects nest deeper than 256" "$gantry" place -g deep.json --devices 2
expect 2 "nest deeper than 256" "$gantry" simulate -g "$tiny" -p deep.json

# A gzip bomb stops at the limit.
head -c $((64 << 20)) /dev/zero | tr '\0' ' ' | gzip -9 >bomb.json.gz
expect 2 "bomb.json.gz: the gzip data inflates to more than 8.00 MiB" "$gantry" place -g bomb.json.gz --devices 2 --max-inflated-size 8MiB

# Times that overflow: refused, and --out is not written.
cat >huge.json <<'JSON'
{"format": "gantry.graph", "version": 1, "vertices": [{"name": "a", "compute": 1e308}, {"name": "b", "compute": 1e308}],
 "edges": [{"from": "a", "to": "b"}]}
JSON
expect 2 "the simulated makespan is not finite (inf s): the compute and transfer times of huge.json" \
  "$gantry" place -g huge.json --devices 1 -o huge_placement.json
absent huge_placement.json
# compare stops at the first placer that finds the times too large: celeritas's fusion adds them up.
expect 2 "is not finite" "$gantry" compare -g huge.json --devices 2
expect 2 "makespan is not finite" "$gantry" compare -g huge.json --devices 2 --algorithms m-etf
cat >bytes.json <<'JSON'
{"format": "gantry.graph", "version": 1, "vertices": [{"name": "a", "persistent": 9223372036854775808, "output": 9223372036854775808}]}
JSON
expect 2 "bytes.json: /vertices/0: the graph's byte counts" "$gantry" place -g bytes.json --devices 1

# A failed simulation writes nothing; a failing later output keeps earlier ones from appearing.
expect 1 "(no output files written)" "$gantry" place -g "$tiny" --devices 2 --memory 1KiB -a single-device -o oom.json --svg oom.svg
absent oom.json oom.svg
expect 1 "cannot write '$scratch/missing/x.svg': directory" "$gantry" place -g "$tiny" --devices 2 -o first.json --dot first.dot --svg "$scratch/missing/x.svg"
absent first.json first.dot
# A legal name of 255 bytes.
long=$(printf 'n%.0s' $(seq 1 250)).json
"$gantry" place -g "$tiny" --devices 2 -o "$long" >/dev/null 2>stderr.txt || { echo "FAIL: a 255-byte name:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
[[ -s $long ]] || { echo "FAIL: $long not written" >&2; failures=$((failures + 1)); }

# Placement files: a failed one and a short order are refused naming the file and field.
sed -e 's/"status": "ok"/"status": "out_of_memory"/' -e '0,/"device": "d1"/s//"device": null/' placement.json >failed.json
expect 2 "failed.json: /status: the placement failed (out_of_memory" "$gantry" simulate -g "$tiny" -p failed.json
awk '/"order": \[/{print; getline; print "    \"input\""; skip=1; next} skip && /\]/{skip=0} !skip' placement.json >short.json
expect 2 "short.json: /order: lists 1 of the graph's" "$gantry" simulate -g "$tiny" -p short.json

# compare prints a lower bound and each placer's ratio to it; the exact placer is refused above its
# vertex limit when asked for by name, and its time limit must be a duration.
"$gantry" compare -g "$tiny" --devices 2 --algorithms m-etf,exact >compare.txt 2>stderr.txt ||
  { echo "FAIL: compare with exact:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
for pattern in "lower bound" "vs bound" "m-etf" "exact"; do
  grep -qF -- "$pattern" compare.txt || { echo "FAIL: compare's output lacks '$pattern':" >&2; cat compare.txt >&2; failures=$((failures + 1)); }
done
"$gantry" compare -g "$tiny" --devices 2 --algorithms exact --format json >compare.json 2>stderr.txt ||
  { echo "FAIL: compare --format json with exact" >&2; failures=$((failures + 1)); }
grep -qF '"bound_ratio": 1.0' compare.json || { echo "FAIL: the exact row is not at its own bound:" >&2; cat compare.json >&2; failures=$((failures + 1)); }
"$gantry" compare -g "$tiny" --devices 2 --algorithms m-etf,single-device --svg compare.svg >/dev/null 2>stderr.txt ||
  { echo "FAIL: compare --svg:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
for pattern in "<svg" "m-etf" "single-device" "lower bound" "stroke-dasharray"; do
  grep -qF -- "$pattern" compare.svg || { echo "FAIL: compare.svg lacks '$pattern'" >&2; failures=$((failures + 1)); }
done
expect 2 "--exact-time-limit: invalid duration" "$gantry" compare -g "$tiny" --devices 2 --exact-time-limit soon
expect 2 "the exact placer takes at most 30" "$gantry" compare -g "$source_dir/examples/graphs/inception_v3.json.gz" --devices 2 --algorithms exact
# GLPK's branch and bound ends early on Topcuoglu's example on 2 default devices (GLP_EFAIL, or in
# a release build a failed assertion in its simplex that used to abort the process): place still
# answers with the best schedule found and its bound, and says why.
"$gantry" place -g "$source_dir/examples/graphs/topcuoglu.json" --devices 2 -a exact >exact.txt 2>stderr.txt ||
  { echo "FAIL: place -a exact on topcuoglu.json, 2 devices:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
grep -qE "^proven bound .*(optimal|time limit reached|GLPK)" exact.txt ||
  { echo "FAIL: place -a exact on topcuoglu.json gives no bound or no reason:" >&2; cat exact.txt >&2; failures=$((failures + 1)); }

# --bandwidth unlimited; simulate --format json, with units and full-precision numbers.
"$gantry" place -g "$tiny" --devices 2 --bandwidth unlimited -o unlimited.json >/dev/null 2>stderr.txt ||
  { echo "FAIL: --bandwidth unlimited:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
"$gantry" simulate -g "$tiny" -p placement.json --format json --validate >simulate.json 2>stderr.txt ||
  { echo "FAIL: simulate --format json:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
python3 - simulate.json <<'PY' || failures=$((failures + 1))
import json, sys
d = json.load(open(sys.argv[1]))
assert d["units"] == {"time": "seconds", "memory": "bytes"}, d
assert d["valid"] is True and len(d["devices"]) == 2, d
assert isinstance(d["makespan"], float) and d["makespan"] > 0, d
PY

# gantry learn (built with Eigen): bad stages and bad weight files are refused without output;
# a short run writes placement, weights and curve, and the weights load back for fine-tuning.
if "$gantry" learn --help >/dev/null 2>&1; then
  expect 2 "--time-limit: '600' has no unit" "$gantry" learn -g "$tiny" --devices 2 --time-limit 600
  expect 2 "--rate: expected a finite number > 0, got '0'" "$gantry" learn -g "$tiny" --devices 2 --rate 0
  expect 2 "--restart-after: expected a whole number of at least 0, got '-3'" \
    "$gantry" learn -g "$tiny" --devices 2 --restart-after -3
  expect 2 "--stages: expected imitation, reinforce or measured, got 'nonsense'" "$gantry" learn -g "$tiny" --devices 2 --stages imitation,nonsense -o learned.json
  expect 2 "got 'imitaton' (did you mean 'imitation'?)" "$gantry" learn -g "$tiny" --devices 2 --stages imitaton
  absent learned.json
  printf 'gantry-doppler-weights 1\nrounds 2\nselect 62 4\n0.5\nnot-a-number\n' >bad_weights.txt
  expect 2 "bad_weights.txt:5: parameter 2 of select is not a finite number" \
    "$gantry" learn -g "$tiny" --devices 2 --weights-in bad_weights.txt -o learned.json
  absent learned.json
  "$gantry" learn -g "$tiny" --devices 2 --imitation-episodes 3 --episodes 5 -o learned.json \
    --weights-out weights.txt --curve curve.csv --curve-svg curve.svg >/dev/null 2>stderr.txt ||
    { echo "FAIL: a short gantry learn failed:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
  for f in learned.json weights.txt curve.csv curve.svg; do
    [[ -s $f ]] || { echo "FAIL: gantry learn did not write $f" >&2; failures=$((failures + 1)); }
  done
  [[ $(wc -l <curve.csv) -eq 9 ]] || { echo "FAIL: curve.csv should have a header and 8 episodes" >&2; failures=$((failures + 1)); }
  "$gantry" learn -g "$tiny" --devices 2 --stages reinforce --episodes 2 --weights-in weights.txt >/dev/null 2>stderr.txt ||
    { echo "FAIL: gantry learn --weights-in:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
  # Training longer than 2 s says where it stands every 2 s on stderr, although it is no terminal.
  "$gantry" learn -g "$tiny" --devices 2 --imitation-episodes 2 --episodes 10000000 --time-limit 2.5s \
    >stdout.txt 2>stderr.txt && grep -qE "^gantry learn: 2 s, training: [0-9]+ of 10000002 episodes, " stderr.txt ||
    { echo "FAIL: gantry learn for 2.5 s says nothing at 2 s:" >&2; tail -5 stderr.txt >&2; failures=$((failures + 1)); }
  expect 2 "--teacher: unknown placer 'oracle'" "$gantry" learn -g "$tiny" --devices 2 --teacher oracle -o learned2.json
  absent learned2.json
  "$gantry" learn -g "$tiny" --devices 2 --teacher heft --imitation-episodes 3 --episodes 2 >stdout.txt 2>stderr.txt ||
    { echo "FAIL: gantry learn --teacher heft:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
  grep -q "^teacher  *heft: " stdout.txt && grep -q "agreement with the teacher" stdout.txt ||
    { echo "FAIL: gantry learn --teacher heft does not name its teacher" >&2; failures=$((failures + 1)); }
  # By default the teacher is the best of the registry, and the answer is never worse than it.
  "$gantry" learn -g "$tiny" --devices 2 --imitation-episodes 2 --episodes 2 -o taught.json >stdout.txt 2>stderr.txt ||
    { echo "FAIL: gantry learn with the default teacher:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
  python3 - stdout.txt <<'PY' || { echo "FAIL: gantry learn's default teacher or its answer:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
import re, sys
text = open(sys.argv[1]).read()
units = {"s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
def seconds(value, unit): return float(value) * units[unit]
teacher = re.search(r"^teacher +(\S+): ([0-9.]+) (\S+), the best of ([0-9]+) registry placers", text, re.M)
best = re.search(r"^best +([0-9.]+) (\S+) simulated makespan, (decoded by the policy|the teacher's placement)", text, re.M)
assert teacher and best, text
assert int(teacher.group(4)) >= 10, teacher.group(0)
assert seconds(best.group(1), best.group(2)) <= seconds(teacher.group(2), teacher.group(3)), text
PY
  expect 2 "--teacher: unknown placer 'hefft' (did you mean 'heft'?)" \
    "$gantry" learn -g "$tiny" --devices 2 --teacher hefft -o learned2.json
  # doppler in place/compare trains for a fixed budget (the same placement everywhere); a wall-clock
  # limit is asked for explicitly, and the output says when it cut training.
  expect 2 "--doppler-time-limit: expected a positive duration or 'none', got '0s'" \
    "$gantry" place -g "$tiny" --devices 2 -a doppler --doppler-time-limit 0s -o cut.json
  absent cut.json
  "$gantry" place -g "$tiny" --devices 2 -a doppler -o doppler1.json >/dev/null &&
    "$gantry" place -g "$tiny" --devices 2 -a doppler -o doppler2.json >/dev/null &&
    python3 - doppler1.json doppler2.json <<'PY' || { echo "FAIL: doppler's placement differs between two runs, or it stopped early" >&2; failures=$((failures + 1)); }
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["placement"] == b["placement"] and a["order"] == b["order"] and a["makespan"] == b["makespan"], (a, b)
assert int(a["metadata"]["episodes"]) >= 220, a["metadata"]
PY
  # 20 ms cuts the 220 episodes short on any machine (choosing the teacher takes part of it), and
  # the row says so; when no episode finished, its placement is its teacher's, which it also says.
  "$gantry" compare -g "$tiny" --devices 2 --algorithms doppler --doppler-time-limit 20ms >stdout.txt 2>stderr.txt ||
    { echo "FAIL: compare --doppler-time-limit 20ms:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
  grep -q "^doppler: --doppler-time-limit .* stopped training after" stdout.txt ||
    { echo "FAIL: compare does not say that the time limit cut doppler:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
  # a refusal names the placer once
  "$gantry" compare -g "$source_dir/examples/graphs/gnmt.json.gz" --devices 2 --algorithms doppler >stdout.txt 2>stderr.txt
  if grep -q "doppler: doppler:" stdout.txt || ! grep -q "^doppler: the graph has" stdout.txt; then
    echo "FAIL: compare's doppler refusal:" >&2; cat stdout.txt stderr.txt >&2; failures=$((failures + 1))
  fi
fi

# gantry calibrate and execute: bad options are named; a failed run writes no trace.
expect 2 "--time-scale: expected a finite number > 0, got '0'" "$gantry" execute -g "$tiny" --devices 2 --time-scale 0
expect 2 "--time-scale: expected a finite number > 0, got 'nan'" "$gantry" execute -g "$tiny" --devices 2 --time-scale nan
expect 2 "unknown algorithm 'nope'" "$gantry" execute -g "$tiny" --devices 2 -a nope
expect 2 "unknown algorithm 'm-ef' (did you mean 'm-etf'?)" "$gantry" place -g "$tiny" --devices 2 -a m-ef
expect 2 "gantry: unknown command 'plcae' (did you mean 'place'?)" "$gantry" plcae -g "$tiny"
expect 2 "gantry workload: unknown command 'chainm' (did you mean 'chainmm'?)" "$gantry" workload chainm
# A fusion that leaves the whole graph on one device says so (tiny fuses into 4 vertices).
"$gantry" compare -g "$tiny" --devices 4 --fuse kernighan -a m-etf >stdout.txt 2>stderr.txt &&
  grep -qF "m-etf: --fuse kernighan fused the graph into 4 vertices and the placement runs on one device" stdout.txt ||
  { echo "FAIL: compare --fuse kernighan does not say the fusion left one device:" >&2; cat stdout.txt stderr.txt >&2; failures=$((failures + 1)); }
expect 2 "unknown algorithm 'celeritas-papr' (did you mean 'celeritas-paper'?)" "$gantry" compare -g "$tiny" \
  --devices 2 -a m-etf,celeritas-papr
expect 2 "--policy: expected placement-order, strict-order, fifo or bottom-level, got 'fifi' (did you mean 'fifo'?)" "$gantry" place -g "$tiny" --devices 2 --policy fifi
expect 2 "invalid duration 'abc'" "$gantry" execute -g "$tiny" --devices 2 --launch-overhead abc
expect 2 "--devices: expected a whole number from 2 to 256, got '1'" "$gantry" calibrate --devices 1
# One device-count rule on every command: given, never assumed.
expect 2 "gantry execute: give --devices N or --cluster FILE: how many devices to run" "$gantry" execute -g "$tiny"
expect 2 "gantry calibrate: give --devices N: how many devices to run" "$gantry" calibrate
expect 2 "gantry place: give --devices N (N >= 1) or --cluster FILE" "$gantry" place -g "$tiny"
expect 2 "gantry compare: give --devices N (N >= 1) or --cluster FILE" "$gantry" compare -g "$tiny"
expect 2 "--kernel: expected auto, busy-loop, spin, sleep or work, got 'warp'" "$gantry" execute -g "$tiny" --devices 2 --kernel warp
expect 1 "m-etf failed (out of memory)" "$gantry" execute -g "$tiny" --devices 2 --memory 1KiB --trace failed
absent failed.simulated.json failed.measured.json
# A run the simulator cannot add up, or one longer than the executor's clock (2^63 ns), is refused
# before anything runs: such runs used to end at once and report "validate ok".
cat >huge_t.json <<'JSON'
{"format":"gantry.graph","version":1,"vertices":[{"name":"a","compute":1e308},{"name":"b","compute":1e308}],"edges":[{"from":"a","to":"b","bytes":8}]}
JSON
cat >big93.json <<'JSON'
{"format":"gantry.graph","version":1,"vertices":[{"name":"a","compute":9.3e9}],"edges":[]}
JSON
expect 2 "huge_t.json: vertex 'a' takes" "$gantry" execute -g huge_t.json --devices 2 --runs 1 --launch-overhead 0s --trace ht
absent ht.simulated.json ht.measured.json
expect 2 "big93.json: vertex 'a' takes" "$gantry" execute -g big93.json --devices 2 --runs 1 --launch-overhead 0s
expect 2 "with --time-scale 1e+15, more than an executor's clock can time" "$gantry" execute -g "$tiny" --devices 2 --runs 1 \
  --launch-overhead 0s --time-scale 1e15
# A domain so slow that one byte takes longer than a double holds is the cluster file's fault.
cat >d_min.cluster.json <<'JSON'
{"format":"gantry.cluster","version":1,"devices":[{"name":"a","memory":"1GiB"},{"name":"b","memory":"1GiB"},{"name":"c"}],"link":{"latency":1e-5,"bandwidth":1e10},"domains":[{"name":"x","devices":["a","b","c"],"bandwidth":5e-324}]}
JSON
expect 2 "d_min.cluster.json: /domains/0/bandwidth: bandwidth must be at least" "$gantry" execute -g "$tiny" \
  --cluster d_min.cluster.json --runs 1 --launch-overhead 0s
expect 2 "d_min.cluster.json: /domains/0/bandwidth: bandwidth must be at least" "$gantry" place -g "$tiny" \
  --cluster d_min.cluster.json
"$gantry" execute -g "$tiny" --devices 2 --runs 2 --trace run --format json >execute.json ||
  { echo "FAIL: gantry execute failed" >&2; failures=$((failures + 1)); }
python3 - execute.json <<'PY' || { echo "FAIL: gantry execute --format json" >&2; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok" and d["valid"] is True and d["runs"] == 2, d
assert d["simulated"] > 0 and d["measured_median"] > 0, d
PY
# --placements N compares exactly N placements, even where more placers give distinct ones.
"$gantry" execute -g "$tiny" --devices 2 --runs 1 --placements 3 --format json >study.json 2>stderr.txt ||
  { echo "FAIL: gantry execute --placements 3:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
python3 - study.json <<'PY' || { echo "FAIL: gantry execute --placements 3 did not compare 3 placements" >&2; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["placements"]) == 3, [p.get("name") for p in d["placements"]]
PY
# --min-gap keeps only placements simulated that far apart, and two runs each give the repeatability.
"$gantry" execute -g "$tiny" --devices 2 --runs 2 --placements 6 --min-gap 0.003 --launch-overhead 0s --format json \
  >apart.json 2>stderr.txt ||
  { echo "FAIL: gantry execute --min-gap 0.003:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
python3 - apart.json <<'PY' || { echo "FAIL: gantry execute --min-gap kept placements closer than the gap" >&2; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
s = [p["simulated"] for p in d["placements"]]
assert 2 <= len(s) <= 6, s
assert all(abs(a - b) > 0.003 * max(a, b) for i, a in enumerate(s) for b in s[i + 1:]), s
assert -1 <= d["repeatability"] <= 1 and d["run_spread"] >= 0, d
PY
# --reference-device runs the whole graph there before and after every measured run and gives each
# error relative to those runs; the one-device placement against itself is left out of the median.
"$gantry" execute -g "$tiny" --devices 2 --runs 2 --placements 4 --reference-device 1 --launch-overhead 0s \
  --format json >referenced.json 2>stderr.txt ||
  { echo "FAIL: gantry execute --reference-device 1:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
python3 - referenced.json <<'PY' || { echo "FAIL: gantry execute --reference-device gave no referenced errors" >&2; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["reference_device"] == 1, d
rows = [p for p in d["placements"] if p["status"] == "ok"]
assert rows and all(len(p["reference_measured"]) == 3 and p["reference_simulated"] > 0 for p in rows), rows
assert all(0 <= p["unsteady_runs"] <= 2 for p in rows), rows
assert 0 <= d["unsteady_runs"] <= 2 * len(rows), d
assert all(abs(p["referenced_error"]) < 10 for p in rows), rows
lo, hi = d["reference_range"]
assert -1 < lo <= hi, d["reference_range"]
assert d["median_abs_referenced_error"] >= 0 and -1 <= d["referenced_spearman"] <= 1, d
PY
"$gantry" execute -g "$tiny" --devices 2 --runs 1 --reference-device 0 >stdout.txt 2>stderr.txt ||
  { echo "FAIL: gantry execute --reference-device 0 (one placement):" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
grep -q "^referenced    .* relative to the runs on device 0 around each" stdout.txt ||
  { echo "FAIL: gantry execute --reference-device printed no referenced line:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
expect 2 "--reference-device 2: the cluster has 2 devices (0 to 1)" "$gantry" execute -g "$tiny" --devices 2 --runs 1 \
  --reference-device 2
expect 2 "--reference-device" "$gantry" execute -g "$tiny" --devices 2 --reference-device -1
expect 2 "--min-gap requires --placements" "$gantry" execute -g "$tiny" --devices 2 --min-gap 0.02
expect 2 "--min-gap: expected a fraction in [0, 1), got '1.5'" "$gantry" execute -g "$tiny" --devices 2 --placements 4 --min-gap 1.5
for f in run.simulated.json run.measured.json; do
  [[ -s $f ]] || { echo "FAIL: gantry execute --trace did not write $f" >&2; failures=$((failures + 1)); }
done
# --trace and --svg name a file as in place; execute puts the run's name before the extension.
"$gantry" execute -g "$tiny" --devices 2 --runs 1 --trace named.json --svg named.svg >stdout.txt 2>stderr.txt ||
  { echo "FAIL: gantry execute --trace named.json:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
for f in named.simulated.json named.measured.json named.simulated.svg named.measured.svg; do
  [[ -s $f ]] || { echo "FAIL: gantry execute --trace named.json --svg named.svg did not write $f" >&2; failures=$((failures + 1)); }
done
[[ ! -e named.json.simulated.json ]] || { echo "FAIL: execute took named.json as a prefix" >&2; failures=$((failures + 1)); }

# gantry workload: bad sizes are named and write nothing; a workload's file runs real work.
expect 2 "inner_split must divide blocks_per_side (3), got 2" "$gantry" workload chainmm --blocks 3 --inner-split 2 -o bad.json
absent bad.json
expect 2 "invalid duration '5xs'" "$gantry" workload ffnn --op-overhead 5xs -o bad.json
absent bad.json
expect 2 "A subcommand is required" "$gantry" workload
"$gantry" workload chainmm --dimension 32 -o chainmm.json >/dev/null ||
  { echo "FAIL: gantry workload chainmm failed" >&2; failures=$((failures + 1)); }
expect 2 "--time-scale must be 1" "$gantry" execute -g chainmm.json --devices 2 --kernel work --time-scale 2
expect 2 "has no operation to run" "$gantry" execute -g "$tiny" --devices 2 --kernel work
if "$gantry" execute -g chainmm.json --devices 2 --kernel work --runs 1 --format json >work.json 2>work.txt; then
  grep -q "vertices run real work" work.txt || { echo "FAIL: --kernel work did not profile" >&2; failures=$((failures + 1)); }
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["status"] == "ok" and d["valid"] is True, d' \
    work.json || { echo "FAIL: gantry execute --kernel work --format json" >&2; failures=$((failures + 1)); }
elif ! grep -q "needs a gantry built with Eigen" work.txt; then
  echo "FAIL: gantry execute --kernel work:" >&2; cat work.txt >&2; failures=$((failures + 1))
fi

# Invalid UTF-8 in an imported name is refused at import by the library (tests/test_import_*.cpp);
# the tool reads gantry JSON only.

# pipeline: zero time, overflow, caps
zero_chain='{"format":"gantry.chain","version":1,"layers":[{"forward":0,"backward":0},{"forward":0,"backward":0}]}'
printf '%s\n' "$zero_chain" >czero.json
printf 'node1 -- Input -- forward_compute_time=1.0, backward_compute_time=0.0, activation_size=1000.0, parameter_size=0.000\n' >input_only.txt
expect 0 "check GPipe: valid" "$gantry" pipeline --chain czero.json -d 2 --validate --format json --svg zero.svg
grep -q '"period": 0' stdout.txt || { echo "FAIL: an all-zero chain does not plan at period 0" >&2; failures=$((failures + 1)); }
expect 0 "check GPipe: valid" "$gantry" pipeline --graph input_only.txt -d 2 --validate --format json --svg input.svg
printf '%s\n' '{"format":"gantry.chain","version":1,"layers":[{"forward":1,"backward":1,"weights":9223372036854775807,"activation":9223372036854775807},{"forward":1,"backward":1,"weights":9223372036854775807}]}' >cbytes.json
expect 2 "cbytes.json: /layers/0/activation: the weights and activations of layers 0 to 0 add up to 2^63 bytes" \
  "$gantry" pipeline --chain cbytes.json -d 2 --validate --svg bytes.svg
absent bytes.svg
printf '%s\n' '{"format":"gantry.chain","version":1,"layers":[{"forward":1e308,"backward":1e308},{"forward":1e308,"backward":1e308}]}' >chuge.json
expect 2 "chuge.json: /layers/0/backward: the forward and backward times of layers 0 to 0 add up to more than" \
  "$gantry" pipeline --chain chuge.json -d 2 --svg huge.svg
absent huge.svg
printf '%s\n' 'node1 -- Input -- forward_compute_time=1.0, backward_compute_time=0.0, activation_size=1000.0, parameter_size=0.000' \
  'node2 -- Conv -- forward_compute_time=2.0, backward_compute_time=3.0, activation_size=2000.0, parameter_size=500.000' \
  "$(printf '\tnode1 -- node2')" >two.txt
expect 2 "--weight-factor 1e+300: layer 'node2' of two.txt would hold 500 parameter bytes" \
  "$gantry" pipeline --graph two.txt -d 2 --weight-factor 1e300 --svg factor.svg
absent factor.svg
expect 2 "two.txt:2: parameter_size 500 x weight_factor 1e+300 is 2^63 bytes" "$gantry" place -g two.txt --devices 2 --weight-factor 1e300
: >empty.txt
expect 2 "empty.txt: the file is empty" "$gantry" pipeline --graph empty.txt -d 2
# A failed SVG write prints no report and names the path.
expect 1 "/nonexistent/p.svg" "$gantry" pipeline --chain czero.json -d 2 --format json --svg /nonexistent/p.svg
if grep -q '"status"' stdout.txt; then
  echo "FAIL: gantry pipeline printed a report although its SVG could not be written" >&2; failures=$((failures + 1))
fi
expect 2 "--devices: expected a whole number from 1 to 1048576, got '18446744073709551615'" \
  "$gantry" pipeline --chain czero.json -d 18446744073709551615
expect 2 "--micro-batches: expected a whole number from 0 to 1024, got '18446744073709551615'" \
  "$gantry" pipeline --chain czero.json -d 2 -s gpipe --micro-batches 18446744073709551615
expect 2 "--random-orders: expected a whole number from 0 to 10000, got '100000'" \
  "$gantry" pipeline --graph two.txt -d 2 --random-orders 100000
expect 2 "--max-replicas: expected a whole number from 1 to 1048576, got '0'" "$gantry" pipeline --chain czero.json -d 2 --max-replicas 0
# More workers than layers cannot help: the planner considers as many as can, and says so.
resnet=$source_dir/tests/data/pipedream/resnet50.txt.gz
expect 0 "pattern of 1F1B* written to" "$gantry" pipeline --graph "$resnet" -d 1000000 --random-orders 0 --format json --svg resnet.svg
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["processors"] == 1000000 and d["processors_planned"] < 1000, d' \
  stdout.txt || { echo "FAIL: gantry pipeline -d 1000000 did not say how many workers it planned on" >&2; failures=$((failures + 1)); }
python3 - <<'PY' >wide.json
import json
print(json.dumps({"format": "gantry.cluster", "version": 1, "communication": "parallel",
                  "devices": [{"name": "d%d" % i, "memory": "16GiB"} for i in range(100000)],
                  "link": {"latency": 1e-5, "bandwidth": 1.2e10}}))
PY
expect 0 "pattern of 1F1B* written to" "$gantry" pipeline --chain czero.json --cluster wide.json --format json --svg wide.svg

# Devices that share a memory bandwidth: a bad domain is named by its place in the file; a good one
# stretches every run (1 MB/s for tiny's megabytes), the list scheduler's own schedule replayed too,
# which knows no domain.
cat >domain_bad.json <<'JSON'
{"format": "gantry.cluster", "version": 1, "devices": [{"name": "a"}, {"name": "b"}],
 "domains": [{"name": "gpu0", "devices": ["a", "c"], "bandwidth": "10 MB/s"}]}
JSON
expect 2 'domain_bad.json: /domains/0/devices/1: unknown device "c"' "$gantry" compare -g "$tiny" --cluster domain_bad.json
cat >domain.json <<'JSON'
{"format": "gantry.cluster", "version": 1, "devices": [{"name": "a"}, {"name": "b"}],
 "domains": [{"name": "gpu0", "devices": ["a", "b"], "bandwidth": "1 MB/s", "cores": 1}]}
JSON
"$gantry" compare -g "$tiny" --cluster domain.json --algorithms m-etf --format json >stdout.txt 2>stderr.txt || {
  echo "FAIL: gantry compare with a bandwidth domain exited $?" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
"$gantry" compare -g "$tiny" --devices 2 --algorithms m-etf --format json >free.json 2>stderr.txt || {
  echo "FAIL: gantry compare --devices 2 exited $?" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
python3 - stdout.txt free.json <<'PY' || { echo "FAIL: a shared domain of 1 MB/s did not stretch every run" >&2; failures=$((failures + 1)); }
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
free = json.load(open(sys.argv[2]))["results"][0]
for key in ("makespan", "in_order_makespan", "own_makespan"):
    assert r[key] > 10 * free[key], (key, r, free)
PY

# runs COMMAND...: the command exits 0.
runs() {
  "$@" >stdout.txt 2>stderr.txt || {
    echo "FAIL: $* -> exit $?, stderr:" >&2
    cat stderr.txt >&2
    failures=$((failures + 1))
  }
}
# Zero-time work runs (views, reshapes): every command, not "the run stalled".
printf '%s\n' '{"format": "gantry.graph", "version": 1, "vertices": [{"name": "a", "compute": 0}], "edges": []}' >z1.json
printf '%s\n' '{"format": "gantry.graph", "version": 1, "vertices": [{"name": "a", "compute": 0}, {"name": "b", "compute": 0}],' \
  ' "edges": [{"from": "a", "to": "b", "bytes": 0}]}' >z3.json
for algorithm in m-etf heft m-topo m-sct celeritas enumerative; do
  runs "$gantry" place -g z1.json --devices 2 -a "$algorithm" -o z1_placement.json
done
runs "$gantry" simulate -g z1.json -p z1_placement.json
for fuse in baechi exact kernighan; do
  runs "$gantry" place -g z3.json --devices 2 --fuse "$fuse"
done
runs "$gantry" compare -g z3.json --devices 2 --algorithms single-device,m-etf
grep -qE '^ +[0-9]+  m-etf .* 1\.00x' stdout.txt ||
  { echo "FAIL: compare on zero-time work does not say 1.00x:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
runs "$gantry" execute -g z3.json --devices 2
if "$gantry" learn --help >/dev/null 2>&1; then
  # A makespan that overflows is bad input in learn too, as in place and simulate.
  expect 2 "simulated makespan is not finite (inf s)" "$gantry" learn -g huge.json --devices 2 --time-limit 5s
  # The time limit ends an episode on a million devices instead of waiting for it.
  expect 1 "ran out during an episode on 1048576 devices" \
    "$gantry" learn -g "$tiny" --devices 1048576 --time-limit 2s --teacher doppler-critical-path
  # With its default teacher, learn then answers with the teacher's placement, saying so (the limit
  # counts from the start: building a million devices takes seconds under the sanitizers).
  "$gantry" learn -g "$tiny" --devices 1048576 --time-limit 10s >stdout.txt 2>stderr.txt &&
    grep -q "^best .* the teacher's placement (the policy's best: none)" stdout.txt &&
    grep -q "half of --time-limit passed before the rest" stdout.txt ||
    { echo "FAIL: learn on a million devices with its default teacher:" >&2; cat stdout.txt stderr.txt >&2; failures=$((failures + 1)); }
fi
# The exact placer refuses a cluster its program cannot hold, instead of std::bad_alloc.
expect 2 "exact: the cluster has 100000 devices; the exact placer takes at most 64" \
  "$gantry" place -g "$tiny" --devices 100000 -a exact
expect 2 "it is not finite" "$gantry" compare -g "$tiny" --devices 2 --bandwidth 1e400GB/s
# Workload sizes that overflow, or a graph too large to build, are refused before anything is written.
expect 2 "chain_mm: a tensor of 4611686022722355201 elements of 4 bytes" \
  "$gantry" workload chainmm --dimension 4294967297 -o w1.json
expect 2 "llama_block: a tensor of 1 x 4294967296 x 4294967296 elements" \
  "$gantry" workload llama-block --sequence 4294967296 --hidden 4294967296 -o w2.json
expect 2 "ffnn: a tensor of 9223372036854775808 x 32 elements" "$gantry" workload ffnn --batch 18446744073709551615 -o w3.json
expect 2 "chain_mm: these options make a graph of 810000 vertices and 162180000 edges, more than max_graph_size" \
  "$gantry" workload chainmm --blocks 300 --inner-split 1 -o w4.json
absent w1.json w2.json w3.json w4.json
runs "$gantry" workload chainmm --dimension 64 --max-graph-size 140
grep -qF "60 vertices, 80 edges" stdout.txt || { echo "FAIL: workload at its size limit:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
expect 2 "more than max_graph_size (139 vertices plus edges)" "$gantry" workload chainmm --dimension 64 --max-graph-size 139
# DOPPLER's published graphs: a wrong name lists the four; the file places like any other.
expect 2 "got 'blocks' (did you mean 'block'?)" "$gantry" workload published blocks -o bad.json
absent bad.json
expect 2 "--cost-per-second" "$gantry" workload published ffnn --cost-per-second 0 -o bad.json
absent bad.json
runs "$gantry" workload published block -o published_block.json
grep -qF "published block: 182 vertices, 234 edges" stdout.txt ||
  { echo "FAIL: gantry workload published block:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
runs "$gantry" place -g published_block.json --devices 4 -a backward-etf
# Baechi's fusion of Baechi's GNMT gives Baechi's own 576 ops, with or without co-placement (its
# groups already are co-placement groups).
for co_place in on off; do
  runs "$gantry" place -g "$source_dir/tests/data/baechi/gnmt.json.gz" --devices 4 --fuse baechi --co-place $co_place -o gnmt_placement.json
  grep -qF '576 of 2494' gnmt_placement.json ||
    { echo "FAIL: --fuse baechi --co-place $co_place did not keep 576 of 2494 vertices" >&2; failures=$((failures + 1)); }
done
expect 2 "--co-place: expected on or off, got 'maybe'" "$gantry" place -g "$tiny" --devices 2 --fuse baechi --co-place maybe
# Fusion never makes a capacity infeasible that the unfused graph fits: inception_v3 at 2 GiB per
# device (48% of its one-device peak) fits fused within the default cluster memory, and with
# clusters left unlimited (a fused vertex of 1.93 GiB) the unfused graph is placed, saying so.
inception=$source_dir/examples/graphs/inception_v3.json.gz
for fuse in exact baechi; do
  runs "$gantry" place -g "$inception" --devices 4 --memory 2GiB -a m-sct --fuse $fuse -o fused_placement.json
  grep -qF 'placed the unfused graph' fused_placement.json &&
    { echo "FAIL: --fuse $fuse within a quarter of a device fell back to the unfused graph" >&2; failures=$((failures + 1)); }
  runs "$gantry" place -g "$inception" --devices 4 --memory 2GiB -a m-etf --fuse $fuse --cluster-memory unlimited \
    -o fused_placement.json
  grep -qF 'left no room' stdout.txt && grep -qF 'placed the unfused graph' fused_placement.json ||
    { echo "FAIL: --fuse $fuse --cluster-memory unlimited did not say it placed the unfused graph" >&2; failures=$((failures + 1)); }
done

# --local-search: its count is checked, and a run says what the search did and writes the result.
expect 2 "--local-search: expected a whole number from 0 to 1073741824, got '-3'" "$gantry" place -g "$tiny" --devices 2 --local-search -3
if ! "$gantry" place -g "$tiny" --devices 2 --latency 1ms --local-search 200 -o searched.json >stdout.txt 2>stderr.txt ||
  ! grep -qE "^local search  [0-9]+ moves in [0-9]+ simulations" stdout.txt || [[ ! -s searched.json ]]; then
  echo "FAIL: place --local-search 200:" >&2
  cat stdout.txt stderr.txt >&2
  failures=$((failures + 1))
fi

# --local-search-time: a bad budget is refused first; a long search stops there, says so, and
# reports where it stands on stderr every 2 s although stderr is no terminal.
expect 2 "--local-search-time: expected a positive duration or 'none', got '0s'" "$gantry" place -g "$tiny" \
  --devices 2 --local-search 10 --local-search-time 0s
if ! "$gantry" place -g "$source_dir/examples/graphs/gnmt.json.gz" --devices 8 --local-search 1000000 \
  --local-search-time 2.5s >stdout.txt 2>stderr.txt ||
  ! grep -qF "(stopped at --local-search-time)" stdout.txt ||
  ! grep -qE "^gantry place: local search: 2 s, [0-9]+ simulations" stderr.txt; then
  echo "FAIL: place --local-search-time 2.5s:" >&2
  cat stdout.txt stderr.txt >&2
  failures=$((failures + 1))
fi

# compare --local-search: every row's placement is searched, the row ranked by the result, and the
# table and the JSON say what the search did.
expect 2 "--local-search-time: expected a positive duration or 'none', got '0s'" "$gantry" compare -g "$tiny" \
  --devices 2 --local-search 10 --local-search-time 0s
"$gantry" compare -g "$tiny" --devices 2 --latency 1ms -a m-etf,heft,m-topo --local-search 200 --format json \
  >searched.json 2>stderr.txt || { echo "FAIL: compare --local-search:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
python3 - searched.json <<'PY' || { echo "FAIL: compare --local-search's rows" >&2; failures=$((failures + 1)); }
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert len(rows) == 3, rows
for r in rows:
    found = r["local_search"]
    assert found["simulations"] >= 1, r
    assert r["ranked_makespan"] <= found["start_makespan"] * (1 + 1e-12), r
    assert found["improved"] == (r["ranked_makespan"] < found["start_makespan"]), r
PY
"$gantry" compare -g "$tiny" --devices 2 --latency 1ms -a m-topo --local-search 200 >stdout.txt 2>stderr.txt &&
  grep -qE "^m-topo: local search [0-9]+ moves in [0-9]+ simulations" stdout.txt ||
  { echo "FAIL: compare --local-search does not say what it did:" >&2; cat stdout.txt stderr.txt >&2; failures=$((failures + 1)); }

# --backend cuda: its options are named when they are wrong, in every build; the plain gantry says
# how to get gantry-cuda, and gantry-cuda says when there is no GPU instead of crashing.
expect 2 "--partitions: expected a whole number from 1 to 256, got '0'" "$gantry" execute -g "$tiny" --backend cuda --partitions 0
expect 2 "--gpus: expected GPU numbers separated by commas, e.g. 0,1, got '0,x'" "$gantry" execute -g "$tiny" --backend cuda --gpus 0,x
expect 2 "--gpus: expected GPU numbers separated by commas, e.g. 0,1, got '0,,1'" "$gantry" calibrate --backend cuda --gpus 0,,1
expect 2 "--gpus: GPU 1 is listed twice in '1,1'" "$gantry" execute -g "$tiny" --backend cuda --gpus 1,1
expect 2 "--partitions needs --backend cuda" "$gantry" execute -g "$tiny" --partitions 2
expect 2 "--gpus needs --backend cuda" "$gantry" execute -g "$tiny" --backend cpu --gpus 0,1
expect 2 "--sms-per-partition needs --backend cuda" "$gantry" calibrate --sms-per-partition 8
expect 2 "--gpus '0,1' and --partitions 2: give one" "$gantry" execute -g "$tiny" --backend cuda --gpus 0,1 --partitions 2
expect 2 "--gpu 1 picks the GPU to partition" "$gantry" execute -g "$tiny" --backend cuda --gpus 0 --gpu 1
expect 2 "--devices gives 3 devices, but --partitions 2" "$gantry" execute -g "$tiny" --backend cuda --devices 3 --partitions 2
expect 2 "--backend: expected cpu, cuda, starpu or starpu-mpi, got 'gpu' (did you mean 'cpu'?)" "$gantry" execute -g "$tiny" --backend gpu
# The help, read once: `gantry ... | grep -q` under pipefail fails whenever grep stops reading
# before gantry has written its last line (SIGPIPE), which a longer help makes likely.
execute_help=$("$gantry" execute --help 2>&1)
if grep -qF "needs gantry-cuda" <<<"$execute_help"; then
  expect 2 "--backend cuda: this gantry was built without CUDA. gantry-cuda runs it" "$gantry" execute -g "$tiny" --backend cuda
  expect 2 "build the target gantry_cuda_cli" "$gantry" calibrate --backend cuda --partitions 2 -o no_cuda.json
  absent no_cuda.json
elif ! "$gantry" calibrate --backend cuda --partitions 2 >stdout.txt 2>stderr.txt; then
  grep -qF "no CUDA GPU was found" stderr.txt ||
    { echo "FAIL: gantry-cuda calibrate without a GPU:" >&2; cat stderr.txt >&2; failures=$((failures + 1)); }
fi

# --backend starpu: a build without StarPU says how to get one; with StarPU a placement runs on it,
# ahead and decided, and every measured run validates.
expect 2 "--partitions needs --backend cuda (StarPU devices are its CPU workers" "$gantry" execute -g "$tiny" --backend starpu --partitions 2
expect 2 "--replay ahead needs --backend starpu" "$gantry" execute -g "$tiny" --devices 2 --replay ahead
if grep -qF "needs a build with StarPU)" <<<"$execute_help"; then
  expect 2 "--backend starpu: this gantry was built without StarPU" "$gantry" execute -g "$tiny" --backend starpu
else
  expect 2 "calibrate --backend starpu: StarPU's workers in one process copy with memcpy" "$gantry" calibrate --backend starpu -o starpu.json
  absent starpu.json
  expect 2 "--backend starpu: 5 devices need 5 StarPU CPU workers" "$gantry" execute -g "$tiny" --backend starpu --devices 5
  for replay in ahead decided; do
    runs env STARPU_SILENT=1 HWLOC_PLUGINS_BLACKLIST=hwloc_pci "$gantry" execute -g "$tiny" --devices 2 --backend starpu --replay $replay --runs 2 --time-scale 10
    grep -qF "validate      ok (every measured run)" stdout.txt && grep -qF "starpu backend (StarPU" stdout.txt ||
      { echo "FAIL: execute --backend starpu --replay $replay:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
  done
fi

# --backend starpu-mpi: a build without StarPU-MPI says how to get one; with it, a placement runs
# across 2 MPI ranks and every measured run validates.
if grep -qF "needs a build with StarPU-MPI" <<<"$execute_help"; then
  expect 2 "--backend starpu-mpi: this gantry was built without StarPU-MPI" "$gantry" execute -g "$tiny" --backend starpu-mpi
else
  if command -v mpirun >/dev/null; then
    # Open MPI's plugins leave allocations that LeakSanitizer reports (as in the MPI ctests).
    mpi_env=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STARPU_SILENT=1 HWLOC_PLUGINS_BLACKLIST=hwloc_pci
      ASAN_OPTIONS=detect_leaks=0)
    expect 2 "--replay decided with --backend starpu-mpi" "${mpi_env[@]}" "$gantry" execute -g "$tiny" --backend starpu-mpi --replay decided
    runs "${mpi_env[@]}" mpirun -np 2 --oversubscribe "$gantry" execute -g "$tiny" --backend starpu-mpi --runs 2 --time-scale 10
    grep -qF "validate      ok (every measured run)" stdout.txt && grep -qF "starpu-mpi backend (StarPU" stdout.txt &&
      [[ $(grep -c "^simulated" stdout.txt) == 1 ]] ||
      { echo "FAIL: mpirun -np 2 execute --backend starpu-mpi:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
    runs "${mpi_env[@]}" mpirun -np 2 --oversubscribe "$gantry" calibrate --backend starpu-mpi -o mpi.json
    grep -qF '"format": "gantry.cluster"' mpi.json && grep -qF "2 devices (MPI ranks) written to mpi.json" stdout.txt ||
      { echo "FAIL: mpirun -np 2 calibrate --backend starpu-mpi:" >&2; cat stdout.txt mpi.json >&2; failures=$((failures + 1)); }
    runs "${mpi_env[@]}" mpirun -np 2 --oversubscribe "$gantry" execute -g "$tiny" --backend starpu-mpi --cluster mpi.json --runs 2
    grep -qF "validate      ok (every measured run)" stdout.txt ||
      { echo "FAIL: execute --backend starpu-mpi --cluster mpi.json:" >&2; cat stdout.txt >&2; failures=$((failures + 1)); }
  fi
fi

if ((failures > 0)); then
  echo "$failures CLI check(s) failed" >&2
  exit 1
fi
echo "all CLI checks passed"
