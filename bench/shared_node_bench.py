"""Generation on a shared node (issue 34, "a shared node"): one stream's tokens/s alone and
beside an unrelated busy process, for several thread settings of the demo chat model.

On a Kubernetes node or a laptop something else is always running. llama.cpp's decode step
runs as an OpenMP team that meets at a barrier after every operation (hundreds per token); when
another process holds one of the cores, a team member waits at each barrier for a peer the
kernel has descheduled. This script measures how far that costs.

Each configuration is one inferd (the demo chat model, `threads` as given, environment as
given); each round measures every configuration alone and then beside one single-threaded busy
loop (a separate Python process spinning, unpinned), in an order that alternates between rounds.
A measurement is `--requests` greedy /v1/completions of `--max-tokens` tokens, one after another:
completion tokens / wall time. The table gives the median over rounds with the spread, and the
"beside / alone" ratio as the median of per-round ratios. Results go to a new file
bench/results/<date>-shared-node[-N].{json,md}; none is overwritten.

    .venv/bin/python bench/shared_node_bench.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

import result_file  # noqa: E402
from inferd_harness import InferdServer  # noqa: E402
from llm_helpers import add_llm  # noqa: E402

MODEL = "smollm2"
PROMPT = ("Here is a detailed history of the city of Paris, its monuments, its rivers, its "
          "bridges and its people, from the Romans to today:")

CORES = len(os.sched_getaffinity(0))
# name -> (model parameters, extra environment of the inferd process). `threads: 0` is the
# default (automatic: decode_threads.h); a fixed count of every core was the default before.
CONFIGS = {
    "threads 0 (automatic)": ({"threads": 0}, {}),
    f"threads {CORES} (every core, fixed)": ({"threads": CORES}, {}),
    f"threads {CORES} (every core, fixed; A/A)": ({"threads": CORES}, {}),
    "threads 1": ({"threads": 1}, {}),
}


def busy_loop() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def tokens_per_second(url: str, requests_n: int, max_tokens: int, tag: str) -> float:
    tokens = 0
    start = time.perf_counter()
    for i in range(requests_n):
        body = {"model": MODEL, "prompt": f"({tag}-{i}) {PROMPT}", "max_tokens": max_tokens,
                "temperature": 0, "cache_prompt": False}
        reply = requests.post(url + "/v1/completions", json=body, timeout=600)
        reply.raise_for_status()
        tokens += reply.json()["usage"]["completion_tokens"]
    return tokens / (time.perf_counter() - start)


def summary(values: list) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def markdown(report: dict) -> str:
    lines = [f"# One generation stream on a shared node — {report['meta']['date_utc'][:10]}", ""]
    lines += result_file.header(report["meta"])
    lines += [f"- model: smollm2 (SmolLM2-135M-Instruct Q4_1), one stream, greedy, "
              f"{report['requests']} requests of {report['max_tokens']} tokens per measurement, "
              f"{report['rounds']} interleaved rounds; busy process: one single-threaded Python "
              "loop, unpinned", "",
              "| configuration | environment | alone tok/s | beside a busy process tok/s | "
              "beside / alone |", "|---|---|---:|---:|---:|"]
    for name, s in report["summary"].items():
        a, b, r = s["alone"], s["busy"], s["ratio"]
        env = " ".join(f"{k}={v}" for k, v in report["configs"][name]["env"].items()) or "—"
        lines.append(f"| {name} | {env} | {a['median']:.1f} ({a['min']:.1f}..{a['max']:.1f}) | "
                     f"{b['median']:.1f} ({b['min']:.1f}..{b['max']:.1f}) | "
                     f"{r['median']:.2f} ({r['min']:.2f}..{r['max']:.2f}) |")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--requests", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--config", action="append", default=[],
                   help="extra configuration NAME=THREADS[:ENV=VALUE,...], e.g. "
                        "'spin 10k=0:GOMP_SPINCOUNT=10000'")
    p.add_argument("--out-dir", default=str(ROOT / "bench" / "results"))
    args = p.parse_args()
    configs = dict(CONFIGS)
    for spec in args.config:
        name, rest = spec.split("=", 1)
        threads, _, env = rest.partition(":")
        configs[name] = ({"threads": int(threads)},
                         dict(kv.split("=", 1) for kv in env.split(",") if kv))
    result_file.require_clean_tree(Path(args.out_dir))  # a kept run measures a committed tree
    load_before = result_file.load()
    rounds: list = []
    servers = {}
    with tempfile.TemporaryDirectory(prefix="shared-node-") as tmp:
        try:
            for i, (name, (params, env)) in enumerate(configs.items()):
                repo = Path(tmp) / f"repo{i}"
                add_llm(repo, MODEL, parallel=4, extra={"context_length": 512, **params})
                servers[name] = InferdServer(repo, Path(tmp) / f"inferd{i}.log", env=env,
                                             name=f"bench{i}").start()
                tokens_per_second(servers[name].url, 1, 8, "warm")
            names = list(configs)
            for r in range(args.rounds):
                order = names if r % 2 == 0 else names[::-1]
                row = {name: {"alone": tokens_per_second(servers[name].url, args.requests,
                                                         args.max_tokens, f"r{r}a")}
                       for name in order}
                busy = busy_loop()
                try:
                    time.sleep(0.5)  # pacing only: the loop is running before we measure
                    for name in order:
                        row[name]["busy"] = tokens_per_second(servers[name].url, args.requests,
                                                              args.max_tokens, f"r{r}b")
                finally:
                    busy.kill()
                    busy.wait()
                rounds.append(row)
                print(f"round {r}:", {n: {k: round(v, 1) for k, v in m.items()}
                                      for n, m in row.items()}, flush=True)
        finally:
            for server in servers.values():
                server.stop()
    report = {
        "meta": result_file.meta([str(ROOT / "build" / "inferd")],
                                 "bench/shared_node_bench.py " + " ".join(sys.argv[1:]),
                                 load_before, result_file.load()),
        "rounds": args.rounds, "requests": args.requests, "max_tokens": args.max_tokens,
        "configs": {n: {"params": p_, "env": e} for n, (p_, e) in configs.items()},
        "summary": {n: {"alone": summary([r[n]["alone"] for r in rounds]),
                        "busy": summary([r[n]["busy"] for r in rounds]),
                        "ratio": summary([r[n]["busy"] / r[n]["alone"] for r in rounds])}
                    for n in configs},
        "rounds_data": rounds,
    }
    stem = result_file.write_new(Path(args.out_dir), "shared-node", report, markdown(report))
    print(markdown(report))
    print(f"wrote {stem}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
