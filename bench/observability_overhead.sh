#!/usr/bin/env bash
# Cost of the access log: inferd on mlp_scorer (the tiny model, where server overhead
# dominates) with --access-log true and false, alternating, wrk against POST /predict.
# Metrics are always on (they cannot be turned off); compare against main's binary for them.
#   bench/observability_overhead.sh [ROUNDS=3] [SECONDS=8] [CONNECTIONS=32]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-3}" seconds="${2:-8}" conns="${3:-32}"
tmp="$(mktemp -d)"
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo" && cp -r "$root/build/demo-models/mlp_scorer" "$tmp/repo/"
python3 -c 'import json; print(json.dumps({"input": [0.5] * 256}))' > "$tmp/body.json"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for round in $(seq "$rounds"); do
  for access in true false; do
    "$root/build/inferd" --model-repository "$tmp/repo" --host 127.0.0.1 --http-port "$port" \
      --access-log "$access" > "$tmp/inferd-$access.log" 2>&1 &
    pid=$!
    until curl -sf "http://127.0.0.1:$port/v2/health/ready" > /dev/null; do sleep 0.1; done
    wrk -t1 -c"$conns" -d2s -s "$root/bench/predict.lua" "http://127.0.0.1:$port/predict" -- "$tmp/body.json" > /dev/null
    rps=$(wrk -t1 -c"$conns" -d"${seconds}s" --latency -s "$root/bench/predict.lua" \
      "http://127.0.0.1:$port/predict" -- "$tmp/body.json" | grep '^BENCH_RESULT' | sed 's/^BENCH_RESULT //')
    echo "round $round access_log=$access $rps"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
