"""Does one JSON-schema stream slow the plain streams beside it? (issue 32, "keep the LLM path
fast": a constrained request must not slow the others in its batch by more than its own
sampling cost.)

One inferd serving the demo chat model (16 sequences, continuous batching). Each round runs,
in this order:
    A1  16 plain streams (greedy /v1/completions, max_tokens tokens each)
    B   15 plain streams + 1 stream with response_format json_schema, re-sent until the plain
        ones finish, so a constrained sequence shares every decode step
    A2  A1 again: the A/A run, the noise any B/A difference must clear
and reports, per condition, the median over rounds of the plain streams' median time per
output token (TPOT), with the spread (min..max over rounds). Results go to a new file
bench/results/<date>-llm-constrained-neighbour[-N].{json,md}; none is overwritten.

    .venv/bin/python bench/llm/constrained_neighbour.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

import result_file  # noqa: E402
from inferd_harness import InferdServer  # noqa: E402
from llm_helpers import add_llm  # noqa: E402

MODEL = "smollm2"
SLOTS = 16
PROMPT = ("Here is a detailed history of the city of Paris, its monuments, its rivers, its "
          "bridges and its people, from the Romans to today:")
SCHEMA = {"type": "object", "properties": {
    "monuments": {"type": "array", "items": {"type": "string", "maxLength": 40}},
    "rivers": {"type": "array", "items": {"type": "string", "maxLength": 40}}},
    "required": ["monuments", "rivers"], "additionalProperties": False}


def plain_stream(url: str, index: int, max_tokens: int, out: list) -> None:
    """One greedy streamed completion; appends its time per output token (s) after the first."""
    body = {"model": MODEL, "prompt": f"({index}) {PROMPT}", "max_tokens": max_tokens,
            "temperature": 0, "stream": True, "cache_prompt": False}
    first = last = None
    tokens = 0
    with requests.post(url + "/v1/completions", json=body, stream=True, timeout=600) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            choices = json.loads(line[6:])["choices"]
            if choices and choices[0]["text"]:
                now = time.perf_counter()
                first = first if first is not None else now
                last = now
                tokens += 1
    if tokens > 1:
        out.append((last - first) / (tokens - 1))


def constrained_stream(url: str, max_tokens: int, stop: threading.Event, counts: list) -> None:
    """JSON-schema requests, one after another, until `stop`; counts the tokens they made."""
    n = 0
    while not stop.is_set():
        body = {"model": MODEL, "prompt": f"[{n}] List the monuments and rivers of Paris "
                "as JSON:", "max_tokens": max_tokens, "temperature": 0, "cache_prompt": False,
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": "paris", "schema": SCHEMA}}}
        reply = requests.post(url + "/v1/completions", json=body, timeout=600)
        reply.raise_for_status()
        counts.append(reply.json()["usage"]["completion_tokens"])
        n += 1


def run_condition(url: str, constrained: bool, max_tokens: int, round_index: int) -> dict:
    plain = SLOTS - 1 if constrained else SLOTS
    tpots: list = []
    counts: list = []
    stop = threading.Event()
    side = None
    if constrained:
        side = threading.Thread(target=constrained_stream, args=(url, max_tokens, stop, counts))
        side.start()
        time.sleep(0.2)  # pacing only: let the constrained request take its slot first
    threads = [threading.Thread(target=plain_stream,
                                args=(url, round_index * 100 + i, max_tokens, tpots))
               for i in range(plain)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    stop.set()
    if side is not None:
        side.join()
    return {"plain_streams": plain, "answered": len(tpots),
            "tpot_ms_median": statistics.median(tpots) * 1e3 if tpots else None,
            "wall_s": wall, "constrained_tokens": sum(counts),
            "constrained_requests": len(counts)}


def summary(values: list) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def markdown(report: dict) -> str:
    lines = ["# One JSON-schema stream beside 15 plain ones — "
             f"{report['meta']['date_utc'][:10]}", ""]
    lines += result_file.header(report["meta"])
    lines += [f"- model: smollm2 (SmolLM2-135M Q4_1), {SLOTS} sequences, threads "
              f"{report['threads']}, {report['max_tokens']} output tokens per plain stream, "
              f"{report['rounds']} rounds of A1, B, A2 in that order", "",
              "| condition | plain streams | TPOT ms, median of rounds | spread (min..max) |",
              "|---|---:|---:|---|"]
    names = {"A1": "A1: 16 plain", "B": "B: 15 plain + 1 json_schema",
             "A2": "A2: 16 plain (A/A)"}
    for key in ("A1", "B", "A2"):
        s = report["summary"][key]
        lines.append(f"| {names[key]} | {report['rounds_data'][0][key]['plain_streams']} | "
                     f"{s['median']:.2f} | {s['min']:.2f}..{s['max']:.2f} |")
    ratio_b = report["summary"]["B_over_A"]
    ratio_aa = report["summary"]["A2_over_A1"]
    lines += ["", f"- B ÷ mean(A1, A2), median of per-round ratios: {ratio_b['median']:.3f} "
              f"({ratio_b['min']:.3f}..{ratio_b['max']:.3f})",
              f"- A2 ÷ A1 (A/A), median of per-round ratios: {ratio_aa['median']:.3f} "
              f"({ratio_aa['min']:.3f}..{ratio_aa['max']:.3f})",
              f"- constrained stream per round: "
              f"{[r['B']['constrained_tokens'] for r in report['rounds_data']]} tokens in "
              f"{[r['B']['constrained_requests'] for r in report['rounds_data']]} requests"]
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out-dir", default=str(ROOT / "bench" / "results"))
    args = p.parse_args()
    result_file.require_clean_tree(Path(args.out_dir))  # a kept run measures a committed tree
    load_before = result_file.load()
    rounds = []
    with tempfile.TemporaryDirectory(prefix="constrained-") as tmp:
        repo = Path(tmp) / "repo"
        add_llm(repo, MODEL, parallel=SLOTS,
                extra={"context_length": 512, "threads": args.threads})
        server = InferdServer(repo, Path(tmp) / "inferd.log", name="bench").start()
        try:
            run_condition(server.url, False, 8, 99)  # warm-up: the model loads and runs once
            for r in range(args.rounds):
                rounds.append({key: run_condition(server.url, key == "B", args.max_tokens,
                                                  r * 3 + i)
                               for i, key in enumerate(("A1", "B", "A2"))})
        finally:
            server.stop()
    tpot = {key: [r[key]["tpot_ms_median"] for r in rounds] for key in ("A1", "B", "A2")}
    report = {
        "meta": result_file.meta([str(ROOT / "build" / "inferd")],
                                 "bench/llm/constrained_neighbour.py " + " ".join(sys.argv[1:]),
                                 load_before, result_file.load()),
        "rounds": args.rounds, "max_tokens": args.max_tokens, "threads": args.threads,
        "rounds_data": rounds,
        "summary": {**{key: summary(values) for key, values in tpot.items()},
                    "B_over_A": summary([b / ((a1 + a2) / 2) for a1, b, a2 in
                                         zip(tpot["A1"], tpot["B"], tpot["A2"])]),
                    "A2_over_A1": summary([a2 / a1 for a1, a2 in zip(tpot["A1"], tpot["A2"])])},
    }
    stem = result_file.write_new(Path(args.out_dir), "llm-constrained-neighbour", report, markdown(report))
    print(f"wrote {stem}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
