"""Generation throughput: inferd's continuous batching against llama.cpp itself, same model
(SmolLM2-135M Q4_1), same threads, greedy, fixed prompt and output lengths.

  - engine limit, one sequence: llama-cpp-python in process, one request after another (what
    a server that answers one request at a time can reach at best);
  - inferd: /v1/completions streamed by N concurrent clients (1, 4, 16), continuous batching
    over 16 sequences.

Reports output tokens/s (all clients together), time to first token p50/p99 and time per
output token p50. Writes a markdown table (and the JSON of every run) under bench/results/.

    .venv/bin/python bench/llm/llm_bench.py --out bench/results/$(date +%F)-llm
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from inferd_harness import InferdServer  # noqa: E402
from llm_helpers import add_llm, smollm2_gguf  # noqa: E402

PROMPT = ("You are a helpful assistant. Please write a detailed paragraph about the history "
          "of the city of Paris, its monuments and its people. ")  # ~30 tokens


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def one_stream(url, index, output_tokens):
    body = {"model": "llm", "prompt": f"{PROMPT}({index})", "max_tokens": output_tokens,
            "temperature": 0, "stream": True, "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    first = None
    stamps = []
    usage = None
    with requests.post(url + "/v1/completions", json=body, stream=True, timeout=600) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            event = json.loads(line[6:])
            now = time.perf_counter()
            if event.get("usage"):
                usage = event["usage"]
            if event["choices"] and event["choices"][0]["text"]:
                if first is None:
                    first = now
                stamps.append(now)
    end = time.perf_counter()
    tokens = usage["completion_tokens"]
    tpot = (end - first) / max(1, tokens - 1) if first else float("nan")
    return {"ttft": (first or end) - start, "tpot": tpot, "tokens": tokens, "seconds": end - start}


def run_inferd(url, clients, requests_per_client, output_tokens):
    results = []
    lock = threading.Lock()

    def client(c):
        for i in range(requests_per_client):
            r = one_stream(url, c * 1000 + i, output_tokens)
            with lock:
                results.append(r)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(client, range(clients)))
    wall = time.perf_counter() - start
    tokens = sum(r["tokens"] for r in results)
    return {"clients": clients, "requests": len(results), "tokens": tokens,
            "tokens_per_s": tokens / wall,
            "ttft_p50_ms": 1e3 * percentile([r["ttft"] for r in results], 0.5),
            "ttft_p99_ms": 1e3 * percentile([r["ttft"] for r in results], 0.99),
            "tpot_p50_ms": 1e3 * percentile([r["tpot"] for r in results], 0.5)}


def run_engine_sequential(threads, requests_total, output_tokens):
    from llama_cpp import Llama

    llm = Llama(model_path=str(smollm2_gguf()), n_ctx=512, n_batch=512, n_threads=threads,
                n_threads_batch=threads, verbose=False)
    tokens = 0
    start = time.perf_counter()
    for i in range(requests_total):
        llm.reset()
        out = llm.create_completion(f"{PROMPT}({i})", max_tokens=output_tokens, temperature=0,
                                    repeat_penalty=1.0)
        tokens += out["usage"]["completion_tokens"]
    wall = time.perf_counter() - start
    return {"requests": requests_total, "tokens": tokens, "tokens_per_s": tokens / wall}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output path without extension")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--rounds", type=int, default=2, help="requests per client")
    args = parser.parse_args()

    report = {"threads": args.threads, "output_tokens": args.output_tokens, "runs": []}
    engine = run_engine_sequential(args.threads, 4, args.output_tokens)
    report["engine_sequential"] = engine
    print("llama-cpp-python, one request at a time:", engine, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        add_llm(repo, "llm", parallel=16, extra={"context_length": 256,
                                                 "threads": args.threads,
                                                 "flash_attention": "auto"})
        server = InferdServer(repo, Path(tmp) / "inferd.log", name="bench").start()
        try:
            one_stream(server.url, 0, 8)  # warm-up
            for clients in args.concurrency:
                run = run_inferd(server.url, clients, args.rounds, args.output_tokens)
                report["runs"].append(run)
                print("inferd:", run, flush=True)
        finally:
            server.stop()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    lines = [f"# Generation throughput: inferd vs llama.cpp ({time.strftime('%Y-%m-%d')})", "",
             f"SmolLM2-135M-Instruct Q4_1, {args.threads} threads, greedy, "
             f"{args.output_tokens} output tokens, prompt ~30 tokens; inferd: 16 sequences, "
             "continuous batching, streamed /v1/completions.", "",
             f"Command: `.venv/bin/python bench/llm/llm_bench.py --out {args.out}`", "",
             "| server | clients | output tokens/s | vs engine, one at a time | TTFT p50 ms | "
             "TTFT p99 ms | TPOT p50 ms |", "|---|---|---|---|---|---|---|",
             f"| llama-cpp-python in process, one request at a time | 1 | "
             f"{engine['tokens_per_s']:.1f} | 1.00 | | | |"]
    for run in report["runs"]:
        lines.append(f"| inferd | {run['clients']} | {run['tokens_per_s']:.1f} | "
                     f"{run['tokens_per_s'] / engine['tokens_per_s']:.2f} | "
                     f"{run['ttft_p50_ms']:.0f} | {run['ttft_p99_ms']:.0f} | "
                     f"{run['tpot_p50_ms']:.1f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
