#!/usr/bin/env bash
# Smoke test of tools/export_torch.py: export the training graph of a tiny model, then load it
# with the gantry CLI, place it on two devices with every placer and simulate one placement.
# Usage: run_export_smoke.sh EXPORTER GANTRY_CLI WORKDIR
# Exits 77 (skipped) when Python cannot import torch; non-zero on any failure.
set -euo pipefail

if [ "$#" -ne 3 ]; then
  echo "usage: $0 EXPORTER GANTRY_CLI WORKDIR" >&2
  exit 2
fi
exporter=$(realpath "$1")
cli=$(realpath "$2")
workdir=$3
python=${PYTHON:-python3}

if ! "$python" -c "import torch" >/dev/null 2>&1; then
  echo "skipped: '$python' cannot import torch (install python3-torch)"
  exit 77
fi

mkdir -p "$workdir"
graph="$workdir/small_cnn.json"
placement="$workdir/placement.json"
rm -f "$graph" "$workdir/mlp.json.gz" "$placement"

# A conv net with batch norm (buffers, in-place updates, tuple outputs) and an MLP; few runs.
"$python" "$exporter" --model small_cnn --batch-size 4 --image-size 16 --runs 2 --warmup 1 \
  --threads 1 --out "$graph" 2>"$workdir/export.log"
grep -q "^warm-up run 1/1 done" "$workdir/export.log" && grep -q "^run 2/2 done" "$workdir/export.log" &&
  ! grep -q "^run 3/" "$workdir/export.log" || { echo "FAIL: the exporter counts its runs wrong:" >&2; cat "$workdir/export.log" >&2; exit 1; }
# --output, the flag's former name, still works.
"$python" "$exporter" --model mlp --batch-size 8 --runs 2 --warmup 0 --threads 1 --output "$workdir/mlp.json.gz"

# The file must say where and how it was measured, and pair some backward vertices.
"$python" - "$graph" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
assert document["format"] == "gantry.graph" and document["version"] == 1, "wrong format header"
metadata = document["metadata"]
for key in ("model", "batch_size", "device", "torch_version", "created", "command", "timing"):
    assert key in metadata, "metadata lacks " + key
# The command names the output file, not where the exporting machine keeps it.
assert "--out small_cnn.json" in metadata["command"], metadata["command"]
assert "/" not in metadata["command"].split("--out", 1)[1], metadata["command"]
vertices = document["vertices"]
names = {v["name"] for v in vertices}
assert len(names) == len(vertices), "vertex names are not unique"
assert any(v["op"] == "aten.convolution_backward" for v in vertices), "no backward convolution"
paired = [v for v in vertices if "forward" in v]
assert paired and all(v["forward"] in names for v in paired), "backward vertices are not paired"
assert sum(v["compute"] for v in vertices) > 0, "no measured time"
assert any(v["persistent"] > 0 for v in vertices), "no parameter bytes"
assert all(e["from"] in names and e["to"] in names for e in document["edges"]), "dangling edge"
print(f"{len(vertices)} vertices, {len(paired)} paired backward, {len(document['edges'])} edges")
PY

# A user's own module: as MODULE:CALLABLE on the command line (the file by path, and by module name
# from the working directory), and through the Python entry point export_module().
cat >"$workdir/user_model.py" <<'PY'
import torch
import torch.nn as nn


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def build(batch_size=4):
    return TwoLayers(), torch.randn(batch_size, 8)


def build_with_loss(batch_size=4):
    labels = torch.randint(0, 4, (batch_size,))
    return TwoLayers(), (torch.randn(batch_size, 8),), (labels,), nn.functional.cross_entropy
PY
rm -f "$workdir/user_file.json" "$workdir/user_module.json" "$workdir/user_api.json"
"$python" "$exporter" --model "$workdir/user_model.py:build" --runs 1 --warmup 0 --threads 1 \
  --output "$workdir/user_file.json"
(cd "$workdir" && "$python" "$exporter" --model user_model:build_with_loss --batch-size 6 --runs 1 --warmup 0 \
  --threads 1 --output user_module.json)
(cd "$workdir" && "$python" - "$exporter" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("export_torch", sys.argv[1])
export_torch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(export_torch)
import user_model
model, inputs = user_model.build(batch_size=3)
document = export_torch.export_module(model, inputs, "user_api.json", runs=1, warmup=0, threads=1)
assert document["metadata"]["model"] == "TwoLayers" and document["metadata"]["batch_size"] == 3, document["metadata"]
PY
)
"$python" - "$workdir/user_file.json" "$workdir/user_module.json" "$workdir/user_api.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    document = json.load(open(path))
    vertices = document["vertices"]
    assert any(v["op"] == "aten.mm" or v["op"] == "aten.addmm" for v in vertices), path + ": no matrix product"
    assert any("forward" in v for v in vertices), path + ": no backward vertex paired"
    assert "/" not in document["metadata"]["model"], document["metadata"]["model"]
assert json.load(open(sys.argv[2]))["metadata"]["batch_size"] == 6
print("user modules exported:", ", ".join(sys.argv[1:]))
PY
for user in user_file user_module user_api; do
  "$cli" compare --graph "$workdir/$user.json" --devices 2 --algorithms m-etf,heft >/dev/null
done

"$cli" compare --graph "$graph" --devices 2
"$cli" compare --graph "$workdir/mlp.json.gz" --devices 2 --format json >/dev/null
"$cli" place --graph "$graph" --devices 2 --out "$placement"
"$cli" simulate --graph "$graph" --placement "$placement"
echo "export smoke test passed"
