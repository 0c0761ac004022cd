#!/usr/bin/env python3
"""How far inferd's HTTP path is from the loopback ceiling, and where the difference goes
(issue 34: "≥ 0.6× nginx at 64 connections and ≥ 0.8× with the binary protocol").

One inferd (the demo mlp_scorer, its config as a newcomer gets it) and one nginx answering a
constant on the same POST (bench/nginx_ceiling.py: one worker, body read in full), both started
once; then, for --rounds rounds, each cell in turn (the order rotates every round, so a drift
in the shared machine's load hits every cell alike):

  nginx-json    nginx, POST /predict with the /predict JSON body (~2 KB)
  nginx-binary  nginx, POST /predict with the KServe binary-tensor body
  predict       inferd, POST /predict?model=mlp_scorer, the same JSON body
  kserve-json   inferd, POST /v2/models/mlp_scorer/infer, KServe v2 JSON
  kserve-binary inferd, the same path with the binary-tensor extension (FP32 bytes after the
                JSON header, Inference-Header-Content-Length)

each `wrk -t1 -cC` for --duration seconds after a one-second warm-up. The profile comes from
the kernel's own per-thread accounting (/proc/PID/task/TID/schedstat, read before and after
each cell): CPU time per request, time waiting on a run queue and timeslices (≈ wake-ups) per
request, grouped by what the thread does (inferd names them: http-io#N, mlp_scorer:1#N for the
execution thread; LibTorch's OpenMP team keeps the process name; gRPC's own threads). For
inferd cells the model's statistics add the engine's own forward time per request and the
average batch it ran. The ratio to nginx is taken per round (inferd cell ÷ the same round's
nginx cell with the same body), then the median and the spread over rounds.

    .venv/bin/python bench/http_gap.py --rounds 5 --duration 5

Writes bench/results/<date>-http-gap.md and .json (never over an existing file; refused on a
tree with uncommitted changes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import nginx_ceiling  # noqa: E402
import result_file  # noqa: E402
import thread_profile  # noqa: E402
from inferd_harness import DEMO_MODELS, InferdServer  # noqa: E402

MODEL = "mlp_scorer"
FEATURES = 256
LUA = ROOT / "bench" / "predict.lua"
CELLS = ("nginx-json", "nginx-binary", "predict", "kserve-json", "kserve-binary")
GOALS = {"predict": 0.6, "kserve-json": 0.6, "kserve-binary": 0.8}
NGINX_FOR = {"predict": "nginx-json", "kserve-json": "nginx-json", "kserve-binary": "nginx-binary"}


def model_stats(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/models/{MODEL}/stats") as r:
        s = json.load(r)["model_stats"][0]
    st = s["inference_stats"]
    return {"inferences": s["inference_count"], "executions": s["execution_count"],
            "infer_ns": st["compute_infer"]["ns"], "input_ns": st["compute_input"]["ns"],
            "output_ns": st["compute_output"]["ns"], "queue_ns": st["queue"]["ns"]}


def write_bodies(tmp: Path) -> dict:
    """The three bodies and the headers each needs: {name: (path, content type, header len)}."""
    row = [0.5] * FEATURES
    predict = tmp / "predict.json"
    predict.write_text(json.dumps({"input": row}))
    v2 = tmp / "v2.json"
    v2.write_text(json.dumps({"inputs": [{"name": "features", "datatype": "FP32",
                                          "shape": [1, FEATURES], "data": row}]}))
    header = json.dumps({"inputs": [{"name": "features", "datatype": "FP32",
                                     "shape": [1, FEATURES],
                                     "parameters": {"binary_data_size": FEATURES * 4}}],
                         "outputs": [{"name": "score", "parameters": {"binary_data": True}}]})
    binary = tmp / "v2.bin"
    binary.write_bytes(header.encode() + struct.pack(f"<{FEATURES}f", *row))
    return {"json": (predict, "application/json", None),
            "v2": (v2, "application/json", None),
            "binary": (binary, "application/octet-stream", len(header.encode()))}


def run_wrk(url: str, body: tuple, connections: int, seconds: float) -> dict:
    path, content_type, header_length = body
    env = dict(os.environ, PREDICT_CONTENT_TYPE=content_type)
    env.pop("PREDICT_INFERENCE_HEADER_LENGTH", None)
    if header_length is not None:
        env["PREDICT_INFERENCE_HEADER_LENGTH"] = str(header_length)
    command = ["wrk", "-t1", f"-c{connections}", f"-d{int(seconds)}s", "--latency", "-s", str(LUA),
               url, "--", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=seconds + 60)
    match = re.search(r"BENCH_RESULT (.*)", done.stdout)
    if done.returncode != 0 or not match:
        raise SystemExit(f"wrk failed on {url}:\n{done.stdout}\n{done.stderr}")
    return json.loads(match.group(1))




def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=int, default=5, help="seconds per cell")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--binary", type=Path, default=ROOT / "build" / "inferd")
    parser.add_argument("--name", default="http-gap")
    args = parser.parse_args()
    nginx = nginx_ceiling.find_binary()
    if not nginx or not shutil.which("wrk"):
        raise SystemExit("needs nginx and wrk (apt-get install -y nginx-light wrk)")
    mode = nginx_ceiling.pick_mode("auto")
    tmp = Path(tempfile.mkdtemp(prefix="http-gap-"))
    bodies = write_bodies(tmp)
    repo = tmp / "repo"
    repo.mkdir()
    shutil.copytree(DEMO_MODELS / MODEL, repo / MODEL)
    result_file.require_clean_tree(result_file.RESULTS)  # a kept run measures a committed tree
    load_before = result_file.load()

    nginx_port = 18650
    config, config_text = nginx_ceiling.write_config(
        str(tmp), nginx_port, mode, max(p.stat().st_size for p, _, _ in bodies.values()))
    nginx_proc = subprocess.Popen(nginx_ceiling.command(nginx, config), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
    server = InferdServer(repo, tmp / "inferd.log", binary=args.binary,
                          args=["--log-level", "warn", "--access-log", "false"])
    rounds = []
    try:
        server.start()
        with urllib.request.urlopen(f"{server.url}/v2/models/{MODEL}/stats") as r:
            chosen = json.load(r)["model_stats"][0].get("intra_op_threads", {})
        intra_op = f"{chosen.get('count', '?')} ({chosen.get('reason', 'no reason given')})"
        urls = {"nginx-json": (f"http://127.0.0.1:{nginx_port}/predict", bodies["json"],
                               nginx_proc.pid),
                "nginx-binary": (f"http://127.0.0.1:{nginx_port}/predict", bodies["binary"],
                                 nginx_proc.pid),
                "predict": (f"{server.url}/predict?model={MODEL}", bodies["json"],
                            server.proc.pid),
                "kserve-json": (f"{server.url}/v2/models/{MODEL}/infer", bodies["v2"],
                                server.proc.pid),
                "kserve-binary": (f"{server.url}/v2/models/{MODEL}/infer", bodies["binary"],
                                  server.proc.pid)}
        for r in range(args.rounds):
            order = CELLS[r % len(CELLS):] + CELLS[:r % len(CELLS)]
            cells = {}
            for cell in order:
                url, body, pid = urls[cell]
                run_wrk(url, body, args.connections, 1)  # warm-up
                stats0 = model_stats(server.port) if pid == server.proc.pid else None
                before = thread_profile.snapshot(pid)
                result = run_wrk(url, body, args.connections, args.duration)
                after = thread_profile.snapshot(pid)
                entry = {"wrk": result, "profile": thread_profile.profile(
                    before, after, result["requests"],
                    lambda comm: thread_profile.inferd_thread_group(comm, MODEL))}
                if stats0 is not None:
                    stats1 = model_stats(server.port)
                    d = {k: stats1[k] - stats0[k] for k in stats1}
                    n = max(d["inferences"], 1)
                    # The statistics add a batch's time to each of its requests (Triton's
                    # convention): per request of work it is that divided by the batch.
                    batch = d["inferences"] / max(d["executions"], 1)
                    entry["model"] = {"average_batch": round(batch, 2),
                                      "forward_us_per_batch": round(d["infer_ns"] / n / 1e3, 3),
                                      "forward_us_per_request":
                                          round(d["infer_ns"] / n / batch / 1e3, 3),
                                      "input_output_us_per_request":
                                          round((d["input_ns"] + d["output_ns"]) / n / batch
                                                / 1e3, 3),
                                      "queue_wait_us": round(d["queue_ns"] / n / 1e3, 3)}
                cells[cell] = entry
                print(f"round {r + 1} {cell}: {result['qps']:.0f} req/s, errors "
                      f"{result['errors']}", flush=True)
            rounds.append(cells)
    finally:
        server.stop()
        nginx_proc.send_signal(signal.SIGQUIT)
        nginx_proc.wait(timeout=10)
    load_after = result_file.load()

    summary = {}
    for cell in CELLS:
        qps = [r[cell]["wrk"]["qps"] for r in rounds]
        s = {"qps": result_file.spread(qps),
             "errors": sum(r[cell]["wrk"]["errors"] for r in rounds)}
        if cell in GOALS:
            s["ratio_to_nginx"] = result_file.spread(
                [r[cell]["wrk"]["qps"] / r[NGINX_FOR[cell]]["wrk"]["qps"] for r in rounds])
            s["goal"] = GOALS[cell]
            s["met"] = s["ratio_to_nginx"]["median"] >= GOALS[cell]
        groups = sorted({g for r in rounds for g in r[cell]["profile"]})
        s["profile"] = {g: {k: statistics.median(r[cell]["profile"].get(g, {}).get(k, 0)
                                                 for r in rounds)
                            for k in ("cpu_us", "wait_us", "timeslices")} for g in groups}
        if "model" in rounds[0][cell]:
            s["model"] = {k: statistics.median(r[cell]["model"][k] for r in rounds)
                          for k in rounds[0][cell]["model"]}
        summary[cell] = s

    command = "bench/http_gap.py " + " ".join(sys.argv[1:])
    m = result_file.meta([str(args.binary), nginx], command, load_before, load_after)
    report = {"meta": m, "connections": args.connections, "duration_s": args.duration,
              "nginx_mode": mode, "nginx_config": config_text,
              "intra_op_threads": intra_op, "rounds": rounds,
              "summary": summary}
    lines = [f"# HTTP path against the loopback ceiling ({m['date_utc'][:10]})", ""]
    lines += result_file.header(m)
    lines += ["", f"mlp_scorer (demo config), `wrk -t1 -c{args.connections}` for "
              f"{args.duration:g} s per cell after 1 s of warm-up; {args.rounds} rounds, cells "
              f"in a rotating order; nginx `{mode}` mode (body read in full), one worker. "
              "Median over rounds (min–max).", "",
              "| cell | req/s | ÷ nginx, same body | goal |", "|---|---:|---:|---|"]
    for cell in CELLS:
        s = summary[cell]
        q = s["qps"]
        ratio = (f"{s['ratio_to_nginx']['median']:.2f}× ({s['ratio_to_nginx']['min']:.2f}–"
                 f"{s['ratio_to_nginx']['max']:.2f})") if "ratio_to_nginx" in s else "—"
        goal = (f"≥ {s['goal']}×: {'met' if s['met'] else 'missed'}") if "goal" in s else ""
        lines.append(f"| {cell} | {q['median']:,.0f} ({q['min']:,.0f}–{q['max']:,.0f}) | "
                     f"{ratio} | {goal} |")
    lines += ["", "## Where each request's time goes (medians over rounds, per request)", "",
              "From /proc/PID/task/TID/schedstat: CPU µs on the thread group, µs spent runnable "
              "but waiting for a core, timeslices (each a wake-up or a preemption).", "",
              "| cell | thread group | CPU µs | run-queue wait µs | timeslices |",
              "|---|---|---:|---:|---:|"]
    for cell in CELLS:
        total = 0.0
        for group, p in summary[cell]["profile"].items():
            if p["cpu_us"] < 0.05 and p["timeslices"] < 0.001:
                continue
            total += p["cpu_us"]
            lines.append(f"| {cell} | {group} | {p['cpu_us']:.2f} | {p['wait_us']:.2f} | "
                         f"{p['timeslices']:.3f} |")
        lines.append(f"| {cell} | **all** | **{total:.2f}** | | |")
    lines += ["", "## The model's own share (inferd cells; the model's statistics)", "",
              f"Intra-op threads as inferd chose them at load: {intra_op}.", "",
              "| cell | average batch | forward µs per batch | forward µs per request | "
              "tensors in+out µs per request | queue wait µs |", "|---|---:|---:|---:|---:|---:|"]
    for cell in CELLS:
        md = summary[cell].get("model")
        if md:
            lines.append(f"| {cell} | {md['average_batch']:.1f} | "
                         f"{md['forward_us_per_batch']:.1f} | "
                         f"{md['forward_us_per_request']:.2f} | "
                         f"{md['input_output_us_per_request']:.2f} | "
                         f"{md['queue_wait_us']:.1f} |")
    for cell, goal in GOALS.items():
        s = summary[cell]
        lines.append("")
        lines.append(f"{cell}: at least {goal}× nginx at {args.connections} connections: "
                     f"{'met' if s['met'] else 'missed'} ({s['ratio_to_nginx']['median']:.2f}×)")
    stem = result_file.write_new(ROOT / "bench" / "results", args.name, report,
                                 "\n".join(lines) + "\n")
    print(f"wrote {stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
