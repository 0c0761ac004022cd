"""What a forced tool call costs on the demo chat model (docs/llm.md, Tool calling): one
client, greedy, no prompt cache, the same max_tokens, the median of --runs requests each:

  A  a plain chat reply to the question
  B  the same question with two tools and a forced call (the tools in the prompt, the grammar)
  C  B's exact prompt (rendered by /v2/models/M/chat_template) as a plain completion: no grammar

B - C is the grammar's cost, B - A the whole cost. The cases are interleaved. Run from the repository root:

  .venv/bin/python tests/integration/measure_tool_call_cost.py --runs 7 --max-tokens 48
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inferd_harness import InferdServer  # noqa: E402
from llm_helpers import LLM_MODEL, add_llm  # noqa: E402
from test_llm_tools import QUESTION, TOOLS  # noqa: E402


def timed(url: str, body: dict) -> tuple[float, dict]:
    start = time.perf_counter()
    reply = requests.post(url, json=body, timeout=300)
    elapsed = time.perf_counter() - start
    reply.raise_for_status()
    return elapsed, reply.json()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--max-tokens", type=int, default=48)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder) / "repo"
        add_llm(repo, LLM_MODEL, parallel=4)
        server = InferdServer(repo, Path(folder) / "inferd.log", name="measure").start()
        try:
            common = {"model": LLM_MODEL, "temperature": 0, "max_tokens": args.max_tokens,
                      "cache_prompt": False}
            forced = {"tools": TOOLS,
                      "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
            prompt = requests.post(f"{server.url}/v2/models/{LLM_MODEL}/chat_template",
                                   json={"messages": QUESTION, **forced}, timeout=60).json()["prompt"]
            cases = {
                "A plain chat reply": (f"{server.url}/v1/chat/completions",
                                       common | {"messages": QUESTION}),
                "B forced tool call": (f"{server.url}/v1/chat/completions",
                                       common | {"messages": QUESTION} | forced),
                "C B's prompt, no grammar": (f"{server.url}/v1/completions",
                                             common | {"prompt": prompt}),
            }
            timed(*cases["A plain chat reply"])  # warm-up
            # Interleaved, so a change in the machine's load weighs on every case alike.
            times = {name: [] for name in cases}
            usage = {}
            for _ in range(args.runs):
                for name, (url, body) in cases.items():
                    elapsed, reply = timed(url, body)
                    times[name].append(elapsed)
                    usage[name] = reply["usage"]
            for name in cases:
                median = statistics.median(times[name])
                tokens = usage[name]["completion_tokens"]
                print(f"{name:26s} {median * 1000:7.1f} ms  prompt "
                      f"{usage[name]['prompt_tokens']:4d} tokens, completion {tokens:3d} tokens "
                      f"(min {min(times[name]) * 1000:.0f} ms, max {max(times[name]) * 1000:.0f} ms)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
