#!/usr/bin/env bash
# Measures the allocator choice: the jemalloc-linked build/inferd against the same code built
# with glibc malloc (build-glibc/, -DINFERD_USE_JEMALLOC=OFF), on the same models, same
# requests, rounds interleaved (A B A B) so background noise hits both alike.
#
#   bench/allocator_ab.sh [rounds=3] [seconds=8] [batch=1]
#
# Writes bench/results/<date>-allocator-b<batch>.md. KServe v2 infer with the first row of
# each model's sample.json repeated `batch` times, wrk -t1 -c1 (one request at a time).
# Large batches matter: they allocate the large tensors that glibc may return to the kernel.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
rounds="${1:-3}"
seconds="${2:-8}"
batch="${3:-1}"
port=18090
models=(resnet18 text_classifier)
work="$(mktemp -d)"
trap 'rm -rf "$work"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null || true' EXIT

if [ ! -x build-glibc/inferd ]; then
  torch_dir="$(.venv/bin/python -c 'import torch, os; print(os.path.dirname(torch.__file__))')"
  cmake -S . -B build-glibc -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERD_USE_JEMALLOC=OFF \
    -DINFERD_BUILD_TESTS=OFF -DINFERD_TORCH_DIR="$torch_dir" >/dev/null
  cmake --build build-glibc --target inferd >/dev/null
fi

for m in "${models[@]}"; do
  .venv/bin/python - "build/demo-models/$m/sample.json" "$work/$m.json" "$batch" <<'PY'
import json, sys
sample, out, batch = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
inputs = []
for tensor in sample["inputs"]:
    row = len(tensor["data"]) // tensor["shape"][0]
    inputs.append(dict(tensor, shape=[batch] + tensor["shape"][1:], data=tensor["data"][:row] * batch))
json.dump({"inputs": inputs}, open(out, "w"))
PY
done

results="$work/results.txt"
for round in $(seq "$rounds"); do
  for variant in jemalloc glibc; do
    bin=build/inferd
    [ "$variant" = glibc ] && bin=build-glibc/inferd
    "$bin" --model-repository build/demo-models --http-port "$port" --host 127.0.0.1 \
      --log-level warn >/dev/null 2>&1 &
    pid=$!
    until curl -sf "localhost:$port/v2/health/ready" >/dev/null; do sleep 0.2; done
    for m in "${models[@]}"; do
      url="http://127.0.0.1:$port/v2/models/$m/infer"
      wrk -t1 -c1 -d2s -s bench/predict.lua "$url" -- "$work/$m.json" >/dev/null  # warm-up
      line="$(wrk -t1 -c1 -d"${seconds}s" -s bench/predict.lua "$url" -- "$work/$m.json" |
        grep '^BENCH_RESULT' | sed 's/^BENCH_RESULT //')"
      echo "$variant $m $line $(ps -o rss= -p "$pid")" >> "$results"
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
    pid=""
  done
done

out="bench/results/$(date +%F)-allocator-b$batch.md"
.venv/bin/python - "$results" "$out" "$rounds" "$seconds" "$batch" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    variant, model, rest = line.split(" ", 2)
    blob, rss = rest.rsplit(" ", 1)
    r = json.loads(blob)
    rows.setdefault((model, variant), []).append((r["qps"], r["p50_us"] / 1e3, r["p99_us"] / 1e3, int(rss) / 1024))
with open(sys.argv[2], "w") as f:
    f.write(f"# Allocator: jemalloc vs glibc malloc, batch {sys.argv[5]}\n\n- command: `bench/allocator_ab.sh {sys.argv[3]} {sys.argv[4]} {sys.argv[5]}`\n")
    f.write("- KServe v2 infer, sample.json's first row repeated to the batch, wrk -t1 -c1, medians of the interleaved rounds; RSS after the run\n\n")
    f.write("| model | allocator | QPS | p50 ms | p99 ms | RSS MiB | p50 glibc/jemalloc |\n|---|---|---:|---:|---:|---:|---:|\n")
    for model in sorted({m for m, _ in rows}):
        med = {v: [statistics.median(c) for c in zip(*rows[(model, v)])] for v in ("jemalloc", "glibc")}
        for v in ("jemalloc", "glibc"):
            q, p50, p99, rss = med[v]
            ratio = f"{med['glibc'][1] / med['jemalloc'][1]:.2f}×" if v == "jemalloc" else "—"
            f.write(f"| {model} | {v} | {q:.1f} | {p50:.1f} | {p99:.1f} | {rss:.0f} | {ratio} |\n")
print(open(sys.argv[2]).read())
PY
