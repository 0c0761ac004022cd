#!/usr/bin/env bash
# Cost of the access log: inferd on mlp_scorer (the tiny model, where server overhead
# dominates) with --access-log true and false, alternating, wrk against POST /predict, the
# log written to a file. Besides req/s and p99 (which move with the machine's other load),
# `perf stat` software counters on the server give CPU time, context switches and system
# calls per request, which move much less on a shared machine.
# Metrics are always on (they cannot be turned off); compare against main's binary for them.
#
#   bench/observability_overhead.sh [ROUNDS=3] [SECONDS=8] [CONNECTIONS=32]
#   INFERD_BINARY=/work/main/build/inferd INFERD_DEMO_MODELS=/work/main/build/demo-models \
#     bench/observability_overhead.sh 3 6 32
#
# Writes bench/results/<date>-observability-overhead.md and .json (every run's numbers);
# RESULT=path/name (without .md) writes elsewhere.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/inferd_ready.sh
source "$root/bench/inferd_ready.sh"
rounds="${1:-3}" seconds="${2:-8}" conns="${3:-32}"
bin="$(realpath "${INFERD_BINARY:-$root/build/inferd}")"
models="${INFERD_DEMO_MODELS:-$root/build/demo-models}"
# A new dated file (never over a kept one); refused on a tree with uncommitted changes.
result="$(python3 "$root/bench/result_file.py" target observability-overhead "${RESULT:-}")" || exit 2
command_line="bench/observability_overhead.sh $rounds $seconds $conns (INFERD_BINARY=$bin)"
tmp="$(mktemp -d)"
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo" && cp -r "$models/mlp_scorer" "$tmp/repo/"
python3 -c 'import json; print(json.dumps({"input": [0.5] * 256}))' > "$tmp/body.json"
load_before="$(python3 "$root/bench/result_file.py" load)"
for round in $(seq "$rounds"); do
  for access in true false; do
    "$bin" --model-repository "$tmp/repo" --host 127.0.0.1 --http-port 0 --grpc-port 0 \
      --port-file "$tmp/ports" --access-log "$access" > "$tmp/inferd-$access.log" 2>&1 &
    pid=$!
    port="$(inferd_ready "$tmp/ports" "$tmp/inferd-$access.log")"
    url="http://127.0.0.1:$port/predict"
    wrk -t1 -c"$conns" -d2s -s "$root/bench/predict.lua" "$url" -- "$tmp/body.json" > /dev/null
    perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -p "$pid" \
      -o "$tmp/perf.txt" &
    perf_pid=$!
    wrk -t1 -c"$conns" -d"${seconds}s" --latency -s "$root/bench/predict.lua" "$url" \
      -- "$tmp/body.json" > "$tmp/wrk.txt"
    kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
    python3 - "$round" "$access" "$tmp/wrk.txt" "$tmp/perf.txt" "$(stat -c %s "$tmp/inferd-$access.log")" \
      >> "$tmp/runs.jsonl" <<'PY'
import json, re, sys
run = json.loads(re.search(r"BENCH_RESULT (.*)", open(sys.argv[3]).read()).group(1))
for line in open(sys.argv[4]):
    fields = line.strip().split(",")
    if len(fields) > 3 and fields[0][:1].isdigit():
        run[fields[2]] = float(fields[0])
run.update(round=int(sys.argv[1]), access_log=sys.argv[2] == "true", log_bytes=int(sys.argv[5]))
print(json.dumps(run))
PY
    tail -1 "$tmp/runs.jsonl"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    pid=""; rm -f "$tmp/ports"
  done
done
load_after="$(python3 "$root/bench/result_file.py" load)"
python3 "$root/bench/result_file.py" meta "$bin" "$command_line" "$load_before" "$load_after" \
  > "$tmp/meta.json"
python3 - "$tmp/meta.json" "$tmp/runs.jsonl" "$result" "$seconds" "$conns" "$root/bench" <<'PY'
import json, statistics, sys
sys.path.insert(0, sys.argv[6])
import result_file  # noqa: E402  (bench/result_file.py)
meta, result, seconds, conns = json.load(open(sys.argv[1])), sys.argv[3], sys.argv[4], sys.argv[5]
runs = [json.loads(line) for line in open(sys.argv[2])]
for r in runs:
    n = r["requests"]
    r["cpu_us_per_request"] = r["task-clock"] * 1000 / n
    r["context_switches_per_request"] = r["context-switches"] / n
    r["syscalls_per_request"] = r["raw_syscalls:sys_enter"] / n
json.dump({"meta": meta, "runs": runs}, open(result + ".json", "w"), indent=2)
out = ["# Access log cost: on and off, alternating", ""] + result_file.header(meta) + [
    f"- inferd on mlp_scorer (demo config), POST /predict, wrk -t1 -c{conns}, 2 s warm-up then "
    f"{seconds} s per run, a fresh server per run, access log on and off alternating and "
    "written to a file; server counters from `perf stat -e "
    "task-clock,context-switches,raw_syscalls:sys_enter -p PID` over the timed run",
    f"- every run's numbers: `{result.rsplit('/', 1)[-1]}.json`", "",
    "| round | access log | req/s | p99 ms | errors | server CPU µs/request | context switches/request | system calls/request | log bytes/request |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
for r in runs:
    out.append(f"| {r['round']} | {'on' if r['access_log'] else 'off'} | {r['qps']:,.0f} | "
               f"{r['p99_us'] / 1000:.1f} | {r['errors']} | {r['cpu_us_per_request']:.2f} | "
               f"{r['context_switches_per_request']:.3f} | {r['syscalls_per_request']:.3f} | "
               f"{r['log_bytes'] / r['requests']:.1f} |")
out += ["", "Medians over the rounds:", "",
        "| access log | req/s | p99 ms | server CPU µs/request | system calls/request |",
        "|---|---:|---:|---:|---:|"]
med = {}
for on in (True, False):
    rs = [r for r in runs if r["access_log"] == on]
    med[on] = {k: statistics.median(r[k] for r in rs)
               for k in ("qps", "p99_us", "cpu_us_per_request", "syscalls_per_request")}
    out.append(f"| {'on' if on else 'off'} | {med[on]['qps']:,.0f} | {med[on]['p99_us'] / 1000:.1f} | "
               f"{med[on]['cpu_us_per_request']:.2f} | {med[on]['syscalls_per_request']:.3f} |")
out += ["", f"Access log on against off (medians): req/s {med[True]['qps'] / med[False]['qps']:.2f}×, "
        f"server CPU per request {med[True]['cpu_us_per_request'] / med[False]['cpu_us_per_request']:.2f}×, "
        f"system calls per request {med[True]['syscalls_per_request'] / med[False]['syscalls_per_request']:.2f}×.", ""]
open(result + ".md", "w").write("\n".join(out))
print(f"wrote {result}.md and .json")
PY
