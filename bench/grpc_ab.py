#!/usr/bin/env python3
"""Two inferd binaries side by side on the gRPC path (issue 16, item 4): latency at one client
(build/inferd_latency_probe: ModelInfer and an empty RPC, ServerLive, over gRPC, and binary
HTTP for reference), with the server's CPU per gRPC call and the model's own queue wait and
forward pass per gRPC request (its statistics), and throughput at 64 concurrent requests
(Triton's perf_analyzer over gRPC and binary HTTP), on mlp_scorer. The binaries alternate, one server at a time, for --rounds
rounds; each cell is the median over the rounds.

    .venv/bin/python bench/grpc_ab.py --baseline /tmp/inferd-before [--candidate build/inferd]

Writes bench/results/<date>-grpc-ab.md and .json.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))
import result_file  # noqa: E402
import thread_profile  # noqa: E402
from perf_analyzer_command import perf_analyzer_command  # noqa: E402
from inferd_harness import DEMO_MODELS, InferdServer  # noqa: E402

MODEL = "mlp_scorer"
PROBE_REQUESTS = 3000


def cpu_seconds(pid: int) -> float:
    """User + system CPU of the process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def model_stage_ns(server: InferdServer) -> dict:
    """The model's total queue and compute_infer time and request count so far."""
    url = f"http://127.0.0.1:{server.port}/v2/models/{MODEL}/stats"
    stats = json.load(urllib.request.urlopen(url, timeout=10))["model_stats"][0]
    return {"queue": stats["inference_stats"]["queue"]["ns"],
            "compute": stats["inference_stats"]["compute_infer"]["ns"],
            "count": stats["inference_count"]}


def probe(server: InferdServer) -> dict:
    """One client's latency per transport; over gRPC also the server's CPU per call (where
    busy polling shows its price) and the model's queue wait and forward pass per request
    (from its statistics)."""
    def run(transport: str) -> dict:
        address = f"127.0.0.1:{server.port if transport == 'http' else server.grpc_port}"
        command = [str(ROOT / "build" / "inferd_latency_probe"), f"--{transport}", address,
                   "-m", MODEL, "--requests", str(PROBE_REQUESTS), "--warmup", "300"]
        before, stages_before = cpu_seconds(server.proc.pid), model_stage_ns(server)
        threads_before = thread_profile.snapshot(server.proc.pid)
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
        row = json.loads(done.stdout.splitlines()[0])
        # Per thread group, per call (ModelInfer and the empty RPCs together, as cpu_us).
        row["threads"] = thread_profile.profile(
            threads_before, thread_profile.snapshot(server.proc.pid),
            PROBE_REQUESTS + 300 + min(PROBE_REQUESTS, 2000),
            lambda comm: thread_profile.inferd_thread_group(comm, MODEL))
        # The probe's ServerLive loop (up to 2000 calls) runs after the timed requests.
        calls = PROBE_REQUESTS + 300 + min(PROBE_REQUESTS, 2000)
        row["cpu_us_per_call"] = (cpu_seconds(server.proc.pid) - before) / calls * 1e6
        stages = model_stage_ns(server)
        requests = max(1, stages["count"] - stages_before["count"])
        for stage in ("queue", "compute"):
            row[f"{stage}_us"] = (stages[stage] - stages_before[stage]) / requests / 1e3
        return row
    grpc, http = run("grpc"), run("http")
    return {"grpc_p50_us": grpc["p50_us"], "grpc_empty_p50_us": grpc["server_live_p50_us"],
            "grpc_cpu_us": grpc["cpu_us_per_call"], "grpc_queue_us": grpc["queue_us"],
            "grpc_compute_us": grpc["compute_us"],
            "http_p50_us": http["p50_us"], "http_empty_p50_us": http["server_live_p50_us"],
            "grpc_threads": grpc["threads"]}


def throughput(args, server: InferdServer, protocol: str, work: Path) -> float:
    port = server.port if protocol == "http" else server.grpc_port
    report = work / "pa.csv"
    command = perf_analyzer_command(args.perf_analyzer, MODEL, protocol, f"127.0.0.1:{port}",
                                    64, 2000, 3, 999, csv_path=str(report))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        print(f"perf_analyzer did not finish in 120 s: {' '.join(command)}", flush=True)
        return float("nan")
    if done.returncode != 0:
        raise SystemExit(f"perf_analyzer failed: {(done.stdout + done.stderr)[-800:]}")
    return float(next(csv.DictReader(open(report)))["Inferences/Second"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--candidate", default=str(ROOT / "build" / "inferd"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--perf-analyzer", default=str(ROOT / "build" / "perf-venv" /
                                                       "perf_analyzer"))
    parser.add_argument("--out-dir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--name", default="grpc-ab")
    parser.add_argument("--latency-only", action="store_true",
                        help="skip the perf_analyzer throughput runs")
    args = parser.parse_args()
    binaries = {"baseline": args.baseline, "candidate": args.candidate}

    result_file.require_clean_tree(args.out_dir)  # a kept run measures a committed tree
    load_before = result_file.load()
    runs: dict[str, list[dict]] = {name: [] for name in binaries}
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        for round_index in range(args.rounds):
            for name, binary in binaries.items():
                server = InferdServer(DEMO_MODELS, work_dir / f"{name}.log", binary=Path(binary),
                                      new_session=True).start()
                try:
                    run = probe(server)
                    nan = float("nan")
                    run["grpc_c64_qps"] = nan if args.latency_only else throughput(
                        args, server, "grpc", work_dir)
                    run["http_c64_qps"] = nan if args.latency_only else throughput(
                        args, server, "http", work_dir)
                finally:
                    server.stop()
                runs[name].append(run)
                print(f"round {round_index + 1} {name}: {run}", flush=True)
    load_after = result_file.load()
    meta = result_file.meta(list(binaries.values()) + [args.perf_analyzer],
                            "bench/grpc_ab.py " + " ".join(sys.argv[1:]), load_before, load_after)
    def median(values):
        values = [v for v in values if v == v]  # runs that gave no figure (NaN) left out
        return statistics.median(values) if values else float("nan")

    medians = {name: {key: median(r[key] for r in rows) for key in rows[0]
                      if key != "grpc_threads"} for name, rows in runs.items()}
    for cell in medians.values():
        cell["grpc_added_us"] = cell["grpc_p50_us"] - cell["grpc_empty_p50_us"]
        cell["http_added_us"] = cell["http_p50_us"] - cell["http_empty_p50_us"]
    threads = {name: {group: {k: median(r["grpc_threads"].get(group, {}).get(k, 0) for r in rows)
                              for k in ("cpu_us", "wait_us", "timeslices")}
                      for group in sorted({g for r in rows for g in r["grpc_threads"]})}
               for name, rows in runs.items()}
    rows = [("gRPC ModelInfer p50 µs, 1 client", "grpc_p50_us"),
            ("gRPC empty RPC (ServerLive) p50 µs", "grpc_empty_p50_us"),
            ("gRPC ModelInfer minus empty RPC µs (target ≤ 100)", "grpc_added_us"),
            ("model queue wait µs per gRPC request, 1 client", "grpc_queue_us"),
            ("model forward pass µs per gRPC request, 1 client", "grpc_compute_us"),
            ("server CPU µs per gRPC call, 1 client (ModelInfer and ServerLive)", "grpc_cpu_us"),
            ("binary HTTP p50 µs, 1 client", "http_p50_us"),
            ("binary HTTP empty request (GET /v2/health/live) p50 µs", "http_empty_p50_us"),
            ("binary HTTP inference minus its empty request µs", "http_added_us"),
            ("gRPC req/s, 64 concurrent", "grpc_c64_qps"),
            ("binary HTTP req/s, 64 concurrent", "http_c64_qps")]
    date = datetime.date.today().isoformat()
    base, cand = medians["baseline"], medians["candidate"]
    lines = [f"# gRPC path, two binaries side by side ({date})", ""] + result_file.header(meta) + [
        "", f"mlp_scorer, demo configs; median of {args.rounds} alternating rounds. Latency: "
        "build/inferd_latency_probe (sequential requests, C++ client); throughput: "
        "perf_analyzer, 3 windows of 2 s.", "",
        "| measure | baseline | candidate | candidate / baseline |", "|---|---:|---:|---:|"]
    for label, key in rows:
        ratio = cand[key] / base[key] if base[key] else float("nan")
        lines.append(f"| {label} | {base[key]:.0f} | {cand[key]:.0f} | {ratio:.2f}× |")
    lines += ["", "Where the server's time goes over the gRPC probe (ModelInfer and empty RPCs "
              "together, per call; medians over rounds; from /proc/PID/task/TID/schedstat: CPU "
              "µs, µs runnable but waiting for a core, timeslices = wake-ups or preemptions):",
              "", "| binary | thread group | CPU µs | run-queue wait µs | timeslices |",
              "|---|---|---:|---:|---:|"]
    for name, groups in threads.items():
        for group, p in groups.items():
            if p["cpu_us"] >= 0.05 or p["timeslices"] >= 0.001:
                lines.append(f"| {name} | {group} | {p['cpu_us']:.1f} | {p['wait_us']:.1f} | "
                             f"{p['timeslices']:.2f} |")
    for name, cell in medians.items():
        verdict_latency = "met" if cell["grpc_added_us"] <= 100 else "missed"
        verdict_load = "met" if cell["grpc_c64_qps"] >= cell["http_c64_qps"] else "missed"
        lines.append(f"\n{name}: ModelInfer within 100 µs of an empty RPC: {verdict_latency}; "
                     f"gRPC at 64 at least binary HTTP: {verdict_load}.")
    stem = result_file.new_stem(args.out_dir, args.name)  # never over a kept file
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    stem.with_suffix(".json").write_text(json.dumps(
        {"meta": meta, "runs": runs, "medians": medians, "threads": threads}, indent=2) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
