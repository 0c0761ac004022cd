#!/usr/bin/env bash
# Server CPU time, context switches and system calls per request under load, read with
# `perf stat` (software counters: they work where hardware counters are not exposed) while
# wrk drives POST /predict on mlp_scorer. Counts per request move much less than QPS when
# the machine is shared, which makes A/B comparisons of two binaries possible there.
#
#   bench/cost/syscalls_per_request.sh [BINARY] [CONNECTIONS] [SECONDS]
#   EXTRA="--http-threads 2" bench/cost/syscalls_per_request.sh build/inferd
#
# JSON_OUT=FILE also writes the run's raw numbers (wrk's result, the counters) to FILE
# (bench/cost/http_cost.sh reads it to write bench/results/<date>-http-cost.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
BIN="$(realpath "${1:-$root/build/inferd}")"; C="${2:-64}"; D="${3:-6}"
export WORK="${WORK:-/tmp/inferd-cost}"; PORT="${PORT:-18080}"
"$here/make_repo.sh"
cd "$WORK"
# shellcheck disable=SC2086
"$BIN" --model-repository repo --http-port "$PORT" --log-level warn --access-log false ${EXTRA:-} > server.log 2>&1 &
pid=$!
# Waited for, so that the next probe (bench/cost/http_cost.sh runs several) finds the port free.
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 300); do curl -s -o /dev/null "localhost:$PORT/v2/health/ready" && break; sleep 0.2; done
url="http://127.0.0.1:$PORT/predict?model=mlp_scorer"
wrk -t1 -c"$C" -d2s -s "$root/bench/predict.lua" "$url" -- body.json > /dev/null  # warm-up
perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -p "$pid" -o perf.txt &
perf_pid=$!
wrk -t1 -c"$C" -d"${D}s" -s "$root/bench/predict.lua" "$url" -- body.json > wrk.txt
kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
python3 - "$BIN" "$C" "${JSON_OUT:-}" <<'PY'
import json, re, sys
result = json.loads(re.search(r"BENCH_RESULT (.*)", open("wrk.txt").read()).group(1))
n = result["requests"]
counters = {}
for line in open("perf.txt"):
    fields = line.strip().split(",")
    if len(fields) > 3 and fields[0][:1].isdigit():
        counters[fields[2]] = float(fields[0])
print(f"{sys.argv[1]} c={sys.argv[2]}: {n} requests, {result['qps']:.0f} QPS, "
      f"{result['errors']} errors, p99 {result['p99_us'] / 1000:.2f} ms")
print(f"  per request: server CPU {counters['task-clock'] * 1000 / n:.2f} us, "
      f"context switches {counters['context-switches'] / n:.3f}, "
      f"system calls {counters['raw_syscalls:sys_enter'] / n:.3f}")
if sys.argv[3]:
    json.dump({"binary": sys.argv[1], "connections": int(sys.argv[2]), "wrk": result,
               "counters": counters}, open(sys.argv[3], "w"))
PY
