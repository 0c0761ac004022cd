#!/usr/bin/env bash
# What access control costs the plaintext hot path: wrk POST /predict (mlp_scorer, 8
# keep-alive connections) against a baseline binary and this build without keys, with an
# inference key, and with a tenant's key (token bucket + in-flight slot), in alternating
# rounds so that machine noise hits every variant alike. Medians of req/s.
#
#   bench/auth_overhead.sh BASELINE_BINARY [ROUNDS] [SECONDS]
#   INFERD_BINARY=/work/main/build/inferd bench/auth_overhead.sh /tmp/inferd-base 2 5
#
# INFERD_BINARY is the build measured (default build/inferd). Writes
# bench/results/<date>-auth-overhead.md and .json (every run; RESULT=path without .md writes
# elsewhere) with the command, commits, binaries and load (bench/result_file.py).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
[ "$#" -ge 1 ] || { sed -n 2,12p "$0" >&2; exit 2; }
BASE="$(realpath "$1")"; ROUNDS="${2:-5}"; SECS="${3:-5}"
NEW="$(realpath "${INFERD_BINARY:-$root/build/inferd}")"
# A new dated file (never over a kept one); refused on a tree with uncommitted changes.
result="$(python3 "$root/bench/result_file.py" target auth-overhead "${RESULT:-}")" || exit 2
command_line="bench/auth_overhead.sh $BASE $ROUNDS $SECS (INFERD_BINARY=$NEW)"
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
  echo "$r $name $(echo "$out" | grep '^BENCH_RESULT' | sed 's/^BENCH_RESULT //')" >> runs.txt
}
rm -f rounds.txt runs.txt
load_before="$(python3 "$root/bench/result_file.py" load)"
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
load_after="$(python3 "$root/bench/result_file.py" load)"
python3 "$root/bench/result_file.py" meta "$BASE:$NEW" "$command_line" "$load_before" \
  "$load_after" > meta.json
python3 - "$result" "$root/bench" "$ROUNDS" "$SECS" <<'PY'
import json, statistics, sys
out, bench, rounds, secs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
sys.path.insert(0, bench)
import result_file  # noqa: E402  (bench/result_file.py)
meta = json.load(open("meta.json"))
runs = []
for line in open("runs.txt"):
    r, name, blob = line.split(" ", 2)
    runs.append(dict(json.loads(blob), round=int(r), variant=name))
json.dump({"meta": meta, "runs": runs}, open(out + ".json", "w"), indent=2)
lines = ["# Access control: cost on the plaintext hot path (issue 13)", ""] + result_file.header(meta) + [
    "- binaries: `baseline` is the first; `no-keys`, `inference-key` (`--api-keys-file`, a "
    "key with the inference role) and `tenant-key` (the same with a tenant's token bucket and "
    "in-flight slot) are the second",
    f"- mlp_scorer (bench/cost/make_repo.sh), `POST /predict`, `wrk -t1 -c8` for {secs} s after "
    f"a 2 s warm-up, a fresh server per variant, {rounds} alternating rounds; every run: "
    f"`{out.rsplit('/', 1)[-1]}.json`", "",
    "| round | variant | requests | errors | req/s | p50 ms | p99 ms |",
    "|---:|---|---:|---:|---:|---:|---:|"]
for r in runs:
    lines.append(f"| {r['round']} | {r['variant']} | {r['requests']} | {r['errors']} | "
                 f"{r['qps']:,.0f} | {r['p50_us'] / 1000:.2f} | {r['p99_us'] / 1000:.2f} |")
lines += ["", "| variant | median req/s | ÷ baseline |", "|---|---:|---:|"]
med = {}
for r in runs:
    med.setdefault(r["variant"], []).append(r["qps"])
base = statistics.median(med["baseline"])
for name, values in med.items():
    m = statistics.median(values)
    lines.append(f"| {name} | {m:,.0f} | {m / base:.3f} |")
lines.append("")
open(out + ".md", "w").write("\n".join(lines))
print(f"wrote {out}.md and .json")
PY
