"""inferd side by side with the servers users would pick instead: Triton, Ray Serve, LitServe,
TorchServe, BentoML and KServe's model server, on the same demo models, driven by the same
clients, in one run.

  bench/peers/run                                 # setup (idempotent), then this, defaults
  .venv/bin/python bench/peers/peers_bench.py --duration 3 --models mlp_scorer --out-dir /tmp/p

For each model, one server at a time (a Ray cluster or a JVM idling beside the server under
test would take CPU from it on a 2-core machine): start it, check its answer against
sample.json, warm it up, then at each concurrency a wrk warm-up and one timed run per
client, then stop it. `--rounds N` repeats the whole sequence; the table shows medians over
rounds. Clients:

  * wrk-json — `wrk -t1 -cC` with bench/predict.lua, POSTing the same KServe v2 JSON body
    (`{"inputs":[{"name","shape":[1,...],"datatype","data"}]}`) to every server;
  * pa-http  — Triton's perf_analyzer (tritonclient 2.51.0, build/perf-venv), HTTP with
    binary tensors; only servers that speak KServe v2 (it reads the model's metadata and
    config first);
  * pa-grpc  — perf_analyzer over gRPC, same servers.

Per run: throughput, p50/p99, errors, and the server's CPU seconds per request (all
processes of its session, from /proc, from the start of the run until it is idle again,
over the requests it served: Δinference_count from its statistics where it has them,
else the client's count). Writes <out-dir>/<date>-<name>[-N].md, .json and -<model>.png
(never over a kept file).
"""

import argparse
import datetime
import hashlib
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import List, Optional

import peer_servers as ps

sys.path.insert(0, ps.BENCH_DIR)
import bodies  # noqa: E402
from perf_analyzer_command import perf_analyzer_command  # noqa: E402
import report  # noqa: E402
import run_bench  # noqa: E402

import peers_report  # noqa: E402

CLIENTS = ("wrk-json", "pa-http", "pa-grpc")


def parse_args(argv: List[str]) -> argparse.Namespace:
    def csv(text: str) -> List[str]:
        return [x for x in text.split(",") if x]

    def per_model(text: str) -> dict:
        return {k: int(v) for k, v in (item.split("=") for item in csv(text))}

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peers", type=csv, default=list(ps.ALL))
    p.add_argument("--models", type=csv, default=["mlp_scorer"])
    p.add_argument("--concurrency", type=lambda t: [int(x) for x in csv(t)], default=[1, 8, 64])
    p.add_argument("--clients", type=csv, default=list(CLIENTS))
    p.add_argument("--duration", type=int, default=8, help="seconds per timed run")
    p.add_argument("--warmup", type=int, default=2, help="seconds of wrk before each concurrency")
    p.add_argument("--warmup-requests", type=int, default=20)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--wrk-timeout", type=int, default=30)
    p.add_argument("--max-batch", type=per_model,
                   default={"mlp_scorer": 32, "resnet18": 8, "text_classifier": 16})
    p.add_argument("--queue-delay-us", type=per_model,
                   default={"mlp_scorer": 1000, "resnet18": 1000, "text_classifier": 1000})
    p.add_argument("--slo-ms", type=float, default=100)
    p.add_argument("--pa-stability", type=int, default=1000,
                   help="perf_analyzer -s (its default is 10): on this shared machine three "
                        "windows within 100%% of each other are rare at 8 and 64 clients, and "
                        "perf_analyzer then gives no result at all; 1000 takes its first three "
                        "windows, averaged, as the other clients take one run")
    p.add_argument("--pa-trials", type=int, default=5)
    p.add_argument("--ready-timeout", type=int, default=300)
    p.add_argument("--inferd-binary", default=os.path.join(ps.REPO_ROOT, "build", "inferd"))
    p.add_argument("--repository", default=os.path.join(ps.REPO_ROOT, "build", "demo-models"))
    p.add_argument("--perf-analyzer", default=os.environ.get("PEERS_PERF_ANALYZER") or
                   os.path.join(ps.REPO_ROOT, "build", "perf-venv", "perf_analyzer"))
    p.add_argument("--out-dir", default=os.path.join(ps.BENCH_DIR, "results"))
    p.add_argument("--name", default="peers")
    args = p.parse_args(argv)
    for name in args.peers:
        if name not in ps.ALL:
            p.error(f"unknown peer {name!r} (known: {', '.join(ps.ALL)})")
    for name in args.clients:
        if name not in CLIENTS:
            p.error(f"unknown client {name!r} (known: {', '.join(CLIENTS)})")
    return args


def kserve_body(repository: str, model: str) -> dict:
    """sample.json's first row as a KServe v2 JSON request (batch 1), and its expected row."""
    body = bodies.make_body(repository, model)
    flat = bodies.flatten(body["body"]["input"])
    with open(os.path.join(repository, model, "sample.json")) as f:
        name = json.load(f)["inputs"][0]["name"]
    request = {"inputs": [{"name": name, "shape": body["shape"], "datatype": body["datatype"],
                           "data": flat}]}
    pa_data = {"data": [{name: {"content": flat, "shape": body["shape"][1:]}}]}
    return {"request": request, "pa_data": pa_data, "expected_name": body["expected_name"],
            "expected": body["expected"]}


def check(answer: dict, body: dict) -> str:
    """The answer's output tensor against sample.json's expected row (bodies.py's tolerance)."""
    if answer["status"] != 200:
        return f"FAILED: HTTP {answer['status']} {json.dumps(answer['body'])[:200]}"
    # BentoML's batchable API answers the list of output tensors itself (peer_servers.FRONTS).
    outputs = (answer["body"].get("outputs") if isinstance(answer["body"], dict) else
               answer["body"] if isinstance(answer["body"], list) else None)
    match = [o for o in outputs or [] if o.get("name") == body["expected_name"]]
    if not match:
        return f"FAILED: no output {body['expected_name']!r} in {json.dumps(answer['body'])[:200]}"
    got, want = bodies.flatten(match[0].get("data", [])), body["expected"]
    if len(got) != len(want):
        return f"DIFFERS: {len(got)} values, expected {len(want)}"
    worst = max((abs(g - w) for g, w in zip(got, want)), default=0.0)
    ok = all(abs(g - w) <= 1e-4 + 1e-4 * abs(w) for g, w in zip(got, want))
    return f"{'matches' if ok else 'DIFFERS'} (max |Δ| {worst:.2e})"


def sample_rows(repository: str, model: str) -> List[dict]:
    """Every row of sample.json as its own batch-1 KServe v2 request, with its expected row."""
    with open(os.path.join(repository, model, "sample.json")) as f:
        sample = json.load(f)
    tensor, expected = sample["inputs"][0], sample["expected_outputs"][0]
    rows = tensor["shape"][0]
    flat, want = bodies.flatten(tensor["data"]), bodies.flatten(expected["data"])
    per_in, per_out = len(flat) // rows, len(want) // rows
    return [{"request": {"inputs": [{"name": tensor["name"], "shape": [1] + tensor["shape"][1:],
                                     "datatype": tensor.get("datatype", "FP32"),
                                     "data": flat[i * per_in:(i + 1) * per_in]}]},
             "expected_name": expected["name"], "expected": want[i * per_out:(i + 1) * per_out]}
            for i in range(rows)]


def check_concurrent(peer: ps.Peer, rows: List[dict], copies: int = 8) -> str:
    """sample.json's rows sent `copies` times each, all at once, so the server's batching
    groups different rows: every answer must be its own row's (a batch split in the wrong
    place or order answers another request's row)."""
    jobs = [rows[i % len(rows)] for i in range(copies * len(rows))]
    with ThreadPoolExecutor(len(jobs)) as pool:
        answers = list(pool.map(
            lambda row: ps.post(peer, json.dumps(row["request"], separators=(",", ":")).encode()),
            jobs))
    verdicts = [check(answer, row) for answer, row in zip(answers, jobs)]
    bad = [v for v in verdicts if not v.startswith("matches")]
    if bad:
        return f"DIFFERS in {len(bad)} of {len(jobs)} concurrent requests: {bad[0]}"
    return f"matches: {len(jobs)} concurrent requests, {len(rows)} different row(s)"


def clients_for(peer: ps.Peer, wanted: List[str]) -> List[str]:
    usable = ["wrk-json"] + (["pa-http"] if peer.http else []) + (["pa-grpc"] if peer.grpc else [])
    return [c for c in wanted if c in usable]


def pa_command(args, peer: ps.Peer, client: str, c: int, data_path: str, csv_path: str) -> list:
    grpc = client == "pa-grpc"
    return perf_analyzer_command(args.perf_analyzer, peer.model, "grpc" if grpc else "http",
                                 peer.grpc if grpc else peer.http, c,
                                 max(500, args.duration * 1000 // 3), args.pa_trials,
                                 args.pa_stability, data_path, csv_path)


def run_pa(command: list, csv_path: str, timeout_s: float) -> dict:
    """perf_analyzer's CSV row: throughput and the latency percentiles of its last windows."""
    load_before = os.getloadavg()[0]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0 or not os.path.exists(csv_path):
        tail = (done.stdout + done.stderr).strip().splitlines()[-6:]
        raise RuntimeError(f"perf_analyzer exited with {done.returncode}: " + " | ".join(tail))
    with open(csv_path) as f:
        head, row = [line.strip().split(",") for line in f.readlines()[:2]]
    values = dict(zip(head, row))
    return {"qps": float(values["Inferences/Second"]),
            "p50_us": float(values["p50 latency"]), "p90_us": float(values["p90 latency"]),
            "p99_us": float(values["p99 latency"]), "errors": 0, "requests": None,
            "loadavg_1m_before": load_before}


def timed_run(args, peer: ps.Peer, client: str, c: int, files: dict, work_dir: str,
              rec: dict) -> dict:
    """One timed run with the server's CPU and (where it has statistics) its request count."""
    tag = f"{peer.name}-{peer.model}-{client}-c{c}-{time.monotonic_ns()}"
    if client == "wrk-json":
        command = run_bench.wrk_command(peer.infer_url, c, args.duration, args.wrk_timeout,
                                        files["body"])
    else:
        csv_path = os.path.join(work_dir, tag + ".csv")
        command = pa_command(args, peer, client, c, files["pa_data"], csv_path)
    rec["commands"].append(shlex.join(command))
    count0, cpu0, t0 = ps.read_inference_count(peer), ps.cpu_seconds(peer), time.monotonic()
    if client == "wrk-json":
        run = run_bench.run_wrk(command, args.duration, args.wrk_timeout)
    else:
        run = run_pa(command, csv_path, args.duration * (args.pa_trials + 2) + 120)
    wall = time.monotonic() - t0
    if client == "wrk-json" and not run.get("requests"):
        ps.drain(peer, rec["idle_cores"].get(f"{peer.model}/{peer.name}", 0.0))
        raise RuntimeError(f"no answer within the {args.duration} s run (wrk counted none)")
    run["drain_s"] = ps.drain(peer, rec["idle_cores"].get(f"{peer.model}/{peer.name}", 0.0))
    cpu, count1 = ps.cpu_seconds(peer) - cpu0, ps.read_inference_count(peer)
    served = (count1 - count0) if count0 is not None and count1 is not None else None
    if served is not None and served > 0:
        run.update(served=served, served_from="server statistics (Δinference_count)")
    elif run.get("requests"):
        run.update(served=run["requests"], served_from="client's count (no server statistics)")
    else:
        run.update(served=None, served_from="unknown")
    if client != "wrk-json":  # perf_analyzer counts no requests; it stops at the first error
        run["requests"] = served
    run.update(cpu_s=cpu, client_wall_s=wall,
               cpu_ms_per_request=(cpu * 1e3 / run["served"]) if run["served"] else None)
    return run


def bench_peer(name: str, spec: ps.ModelSpec, body: dict, files: dict, args, work_dir: str,
               rec: dict, round_no: int) -> None:
    def fail(reason: str) -> None:
        rec["failures"].append({"peer": name, "model": spec.name, "round": round_no,
                                "error": reason})
        print(f"  {name}: FAILED: {reason.splitlines()[0]}", file=sys.stderr, flush=True)

    why = ps.installed(name)
    if why:
        fail(why)
        return
    try:
        peer = ps.make(name, spec, args, work_dir)
    except (OSError, subprocess.SubprocessError, RuntimeError) as e:
        fail(f"could not prepare: {e}")
        return
    rec["configs"][f"{spec.name}/{name}"] = peer.config
    rec["fronts"][name] = peer.front
    rec["commands"].append(shlex.join(peer.command))
    payload = json.dumps(body["request"], separators=(",", ":")).encode()
    try:
        ps.start(peer)
        ready_s = ps.wait_ready(peer, payload, args.ready_timeout)
        answer = ps.post(peer, payload)
        verdict = check(answer, body)
        rec["checks"].append({"peer": name, "model": spec.name, "round": round_no,
                              "status": answer["status"], "ms": answer["ms"],
                              "ready_s": ready_s, "verdict": verdict})
        print(f"  {name}: ready in {ready_s:.1f}s, {verdict}", file=sys.stderr, flush=True)
        if not verdict.startswith("matches"):
            fail(f"wrong answer, not measured: {verdict}")
            return
        together = check_concurrent(peer, sample_rows(args.repository, spec.name))
        rec["checks"][-1]["concurrent"] = together
        print(f"  {name}: {together}", file=sys.stderr, flush=True)
        if not together.startswith("matches"):
            fail(f"wrong answer under batching, not measured: {together}")
            return
        if name.startswith("inferd"):
            entries = ps.batching_servers.stats_entries(peer.infer_url.split("/v2/")[0],
                                                        spec.name) or [{}]
            rec["batching"][f"{spec.name}/{name}"] = entries[0].get("batching")
        for _ in range(args.warmup_requests):
            ps.post(peer, payload)
        idle = ps.idle_rate(peer)
        rec["idle_cores"][f"{spec.name}/{name}"] = idle
        for c in args.concurrency:
            warm = run_bench.wrk_command(peer.infer_url, c, args.warmup, args.wrk_timeout,
                                         files["body"])
            run_bench.run_wrk(warm, args.warmup, args.wrk_timeout)
            ps.drain(peer, idle)
            for client in clients_for(peer, args.clients):
                key = (spec.name, client, c, name)
                cell = rec["cells"].setdefault("|".join(map(str, key)), {
                    "model": spec.name, "client": client, "concurrency": c, "peer": name,
                    "runs": [], "errors": []})
                try:
                    run = timed_run(args, peer, client, c, files, work_dir, rec)
                    cell["runs"].append(dict(run, round=round_no))
                    print(f"  {name} {client} c={c}: {run['qps']:.1f}/s p50 "
                          f"{run['p50_us'] / 1e3:.2f} ms p99 {run['p99_us'] / 1e3:.2f} ms"
                          f" errors {run['errors']}", file=sys.stderr, flush=True)
                except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                    cell["errors"].append(str(e))
                    print(f"  {name} {client} c={c}: FAILED {str(e)[:200]}", file=sys.stderr,
                          flush=True)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        fail(str(e))
    except Exception as e:  # requests' errors and the like: report, keep the others going
        fail(f"{type(e).__name__}: {e}")
    finally:
        rec["exit_status"][f"{spec.name}/{name}/{round_no}"] = ps.stop(peer)


def summarise(cells: dict) -> List[dict]:
    out = []
    for cell in cells.values():
        runs = cell["runs"]
        if runs:
            def med(key):
                vals = [r[key] for r in runs if r.get(key) is not None]
                return statistics.median(vals) if vals else None
            cell["summary"] = {"qps": med("qps"), "p50_ms": med("p50_us") / 1e3,
                               "p99_ms": med("p99_us") / 1e3, "cpu_ms": med("cpu_ms_per_request"),
                               "errors": sum(r["errors"] for r in runs),
                               "requests": sum(r["requests"] or 0 for r in runs),
                               "rounds": len(runs)}
        out.append(cell)
    return out


def pin_binary(args, work_dir: str) -> dict:
    """A copy of inferd made now, so a rebuild during the run cannot mix two versions."""
    if not any(p.startswith("inferd") for p in args.peers):
        return {}
    with open(args.inferd_binary, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    info = {"path": os.path.realpath(args.inferd_binary), "sha256": digest, "mtime": datetime.datetime.fromtimestamp(
        os.path.getmtime(args.inferd_binary)).isoformat(timespec="seconds")}
    args.inferd_binary = shutil.copy2(args.inferd_binary, os.path.join(work_dir, "inferd"))
    return info


def versions(peers: List[str]) -> dict:
    """The pinned packages each peer's venv was installed from (bench/peers/setup)."""
    out = {}
    for name in peers:
        path = os.path.join(ps.PEERS_DIR, f"requirements-{name}.txt")
        if os.path.exists(path):
            with open(path) as f:
                out[name] = [line.strip() for line in f if line.strip() and line[0] != "#"]
    return out


def estimate_s(args) -> float:
    cells = sum(len(clients_for(ps.Peer(p, "", [], "", "", http="x" if p in ps.KSERVE_NATIVE
                                                                 else None,
                                        grpc="x" if p in ps.KSERVE_NATIVE else None),
                                args.clients)) for p in args.peers)
    per_model = len(args.peers) * 40 + len(args.concurrency) * (
        len(args.peers) * (args.warmup + 2) + cells * (args.duration + 4))
    return per_model * len(args.models) * args.rounds


def _terminate_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    if any(p.startswith("inferd") for p in args.peers) and not os.access(args.inferd_binary,
                                                                          os.X_OK):
        raise SystemExit(f"no inferd binary at {args.inferd_binary} (scripts/setup builds it)")
    if {"pa-http", "pa-grpc"} & set(args.clients) and not os.access(args.perf_analyzer, os.X_OK):
        raise SystemExit(f"no perf_analyzer at {args.perf_analyzer} "
                         "(scripts/setup-perf-analyzer; or --clients wrk-json)")
    report.result_file.require_clean_tree(args.out_dir)  # a kept run measures a committed tree
    work_dir = tempfile.mkdtemp(prefix="inferd-peers-")
    binary = pin_binary(args, work_dir)
    print(f"configs, bodies and logs: {work_dir}; about {estimate_s(args) / 60:.0f} min",
          file=sys.stderr, flush=True)
    started, load_start = datetime.datetime.now(datetime.timezone.utc), os.getloadavg()
    rec = {"cells": {}, "commands": [], "checks": [], "configs": {}, "fronts": {},
           "batching": {}, "idle_cores": {}, "failures": [], "exit_status": {}, "inferd_binary": binary,
           "repository": os.path.realpath(args.repository)}
    try:
        for model in args.models:
            spec = ps.model_spec(args.repository, model, args.max_batch.get(model, 32),
                                 args.queue_delay_us.get(model, 1000))
            body = kserve_body(args.repository, model)
            files = {"body": os.path.join(work_dir, f"{model}-kserve.json"),
                     "pa_data": os.path.join(work_dir, f"{model}-pa-data.json")}
            with open(files["body"], "w") as f:
                json.dump(body["request"], f, separators=(",", ":"))
            with open(files["pa_data"], "w") as f:
                json.dump(body["pa_data"], f, separators=(",", ":"))
            for round_no in range(1, args.rounds + 1):
                print(f"{model}, round {round_no}/{args.rounds}", file=sys.stderr, flush=True)
                for name in args.peers:
                    bench_peer(name, spec, body, files, args, work_dir, rec, round_no)
    except KeyboardInterrupt:
        print("interrupted; servers stopped, nothing written", file=sys.stderr)
        return 130
    settings = {k: v for k, v in vars(args).items() if k not in ("out_dir", "name")}
    rec["cells"] = summarise(rec["cells"])
    full = dict(date=started.strftime("%Y-%m-%d"),
                started=started.isoformat(timespec="seconds"),
                ended=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                bench_command="bench/peers/run " + shlex.join(argv),
                git_commit=report.git_commit(ps.REPO_ROOT), machine=report.machine_info(),
                perf_analyzer=f"{args.perf_analyzer} (tritonclient==2.51.0, scripts/setup-perf-analyzer)",
                versions=versions(args.peers), settings=settings, work_dir=work_dir,
                loadavg={"start": load_start, "end": os.getloadavg()}, **rec)
    paths = peers_report.write(full, args.out_dir, args.name)
    print(peers_report.markdown(full, os.path.basename(paths[0])[:-len(".md")]))
    print("wrote " + ", ".join(paths), file=sys.stderr)
    return 1 if rec["failures"] or any(c["errors"] for c in rec["cells"]) else 0


if __name__ == "__main__":
    sys.exit(main())
