#!/usr/bin/env bash
# Shared by the per-request cost probes: a one-model repository (mlp_scorer, auto-tuned
# batching, as in bench/batching_bench.py's autotune row) and its /predict body, in $WORK.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${WORK:-/tmp/inferd-cost}"
mkdir -p "$WORK"
rm -rf "$WORK/repo" && mkdir -p "$WORK/repo"
cp -r "${INFERD_DEMO_MODELS:-$root/build/demo-models}/mlp_scorer" "$WORK/repo/"
sed -i 's/^max_batch_size: 32$/max_batch_size: 32\ndynamic_batching:\n  auto_tune: true\n  latency_slo_ms: 100/' \
  "$WORK/repo/mlp_scorer/config.yaml"
grep -q auto_tune "$WORK/repo/mlp_scorer/config.yaml"
python3 -c 'import json; json.dump({"input": [0.5] * 256}, open("'"$WORK"'/body.json", "w"))'
python3 -c 'import json; json.dump({"inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 256],
  "data": [0.5] * 256}]}, open("'"$WORK"'/body_v2.json", "w"))'
