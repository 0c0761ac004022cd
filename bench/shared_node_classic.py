#!/usr/bin/env python3
"""Classic models on a shared node (issue 34, "a shared node"): requests/s of the demo models
alone and beside an unrelated busy process, for one or more inferd binaries side by side.

On a Kubernetes node or a laptop something else is always running. LibTorch runs a model's
operations as an OpenMP team that meets at a barrier after each; when a busy process holds one
of the cores, the team waits at every barrier for the member the kernel descheduled. This
script measures what that costs and what inferd's defaults keep.

Each variant (NAME=BINARY; name a binary twice for an A/A run) is one inferd serving the demo
models as a newcomer gets them (build/demo-models, configs untouched), started once. Each round
measures, for every variant in an order that alternates between rounds, every model under every
neighbour: none, one single-threaded busy loop, two of them (separate Python processes
spinning, unpinned). A measurement is `wrk -t1 -cC` on POST /predict for --duration seconds
after one second of warm-up (resnet18 at 4 connections, as the issue's fair-share figure;
mlp_scorer at 64). The table gives medians over rounds with the spread, and "beside / alone"
as the median of per-round ratios (each round's busy figure over the same round's alone one).

    .venv/bin/python bench/shared_node_classic.py --rounds 3 before=/tmp/inferd-before \\
        after=build/inferd after-again=build/inferd

Writes bench/results/<date>-shared-node-classic[-N].{json,md}; none is overwritten.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

import bodies  # noqa: E402
import result_file  # noqa: E402
from inferd_harness import DEMO_MODELS, InferdServer  # noqa: E402

# model -> wrk connections
MODELS = {"resnet18": 4, "mlp_scorer": 64}
NEIGHBOURS = {"alone": 0, "beside 1 busy process": 1, "beside 2 busy processes": 2}
LUA = ROOT / "bench" / "predict.lua"


def busy_loops(n: int) -> list:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def wrk(url: str, body: str, connections: int, seconds: int) -> dict:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
               "-s", str(LUA), url, "--", body]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    match = re.search(r"BENCH_RESULT (.*)", done.stdout)
    if done.returncode != 0 or not match:
        raise SystemExit(f"wrk failed on {url}:\n{done.stdout}\n{done.stderr}")
    return json.loads(match.group(1))


def intra_op(server: InferdServer, model: str) -> dict:
    with urllib.request.urlopen(f"{server.url}/v2/models/{model}/stats") as r:
        return json.load(r)["model_stats"][0].get("intra_op_threads", {})




def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variants", nargs="+", help="NAME=BINARY")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=int, default=5)
    p.add_argument("--name", default="shared-node-classic")
    args = p.parse_args()
    variants = [tuple(v.split("=", 1)) for v in args.variants]
    result_file.require_clean_tree(result_file.RESULTS)  # a kept run measures a committed tree
    tmp = Path(tempfile.mkdtemp(prefix="shared-node-classic-"))
    body_files = {m: bodies.write_body(str(tmp), m, bodies.make_body(str(DEMO_MODELS), m))
                  for m in MODELS}
    load_before = result_file.load()
    servers, chosen = {}, {}
    try:
        for name, binary in variants:
            servers[name] = InferdServer(DEMO_MODELS, tmp / f"{name}.log", binary=binary,
                                         args=["--log-level", "warn", "--access-log", "false"])
            servers[name].start()
            chosen[name] = {m: intra_op(servers[name], m) for m in MODELS}
        measured = {name: {m: {n: [] for n in NEIGHBOURS} for m in MODELS}
                    for name, _ in variants}
        for r in range(args.rounds):
            order = variants if r % 2 == 0 else variants[::-1]
            for neighbour, count in NEIGHBOURS.items():
                loops = busy_loops(count)
                try:
                    for name, _ in order:
                        server = servers[name]
                        for model, connections in MODELS.items():
                            url = f"{server.url}/predict?model={model}"
                            wrk(url, body_files[model], connections, 1)  # warm-up
                            result = wrk(url, body_files[model], connections, args.duration)
                            measured[name][model][neighbour].append(result)
                            print(f"round {r + 1} {name} {model} {neighbour}: "
                                  f"{result['qps']:.1f} req/s, errors {result['errors']}",
                                  flush=True)
                finally:
                    for loop in loops:
                        loop.kill()
                        loop.wait()
        final = {name: {m: intra_op(servers[name], m) for m in MODELS} for name, _ in variants}
    finally:
        for server in servers.values():
            server.stop()
    load_after = result_file.load()

    summary = {}
    for name, _ in variants:
        for model in MODELS:
            runs = measured[name][model]
            alone = [x["qps"] for x in runs["alone"]]
            row = {}
            for neighbour in NEIGHBOURS:
                qps = [x["qps"] for x in runs[neighbour]]
                row[neighbour] = {"qps": result_file.spread(qps),
                                  "errors": sum(x["errors"] for x in runs[neighbour]),
                                  "ratio_to_alone": result_file.spread(
                                      [b / a for a, b in zip(alone, qps)])}
            summary.setdefault(name, {})[model] = row

    command = "bench/shared_node_classic.py " + " ".join(sys.argv[1:])
    m = result_file.meta([b for _, b in variants], command, load_before, load_after)
    report = {"meta": m, "variants": dict(variants), "models": MODELS,
              "duration_s": args.duration, "rounds": args.rounds,
              "intra_op_at_start": chosen, "intra_op_at_end": final,
              "measured": measured, "summary": summary}
    lines = [f"# Classic models on a shared node ({m['date_utc'][:10]})", ""]
    lines += result_file.header(m)
    lines += ["", f"Demo models with their configs untouched; `wrk -t1 -cC` POST /predict for "
              f"{args.duration} s after 1 s of warm-up (resnet18 C=4, mlp_scorer C=64); busy "
              "process: a single-threaded Python loop, unpinned; "
              f"{args.rounds} rounds, variants in alternating order. Median over rounds "
              "(min..max); beside / alone: median of per-round ratios.", "",
              "| variant | model | neighbour | req/s | beside / alone | errors |",
              "|---|---|---|---:|---:|---:|"]
    for name, _ in variants:
        for model in MODELS:
            for neighbour in NEIGHBOURS:
                s = summary[name][model][neighbour]
                q, ratio = s["qps"], s["ratio_to_alone"]
                lines.append(f"| {name} | {model} | {neighbour} | {q['median']:,.1f} "
                             f"({q['min']:,.1f}..{q['max']:,.1f}) | "
                             f"{ratio['median']:.2f} ({ratio['min']:.2f}..{ratio['max']:.2f}) | "
                             f"{s['errors']} |")
    lines += ["", "Intra-op threads each variant chose at load, and what its model statistics "
              "said at the end:", ""]
    for name, _ in variants:
        for model in MODELS:
            lines.append(f"- {name}, {model}: at load {chosen[name][model].get('count')} "
                         f"({chosen[name][model].get('reason', '')}); at the end "
                         f"{final[name][model].get('count')}")
    for name, _ in variants:
        s = summary[name]["resnet18"]["beside 1 busy process"]["ratio_to_alone"]["median"]
        lines.append("")  # a paragraph each: headline.py quotes a missed one on its own
        lines.append(f"{name}: resnet18 keeps at least 0.5× of alone beside one busy process: "
                     f"{'met' if s >= 0.5 else 'missed'} ({s:.2f}×)")
    stem = result_file.write_new(ROOT / "bench" / "results", args.name, report,
                                 "\n".join(lines) + "\n")
    print(f"wrote {stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
