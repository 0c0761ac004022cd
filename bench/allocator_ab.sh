#!/usr/bin/env bash
# Measures the allocator choice on the same models and requests, rounds interleaved
# (A B C A B C) so background noise hits every variant alike:
#   jemalloc                the jemalloc-linked build/inferd as it ships (page decay off,
#                           src/server/allocator_config.cc)
#   jemalloc-default-decay  the same binary with MALLOC_CONF set to jemalloc 5.3's own
#                           defaults (dirty pages returned over 10 s, muzzy at once)
#   glibc                   the same code built with glibc malloc (build-glibc/,
#                           -DINFERD_USE_JEMALLOC=OFF; built here when missing)
#
#   bench/allocator_ab.sh [rounds=3] [seconds=8] [batch=1]
#   INFERD_BINARY=/work/main/build/inferd INFERD_DEMO_MODELS=/work/main/build/demo-models \
#     INFERD_GLIBC_BINARY=build-glibc/inferd bench/allocator_ab.sh 2 5 8
#
# Writes bench/results/<date>-allocator-b<batch>.md and .json (every run's numbers; RESULT=
# path without .md writes elsewhere). KServe v2 infer with the first row of each model's
# sample.json repeated `batch` times, wrk -t1 -c1 (one request at a time). Large batches
# matter: they allocate the large tensors that glibc may return to the kernel.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
rounds="${1:-3}"
seconds="${2:-8}"
batch="${3:-1}"
bin="$(realpath "${INFERD_BINARY:-build/inferd}")"
glibc_bin="${INFERD_GLIBC_BINARY:-build-glibc/inferd}"
demo="${INFERD_DEMO_MODELS:-build/demo-models}"
default_decay="dirty_decay_ms:10000,muzzy_decay_ms:0"
result="${RESULT:-bench/results/$(date -u +%F)-allocator-b$batch}"
command_line="bench/allocator_ab.sh $rounds $seconds $batch (INFERD_BINARY=$bin, INFERD_GLIBC_BINARY=$glibc_bin)"
models=(resnet18 text_classifier)
variants=(jemalloc jemalloc-default-decay glibc)
work="$(mktemp -d)"
trap 'rm -rf "$work"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null || true' EXIT

if [ ! -x "$glibc_bin" ]; then
  torch_dir="$(.venv/bin/python -c 'import torch, os; print(os.path.dirname(torch.__file__))')"
  cmake -S . -B build-glibc -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERD_USE_JEMALLOC=OFF \
    -DINFERD_BUILD_TESTS=OFF -DINFERD_TORCH_DIR="$torch_dir" >/dev/null
  cmake --build build-glibc --target inferd -j2 >/dev/null
  glibc_bin=build-glibc/inferd
fi
glibc_bin="$(realpath "$glibc_bin")"

for m in "${models[@]}"; do
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

load_before="$(python3 bench/result_file.py load)"
for round in $(seq "$rounds"); do
  for variant in "${variants[@]}"; do
    b="$bin" conf="${MALLOC_CONF:-}"
    [ "$variant" = glibc ] && b="$glibc_bin"
    [ "$variant" = jemalloc-default-decay ] && conf="$default_decay"
    rm -f "$work/ports"
    MALLOC_CONF="$conf" "$b" --model-repository "$demo" --http-port 0 --grpc-port 0 \
      --port-file "$work/ports" --host 127.0.0.1 --log-level warn >/dev/null 2>&1 &
    pid=$!
    port=""
    for _ in $(seq 1200); do  # the port file appears once inferd listens: {"http": N, ...}
      port="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["http"])' \
        "$work/ports" 2>/dev/null)" && break
      sleep 0.1
    done
    [ -n "$port" ] || { echo "$variant: inferd wrote no port file" >&2; exit 1; }
    until curl -sf "127.0.0.1:$port/v2/health/ready" >/dev/null; do sleep 0.2; done
    for m in "${models[@]}"; do
      url="http://127.0.0.1:$port/v2/models/$m/infer"
      wrk -t1 -c1 -d2s --timeout 30s -s bench/predict.lua "$url" -- "$work/$m.json" >/dev/null  # warm-up
      # Page faults per request show the allocator's effect (re-faulting freed activations)
      # without depending on how much CPU the machine's other load leaves.
      perf stat -x, -e page-faults,task-clock -p "$pid" -o "$work/perf.txt" &
      perf_pid=$!
      line="$(wrk -t1 -c1 -d"${seconds}s" --timeout 30s -s bench/predict.lua "$url" -- "$work/$m.json" |
        grep '^BENCH_RESULT' | sed 's/^BENCH_RESULT //')"
      kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
      counters="$(awk -F, '$1 ~ /^[0-9]/ {printf "%s\"%s\": %s", (n++ ? ", " : ""), $3, $1} END {print ""}' "$work/perf.txt")"
      line="${line%\}}, \"perf\": {$counters}}"
      echo "$round $variant $m $line $(ps -o rss= -p "$pid")" >> "$work/results.txt"
      echo "round $round $variant $m: $line"
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
    pid=""
  done
done
load_after="$(python3 bench/result_file.py load)"
python3 bench/result_file.py meta "$bin:$glibc_bin" "$command_line" "$load_before" "$load_after" \
  > "$work/meta.json"

.venv/bin/python - "$work/results.txt" "$result" "$batch" "$work/meta.json" "$default_decay" <<'PY'
import json, statistics, sys
sys.path.insert(0, "bench")
import result_file  # noqa: E402  (bench/result_file.py)
results, out, batch, default_decay = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5]
meta = json.load(open(sys.argv[4]))
meta["malloc_conf_default_decay"] = default_decay
runs, rows = [], {}
for line in open(results):
    round_, variant, model, rest = line.split(" ", 3)
    blob, rss = rest.rsplit(" ", 1)
    r = json.loads(blob)
    runs.append(dict(r, round=int(round_), variant=variant, model=model, rss_kib=int(rss)))
    n = r["requests"]
    if n == 0:  # no answer within the run (a slow model on a loaded machine): no figures
        rows.setdefault((model, variant), [])
        continue
    # wrk reports no latency (0) for a run with a single answer: no p50/p99 from that round
    lat = (r["p50_us"] / 1e3, r["p99_us"] / 1e3) if r["p50_us"] > 0 else (None, None)
    rows.setdefault((model, variant), []).append(
        (r["qps"], *lat, int(rss) / 1024,
         r["perf"]["page-faults"] / n, r["perf"]["task-clock"] / n, n, r["errors"]))
json.dump({"meta": meta, "runs": runs}, open(out + ".json", "w"), indent=2)
variants = ["jemalloc", "jemalloc-default-decay", "glibc"]
lines = [f"# Allocator: jemalloc (decay off, as inferd ships), jemalloc's default decay, glibc malloc; batch {batch}", ""]
lines += result_file.header(meta)
lines += [f"- binaries: `jemalloc` and `jemalloc-default-decay` are the first (the latter with "
          f"`MALLOC_CONF={default_decay}`, jemalloc 5.3's own defaults), `glibc` the second "
          "(`-DINFERD_USE_JEMALLOC=OFF`)",
          "- KServe v2 infer, sample.json's first row repeated to the batch, wrk -t1 -c1 --timeout 30s after a 2 s "
          "warm-up, a fresh server per variant and round, variants interleaved; medians of the "
          f"rounds; RSS after the run; every run's numbers: `{out.rsplit('/', 1)[-1]}.json`", "",
          "- page faults and server CPU per request: `perf stat -e page-faults,task-clock -p PID` "
          "over the timed run (minor faults are the pages a freed-and-returned buffer costs again)", "",
          "- requests: answered in the timed runs, all rounds together (the medians are over the "
          "rounds that got at least one answer)", "",
          "| model | allocator | requests | errors | QPS | p50 ms | p99 ms | RSS MiB | page faults/request | server CPU ms/request | p50 ÷ jemalloc's p50 |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for model in sorted({m for m, _ in rows}):
    def median(column):
        known = [x for x in column if x is not None]
        return statistics.median(known) if known else None
    med = {v: [median(c) for c in zip(*rows[(model, v)])] for v in variants if rows.get((model, v))}
    ms = lambda x: "—" if x is None else f"{x:.1f}"  # noqa: E731
    for v in variants:
        if v not in med:
            lines.append(f"| {model} | {v} | 0 | | no answer in any round | | | | | | |")
            continue
        q, p50, p99, rss, faults, cpu, _, _ = med[v]
        total = sum(row[6] for row in rows[(model, v)])
        errors = sum(row[7] for row in rows[(model, v)])
        base = med.get("jemalloc", [None, None])[1]
        ratio = f"{p50 / base:.2f}×" if v != "jemalloc" and p50 and base else "—"
        lines.append(f"| {model} | {v} | {total} | {errors} | {q:.1f} | {ms(p50)} | {ms(p99)} | {rss:.0f} | "
                     f"{faults:,.0f} | {cpu:.1f} | {ratio} |")
lines.append("")
open(out + ".md", "w").write("\n".join(lines))
print("\n".join(lines))
PY
