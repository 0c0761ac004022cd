"""What does a LoRA stream cost the stream beside it? (issue 32, item 6: llama.cpp applies
adapters per context, so a decode step holds one adapter set and the sets take steps in turn.)

One inferd serving the demo chat model with the test adapter (tools/demo_models/chat_lora.py)
as `smollm2:tone`, 2 sequences. Each round runs two concurrent greedy streams of
--max-tokens tokens, in this order:
    AA   base + base        (one step serves both)
    AB   base + adapter     (the sets alternate: each step serves one stream)
    BB   adapter + adapter  (one step serves both: the adapter's own compute cost)
    AA2  base + base again  (the A/A run: the noise a difference must clear)
and reports per condition the median over rounds of the summed tokens/s of the two streams
and of each stream's time per output token. Results go to a new file
bench/results/<date>-llm-lora-mix[-N].{json,md}; none is overwritten.

    .venv/bin/python bench/llm/lora_mix.py --rounds 3
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
sys.path.insert(0, str(ROOT))

import result_file  # noqa: E402
from inferd_harness import InferdServer  # noqa: E402
from llm_helpers import add_llm, smollm2_gguf  # noqa: E402
from tools.demo_models import chat_lora  # noqa: E402

MODEL = "smollm2"
PROMPT = ("Here is a detailed history of the city of Paris, its monuments, its rivers, its "
          "bridges and its people, from the Romans to today:")
CONDITIONS = {"AA": (MODEL, MODEL), "AB": (MODEL, f"{MODEL}:tone"),
              "BB": (f"{MODEL}:tone", f"{MODEL}:tone"), "AA2": (MODEL, MODEL)}


def stream(url: str, model: str, index: int, max_tokens: int, out: dict) -> None:
    body = {"model": model, "prompt": f"({index}) {PROMPT}", "max_tokens": max_tokens,
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
    out[index] = (tokens, first, last)


def run_condition(url: str, models: tuple, max_tokens: int, round_index: int) -> dict:
    out: dict = {}
    threads = [threading.Thread(target=stream, args=(url, model, round_index * 10 + i,
                                                     max_tokens, out))
               for i, model in enumerate(models)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tokens = sum(n for n, _, _ in out.values())
    start = min(f for _, f, _ in out.values())
    end = max(last for _, _, last in out.values())
    tpots = [(last - f) / (n - 1) * 1e3 for n, f, last in out.values() if n > 1]
    return {"tokens": tokens, "tokens_per_s": tokens / (end - start),
            "tpot_ms": tpots}


def summary(values: list) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def markdown(report: dict) -> str:
    lines = [f"# Two streams, with and without a LoRA adapter — {report['meta']['date_utc'][:10]}",
             ""]
    lines += result_file.header(report["meta"])
    lines += [f"- model: smollm2 (SmolLM2-135M Q4_1) + the test adapter (rank 8 on attn_q and "
              f"attn_v of all 30 layers), 2 sequences, threads {report['threads']}, "
              f"{report['max_tokens']} output tokens per stream, {report['rounds']} rounds of "
              "AA, AB, BB, AA2 in that order", "",
              "| condition | tokens/s of both streams, median | spread | TPOT ms, median |",
              "|---|---:|---|---:|"]
    names = {"AA": "AA: base + base", "AB": "AB: base + adapter",
             "BB": "BB: adapter + adapter", "AA2": "AA2: base + base (A/A)"}
    for key in CONDITIONS:
        s = report["summary"][key]
        lines.append(f"| {names[key]} | {s['median']:.1f} | {s['min']:.1f}..{s['max']:.1f} | "
                     f"{report['summary'][key + '_tpot']:.1f} |")
    r = report["summary"]
    lines += ["", f"- AB ÷ mean(AA, AA2) tokens/s, median of rounds: {r['AB_over_AA']['median']:.3f}"
              f" ({r['AB_over_AA']['min']:.3f}..{r['AB_over_AA']['max']:.3f})",
              f"- BB ÷ mean(AA, AA2): {r['BB_over_AA']['median']:.3f} "
              f"({r['BB_over_AA']['min']:.3f}..{r['BB_over_AA']['max']:.3f})",
              f"- AA2 ÷ AA (A/A): {r['AA2_over_AA']['median']:.3f} "
              f"({r['AA2_over_AA']['min']:.3f}..{r['AA2_over_AA']['max']:.3f})"]
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out-dir", default=str(ROOT / "bench" / "results"))
    args = p.parse_args()
    result_file.require_clean_tree(Path(args.out_dir))  # a kept run measures a committed tree
    load_before = result_file.load()
    rounds = []
    with tempfile.TemporaryDirectory(prefix="lora-mix-") as tmp:
        repo = Path(tmp) / "repo"
        folder = add_llm(repo, MODEL, parallel=2,
                         extra={"context_length": 512, "threads": args.threads})
        chat_lora.write(smollm2_gguf(), folder / "1" / "tone.gguf")
        with open(folder / "config.yaml", "a") as config:
            config.write("adapters:\n  - {name: tone, path: tone.gguf}\n")
        server = InferdServer(repo, Path(tmp) / "inferd.log", name="bench").start()
        try:
            run_condition(server.url, CONDITIONS["AB"], 8, 99)  # warm-up
            for r in range(args.rounds):
                rounds.append({key: run_condition(server.url, models, args.max_tokens, r * 4 + i)
                               for i, (key, models) in enumerate(CONDITIONS.items())})
        finally:
            server.stop()
    rate = {key: [r[key]["tokens_per_s"] for r in rounds] for key in CONDITIONS}
    aa = [(a + a2) / 2 for a, a2 in zip(rate["AA"], rate["AA2"])]
    report = {
        "meta": result_file.meta([str(ROOT / "build" / "inferd")],
                                 "bench/llm/lora_mix.py " + " ".join(sys.argv[1:]),
                                 load_before, result_file.load()),
        "rounds": args.rounds, "max_tokens": args.max_tokens, "threads": args.threads,
        "rounds_data": rounds,
        "summary": {**{key: summary(values) for key, values in rate.items()},
                    **{key + "_tpot": statistics.median(
                        [t for r in rounds for t in r[key]["tpot_ms"]]) for key in CONDITIONS},
                    "AB_over_AA": summary([b / a for a, b in zip(aa, rate["AB"])]),
                    "BB_over_AA": summary([b / a for a, b in zip(aa, rate["BB"])]),
                    "AA2_over_AA": summary([a2 / a for a, a2 in zip(rate["AA"], rate["AA2"])])},
    }
    stem = result_file.write_new(Path(args.out_dir), "llm-lora-mix", report, markdown(report))
    print(f"wrote {stem}.md and .json")
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
