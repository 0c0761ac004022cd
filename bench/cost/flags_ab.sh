#!/usr/bin/env bash
# Two or more inferd flag sets side by side on one mlp_scorer repository: each set gets its
# own server, a 2 s warm-up and a 5 s `wrk -t1 -cC` run of POST /predict, alternating ROUNDS
# times (default 2).
# Prints QPS and the server's CPU ticks (utime + stime) per run, and writes them as a result
# file: bench/results/<date>-flags-ab.md and .json (RESULT=path without .md writes elsewhere).
#
#   bench/cost/flags_ab.sh C "REPO|FLAGS[|BINARY]" "REPO|FLAGS[|BINARY]" ...
#   INFERD_BINARY=/work/main/build/inferd bench/cost/flags_ab.sh 8 \
#     "/work/main/build/demo-models|--busy-poll-us 0" "/work/main/build/demo-models|--busy-poll-us 100"
#
# REPO is a model repository holding mlp_scorer (build/demo-models serves it without
# batching; bench/cost/make_repo.sh writes an auto-tuned one). Every model in REPO loads.
# INFERD_BINARY names the binary measured (default build/inferd); a variant's BINARY, when
# given, replaces it for that variant (two builds side by side, e.g. before and after a change).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
[ "$#" -ge 2 ] || { sed -n 2,13p "$0" >&2; exit 2; }
C=$1; shift
PORT="${PORT:-18080}"
bin="$(realpath "${INFERD_BINARY:-build/inferd}")"
# A new dated file (never over a kept one); refused on a tree with uncommitted changes.
result="$(python3 bench/result_file.py target flags-ab "${RESULT:-}")" || exit 2
command_line="bench/cost/flags_ab.sh $C$(printf ' "%s"' "$@") (INFERD_BINARY=$bin)"
work="$(mktemp -d)"
trap 'rm -rf "$work"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null || true' EXIT
body="$work/body.json"
python3 -c 'import json, sys; json.dump({"input": [0.5] * 256}, open(sys.argv[1], "w"))' "$body"
url="http://127.0.0.1:$PORT/predict?model=mlp_scorer"
load_before="$(python3 bench/result_file.py load)"
for round in $(seq "${ROUNDS:-2}"); do
  for i in $(seq 0 $(($# - 1))); do
    args=("$@"); variant="${args[$i]}"
    IFS='|' read -r repo flags variant_bin <<< "$variant"
    # shellcheck disable=SC2086
    "${variant_bin:-$bin}" --model-repository "$repo" --http-port "$PORT" --grpc-port $((PORT + 1)) \
      --host 127.0.0.1 --access-log false --log-level warn $flags > "$work/inferd.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do curl -sf "127.0.0.1:$PORT/v2/health/ready" > /dev/null && break; sleep 0.2; done
    wrk -t1 -c"$C" -d2s -s bench/predict.lua "$url" -- "$body" > /dev/null
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    result_line=$(wrk -t1 -c"$C" -d5s -s bench/predict.lua "$url" -- "$body" | grep '^BENCH_RESULT')
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    echo "round $round c=$C [$repo $flags ${variant_bin:-}] ${result_line#BENCH_RESULT } cpu_ticks=$((after - before))"
    echo "$round $i $((after - before)) ${result_line#BENCH_RESULT }" >> "$work/runs.txt"
    kill "$pid"; wait "$pid" 2> /dev/null || true
    pid=""
  done
done
load_after="$(python3 bench/result_file.py load)"
# The default binary and each variant's own (result_file.py takes them colon-separated).
binaries="$bin"
for variant in "$@"; do
  IFS='|' read -r _ _ variant_bin <<< "$variant"
  [ -n "$variant_bin" ] || continue
  variant_bin="$(realpath "$variant_bin")"
  [[ ":$binaries:" == *":$variant_bin:"* ]] || binaries="$binaries:$variant_bin"
done
python3 bench/result_file.py meta "$binaries" "$command_line" "$load_before" "$load_after" > "$work/meta.json"
python3 - "$work" "$result" "$C" "$(getconf CLK_TCK)" "$@" <<'PY'
import json, statistics, sys
from pathlib import Path
work, out, conns, hz = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
variants = sys.argv[5:]
sys.path.insert(0, "bench")
import result_file  # noqa: E402  (bench/result_file.py)
meta = json.load(open(work / "meta.json"))
runs = []
for line in open(work / "runs.txt"):
    round_, i, ticks, blob = line.split(" ", 3)
    runs.append(dict(json.loads(blob), round=int(round_), variant=variants[int(i)],
                     cpu_ticks=int(ticks), clk_tck=hz))
json.dump({"meta": meta, "connections": int(conns), "runs": runs}, open(out + ".json", "w"), indent=2)
lines = ["# inferd flag sets side by side (bench/cost/flags_ab.sh)", ""] + result_file.header(meta) + [
    f"- mlp_scorer, `POST /predict`, `wrk -t1 -c{conns}` for 5 s after a 2 s warm-up, a fresh "
    "server per variant and round, variants alternating; server CPU is utime + stime from "
    f"/proc/PID/stat over the timed run ({hz} ticks/s); every run's numbers: "
    f"`{out.rsplit('/', 1)[-1]}.json`", ""]
lines += [
    "| round | repository | flags | binary | requests | errors | req/s | p50 ms | p99 ms | server CPU ms/request |",
    "|---:|---|---|---|---:|---:|---:|---:|---:|---:|"]
for r in runs:
    n = r["requests"]
    cpu = f"{r['cpu_ticks'] * 1000 / hz / n:.3f}" if n else "—"
    repo, flags, binary = (r["variant"].split("|") + ["", ""])[:3]
    binary = binary or "(default)"
    lines.append(f"| {r['round']} | `{repo}` | `{flags}` | `{binary}` | {n} | {r['errors']} | "
                 f"{r['qps']:,.0f} | {r['p50_us'] / 1000:.2f} | {r['p99_us'] / 1000:.2f} | {cpu} |")
# Each variant's median over the rounds, against the first variant's; and the median of its
# per-round ratios to the first variant (the runs of one round are seconds apart, so these
# drift less with the machine's load than the medians do).
lines += ["", "| variant | median req/s | × first | median of per-round × first | "
          "median server CPU ms/request | × first |", "|---|---:|---:|---:|---:|---:|"]
def per_round(i):
    return {r["round"]: r for r in runs if r["variant"] == variants[i] and r["requests"]}
first = per_round(0)
medians = []
for i, variant in enumerate(variants):
    mine = per_round(i)
    qps = statistics.median(r["qps"] for r in mine.values())
    cpu = statistics.median(r["cpu_ticks"] * 1000 / hz / r["requests"] for r in mine.values())
    ratio = statistics.median(mine[k]["qps"] / first[k]["qps"] for k in mine if k in first)
    medians.append((qps, cpu))
    lines.append(f"| `{variant}` | {qps:,.0f} | {qps / medians[0][0]:.3f} | {ratio:.3f} | "
                 f"{cpu:.3f} | {cpu / medians[0][1]:.3f} |")
lines.append("")
open(out + ".md", "w").write("\n".join(lines))
print(f"wrote {out}.md and .json")
PY
