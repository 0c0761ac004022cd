#!/usr/bin/env bash
# Two or more inferd binaries (or one binary under different environments) on the same demo
# models and requests, rounds interleaved (A B C A B C) so background noise hits every
# variant alike. A variant is "NAME|BINARY[|VAR=VALUE ...]": its name in the table, the
# binary it runs, and environment variables set for that server only.
#
#   bench/binary_ab.sh ROUNDS SECONDS BATCH VARIANT VARIANT...
#   bench/binary_ab.sh 3 6 1 "before|/tmp/inferd-before" "after|build/inferd"
#   MODELS="resnet18" bench/binary_ab.sh 2 5 8 "jemalloc|build/inferd" \
#     "default-decay|build/inferd|MALLOC_CONF=dirty_decay_ms:10000,muzzy_decay_ms:0"
#
# Per model (MODELS, default "resnet18 text_classifier", from INFERD_DEMO_MODELS, default
# build/demo-models, all loaded in one server): KServe v2 infer with the first row of its
# sample.json repeated BATCH times, wrk -t1 -c1 (CONCURRENCY overrides the 1) after a 2 s
# warm-up; page faults and server CPU per request (perf stat on the server), the model's own
# compute_infer time per request (its statistics), RSS after the run. A fresh server per
# variant and round. Writes RESULT.md and RESULT.json (default
# bench/results/<date>-binary-ab-b<BATCH>); TITLE sets the heading.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=bench/inferd_ready.sh
source bench/inferd_ready.sh
[ "$#" -ge 5 ] || { sed -n 2,19p "$0" >&2; exit 2; }
rounds=$1 seconds=$2 batch=$3
shift 3
variants=("$@")
concurrency="${CONCURRENCY:-1}"
demo="${INFERD_DEMO_MODELS:-build/demo-models}"
read -r -a models <<< "${MODELS:-resnet18 text_classifier}"
# A new dated file (never over a kept one); refused on a tree with uncommitted changes.
result="$(python3 bench/result_file.py target "binary-ab-b$batch" "${RESULT:-}")" || exit 2
title="${TITLE:-inferd binaries side by side, batch $batch, $concurrency client(s)}"
command_line="${COMMAND_LINE:-bench/binary_ab.sh $rounds $seconds $batch$(printf ' "%s"' "$@")}"
command_line="$command_line (MODELS=${models[*]}, CONCURRENCY=$concurrency)"
work="$(mktemp -d)"
trap 'rm -rf "$work"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null || true' EXIT

# A repository of just the models measured: the others would load, and probe, beside them.
mkdir -p "$work/repo"
for m in "${models[@]}"; do
  cp -r "$demo/$m" "$work/repo/$m"
  .venv/bin/python - "$demo/$m/sample.json" "$work/$m.json" "$batch" <<'PY'
import json, sys
sample, out, batch = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
inputs = []
for tensor in sample["inputs"]:
    row = len(tensor["data"]) // tensor["shape"][0]
    inputs.append(dict(tensor, shape=[batch] + tensor["shape"][1:], data=tensor["data"][:row] * batch))
json.dump({"inputs": inputs}, open(out, "w"))
PY
done

compute_ns() {  # the model's total compute_infer ns so far
  curl -sf "127.0.0.1:$1/v2/models/$2/stats" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["model_stats"][0]["inference_stats"]["compute_infer"]["ns"])'
}

binaries=""
load_before="$(python3 bench/result_file.py load)"
for round in $(seq "$rounds"); do
  for variant in "${variants[@]}"; do
    IFS='|' read -r name binary environment <<< "$variant"
    binary="$(realpath "$binary")"
    [[ ":$binaries:" == *":$binary:"* ]] || binaries="${binaries:+$binaries:}$binary"
    rm -f "$work/ports"
    # shellcheck disable=SC2086  # the variant's VAR=VALUE words
    env $environment "$binary" --model-repository "$work/repo" --http-port 0 --grpc-port 0 \
      --port-file "$work/ports" --host 127.0.0.1 --log-level warn --access-log false \
      > "$work/inferd.log" 2>&1 &
    pid=$!
    port="$(inferd_ready "$work/ports" "$work/inferd.log")" || { echo "$name: inferd did not start" >&2; exit 1; }
    for m in "${models[@]}"; do
      url="http://127.0.0.1:$port/v2/models/$m/infer"
      wrk -t1 -c"$concurrency" -d2s --timeout 30s -s bench/predict.lua "$url" -- "$work/$m.json" >/dev/null
      compute_before="$(compute_ns "$port" "$m")"
      # Page faults per request show buffers freed and returned to the kernel, then touched
      # again, without depending on how much CPU the machine's other load leaves.
      perf stat -x, -e page-faults,task-clock -p "$pid" -o "$work/perf.txt" &
      perf_pid=$!
      line="$(wrk -t1 -c"$concurrency" -d"${seconds}s" --timeout 30s -s bench/predict.lua "$url" -- "$work/$m.json" |
        grep '^BENCH_RESULT' | sed 's/^BENCH_RESULT //')"
      kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
      compute_after="$(compute_ns "$port" "$m")"
      counters="$(awk -F, '$1 ~ /^[0-9]/ {printf "%s\"%s\": %s", (n++ ? ", " : ""), $3, $1} END {print ""}' "$work/perf.txt")"
      line="${line%\}}, \"perf\": {$counters}, \"compute_infer_ns\": $((compute_after - compute_before))}"
      echo "$round $name $m $line $(ps -o rss= -p "$pid")" >> "$work/results.txt"
      echo "round $round $name $m: $line"
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
    pid=""
  done
done
load_after="$(python3 bench/result_file.py load)"
python3 bench/result_file.py meta "$binaries" "$command_line" "$load_before" "$load_after" \
  > "$work/meta.json"

.venv/bin/python - "$work/results.txt" "$result" "$work/meta.json" "$title" "$batch" \
  "$concurrency" "${variants[@]}" <<'PY'
import json, statistics, sys
sys.path.insert(0, "bench")
import result_file  # noqa: E402  (bench/result_file.py)
results, out, meta_file, title, batch, concurrency = sys.argv[1:7]
variants = [v.split("|") for v in sys.argv[7:]]
names = [v[0] for v in variants]
meta = json.load(open(meta_file))
meta["variants"] = [{"name": v[0], "binary": v[1], "environment": v[2] if len(v) > 2 else ""}
                    for v in variants]
runs, rows = [], {}
for line in open(results):
    round_, name, model, rest = line.split(" ", 3)
    blob, rss = rest.rsplit(" ", 1)
    r = json.loads(blob)
    runs.append(dict(r, round=int(round_), variant=name, model=model, rss_kib=int(rss)))
    n = r["requests"]
    rows.setdefault((model, name), [])
    if n == 0:  # no answer within the run (a slow model on a loaded machine): no figures
        continue
    # wrk reports no latency (0) for a run with a single answer: no p50/p99 from that round
    lat = (r["p50_us"] / 1e3, r["p99_us"] / 1e3) if r["p50_us"] > 0 else (None, None)
    rows[(model, name)].append(
        (r["qps"], *lat, r["compute_infer_ns"] / n / 1e6, int(rss) / 1024,
         r["perf"]["page-faults"] / n, r["perf"]["task-clock"] / n, n, r["errors"]))
json.dump({"meta": meta, "runs": runs}, open(out + ".json", "w"), indent=2)


def median(column):
    known = [x for x in column if x is not None]
    return statistics.median(known) if known else None


lines = [f"# {title}", ""]
lines += result_file.header(meta)
lines += ["- variants: " + "; ".join(
              f"`{v[0]}` = `{v[1]}`" + (f" with `{v[2]}`" if len(v) > 2 and v[2] else "")
              for v in variants),
          f"- KServe v2 infer, sample.json's first row repeated to batch {batch}, "
          f"wrk -t1 -c{concurrency} --timeout 30s after a 2 s warm-up, a fresh server per variant "
          "and round, variants interleaved; medians of the rounds; RSS after the run; every "
          f"run's numbers: `{out.rsplit('/', 1)[-1]}.json`",
          "- compute ms/request: the model's compute_infer time from its statistics over the "
          "timed run (the engine's forward pass as the server ran it), over the requests answered",
          "- page faults and server CPU per request: `perf stat -e page-faults,task-clock -p PID` "
          "over the timed run (minor faults are the pages a freed-and-returned buffer costs again)",
          "- requests: answered in the timed runs, all rounds together", "",
          f"| model | variant | requests | errors | QPS | QPS ÷ {names[0]} | p50 ms | p99 ms | "
          "compute ms/request | RSS MiB | page faults/request | server CPU ms/request |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
ms = lambda x: "—" if x is None else f"{x:.1f}"  # noqa: E731
for model in sorted({m for m, _ in rows}):
    med = {v: [median(c) for c in zip(*rows[(model, v)])] for v in names if rows.get((model, v))}
    for v in names:
        if v not in med:
            lines.append(f"| {model} | {v} | 0 | | no answer in any round | | | | | | | |")
            continue
        q, p50, p99, compute, rss, faults, cpu, _, _ = med[v]
        total = sum(row[7] for row in rows[(model, v)])
        errors = sum(row[8] for row in rows[(model, v)])
        base = med.get(names[0], [None])[0]
        ratio = f"{q / base:.2f}×" if base else "—"
        lines.append(f"| {model} | {v} | {total} | {errors} | {q:.1f} | {ratio} | {ms(p50)} | "
                     f"{ms(p99)} | {compute:.1f} | {rss:.0f} | {faults:,.0f} | {cpu:.1f} |")
lines.append("")
open(out + ".md", "w").write("\n".join(lines))
print("\n".join(lines))
PY
