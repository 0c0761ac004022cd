#!/usr/bin/env python3
"""inferd against the in-process engine and the seed's Flask baseline, side by side in one run.

Performance claims in this project are ratios measured in one run on one machine (see
DESIGN.md, "Measuring"), so this script measures inferd, the Flask baseline (both with
wrk) and the engine alone (bench/engine_limit.py: the same model and threads, no HTTP) on
the same models, inputs and concurrencies, one at a time, and writes
bench/results/<date>-<name>.md (medians) and .json (every repeat, the machine, the commit
and the exact commands).

    .venv/bin/python bench/run_bench.py                       # defaults: 10 s x 3 repeats
    .venv/bin/python bench/run_bench.py --duration 5 --repeats 1 --servers flask
"""

import argparse
import datetime
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from typing import List, Optional

import bodies
import report
import servers

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
LUA_SCRIPT = os.path.join(BENCH_DIR, "predict.lua")
ENGINE_SCRIPT = os.path.join(BENCH_DIR, "engine_limit.py")
KINDS = ("inferd", "flask", "engine")


def parse_args(argv: List[str]) -> argparse.Namespace:
    def csv(text: str) -> List[str]:
        return [part.strip() for part in text.split(",") if part.strip()]

    p = argparse.ArgumentParser(description="inferd vs the engine and Flask, side by side.")
    p.add_argument("--servers", type=csv, default=list(KINDS), help=",".join(KINDS))
    p.add_argument("--models", type=csv, default=["mlp_scorer", "resnet18"])
    p.add_argument("--concurrency", type=lambda t: [int(c) for c in csv(t)], default=[1, 16])
    p.add_argument("--duration", type=int, default=10, help="seconds per timed wrk run")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per cell (medians)")
    p.add_argument("--warmup", type=int, default=2, help="seconds of untimed load first")
    p.add_argument("--warmup-requests", type=int, default=3,
                   help="sequential requests before the warm-up load (slow first forwards)")
    p.add_argument("--wrk-timeout", type=int, default=10,
                   help="wrk request timeout in seconds (wrk's default of 2 s would turn "
                        "Flask's slow ResNet-18 answers into errors)")
    p.add_argument("--inferd-binary", default=os.path.join(REPO_ROOT, "build", "inferd"))
    p.add_argument("--repository", default=os.path.join(REPO_ROOT, "build", "demo-models"))
    p.add_argument("--python", default=sys.executable,
                   help="interpreter for the Flask baseline and the engine limit")
    p.add_argument("--engine-preload", default="auto",
                   help="LD_PRELOAD for the engine limit; auto: the allocator inferd links")
    p.add_argument("--ready-timeout", type=int, default=120, help="seconds to wait for a server")
    p.add_argument("--out-dir", default=os.path.join(BENCH_DIR, "results"))
    p.add_argument("--name", default="first-table", help="file name after the date")
    args = p.parse_args(argv)
    unknown = set(args.servers) - set(KINDS)
    if unknown:
        p.error(f"unknown server(s): {', '.join(sorted(unknown))}")
    return args


def wrk_command(url: str, concurrency: int, seconds: int, timeout: int, body_path: str) -> List[str]:
    return ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds}s", "--latency",
            "--timeout", f"{timeout}s", "-s", LUA_SCRIPT, url, "--", body_path]


def run_wrk(command: List[str], seconds: int, timeout: int) -> dict:
    """Runs wrk once and returns the numbers predict.lua printed on its BENCH_RESULT line.

    The 1-minute load average before the run is kept with it: on a shared machine it is
    the quickest way to spot a run that other work disturbed.
    """
    load_before = os.getloadavg()[0]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + timeout + 60)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            return dict(json.loads(line[len("BENCH_RESULT "):]), loadavg_1m_before=load_before)
    raise RuntimeError(f"wrk gave no BENCH_RESULT (exit {done.returncode}):\n"
                       f"{done.stdout[-1000:]}\n{done.stderr[-1000:]}")


def new_server(kind: str, model: str, args: argparse.Namespace, log_dir: str,
               concurrency: int) -> servers.Server:
    log_path = os.path.join(log_dir, f"{kind}-{model}-c{concurrency}.log")
    if kind == "inferd":
        return servers.new_inferd(model, args.inferd_binary, args.repository, log_path)
    port = servers.free_port()
    command = servers.flask_command(args.python, os.path.join(BENCH_DIR, "flask_baseline.py"),
                                    bodies.model_file(args.repository, model), port)
    return servers.Server(kind, model, port, command, log_path)


FAILURES = (RuntimeError, OSError, subprocess.TimeoutExpired)


def prepare(server: servers.Server, cell: dict, body: dict, body_path: str,
            args: argparse.Namespace, commands: List[str], checks: List[dict]) -> None:
    """Starts the server, checks its answer and warms it up; raises if it cannot serve.

    A few sequential requests come before wrk's warm-up because TorchScript's profiling
    executor makes the first forward passes of a model slow (about a second for ResNet-18
    here), and at concurrency 1 a short wrk warm-up would get through only those.
    """
    payload = open(body_path, "rb").read()
    commands.append(shlex.join(server.command))
    servers.start(server)
    servers.wait_ready(server, payload, args.ready_timeout)
    answer = servers.predict_once(server, payload)
    if not any(c["server"] == server.kind and c["model"] == server.model for c in checks):
        checks.append({"server": server.kind, "model": server.model, "status": answer["status"],
                       "ms": answer["ms"], "verdict": bodies.check_answer(answer, body)})
    for _ in range(args.warmup_requests):
        servers.predict_once(server, payload)
    warm = wrk_command(server.predict_url, cell["concurrency"], args.warmup, args.wrk_timeout,
                       body_path)
    commands.append(shlex.join(warm))
    cell["warmup"] = run_wrk(warm, args.warmup, args.wrk_timeout)


def timed_run(server: servers.Server, cell: dict, body_path: str, args: argparse.Namespace,
              commands: List[str]) -> None:
    """One timed wrk run, appended to the cell; raises if the server died during it."""
    timed = wrk_command(server.predict_url, cell["concurrency"], args.duration, args.wrk_timeout,
                        body_path)
    commands.append(shlex.join(timed))
    cell["runs"].append(run_wrk(timed, args.duration, args.wrk_timeout))
    if server.process.poll() is not None:
        raise RuntimeError(f"{server.kind} exited ({server.process.returncode}) during the run; "
                           f"log {server.log_path}:\n{server.log_tail()}")


def engine_run(cell: dict, args: argparse.Namespace, commands: List[str],
               checks: List[dict]) -> None:
    """One engine_limit.py run (load, check, warm up, time), appended to the cell.

    A fresh process per repeat: it warms up right before timing, so the interleaved runs of
    the other servers cannot leave it cold. Its first run's answer check joins the others.
    """
    command = servers.engine_command(args.python, ENGINE_SCRIPT,
                                     os.path.join(args.repository, cell["model"]),
                                     cell["concurrency"], args.duration, args.warmup,
                                     args.warmup_requests)
    preload = f"LD_PRELOAD={args.engine_preload} " if args.engine_preload else ""
    commands.append(preload + shlex.join(command))
    run = servers.run_engine(command, args.engine_preload, cell["log"],
                             args.ready_timeout + args.warmup + args.duration + 60)
    cell["runs"].append(run)
    cell["label"] = run["label"]
    if not any(c["server"] == "engine" and c["model"] == cell["model"] for c in checks):
        checks.append({"server": "engine", "model": cell["model"], "status": "in-process",
                       "ms": run["first_ms"], "verdict": run["check"]})


def fail(cell: dict, exc: Exception) -> None:
    cell["error"] = str(exc)
    print(f"  {cell['server']} FAILED: {exc}", file=sys.stderr, flush=True)


def bench_pair(model: str, concurrency: int, body: dict, body_path: str, args: argparse.Namespace,
               work_dir: str, commands: List[str], checks: List[dict]) -> List[dict]:
    """One (model, concurrency): each server freshly started, then repeats interleaved A B C A B C.

    Interleaving spreads drifts in background load (the machine is shared) over all servers
    instead of charging them to whichever ran during the drift. Only one server (or the
    engine) is under load at a time; the others sit idle. The engine has no process to
    start: its entry in `live` has no server, and each of its runs is a process of its own.
    """
    started, cells, live = [], [], []
    try:
        for kind in args.servers:
            cell = {"server": kind, "model": model, "concurrency": concurrency, "runs": []}
            cells.append(cell)
            if kind == "engine":
                cell["log"] = os.path.join(work_dir, f"engine-{model}-c{concurrency}.log")
                live.append((None, cell))
                continue
            server = new_server(kind, model, args, work_dir, concurrency)
            cell["log"] = server.log_path
            started.append((server, cell))
            try:
                prepare(server, cell, body, body_path, args, commands, checks)
                live.append((server, cell))
            except FAILURES as exc:
                fail(cell, exc)
        for _ in range(args.repeats):
            for server, cell in list(live):
                try:
                    if server is None:
                        engine_run(cell, args, commands, checks)
                    else:
                        timed_run(server, cell, body_path, args, commands)
                except FAILURES as exc:
                    fail(cell, exc)
                    live.remove((server, cell))
    finally:
        for server, cell in started:
            cell["exit_status"] = servers.stop(server)
    for cell in cells:
        if "error" not in cell:
            cell["summary"] = report.summarise(cell["runs"])
    return cells


def describe(cell: dict) -> str:
    s = cell.get("summary")
    if not s:
        return "failed"
    return f"{s['qps']:.1f} QPS, p50 {s['p50_ms']:.2f} ms, p99 {s['p99_ms']:.2f} ms, " \
           f"errors {s['errors']}"


def run(args: argparse.Namespace, work_dir: str) -> dict:
    """Runs every (model, concurrency, server) cell and gathers the report's contents."""
    if "inferd" in args.servers and not os.access(args.inferd_binary, os.X_OK):
        raise SystemExit(f"no inferd binary at {args.inferd_binary} (build it, or --servers flask)")
    if args.engine_preload == "auto":
        args.engine_preload = servers.linked_allocator(args.inferd_binary)
    cells, commands, checks, body_info = [], [], [], {}
    for model in args.models:
        body = bodies.make_body(args.repository, model)
        body_path = bodies.write_body(work_dir, model, body)
        raw = open(body_path, "rb").read()
        body_info[model] = {"path": body_path, "shape": body["shape"], "bytes": len(raw),
                            "sha256": hashlib.sha256(raw).hexdigest()}
        for concurrency in args.concurrency:
            print(f"{model} c={concurrency} ...", file=sys.stderr, flush=True)
            for cell in bench_pair(model, concurrency, body, body_path, args, work_dir,
                                   commands, checks):
                print(f"  {cell['server']}: {describe(cell)}", file=sys.stderr, flush=True)
                cells.append(cell)
    return {"cells": cells, "commands": commands, "checks": checks, "bodies": body_info}


def _terminate_as_interrupt(signum, frame):
    """SIGTERM takes the same path as Ctrl-C, so running servers are stopped on the way out."""
    raise KeyboardInterrupt


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    report.result_file.require_clean_tree(args.out_dir)  # a kept run measures a committed tree
    work_dir = tempfile.mkdtemp(prefix="inferd-bench-")
    print(f"bodies and server logs: {work_dir}", file=sys.stderr)
    started = datetime.datetime.now()
    load_start = os.getloadavg()
    try:
        results = run(args, work_dir)
    except KeyboardInterrupt:
        print("interrupted; servers stopped, nothing written", file=sys.stderr)
        return 130
    settings = dict(servers=args.servers, models=args.models, concurrency=args.concurrency,
                    repeats=args.repeats, duration_s=args.duration, warmup_s=args.warmup,
                    warmup_requests=args.warmup_requests, wrk_timeout_s=args.wrk_timeout,
                    engine_preload=args.engine_preload)
    full = dict(date=started.strftime("%Y-%m-%d"), started=started.isoformat(timespec="seconds"),
                bench_command=shlex.join([os.path.relpath(sys.executable, REPO_ROOT),
                                          os.path.relpath(os.path.abspath(__file__), REPO_ROOT),
                                          *(sys.argv[1:] if argv is None else argv)]),
                git_commit=report.git_commit(REPO_ROOT), machine=report.machine_info(),
                settings=settings, work_dir=work_dir,
                loadavg={"start": load_start, "end": os.getloadavg()}, **results)
    paths = report.write(full, args.out_dir, args.name)
    print(report.markdown(full))
    print("wrote " + ", ".join(paths), file=sys.stderr)
    return 1 if any("error" in cell for cell in results["cells"]) else 0


if __name__ == "__main__":
    sys.exit(main())
