#!/usr/bin/env python3
"""inferd with and without dynamic batching against the engine's best batch, the Flask
baseline and the loopback ceiling (nginx), side by side in one run (issue 3's benchmark).

Batching is worth what it buys next to the limits (DESIGN.md, "Measuring"), so for each
model this runs, one at a time and with repeats interleaved (drifts in the shared
machine's load hit every server alike):

  * inferd with the demo config as is (its defaults), without batching, with dynamic
    batching (fixed queue delay) and with auto-tuned batching, each on a temporary copy of
    the model (batching_servers.VARIANTS);
  * the in-process engine at its best batch size (engine_limit.py --batch-sizes): the most
    items/s a batching server could get out of the model here;
  * the seed's Flask baseline and, for small bodies, nginx answering a constant
    (nginx_ceiling): what any HTTP server on loopback can do with the same wrk.

Each wrk request carries one item, so items/s equal QPS. After each inferd run the
server's GET /v2/models/M/stats (if it has it) gives the average batch it really ran.
Writes bench/results/<date>-<name>.md and .json (every repeat, configs, commands).

    .venv/bin/python bench/batching_bench.py                     # 8 s x 2, c = 1,8,32,64
    .venv/bin/python bench/batching_bench.py --duration 3 --repeats 1 --variants nobatch
"""

import argparse
import datetime
import hashlib
import os
import shlex
import shutil
import signal
import sys
import tempfile
from typing import List, Optional

import batching_report
import batching_servers as bs
import bodies
import nginx_ceiling
import report
import run_bench
import servers

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
BASELINES = ("flask", "nginx", "engine")
FAILURES = run_bench.FAILURES


def parse_args(argv: List[str]) -> argparse.Namespace:
    def csv(text: str) -> List[str]:
        return [part.strip() for part in text.split(",") if part.strip()]

    def per_model(text: str) -> dict:
        return {k.strip(): int(v) for k, v in (part.split("=") for part in csv(text))}

    p = argparse.ArgumentParser(description="inferd batching vs engine, Flask and nginx.")
    p.add_argument("--models", type=csv, default=["mlp_scorer", "resnet18"])
    p.add_argument("--variants", type=csv, default=list(bs.VARIANTS), help=",".join(bs.VARIANTS))
    p.add_argument("--baselines", type=csv, default=list(BASELINES), help=",".join(BASELINES))
    p.add_argument("--concurrency", type=lambda t: [int(c) for c in csv(t)], default=[1, 8, 32, 64])
    p.add_argument("--duration", type=int, default=8, help="seconds per timed wrk run")
    p.add_argument("--flask-duration", type=int, default=5,
                   help="seconds per timed Flask run (its rate is steady; saves minutes)")
    p.add_argument("--skip-flask", type=csv, default=[], help="MODEL:C cells to skip, e.g. resnet18:64")
    p.add_argument("--repeats", type=int, default=2, help="timed runs per cell (medians)")
    p.add_argument("--warmup", type=int, default=2, help="seconds of untimed load per cell")
    p.add_argument("--warmup-requests", type=int, default=3)
    p.add_argument("--wrk-timeout", type=int, default=10, help="wrk request timeout (s)")
    p.add_argument("--max-batch", type=per_model, default={"mlp_scorer": 32, "resnet18": 8},
                   help="max_batch_size of the batch/autotune variants, MODEL=N,...")
    p.add_argument("--queue-delay-us", type=per_model,
                   default={"mlp_scorer": 1000, "resnet18": 5000}, help="batch variant, MODEL=US")
    p.add_argument("--slo-ms", type=float, default=100, help="autotune variant's latency_slo_ms")
    p.add_argument("--instances", type=int, default=0,
                   help="instance count of the batch/autotune variants (0: the demo's)")
    p.add_argument("--engine-max-batch", type=per_model,
                   default={"mlp_scorer": 32, "resnet18": 16},
                   help="engine sweeps batch 1,2,4,... up to this, MODEL=N (default 32)")
    p.add_argument("--engine-duration", type=float, default=3, help="seconds per engine batch size")
    p.add_argument("--nginx-models", type=csv, default=["mlp_scorer"],
                   help="models whose body nginx gets (its ceiling means little for 1 MB images)")
    p.add_argument("--nginx-mode", default="auto", choices=["auto", "echo", "return"])
    p.add_argument("--inferd-binary", default=os.path.join(REPO_ROOT, "build", "inferd"))
    p.add_argument("--repository", default=os.path.join(REPO_ROOT, "build", "demo-models"))
    p.add_argument("--python", default=sys.executable, help="interpreter for Flask and the engine")
    p.add_argument("--engine-preload", default="auto", help="LD_PRELOAD for the engine")
    p.add_argument("--ready-timeout", type=int, default=300, help="seconds (auto_tune loads slowly)")
    p.add_argument("--out-dir", default=os.path.join(BENCH_DIR, "results"))
    p.add_argument("--name", default="batching", help="file name after the date")
    args = p.parse_args(argv)
    for given, known in ((args.variants, bs.VARIANTS), (args.baselines, BASELINES)):
        if set(given) - set(known):
            p.error(f"unknown: {', '.join(sorted(set(given) - set(known)))}")
    return args


def duration(t: bs.Target, args) -> int:
    return args.flask_duration if t.kind == "flask" else args.duration


def warm_up(t: bs.Target, c: int, payload: bytes, body_path: str, args, rec: dict) -> dict:
    """Sequential requests (slow first forwards), then wrk at this concurrency, untimed: a
    batching server also sees every batch shape it will run (each new one is slow once)."""
    for _ in range(args.warmup_requests):
        servers.predict_once(t, payload)
    command = run_bench.wrk_command(t.predict_url, c, args.warmup, args.wrk_timeout, body_path)
    rec["commands"].append(shlex.join(command))
    run = run_bench.run_wrk(command, args.warmup, args.wrk_timeout)
    run["drain_s"] = bs.drain(t.process.pid)
    return run


def timed(t: bs.Target, c: int, idle: List[bs.Target], body_path: str, args, rec: dict) -> dict:
    """One timed wrk run with the server's own stats and CPU, and the idle servers' CPU."""
    seconds = duration(t, args)
    command = run_bench.wrk_command(t.predict_url, c, seconds, args.wrk_timeout, body_path)
    rec["commands"].append(shlex.join(command))
    stats_before = bs.read_stats(t.base_url, t.model) if t.kind == "inferd" else None
    pids = [o.process.pid for o in [t] + idle]
    cpu_before = {pid: bs.cpu_seconds(pid) for pid in pids}
    run = run_bench.run_wrk(command, seconds, args.wrk_timeout)
    run["drain_s"] = bs.drain(t.process.pid)  # counted in server_cpu_s: the run's work
    cpu = {pid: bs.cpu_seconds(pid) - cpu_before[pid] for pid in pids}
    run["server_cpu_s"] = cpu.pop(t.process.pid)
    run["idle_servers_cpu_s"] = sum(cpu.values())
    if t.kind == "inferd":
        run["stats"] = bs.stats_delta(stats_before, bs.read_stats(t.base_url, t.model))
    if t.process.poll() is not None:
        raise RuntimeError(f"{t.label} exited ({t.process.returncode}) during the run; "
                           f"log {t.log_path}:\n{t.log_tail()}")
    return run


def engine_run(model: str, args, work_dir: str, rec: dict) -> dict:
    """One engine_limit.py sweep over batch sizes 1, 2, 4, ... up to --engine-max-batch."""
    top = args.engine_max_batch.get(model, 32)
    sizes = [b for b in (1, 2, 4, 8, 16, 32, 64, 128) if b <= top]
    command = servers.engine_command(args.python, run_bench.ENGINE_SCRIPT,
                                     os.path.join(args.repository, model), 1,
                                     args.engine_duration, 1, args.warmup_requests)
    command += ["--batch-sizes", ",".join(map(str, sizes))]
    preload = f"LD_PRELOAD={args.engine_preload} " if args.engine_preload else ""
    rec["commands"].append(preload + shlex.join(command))
    timeout = args.ready_timeout + len(sizes) * (args.engine_duration + 10) + 60
    return servers.run_engine(command, args.engine_preload,
                              os.path.join(work_dir, f"engine-{model}.log"), timeout)


def new_cell(t: bs.Target, c: int) -> dict:
    return {"model": t.model, "concurrency": c, "server": t.label, "kind": t.kind,
            "variant": t.variant, "log": t.log_path, "runs": []}


def bench_model(model: str, args, work_dir: str, rec: dict) -> None:
    """All servers of one model started once, then per concurrency: warm-ups, interleaved
    repeats. The engine's sweeps are spread over the concurrencies, one per repeat."""
    body = bodies.make_body(args.repository, model)
    body_path = bodies.write_body(work_dir, model, body)
    payload = open(body_path, "rb").read()
    rec["bodies"][model] = {"path": body_path, "shape": body["shape"], "bytes": len(payload),
                            "sha256": hashlib.sha256(payload).hexdigest()}
    targets = bs.make_targets(model, len(payload), args, work_dir, rec)
    broken = {}  # label -> why it cannot be measured
    engine = {"model": model, "server": "engine", "runs": []}
    if "engine" in args.baselines:
        rec["engine"].append(engine)
    try:
        for t in targets:
            try:
                bs.start(t, payload, body, args, rec)
            except FAILURES as exc:  # stopped now: an idle server must not share the cores
                broken[t.label] = str(exc)
                rec["exit_status"][f"{model}/{t.label}"] = servers.stop(t)
                print(f"  {model} {t.label}: {exc}".splitlines()[0], file=sys.stderr, flush=True)
        for i, c in enumerate(args.concurrency):
            while "engine" in args.baselines and len(engine["runs"]) < \
                    -(-(i + 1) * args.repeats // len(args.concurrency)) and "error" not in engine:
                try:
                    engine["runs"].append(engine_run(model, args, work_dir, rec))
                except FAILURES as exc:
                    engine["error"] = str(exc)
            cells = {t.label: new_cell(t, c) for t in targets}
            rec["cells"].extend(cells.values())
            live = []
            for t in targets:
                cell = cells[t.label]
                if t.kind == "flask" and f"{model}:{c}" in args.skip_flask:
                    cell["skipped"] = "--skip-flask"
                elif t.label in broken:
                    cell["error"] = broken[t.label]
                else:
                    try:
                        cell["warmup"] = warm_up(t, c, payload, body_path, args, rec)
                        live.append(t)
                    except FAILURES as exc:
                        cell["error"] = broken[t.label] = str(exc)
            for _ in range(args.repeats):
                for t in list(live):
                    idle = [o for o in live if o is not t]
                    try:
                        cells[t.label]["runs"].append(timed(t, c, idle, body_path, args, rec))
                    except FAILURES as exc:
                        cells[t.label]["error"] = broken[t.label] = str(exc)
                        live.remove(t)
            for cell in cells.values():
                print(f"  {model} c={c} {cell['server']}: {batching_report.describe(cell)}",
                      file=sys.stderr, flush=True)
    finally:
        for t in targets:
            if t.process is not None and f"{model}/{t.label}" not in rec["exit_status"]:
                rec["exit_status"][f"{model}/{t.label}"] = servers.stop(t)


def estimate_s(args) -> float:
    """A rough length of the run, printed first so a too-long choice can be stopped."""
    total = 0.0
    for model in args.models:
        n = len(args.variants) + ("nginx" in args.baselines and model in args.nginx_models)
        flask = "flask" in args.baselines
        per_c = n * (args.repeats * args.duration + args.warmup) \
            + flask * (args.repeats * args.flask_duration + args.warmup)
        total += per_c * len(args.concurrency) + 10 * (n + flask)
        if "engine" in args.baselines:
            sizes = len([b for b in (1, 2, 4, 8, 16, 32, 64, 128)
                         if b <= args.engine_max_batch.get(model, 32)])
            total += args.repeats * (10 + sizes * (args.engine_duration + 1.5))
    return total


def pin_binary(args, work_dir: str) -> dict:
    """Runs a copy of the inferd binary made now, so a rebuild during the run (the binary is
    being worked on) cannot mix two versions in one table; records which one it was."""
    if not args.variants:
        return {}
    with open(args.inferd_binary, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    info = {"path": args.inferd_binary, "sha256": digest, "mtime": datetime.datetime.fromtimestamp(
        os.path.getmtime(args.inferd_binary)).isoformat(timespec="seconds")}
    args.inferd_binary = shutil.copy2(args.inferd_binary, os.path.join(work_dir, "inferd"))
    return info


def _terminate_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    if args.variants and not os.access(args.inferd_binary, os.X_OK):
        raise SystemExit(f"no inferd binary at {args.inferd_binary} (build it, or --variants '')")
    if "nginx" in args.baselines:
        if not nginx_ceiling.find_binary():
            raise SystemExit("no nginx: apt-get install -y nginx-light (or --baselines flask,engine)")
        args.nginx_mode = nginx_ceiling.pick_mode(args.nginx_mode)
    if args.engine_preload == "auto":
        args.engine_preload = servers.linked_allocator(args.inferd_binary)
    report.result_file.require_clean_tree(args.out_dir)  # a kept run measures a committed tree
    work_dir = tempfile.mkdtemp(prefix="inferd-batching-")
    binary = pin_binary(args, work_dir)
    print(f"configs, bodies and logs: {work_dir}; about {estimate_s(args) / 60:.0f} min",
          file=sys.stderr, flush=True)
    started, load_start = datetime.datetime.now(), os.getloadavg()
    rec = {"cells": [], "engine": [], "commands": [], "checks": [], "bodies": {}, "configs": {},
           "batching": {}, "exit_status": {}, "inferd_binary": binary}
    try:
        for model in args.models:
            bench_model(model, args, work_dir, rec)
    except KeyboardInterrupt:
        print("interrupted; servers stopped, nothing written", file=sys.stderr)
        return 130
    settings = {k: v for k, v in vars(args).items() if k not in ("out_dir", "name")}
    full = dict(date=started.strftime("%Y-%m-%d"), started=started.isoformat(timespec="seconds"),
                bench_command=shlex.join([os.path.relpath(sys.executable, REPO_ROOT),
                                          os.path.relpath(os.path.abspath(__file__), REPO_ROOT),
                                          *argv]),
                git_commit=report.git_commit(REPO_ROOT), machine=report.machine_info(),
                nginx_version=report.tool_version(["nginx", "-v"]), settings=settings,
                work_dir=work_dir, wall_s=(datetime.datetime.now() - started).total_seconds(),
                loadavg={"start": load_start, "end": os.getloadavg()}, **rec)
    paths = batching_report.write(full, args.out_dir, args.name)
    print(batching_report.markdown(full))
    print("wrote " + ", ".join(paths), file=sys.stderr)
    return 1 if any("error" in c for c in rec["cells"] + rec["engine"]) else 0


if __name__ == "__main__":
    sys.exit(main())
