#!/usr/bin/env bash
# Two or more inferd flag sets side by side on one mlp_scorer repository: each set gets its
# own server, a 2 s warm-up and a 5 s `wrk -t1 -cC` run of POST /predict, alternating twice.
# Prints QPS and the server's CPU ticks (utime + stime) per run.
#
#   bench/cost/flags_ab.sh C "REPO|FLAGS" "REPO|FLAGS" ...
#   bench/cost/flags_ab.sh 64 "build/demo-models|--busy-poll-us 0" "build/demo-models|--busy-poll-us 100"
#
# REPO is a model repository holding mlp_scorer (build/demo-models serves it without
# batching; bench/cost/make_repo.sh writes an auto-tuned one). Every model in REPO loads.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
C=$1; shift
PORT="${PORT:-18080}"
body="$(mktemp)"; trap 'rm -f "$body"' EXIT
python3 -c 'import json, sys; json.dump({"input": [0.5] * 256}, open(sys.argv[1], "w"))' "$body"
url="http://127.0.0.1:$PORT/predict?model=mlp_scorer"
for round in 1 2; do
  for variant in "$@"; do
    repo="${variant%%|*}"; flags="${variant#*|}"
    # shellcheck disable=SC2086
    build/inferd --model-repository "$repo" --http-port "$PORT" --grpc-port $((PORT + 1)) \
      --access-log false --log-level warn $flags > /tmp/inferd-flags-ab.log 2>&1 &
    pid=$!
    for _ in $(seq 300); do curl -sf "localhost:$PORT/v2/health/ready" > /dev/null && break; sleep 0.2; done
    wrk -t1 -c"$C" -d2s -s bench/predict.lua "$url" -- "$body" > /dev/null
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    result=$(wrk -t1 -c"$C" -d5s -s bench/predict.lua "$url" -- "$body" | grep '^BENCH_RESULT')
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    echo "round $round c=$C [$repo $flags] ${result#BENCH_RESULT } cpu_ticks=$((after - before))"
    kill "$pid"; wait "$pid" 2> /dev/null || true
  done
done
