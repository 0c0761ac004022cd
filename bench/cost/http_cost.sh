#!/usr/bin/env bash
# Per-request cost of the HTTP path, written as a result file: for each binary given,
# bench/cost/syscalls_per_request.sh ROUNDS times (binaries alternating: A B A B, so the
# machine's other load hits both alike) and bench/cost/instructions_per_request.sh once
# (callgrind counts do not depend on that load), on POST /predict to auto-tuned mlp_scorer.
#
#   bench/cost/http_cost.sh [-r ROUNDS] [-c CONNECTIONS] [-d SECONDS] [-t TOP] BINARY...
#   bench/cost/http_cost.sh -r 2 -c 64 -d 6 -t 15 /work/main/build/inferd
#
# Writes bench/results/<date>-http-cost.md and .json (every probe's raw numbers; RESULT=path
# without .md writes elsewhere). INFERD_DEMO_MODELS names the demo repository (make_repo.sh).
# The instruction probe starts inferd under valgrind: a few minutes per binary.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds=2 conns=64 seconds=6 top=15
while getopts r:c:d:t: opt; do
  case "$opt" in
    r) rounds="$OPTARG" ;; c) conns="$OPTARG" ;; d) seconds="$OPTARG" ;; t) top="$OPTARG" ;;
    *) sed -n 2,12p "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "$#" -ge 1 ] || { sed -n 2,12p "$0" >&2; exit 2; }
binaries=()
for b in "$@"; do binaries+=("$(realpath "$b")"); done
# A new dated file (never over a kept one); refused on a tree with uncommitted changes.
result="$(python3 "$root/bench/result_file.py" target http-cost "${RESULT:-}")" || exit 2
command_line="bench/cost/http_cost.sh -r $rounds -c $conns -d $seconds -t $top ${binaries[*]}"
raw="$(mktemp -d)"
trap 'rm -rf "$raw"' EXIT
export WORK="$raw/work"  # the probes' repository and files: not /tmp/inferd-cost, which others use
load_before="$(python3 "$root/bench/result_file.py" load)"
for round in $(seq "$rounds"); do
  for i in "${!binaries[@]}"; do
    JSON_OUT="$raw/syscalls-$i-$round.json" PORT="${PORT:-18480}" \
      "$here/syscalls_per_request.sh" "${binaries[$i]}" "$conns" "$seconds"
  done
done
load_between="$(python3 "$root/bench/result_file.py" load)"
for i in "${!binaries[@]}"; do
  JSON_OUT="$raw/instructions-$i.json" PORT="${PORT:-18490}" \
    "$here/instructions_per_request.sh" "${binaries[$i]}" "$top"
done
load_after="$(python3 "$root/bench/result_file.py" load)"
python3 "$root/bench/result_file.py" meta "$(IFS=:; echo "${binaries[*]}")" "$command_line" \
  "$load_before" "$load_after" > "$raw/meta.json"
python3 - "$raw" "$result" "$root/bench" "$rounds" "$load_between" "${binaries[@]}" <<'PY'
import json, sys
from pathlib import Path
raw, result, bench, rounds, load_between = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
binaries = sys.argv[6:]
sys.path.insert(0, bench)
import result_file  # noqa: E402  (bench/result_file.py)
meta = json.load(open(raw / "meta.json"))
meta["load_after_perf_stat_runs"] = load_between
sys_runs = [dict(json.load(open(raw / f"syscalls-{i}-{r}.json")), round=r, binary_index=i)
            for r in range(1, rounds + 1) for i in range(len(binaries))]
instr = [json.load(open(raw / f"instructions-{i}.json")) for i in range(len(binaries))]
json.dump({"meta": meta, "perf_stat_runs": sys_runs, "callgrind": instr},
          open(result + ".json", "w"), indent=2)
name = {i: f"`{b}`" for i, b in enumerate(binaries)}
c = sys_runs[0]["connections"]
out = ["# Per-request cost of the HTTP path", ""] + result_file.header(meta) + [
    f"- load average between the perf-stat runs and the callgrind runs: {load_between}",
    "- mlp_scorer with auto-tuned batching (bench/cost/make_repo.sh), `POST /predict`; every "
    f"probe's raw numbers: `{result.rsplit('/', 1)[-1]}.json`", "",
    "## System calls and CPU per request (perf stat software counters)", "",
    f"`bench/cost/syscalls_per_request.sh BINARY {c} SECONDS` per run: `wrk -t1 -c{c}` after a 2 s "
    "warm-up, `perf stat -e task-clock,context-switches,raw_syscalls:sys_enter -p PID` on the "
    "server (default flags, so busy polling's spinning counts as server CPU).", "",
    "| round | binary | req/s | p99 ms | errors | server CPU µs/request | context switches/request | system calls/request |",
    "|---:|---|---:|---:|---:|---:|---:|---:|"]
for r in sys_runs:
    n, k = r["wrk"]["requests"], r["counters"]
    out.append(f"| {r['round']} | {name[r['binary_index']]} | {r['wrk']['qps']:,.0f} | "
               f"{r['wrk']['p99_us'] / 1000:.2f} | {r['wrk']['errors']} | "
               f"{k['task-clock'] * 1000 / n:.2f} | {k['context-switches'] / n:.3f} | "
               f"{k['raw_syscalls:sys_enter'] / n:.3f} |")
out += ["", "## Instructions per request (callgrind; deterministic)", "",
        f"`bench/cost/instructions_per_request.sh BINARY TOP`: {instr[0]['requests']:,} requests "
        f"(`POST {instr[0]['target']}`) from 8 keep-alive clients after a 3 s warm-up, inferd with "
        "`--busy-poll-us 0`; inclusive counts for threads, exclusive for functions; the top rows "
        "callgrind_annotate lists (callgrind does not count kernel work: the system calls are above).", ""]
for i, probe in enumerate(instr):
    out += [f"{name[i]}:", "", "| instructions/request | thread or function |", "|---:|---|"]
    # a `|` inside a C++ name (operator|) would end the table cell
    out += [f"| {count:,.0f} | `{fn[:100].replace('|', '¦')}` |" for fn, count in probe["rows"]]
    out.append("")
open(result + ".md", "w").write("\n".join(out))
print(f"wrote {result}.md and .json")
PY
