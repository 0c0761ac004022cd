#!/usr/bin/env python3
"""Busy polling on and off, side by side in one run: latency at one client and what the
polling costs under load.

For each `--busy-poll-us` value (default 0 and 100, the server's default), one inferd serves
mlp_scorer with auto-tuned batching (bench/cost/make_repo.sh, as batching_bench.py's
autotune row) and is measured with:
  * the C++ latency probe (build/inferd_latency_probe, sequential requests): binary HTTP and
    gRPC p50/p90/p99 and each transport's ServerLive floor; added latency = p50 minus the
    in-process engine's p50 (bench/engine_limit.py, measured in the same run);
  * wrk POST /predict at 1, 8 and 64 connections: QPS, p99, and the server's CPU time per
    request (utime + stime from /proc around the run), which is where polling shows its cost.
The variants alternate `--rounds` times so that a disturbance hits both.

    .venv/bin/python bench/busy_poll_bench.py
    .venv/bin/python bench/busy_poll_bench.py --variants 0,100,400 --rounds 1 --duration 4

Writes bench/results/<date>-busy-poll.md and .json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))
from inferd_harness import DEMO_MODELS, INFERD_BINARY, InferdServer  # noqa: E402
import result_file  # noqa: E402
import run_bench  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


def probe(server: InferdServer, requests: int) -> list[dict]:
    command = [str(ROOT / "build" / "inferd_latency_probe"), "--http",
               f"127.0.0.1:{server.port}", "--grpc", f"127.0.0.1:{server.grpc_port}",
               "-m", "mlp_scorer", "--requests", str(requests), "--warmup", "500"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def load(server: InferdServer, connections: int, args: argparse.Namespace, body: Path) -> dict:
    url = f"{server.url}/predict?model=mlp_scorer"
    warm = run_bench.wrk_command(url, connections, 2, 10, str(body))
    subprocess.run(warm, capture_output=True, timeout=60)
    before = cpu_seconds(server.proc.pid)
    result = run_bench.run_wrk(run_bench.wrk_command(url, connections, args.duration, 10,
                                                     str(body)), args.duration, 10)
    cpu = cpu_seconds(server.proc.pid) - before
    return {"connections": connections, "qps": result["qps"], "p99_us": result["p99_us"],
            "errors": result["errors"], "requests": result["requests"],
            "cpu_us_per_request": cpu * 1e6 / max(1, result["requests"]),
            "loadavg_1m_before": result["loadavg_1m_before"]}


def engine_p50_us() -> float:
    command = [sys.executable, str(ROOT / "bench" / "engine_limit.py"),
               str(DEMO_MODELS / "mlp_scorer"), "--concurrency", "1", "--duration", "5"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                          cwd=ROOT / "bench", check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["p50_ms"] * 1e3


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", default="0,100", help="--busy-poll-us values")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--duration", type=int, default=6, help="seconds per wrk run")
    p.add_argument("--connections", default="1,8,64")
    p.add_argument("--requests", type=int, default=5000, help="probe requests per transport")
    p.add_argument("--out-dir", type=Path, default=ROOT / "bench" / "results")
    args = p.parse_args()
    result_file.require_clean_tree(args.out_dir)  # a kept run measures a committed tree
    load_before = result_file.load()

    work = Path(tempfile.mkdtemp(prefix="inferd-busy-poll-"))
    subprocess.run([str(ROOT / "bench" / "cost" / "make_repo.sh")], check=True,
                   env=dict(os.environ, WORK=str(work)))
    variants = [int(v) for v in args.variants.split(",")]
    levels = [int(c) for c in args.connections.split(",")]
    results: dict[int, dict] = {v: {"probe": [], "load": {c: [] for c in levels}} for v in variants}
    for round_index in range(args.rounds):
        for variant in variants:
            server = InferdServer(work / "repo", work / f"inferd-{variant}.log",
                                  ["--busy-poll-us", str(variant), "--access-log", "false",
                                   "--log-level", "warn"]).start()
            try:
                results[variant]["probe"] += probe(server, args.requests)
                for c in levels:
                    results[variant]["load"][c].append(load(server, c, args, work / "body.json"))
                    print(f"round {round_index + 1} busy-poll {variant} c={c}: "
                          f"{results[variant]['load'][c][-1]}", flush=True)
            finally:
                server.stop()
    engine = engine_p50_us()

    date = datetime.date.today().isoformat()
    command = "`.venv/bin/python " + " ".join(["bench/busy_poll_bench.py", *sys.argv[1:]]) + "`"
    meta = result_file.meta([str(INFERD_BINARY)], command.strip("`"), load_before,
                            result_file.load())
    lines = [f"# Busy polling on and off ({date})", "",
             f"One inferd per variant on mlp_scorer (auto-tuned batching), variants alternating "
             f"{args.rounds} times; each cell is the median over the rounds. Engine alone "
             f"(bench/engine_limit.py, concurrency 1): p50 {engine:.0f} µs. Command: {command}.",
             ""] + result_file.header(meta) + [
             "", "## Latency at one client (C++ probe, sequential requests)", "",
             "| --busy-poll-us | transport | p50 µs | p90 µs | p99 µs | added p50 µs "
             "(p50 - engine) | ServerLive p50 µs |", "|---:|---|---:|---:|---:|---:|---:|"]
    for variant in variants:
        for transport in ("http-binary", "grpc"):
            runs = [r for r in results[variant]["probe"] if r["transport"] == transport]
            lines.append(
                f"| {variant} | {transport} | {median_of(runs, 'p50_us'):.0f} | "
                f"{median_of(runs, 'p90_us'):.0f} | {median_of(runs, 'p99_us'):.0f} | "
                f"{median_of(runs, 'p50_us') - engine:.0f} | "
                f"{median_of(runs, 'server_live_p50_us'):.0f} |")
    lines += ["", "## Throughput and server CPU (wrk POST /predict, JSON)", "",
              "| --busy-poll-us | connections | req/s | p99 ms | errors | server CPU µs "
              "per request |", "|---:|---:|---:|---:|---:|---:|"]
    for c in levels:
        for variant in variants:
            runs = results[variant]["load"][c]
            lines.append(f"| {variant} | {c} | {median_of(runs, 'qps'):.0f} | "
                         f"{median_of(runs, 'p99_us') / 1000:.2f} | "
                         f"{sum(r['errors'] for r in runs)} | "
                         f"{median_of(runs, 'cpu_us_per_request'):.1f} |")
    stem = result_file.new_stem(args.out_dir, "busy-poll")  # never over a kept file
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    stem.with_suffix(".json").write_text(json.dumps(
        {"engine_p50_us": engine, "command": command, "meta": meta,
         "results": {str(v): {"probe": r["probe"], "load": {str(c): runs for c, runs in
                                                            r["load"].items()}}
                     for v, r in results.items()}}, indent=2) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
