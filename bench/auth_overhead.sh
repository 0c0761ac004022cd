#!/usr/bin/env bash
# What access control costs the plaintext hot path: wrk POST /predict (mlp_scorer, 8
# keep-alive connections) against a baseline binary and this build without keys, with an
# inference key, and with a tenant's key (token bucket + in-flight slot), in alternating
# rounds so that machine noise hits every variant alike. Medians of req/s.
#
#   bench/auth_overhead.sh BASELINE_BINARY [ROUNDS] [SECONDS]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/.."
BASE="$(realpath "$1")"; ROUNDS="${2:-5}"; SECS="${3:-5}"
NEW="$(realpath "$root/build/inferd")"
export WORK="${WORK:-/tmp/inferd-auth-bench}"; PORT="${PORT:-18190}"
"$here/cost/make_repo.sh"
cd "$WORK"
KEY="$(openssl rand -hex 24)"; TKEY="$(openssl rand -hex 24)"
cat > keys.yaml <<YAML
keys:
  - {name: app, key: "$KEY", roles: [inference]}
  - {name: tenant-app, key: "$TKEY", roles: [inference], tenant: t}
tenants:
  t: {requests_per_second: 1000000, burst: 1000000, max_in_flight: 1000}
YAML
run() {  # name binary key extra-args...
  local name="$1" bin="$2" key="$3"; shift 3
  "$bin" --model-repository repo --host 127.0.0.1 --http-port "$PORT" --grpc-port 0 \
    --log-level warn --access-log false "$@" > "server-$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 300); do curl -s -o /dev/null "localhost:$PORT/v2/health/ready" && break; sleep 0.2; done
  local header=()
  [ -n "$key" ] && header=(-H "Authorization: Bearer $key")
  wrk -t1 -c8 -d2s "${header[@]}" -s "$root/bench/predict.lua" \
    "http://127.0.0.1:$PORT/predict?model=mlp_scorer" -- body.json > /dev/null
  local out
  out="$(wrk -t1 -c8 -d"${SECS}s" "${header[@]}" -s "$root/bench/predict.lua" \
    "http://127.0.0.1:$PORT/predict?model=mlp_scorer" -- body.json)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  local rps errors
  rps="$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
  errors="$(echo "$out" | grep -o '"errors":[0-9]*' | cut -d: -f2)"
  echo "$name $rps $errors" | tee -a rounds.txt
}
rm -f rounds.txt
for r in $(seq "$ROUNDS"); do
  run baseline "$BASE" ""
  run no-keys "$NEW" ""
  run inference-key "$NEW" "$KEY" --api-keys-file keys.yaml
  run tenant-key "$NEW" "$TKEY" --api-keys-file keys.yaml
done
echo "medians of $ROUNDS rounds × ${SECS} s (req/s; errors summed):"
python3 - <<'PY'
import collections, statistics
rows = collections.defaultdict(list); errors = collections.Counter()
for line in open("rounds.txt"):
    name, rps, err = line.split()
    rows[name].append(float(rps)); errors[name] += int(err or 0)
base = statistics.median(rows["baseline"])
for name, values in rows.items():
    m = statistics.median(values)
    print(f"{name:<14} {m:>9.0f}  {m / base:6.3f}× baseline  errors {errors[name]}")
PY
