#!/usr/bin/env python3
"""Models sharing one inferd (issue 34, "a shared node": "models inside inferd still ≥ 0.8× a
fair share"): the demo chat model's one generation stream and resnet18 at 4 clients, each
alone and then both at once, in one inferd, for --rounds rounds.

With two busy models on the machine, a fair share is half of what each does alone; the goal
is that each keeps at least 0.8 of that (0.4× of alone). A measurement is --duration seconds:
resnet18 is `wrk -t1 -c4` POST /predict (req/s); the chat model is greedy /v1/completions of
--max-tokens tokens one after another (completion tokens / wall time). "Together" runs both
over the same window. Ratios are per round (together ÷ the same round's alone), then the
median and the spread.

    .venv/bin/python bench/shared_node_together.py --rounds 3

Writes bench/results/<date>-shared-node-together[-N].{json,md}; none is overwritten.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

import bodies  # noqa: E402
import result_file  # noqa: E402
from inferd_harness import DEMO_MODELS, InferdServer  # noqa: E402

CHAT = "smollm2"
IMAGE = "resnet18"
PROMPT = ("Here is a detailed history of the city of Paris, its monuments, its rivers, its "
          "bridges and its people, from the Romans to today:")
LUA = ROOT / "bench" / "predict.lua"
DEMO_CHAT = DEMO_MODELS.parent / "demo-models-chat"
GOAL = 0.8 * 0.5  # 0.8 of a fair share, two models


def start_wrk(url: str, body: str, seconds: int) -> subprocess.Popen:
    return subprocess.Popen(["wrk", "-t1", "-c4", f"-d{seconds}s", "--timeout", "10s", "-s",
                             str(LUA), url, "--", body], stdout=subprocess.PIPE, text=True)


def wrk_qps(process: subprocess.Popen) -> float:
    out, _ = process.communicate(timeout=120)
    match = re.search(r"BENCH_RESULT (.*)", out)
    if process.returncode != 0 or not match:
        raise SystemExit(f"wrk failed:\n{out}")
    result = json.loads(match.group(1))
    if result["errors"]:
        raise SystemExit(f"wrk saw {result['errors']} errors")
    return result["qps"]


def chat_tokens_per_second(url: str, seconds: float, max_tokens: int, tag: str) -> float:
    tokens, start, i = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        body = {"model": CHAT, "prompt": f"({tag}-{i}) {PROMPT}", "max_tokens": max_tokens,
                "temperature": 0, "cache_prompt": False}
        reply = requests.post(url + "/v1/completions", json=body, timeout=600)
        reply.raise_for_status()
        tokens += reply.json()["usage"]["completion_tokens"]
        i += 1
    return tokens / (time.perf_counter() - start)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--binary", default=str(ROOT / "build" / "inferd"))
    p.add_argument("--name", default="shared-node-together")
    args = p.parse_args()
    result_file.require_clean_tree(result_file.RESULTS)  # a kept run measures a committed tree
    tmp = Path(tempfile.mkdtemp(prefix="shared-node-together-"))
    repo = tmp / "repo"
    repo.mkdir()
    # The demo models as a newcomer serves them: their folders, configs untouched.
    shutil.copytree(DEMO_MODELS / IMAGE, repo / IMAGE, symlinks=True)
    shutil.copytree(DEMO_CHAT / CHAT, repo / CHAT, symlinks=True)
    body = bodies.write_body(str(tmp), IMAGE, bodies.make_body(str(DEMO_MODELS), IMAGE))
    load_before = result_file.load()
    server = InferdServer(repo, tmp / "inferd.log", binary=args.binary,
                          args=["--log-level", "warn", "--access-log", "false"]).start()
    rounds = []
    try:
        url = f"{server.url}/predict?model={IMAGE}"
        wrk_qps(start_wrk(url, body, 2))  # warm-up
        chat_tokens_per_second(server.url, 2, args.max_tokens, "warm")
        for r in range(args.rounds):
            image_alone = wrk_qps(start_wrk(url, body, args.duration))
            chat_alone = chat_tokens_per_second(server.url, args.duration, args.max_tokens,
                                                f"alone{r}")
            image = start_wrk(url, body, args.duration)
            chat_together = chat_tokens_per_second(server.url, args.duration, args.max_tokens,
                                                   f"together{r}")
            image_together = wrk_qps(image)
            rounds.append({"resnet18_alone_qps": image_alone,
                           "resnet18_together_qps": image_together,
                           "chat_alone_tokens_per_s": chat_alone,
                           "chat_together_tokens_per_s": chat_together})
            print(f"round {r + 1}: {rounds[-1]}", flush=True)
    finally:
        server.stop()
    load_after = result_file.load()

    def series(key: str) -> list:
        return [x[key] for x in rounds]

    summary = {
        "resnet18_alone_qps": result_file.spread(series("resnet18_alone_qps")),
        "resnet18_together_qps": result_file.spread(series("resnet18_together_qps")),
        "chat_alone_tokens_per_s": result_file.spread(series("chat_alone_tokens_per_s")),
        "chat_together_tokens_per_s": result_file.spread(series("chat_together_tokens_per_s")),
        "resnet18_ratio": result_file.spread([x["resnet18_together_qps"] /
                                              x["resnet18_alone_qps"] for x in rounds]),
        "chat_ratio": result_file.spread([x["chat_together_tokens_per_s"] /
                                          x["chat_alone_tokens_per_s"] for x in rounds]),
    }
    command = "bench/shared_node_together.py " + " ".join(sys.argv[1:])
    m = result_file.meta([args.binary], command, load_before, load_after)
    report = {"meta": m, "rounds": rounds, "summary": summary, "duration_s": args.duration,
              "max_tokens": args.max_tokens}

    def cell(key: str, digits: int = 1) -> str:
        s = summary[key]
        return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}..{s['max']:.{digits}f})"

    lines = [f"# Two models sharing one inferd ({m['date_utc'][:10]})", ""]
    lines += result_file.header(m)
    lines += ["", f"One inferd serving the demo resnet18 and the demo chat model smollm2, "
              f"configs untouched; {args.duration} s per measurement, "
              f"{args.rounds} rounds; resnet18: `wrk -t1 -c4` POST /predict; chat: one stream "
              f"of greedy /v1/completions, {args.max_tokens} tokens each. Median (min..max); "
              "together ÷ alone: median of per-round ratios.", "",
              "| model | alone | together | together ÷ alone |", "|---|---:|---:|---:|",
              f"| resnet18 req/s | {cell('resnet18_alone_qps')} | "
              f"{cell('resnet18_together_qps')} | {cell('resnet18_ratio', 2)} |",
              f"| chat tokens/s | {cell('chat_alone_tokens_per_s')} | "
              f"{cell('chat_together_tokens_per_s')} | {cell('chat_ratio', 2)} |"]
    for name, key in (("resnet18", "resnet18_ratio"), ("chat", "chat_ratio")):
        value = summary[key]["median"]
        lines += ["", f"{name}: keeps at least 0.8 of a fair share (≥ {GOAL:.1f}× of alone) "
                  f"beside the other model: {'met' if value >= GOAL else 'missed'} "
                  f"({value:.2f}×)"]
    stem = result_file.write_new(ROOT / "bench" / "results", args.name, report,
                                 "\n".join(lines) + "\n")
    print(f"wrote {stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
