#!/usr/bin/env python3
"""Issue 16's shared-memory measurement, and its gRPC-against-HTTP one: Triton's perf_analyzer
against one inferd, over HTTP (binary tensors) and gRPC, with the tensors in the request
(--shared-memory none) and in system shared memory (--shared-memory system), side by side in
one run. Repeats are interleaved (every variant once, then again), and each cell is the median.

    .venv/bin/python bench/shared_memory_bench.py                      # the committed table
    .venv/bin/python bench/shared_memory_bench.py --models mlp_scorer --concurrency 1 --repeats 1

Writes bench/results/<date>-shared-memory.md (the tables) and .json (every run, its command).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))
import result_file  # noqa: E402
from perf_analyzer_command import perf_analyzer_command  # noqa: E402
from inferd_harness import DEMO_MODELS, INFERD_BINARY, InferdServer  # noqa: E402

PROTOCOLS = ("http", "grpc")
MEMORY = ("none", "system")
# A model whose tensors are large and whose compute is cheap, where moving the bytes is the
# cost that shared memory removes: the mean of 1 MiB of floats per row.
WIDE = "wide_mean"
WIDE_FEATURES = 262144
WIDE_CONFIG = f"""# {WIDE}: the mean of each row (written by bench/shared_memory_bench.py)
backend: torch
max_batch_size: 8
inputs:
  - name: x
    datatype: FP32
    dims: [{WIDE_FEATURES}]
outputs:
  - name: y
    datatype: FP32
    dims: [1]
"""


def make_repository(root: Path, models: list[str]) -> Path:
    """The demo models asked for, and wide_mean built with torch.jit when asked for."""
    import shutil

    for model in models:
        if model != WIDE:
            shutil.copytree(DEMO_MODELS / model, root / model)
    if WIDE in models:
        import torch

        class RowMean(torch.nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x.mean(dim=1, keepdim=True)

        (root / WIDE / "1").mkdir(parents=True)
        torch.jit.script(RowMean()).save(str(root / WIDE / "1" / "model.pt"))
        (root / WIDE / "config.yaml").write_text(WIDE_CONFIG)
    return root


def pa_command(args, server: InferdServer, model: str, protocol: str, memory: str,
               concurrency: int, report: Path) -> list[str]:
    port = server.port if protocol == "http" else server.grpc_port
    # The machine is shared: any three windows count as stable; the repeats and their median
    # are what smooths the noise.
    return perf_analyzer_command(args.perf_analyzer, model, protocol, f"127.0.0.1:{port}",
                                 concurrency, args.window_ms, 3, 999, csv_path=str(report),
                                 shared_memory=memory)


TIMEOUTS: list[dict] = []  # runs that hung, with what the server said at that moment


def server_state(server: InferdServer, model: str) -> dict:
    """What to look at when perf_analyzer hangs: the model's queue and the open connections."""
    stats = server.get(f"/v2/models/{model}/stats").json()["model_stats"]
    sockets = subprocess.run(["ss", "-tnH", "state", "established",
                              f"( sport = :{server.port} )"],
                             capture_output=True, text=True).stdout.splitlines()
    return {"queue_depth": [s.get("queue_depth") for s in stats],
            "inference_count": [s.get("inference_count") for s in stats],
            "established_http_connections": len(sockets)}


def run_one(command: list[str], report: Path, server: InferdServer, model: str) -> dict | None:
    """One perf_analyzer run; a run that hangs (HTTP at 64 clients did, before the --async of
    perf_analyzer_command.py) is recorded with the server's state and tried once more; None
    when it hangs again."""
    for attempt in range(2):
        try:
            return run_once(command, report)
        except subprocess.TimeoutExpired:
            TIMEOUTS.append({"command": " ".join(command), "attempt": attempt + 1,
                             "server": server_state(server, model)})
            print(f"perf_analyzer hung; server state {TIMEOUTS[-1]['server']}", flush=True)
    return None


def run_once(command: list[str], report: Path) -> dict:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-6:])
        raise SystemExit(f"perf_analyzer failed ({done.returncode}): {tail}")
    row = next(csv.DictReader(open(report)))
    return {"qps": float(row["Inferences/Second"]), "p50_us": float(row["p50 latency"]),
            "p99_us": float(row["p99 latency"])}


def median_cell(runs: list[dict]) -> dict:
    """The medians of a cell's runs; NaN for a cell whose every run hung."""
    return {key: statistics.median(run[key] for run in runs) if runs else float("nan")
            for key in ("qps", "p50_us", "p99_us")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=f"mlp_scorer,resnet18,{WIDE}")
    parser.add_argument("--concurrency", default="1,8,64",
                        help="levels; resnet18 (compute-bound, 25 images/s on 2 cores) runs "
                             "the ones up to 8")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--window-ms", type=int, default=1500)
    parser.add_argument("--perf-analyzer", default=str(ROOT / "build" / "perf-venv" /
                                                       "perf_analyzer"))
    parser.add_argument("--out-dir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--name", default="shared-memory")
    parser.add_argument("--render", type=Path,
                        help="write the tables again from this JSON file's runs (measures "
                             "nothing)")
    args = parser.parse_args()
    models = args.models.split(",")
    levels = [int(c) for c in args.concurrency.split(",")]

    if args.render:
        saved = json.loads(args.render.read_text())
        TIMEOUTS.extend(saved.get("timeouts", []))
        runs = {tuple(int(part) if part.isdigit() else part for part in key.split("/")): value
                for key, value in saved["runs"].items()}
        models = list(dict.fromkeys(key[0] for key in runs))
        levels = sorted({key[1] for key in runs})
        return write_report(args, saved["meta"], runs, saved["commands"], models, levels)

    result_file.require_clean_tree(args.out_dir)  # a kept run measures a committed tree
    load_before = result_file.load()
    runs: dict[tuple, list[dict]] = {}
    commands: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        repository = make_repository(work_dir / "models", models)
        server = InferdServer(repository, work_dir / "inferd.log", new_session=True).start()
        try:
            for repeat in range(args.repeats):
                for model in models:
                    for concurrency in levels:
                        if model == "resnet18" and concurrency > 8:
                            continue
                        for protocol in PROTOCOLS:
                            for memory in MEMORY:
                                report = work_dir / "pa.csv"
                                command = pa_command(args, server, model, protocol,
                                                     memory, concurrency, report)
                                result = run_one(command, report, server, model)
                                key = (model, concurrency, protocol, memory)
                                runs.setdefault(key, [])
                                if result is None:
                                    continue
                                runs[key].append(result)
                                commands["/".join(map(str, key))] = " ".join(command)
                                print(f"repeat {repeat + 1}: {model} c={concurrency} {protocol} "
                                      f"shm={memory}: {result['qps']:.0f}/s p50 "
                                      f"{result['p50_us']:.0f} µs", flush=True)
        finally:
            server.stop()
    load_after = result_file.load()

    meta = result_file.meta([str(INFERD_BINARY), args.perf_analyzer],
                            "bench/shared_memory_bench.py " + " ".join(sys.argv[1:]),
                            load_before, load_after)
    return write_report(args, meta, runs, commands, models, levels)


def write_report(args, meta: dict, runs: dict, commands: dict, models: list[str],
                 levels: list[int]) -> int:
    repeats = max((len(value) for value in runs.values()), default=0)
    cells = {key: median_cell(value) for key, value in runs.items()}
    date = datetime.date.today().isoformat()
    lines = [f"# Shared memory and gRPC against HTTP ({date})", ""] + result_file.header(meta) + [
        "",
        f"Triton's perf_analyzer (tritonclient 2.51.0) against one inferd serving demo models "
        f"with their default configs and `{WIDE}` (the mean of {WIDE_FEATURES} FP32 values, "
        f"1 MiB per request, a cheap model with a large input); median of {repeats} "
        f"interleaved runs of 3 windows of {args.window_ms} ms each. HTTP sends binary "
        "tensors. `system`: `--shared-memory system` (inputs and outputs in POSIX shared memory that "
        "perf_analyzer registers; the request carries only their region names).", "",
        "## Shared memory against tensors in the request", "",
        "| model | concurrency | protocol | in request /s | shared memory /s | ratio | "
        "p50 µs in request | p50 µs shared memory |",
        "|---|---:|---|---:|---:|---:|---:|---:|"]
    for (model, concurrency, protocol, memory), cell in sorted(cells.items()):
        if memory != "none":
            continue
        shared = cells[(model, concurrency, protocol, "system")]
        lines.append(f"| {model} | {concurrency} | {protocol} | {cell['qps']:.0f} | "
                     f"{shared['qps']:.0f} | {shared['qps'] / cell['qps']:.2f}× | "
                     f"{cell['p50_us']:.0f} | {shared['p50_us']:.0f} |")
    lines += ["", "## gRPC against binary HTTP, same client (tensors in the request)", "",
              "Issue 16's throughput target, checked on mlp_scorer: gRPC at concurrency 64 at "
              "least binary HTTP's. Its latency target (ModelInfer within 100 µs of an empty "
              "RPC at one client) is bench/grpc_ab.py's; here the gRPC − HTTP column is the "
              "difference between the two transports for the same client and model.", "",
              "| model | concurrency | HTTP /s | gRPC /s | gRPC / HTTP | HTTP p50 µs | "
              "gRPC p50 µs | gRPC − HTTP p50 µs | target |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for model in models:
        for concurrency in levels:
            http = cells.get((model, concurrency, "http", "none"))
            grpc = cells.get((model, concurrency, "grpc", "none"))
            if http is None or grpc is None:
                continue
            added = grpc["p50_us"] - http["p50_us"]
            target = ""
            if model == "mlp_scorer" and concurrency == 64:
                target = "met" if grpc["qps"] >= http["qps"] else "missed"
            lines.append(f"| {model} | {concurrency} | {http['qps']:.0f} | {grpc['qps']:.0f} | "
                         f"{grpc['qps'] / http['qps']:.2f}× | {http['p50_us']:.0f} | "
                         f"{grpc['p50_us']:.0f} | {added:+.0f} | {target} |")
    if 64 not in levels:
        lines += ["", "Concurrency 64 is not in this run (--concurrency), so the gRPC and HTTP "
                  "throughput target is not checked."]
    if TIMEOUTS:
        lines += ["", f"perf_analyzer hung {len(TIMEOUTS)} time(s) (killed after 120 s and run "
                  "again); the server's queue and connections at that moment are in the JSON "
                  "file's `timeouts`: " + "; ".join(
                      f"{t['command'].split(' -i ')[1].split()[0]} "
                      f"c={t['command'].split('--concurrency-range ')[1].split(':')[0]}: "
                      f"{t['server']}" for t in TIMEOUTS)]
    lines += ["", "Each run's perf_analyzer command is in the JSON file."]
    stem = result_file.new_stem(args.out_dir, args.name)  # never over a kept file
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    stem.with_suffix(".json").write_text(json.dumps(
        {"meta": meta, "runs": {"/".join(map(str, k)): v for k, v in runs.items()},
         "medians": {"/".join(map(str, k)): v for k, v in cells.items()},
         "commands": commands, "timeouts": TIMEOUTS}, indent=2) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
