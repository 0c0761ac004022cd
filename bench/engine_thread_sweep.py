#!/usr/bin/env python3
"""The engine's batch sweep on one and on two intra-op threads (or other variants), side by side.

Runs bench/engine_limit.py --batch-sizes (one calling thread, no server) on a copy of a demo
model whose config.yaml sets `parameters: {intra_op_threads: N}`, for each N in --threads,
alternating the thread counts round after round so that the machine's other load hits both
alike, and writes bench/results/<date>-engine-thread-sweep.md and .json (every pass's
numbers). The per-item time at a batch size is the median forward pass divided by the batch.

    .venv/bin/python bench/engine_thread_sweep.py --models /work/main/build/demo-models \
        --model mlp_scorer --rounds 2 --duration 2 --threads 1,2,1+MKL_NUM_THREADS=1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List

import result_file

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=str(ROOT / "build" / "demo-models"),
                   help="the demo model repository (build/demo-models)")
    p.add_argument("--model", default="mlp_scorer")
    p.add_argument("--batch-sizes", default="1,2,4,8,16,32")
    p.add_argument("--threads", default="1,2",
                   help="variants to compare: an intra-op thread count, optionally with "
                   "environment settings for the engine process (`1+MKL_NUM_THREADS=1`)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--duration", type=float, default=2, help="seconds per batch size")
    p.add_argument("--out", default="", help="result path without .md (default: "
                   "bench/results/<date>-engine-thread-sweep)")
    return p.parse_args(argv)


def model_copy(source: Path, threads: int, where: Path) -> Path:
    """The model folder with `parameters: {intra_op_threads: threads}` in its config.yaml."""
    target = where / f"t{threads}" / source.name
    shutil.copytree(source, target)
    config = (target / "config.yaml").read_text()
    config, n = re.subn(r"^parameters:.*$", f"parameters: {{intra_op_threads: {threads}}}",
                        config, flags=re.MULTILINE)
    if n == 0:
        config += f"parameters: {{intra_op_threads: {threads}}}\n"
    (target / "config.yaml").write_text(config)
    return target


def run_sweep(model_dir: Path, env: dict, args: argparse.Namespace) -> dict:
    command = [sys.executable, str(ROOT / "bench" / "engine_limit.py"), str(model_dir),
               "--batch-sizes", args.batch_sizes, "--duration", str(args.duration)]
    out = subprocess.run(command, capture_output=True, text=True, check=True,
                         env={**os.environ, **env}).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: List[str]) -> int:
    args = parse_args(argv)
    threads = args.threads.split(",")  # variant labels: "1", "2", "1+MKL_NUM_THREADS=1"
    count = {t: int(t.split("+")[0]) for t in threads}
    env = {t: dict(kv.split("=", 1) for kv in t.split("+")[1:]) for t in threads}
    # A new dated file, never over a kept one; refused on a tree with uncommitted changes.
    if args.out:
        result_file.refuse_existing(Path(args.out))
        out = Path(args.out)
    else:
        out = result_file.new_stem(result_file.RESULTS, "engine-thread-sweep")
    command = "bench/engine_thread_sweep.py " + " ".join(shlex.quote(a) for a in argv)
    load_before = result_file.load()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {c: model_copy(Path(args.models) / args.model, c, Path(tmp))
                for c in set(count.values())}
        for round_ in range(1, args.rounds + 1):
            for t in threads:
                r = run_sweep(dirs[count[t]], env[t], args)
                runs.append({"round": round_, "variant": t, "intra_op_threads": count[t],
                             "env": env[t], "result": r})
                print(f"round {round_} threads {t}: best {r['best_batch_size']} "
                      f"{r['items_per_s']:.0f} items/s", flush=True)
    meta = result_file.meta([], command, load_before, result_file.load())
    meta["torch"] = runs[0]["result"].get("torch", "")
    meta["ld_preload"] = runs[0]["result"].get("ld_preload", "")
    json.dump({"meta": meta, "runs": runs}, open(f"{out}.json", "w"), indent=2)

    sizes = [int(b) for b in args.batch_sizes.split(",")]
    # median over rounds of items/s and of the per-item time, per (threads, batch size)
    cell = {}
    for t in threads:
        for b in sizes:
            rows = [row for run in runs if run["variant"] == t
                    for row in run["result"]["sweep"] if row["batch_size"] == b]
            cell[t, b] = (statistics.median(r["items_per_s"] for r in rows),
                          statistics.median(r["p50_ms"] * 1000 / b for r in rows))
    lines = [f"# Engine batch sweep by intra-op threads ({', '.join(threads)}): "
             f"{args.model}", ""] + result_file.header(meta) + [
        f"- `bench/engine_limit.py MODEL --batch-sizes {args.batch_sizes} --duration "
        f"{args.duration}` (one calling thread, no server, the model loaded as inferd loads it, "
        f"torch {meta['torch'] or '?'}, LD_PRELOAD `{meta['ld_preload'] or 'none'}`) on a copy of `{args.model}` with "
        "`parameters: {intra_op_threads: N}`; variants alternate round after round; a variant "
        "`N+VAR=VALUE` also sets VAR in the engine process's environment",
        f"- {args.rounds} rounds; each cell is the median over the rounds; µs/item is the median "
        "forward pass divided by the batch size; every pass's numbers: "
        f"`{out.name}.json`", "",
        "| batch | " + " | ".join(f"`{t}`: items/s | µs/item"
                                   for t in threads) + " |",
        "|---:|" + "---:|---:|" * len(threads)]
    for b in sizes:
        lines.append(f"| {b} | " + " | ".join(f"{cell[t, b][0]:,.0f} | {cell[t, b][1]:.2f}"
                                               for t in threads) + " |")
    lines += ["", "Best batch size per round:", "", "| round | variant | best batch | items/s |",
              "|---:|---:|---:|---:|"]
    for run in runs:
        r = run["result"]
        lines.append(f"| {run['round']} | {run['variant']} | {r['best_batch_size']} | "
                     f"{r['items_per_s']:,.0f} |")
    lines.append("")
    Path(f"{out}.md").write_text("\n".join(lines))
    print(f"wrote {out}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
