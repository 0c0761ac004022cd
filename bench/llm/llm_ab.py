"""Two or more inferd binaries side by side on the demo chat model: streamed /v1/completions at
1 and 16 concurrent clients (greedy, fixed output length, unique prompts), rounds interleaved
(A B A B ...) so background noise hits every variant alike; a fresh server per variant and
round; the order reverses every other round (A B, B A, ...), so that no variant always runs
after the same one. Reports per variant the median over rounds of tokens/s and time to first token p50,
with the spread (min-max). Name a binary twice for an A/A run.

    .venv/bin/python bench/llm/llm_ab.py --rounds 5 --name llm-one-door \\
        before=/tmp/inferd-before after=build/inferd

Writes bench/results/<date>-<name>.md and .json (never over an existing file).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench" / "llm"))
sys.path.insert(0, str(ROOT / "bench"))

from inferd_harness import InferdServer  # noqa: E402
from llm_bench import CONTEXT_PER_SEQUENCE, PROMPT, SLOTS, closed_loop, one_stream  # noqa: E402
from llm_helpers import add_llm  # noqa: E402
import result_file  # noqa: E402

spread = functools.partial(result_file.spread, digits=2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", help="NAME=BINARY")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--requests", type=int, default=2, help="requests per client per round")
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--name", default="llm-ab")
    args = parser.parse_args()
    variants = [tuple(v.split("=", 1)) for v in args.variants]
    # A new dated file, never over a kept one; refused on a tree with uncommitted changes.
    out = result_file.new_stem(result_file.RESULTS, args.name)

    tmp = Path(tempfile.mkdtemp(prefix="llm-ab-"))
    repo = tmp / "repo"
    add_llm(repo, "smollm2", parallel=SLOTS,
            extra={"context_length": CONTEXT_PER_SEQUENCE, "threads": args.threads,
                   "flash_attention": "on"})
    load_before = os.getloadavg()
    runs = {name: {c: [] for c in args.concurrency} for name, _ in variants}
    for round_number in range(args.rounds):
        for name, binary in (variants if round_number % 2 == 0 else variants[::-1]):
            server = InferdServer(repo, tmp / f"{name}.log", name=name,
                                  binary=Path(binary)).start()
            try:
                one_stream(server.url, "smollm2", PROMPT, 8)  # warm-up
                for clients in args.concurrency:
                    run = closed_loop(server.url, "smollm2", clients, args.requests,
                                      args.output_tokens)
                    runs[name][clients].append(run)
                    print(round_number, name, clients, round(run["tokens_per_s"], 1),
                          round(run["ttft_p50_ms"], 1), flush=True)
            finally:
                server.stop()
    load_after = os.getloadavg()

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    report = {"command": "bench/llm/llm_ab.py " + " ".join(sys.argv[1:]),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
              "machine": result_file.describe_machine(), "machine_info": result_file.machine(),
              "load_before": load_before, "load_after": load_after,
              "variants": dict(variants), "results": {}}
    for name, _ in variants:
        report["results"][name] = {
            str(c): {"tokens_per_s": spread([r["tokens_per_s"] for r in runs[name][c]]),
                     "ttft_p50_ms": spread([r["ttft_p50_ms"] for r in runs[name][c]]),
                     "tpot_p50_ms": spread([r["tpot_p50_ms"] for r in runs[name][c]])}
            for c in args.concurrency}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")

    first = variants[0][0]
    lines = [f"# inferd binaries side by side: LLM streams ({args.name})", "",
             f"Command: `.venv/bin/python {report['command']}` — {report['date']}, commit "
             f"`{commit}`, {report['machine']}, load average {load_before[0]:.2f} before and "
             f"{load_after[0]:.2f} after (the clients and inferd included). SmolLM2-135M Q4_1, "
             f"{SLOTS} sequences, greedy, {args.output_tokens} output tokens, "
             f"{args.requests} requests per client per round, {args.rounds} interleaved rounds, "
             "a fresh server each; medians over rounds with [min-max].", "",
             "| variant | binary | clients | tokens/s | vs " + first + " | TTFT p50 ms | "
             "TPOT p50 ms |", "|---|---|---:|---:|---:|---:|---:|"]
    for name, binary in variants:
        for c in args.concurrency:
            r = report["results"][name][str(c)]
            base = report["results"][first][str(c)]["tokens_per_s"]["median"]
            t, f, p = r["tokens_per_s"], r["ttft_p50_ms"], r["tpot_p50_ms"]
            lines.append(f"| {name} | `{binary}` | {c} | {t['median']} [{t['min']}-{t['max']}] | "
                         f"{t['median'] / base:.3f}x | {f['median']} [{f['min']}-{f['max']}] | "
                         f"{p['median']} [{p['min']}-{p['max']}] |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
