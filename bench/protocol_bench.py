#!/usr/bin/env python3
"""Issue 6's benchmark: KServe v2 over HTTP JSON, HTTP binary and gRPC, at concurrency 1 and
64, on mlp_scorer and resnet18, measured with inferd-perf in one run against one inferd; plus
the server's added latency at concurrency 1 (inferd p50 minus the in-process engine's p50
on the same model, from bench/engine_limit.py).

    .venv/bin/python bench/protocol_bench.py                       # the full table
    .venv/bin/python bench/protocol_bench.py --models mlp_scorer --concurrency 1 --window 1

Writes bench/results/<date>-protocols.md (the table) and .json (every row and the commands).
The machine is shared: say so next to any number it prints.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from inferd_harness import DEMO_MODELS, INFERD_BINARY, InferdServer  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
import result_file  # noqa: E402

PROTOCOLS = ("http-json", "http-binary", "grpc")


def run_perf(server: InferdServer, model: str, protocol: str, concurrency: int,
             args: argparse.Namespace, out: Path) -> dict:
    command = [str(ROOT / "tools" / "bin" / "inferd-perf"), "-m", model,
               "--url", f"127.0.0.1:{server.port}", "--grpc-url", f"127.0.0.1:{server.grpc_port}",
               "--protocol", protocol, "--concurrency-range", str(concurrency),
               "--measurement-interval", str(args.window), "--warmup", str(args.warmup),
               "--max-windows", str(args.max_windows), "--processes",
               str(args.processes if concurrency > 1 else 1), "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    print(done.stdout.strip(), flush=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"inferd-perf failed:\n{done.stderr}")
    row = json.loads(out.read_text())["results"][0]
    row["command"] = " ".join(command[1:]).replace(str(ROOT) + "/", "")
    return row


def probe_cpp(server: InferdServer, model: str) -> list[dict]:
    """Concurrency-1 latency from the C++ client (build/inferd_latency_probe): the added
    latency without a Python client's own per-request cost in it."""
    command = [str(ROOT / "build" / "inferd_latency_probe"), "--http",
               f"127.0.0.1:{server.port}", "--grpc", f"127.0.0.1:{server.grpc_port}", "-m", model,
               "--requests", "3000" if model == "mlp_scorer" else "30",
               "--warmup", "300" if model == "mlp_scorer" else "3"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"inferd_latency_probe failed:\n{done.stderr}")
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    for row in rows:
        row["command"] = " ".join(command).replace(str(ROOT) + "/", "")
        print(json.dumps(row), flush=True)
    return rows


def engine_p50_us(model: str) -> dict:
    command = [sys.executable, str(ROOT / "bench" / "engine_limit.py"), str(DEMO_MODELS / model),
               "--concurrency", "1", "--duration", "5"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                          cwd=ROOT / "bench")
    if done.returncode != 0:
        raise SystemExit(f"engine_limit failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"p50_us": result["p50_ms"] * 1e3, "qps": result["qps"],
            "command": " ".join(command[1:]).replace(str(ROOT) + "/", "")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mlp_scorer,resnet18")
    parser.add_argument("--concurrency", default="1,64")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--window", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--max-windows", type=int, default=6)
    parser.add_argument("--processes", type=int, default=2,
                        help="inferd-perf processes at concurrency > 1")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--name", default="protocols")
    args = parser.parse_args()

    models = args.models.split(",")
    levels = [int(c) for c in args.concurrency.split(",")]
    result_file.require_clean_tree(args.out_dir)  # a kept run measures a committed tree
    load_before = result_file.load()
    rows, engines, probes = [], {}, []
    tmp = Path(tempfile.mkdtemp(prefix="inferd-protocol-bench-"))
    server = InferdServer(DEMO_MODELS, tmp / "inferd.log").start()
    try:
        for model in models:
            for concurrency in levels:
                for protocol in args.protocols.split(","):
                    rows.append(run_perf(server, model, protocol, concurrency, args,
                                         tmp / f"{model}-{protocol}-{concurrency}.json"))
            probes += probe_cpp(server, model)
    finally:
        server.stop()
    for model in models:  # with the server stopped: the engine alone on the cores
        engines[model] = engine_p50_us(model)
    meta = result_file.meta([str(INFERD_BINARY)],
                            "bench/protocol_bench.py " + " ".join(sys.argv[1:]),
                            load_before, result_file.load())

    date = datetime.date.today().isoformat()
    lines = [f"# JSON vs binary vs gRPC ({date}, measured under shared load)", "",
             "inferd-perf closed loop against one inferd on build/demo-models (batch-1 requests; "
             "the models' own batching settings). Added latency = inferd p50 at concurrency 1 "
             "minus the in-process engine's p50 (bench/engine_limit.py, same model.pt, same "
             "LibTorch). Numbers are from a 2-core machine shared with other builds and tests: "
             "compare rows of one run, not runs.", ""] + result_file.header(meta) + ["",
             "| model | clients | protocol | req/s | p50 µs | p99 µs | server queue µs | "
             "server infer µs | added p50 µs (vs engine) |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        added = ""
        if row["level"] == 1 and row["model"] in engines:
            added = f"{row['p50_us'] - engines[row['model']]['p50_us']:.0f}"
        lines.append(f"| {row['model']} | {row['level']} | {row['protocol']} | "
                     f"{row['throughput_rps']:.0f} | {row['p50_us']:.0f} | {row['p99_us']:.0f} | "
                     f"{row.get('server_queue_us', float('nan')):.0f} | "
                     f"{row.get('server_compute_infer_us', float('nan')):.0f} | {added} |")
    lines += ["", "Engine alone, concurrency 1: " + ", ".join(
        f"{m} p50 {e['p50_us']:.0f} µs" for m, e in engines.items()), "",
        "Added latency from the C++ client (build/inferd_latency_probe, sequential requests, "
        "so no Python client cost in the number):", "",
        "| model | transport | p50 µs | p90 µs | p99 µs | added p50 µs (vs engine) | "
        "ServerLive p50 µs (transport floor) |",
        "|---|---|---:|---:|---:|---:|---:|"]
    for p in probes:
        lines.append(f"| {p['model']} | {p['transport']} | {p['p50_us']:.0f} | {p['p90_us']:.0f} | "
                     f"{p['p99_us']:.0f} | {p['p50_us'] - engines[p['model']]['p50_us']:.0f} | "
                     f"{p['server_live_p50_us']:.0f} |")
    lines += ["",
        "Commands: `.venv/bin/python " + " ".join(["bench/protocol_bench.py", *sys.argv[1:]]) +
        "`; each row's inferd-perf command is in the JSON file."]
    stem = result_file.new_stem(args.out_dir, args.name)  # never over a kept file
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    stem.with_suffix(".json").write_text(json.dumps(
        {"rows": rows, "cpp_probe": probes, "engine": engines, "machine": {"cpus": os.cpu_count()},
         "meta": meta,
         "note": "measured under shared load"}, indent=2) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
