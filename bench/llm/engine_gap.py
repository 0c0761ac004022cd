"""inferd's LLM path against llama.cpp's own decode step (issue 34): interleaved rounds of
llama-batched-bench (-npl 1 and -npl 16) and inferd (one stream; 16 concurrent streams) on the
same GGUF (SmolLM2-135M-Instruct Q4_1), threads, context, batch, flash attention setting, prompt
length and output length; per-round ratios, their median and spread; and where inferd's time
per token goes beyond the engine's decode.

What is compared, per round:
  - one stream: inferd's time per output token (time from the first streamed token to the
    last, over the tokens after the first) against the engine's decode step at one sequence
    (llama-batched-bench's t_tg / n_tg at -npl 1). Goal: at most +5 %.
  - 16 streams: the engine's S_TG at -npl 16 counts generated tokens over decode time only
    (no sampling, no prompt, no detokenising). The server is measured the same way: for each
    of 16 concurrent streams started together, its tokens after the first over the time from
    its first token to its last; summed over the streams (each stream's decode rate while it
    decodes; prompt processing and time to first token are left out, as S_TG leaves them out).
    Goal: at least 0.95x. The wall-clock rate (all tokens / time from the first request to the
    last token) is reported beside it.

Where inferd's time per token goes, from the one-stream phase: the engine's own timer around
llama_decode (inferd_llm_decode_seconds_total / _steps_total on /metrics) against the time per
token the client sees; per inferd thread, from /proc/PID/task/*/schedstat, CPU time, run-queue
wait and timeslices per token; and the client's own CPU per token (this script, on the same 2
cores).

    .venv/bin/python bench/llm/engine_gap.py --rounds 5

Writes a new bench/results/<date>-llm-engine-gap[-N].md/.json (bench/result_file.py); refuses a
tree with uncommitted changes, as every writer of bench/results does.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "llm"))

import result_file  # noqa: E402
from inferd_harness import InferdServer  # noqa: E402
from llm_bench import CONTEXT_PER_SEQUENCE, PROMPT, SLOTS, tools_env  # noqa: E402
from llm_helpers import add_llm, smollm2_gguf  # noqa: E402

PROMPT_TOKENS = 32  # -npp; inferd's prompt lengths (from its usage) are in the result file

spread = functools.partial(result_file.spread, digits=4)


def engine(tools: Path, threads: int, output_tokens: int, npl: int) -> dict:
    """One llama-batched-bench run at `npl` sequences: its S_TG and decode step."""
    command = [str(tools / "bin" / "llama-batched-bench"), "-m", str(smollm2_gguf()),
               "-c", str(SLOTS * CONTEXT_PER_SEQUENCE), "-b", "512", "-ub", "512",
               "-npp", str(PROMPT_TOKENS), "-ntg", str(output_tokens), "-npl", str(npl),
               "-t", str(threads), "-tb", str(threads), "-fa", "on", "--output-format", "jsonl"]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600,
                          env=tools_env())
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            return {"tokens_per_s": row["speed_tg"], "step_ms": 1e3 * row["t_tg"] / row["tg"],
                    "command": " ".join(["llama-batched-bench"] + command[1:])}
    raise RuntimeError(f"llama-batched-bench printed no results:\n{done.stdout}{done.stderr}")


def prompt_of(number: int) -> str:
    """llm_bench's prompt (~30 tokens, one the model answers at length) behind a number no other
    request of the run has: no KV-cache reuse."""
    return f"({number}) {PROMPT}"


def stream(port: int, prompt: str, max_tokens: int, on_first=None) -> dict:
    """One streamed /v1/completions over a raw socket, with as little client work per token as
    possible (the client shares the 2 cores with the server): the arrival time of every chunk
    that carries text, and the usage. `on_first` is called once the first text arrives."""
    body = json.dumps({"model": "smollm2", "prompt": prompt, "max_tokens": max_tokens,
                       "temperature": 0, "stream": True,
                       "stream_options": {"include_usage": True}}).encode()
    head = (f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            f"application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    times, data = [], bytearray()
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head.encode() + body)
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            now = time.perf_counter()
            # A text chunk: each SSE event with a non-empty "text" in this read.
            texts = len(re.findall(rb'"text":"(?:[^"\\]|\\.)', chunk))
            if texts and not times and on_first is not None:
                on_first()
            times.extend([now] * texts)
            data += chunk
    text = data.decode("utf-8", "replace")
    if not text.startswith("HTTP/1.1 200"):
        raise RuntimeError(f"inferd answered: {text[:300]}")
    # The usage event (each SSE event is written as one HTTP chunk: never split).
    completion = re.findall(r'"completion_tokens":(\d+)', text)
    prompt = re.findall(r'"prompt_tokens":(\d+)', text)
    if not completion or not prompt or not times:
        raise RuntimeError(f"no usage or no text in the stream: {text[-300:]}")
    return {"start": start, "times": times, "tokens": int(completion[-1]),
            "prompt_tokens": int(prompt[-1])}


def metrics(url_port: int) -> dict:
    """The engine's own counters for the model (the decode loop's timer around llama_decode)."""
    with socket.create_connection(("127.0.0.1", url_port)) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    out = {}
    for name in ("inferd_llm_decode_seconds_total", "inferd_llm_decode_steps_total",
                 "inferd_llm_completion_tokens_total"):
        m = re.search(rf'^{name}{{[^}}]*model="smollm2"[^}}]*}} (\S+)', data.decode(), re.M)
        out[name] = float(m.group(1)) if m else float("nan")
    return out


def thread_stats(pid: int) -> dict:
    """Per thread ("name/tid"): CPU ns, run-queue wait ns, timeslices
    (/proc/PID/task/*/schedstat). Per thread, not per name: the decode loop and llama.cpp's
    OpenMP workers share the process's name."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            cpu, wait, slices = (int(x) for x in (task / "schedstat").read_text().split())
        except (OSError, ValueError):
            continue
        out[f"{name}/{task.name}"] = [cpu, wait, slices]
    return out


def one_stream(server: InferdServer, number: int, output_tokens: int) -> dict:
    pid = server.proc.pid
    before_t = thread_stats(pid)
    at_first = {}
    client_cpu = time.process_time()
    # The engine's counters once the first token is out: the steps after it are the decode
    # steps whose tokens the time per token covers (the prompt's step is behind).
    r = stream(server.port, prompt_of(number), output_tokens,
               on_first=lambda: at_first.update(metrics(server.port)))
    client_cpu = time.process_time() - client_cpu
    after_m, after_t = metrics(server.port), thread_stats(pid)
    times = r["times"]
    tokens = r["tokens"]
    tpot_ms = 1e3 * (times[-1] - times[0]) / max(1, len(times) - 1)
    steps = after_m["inferd_llm_decode_steps_total"] - at_first["inferd_llm_decode_steps_total"]
    decode_s = after_m["inferd_llm_decode_seconds_total"] - \
        at_first["inferd_llm_decode_seconds_total"]
    threads = {}
    for name, (cpu, wait, slices) in after_t.items():
        b = before_t.get(name, [0, 0, 0])
        if cpu - b[0] < 1e4 * tokens:  # under 10 µs per token: left out
            continue
        threads[name] = {"cpu_ms_per_token": (cpu - b[0]) / 1e6 / tokens,
                         "wait_ms_per_token": (wait - b[1]) / 1e6 / tokens,
                         "slices_per_token": (slices - b[2]) / tokens}
    return {"tokens": tokens, "text_chunks": len(times), "prompt_tokens": r["prompt_tokens"],
            "tpot_ms": tpot_ms,
            # The mean llama_decode call of the steps after the first token (decode only).
            "decode_call_ms": 1e3 * decode_s / steps if steps else float("nan"),
            "decode_steps": steps,
            "decode_s_share": decode_s / (times[-1] - times[0]),
            "client_cpu_ms_per_token": 1e3 * client_cpu / tokens, "threads": threads}


def concurrent(server: InferdServer, first: int, clients: int, output_tokens: int) -> dict:
    results = [None] * clients
    errors = []

    def client(i):
        try:
            results[i] = stream(server.port, prompt_of(first + i), output_tokens)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    start = time.perf_counter()
    workers = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise errors[0]
    end = max(r["times"][-1] for r in results)
    decode_rate = sum((len(r["times"]) - 1) / (r["times"][-1] - r["times"][0]) for r in results)
    tokens = sum(r["tokens"] for r in results)
    return {"decode_tokens_per_s": decode_rate, "wall_tokens_per_s": tokens / (end - start),
            "tokens": tokens,
            "ttft_max_ms": 1e3 * max(r["times"][0] - r["start"] for r in results)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--streams", type=int, default=16)
    parser.add_argument("--binary", default=str(ROOT / "build" / "inferd"))
    parser.add_argument("--tools", default=str(ROOT / "build-llama-tools"),
                        help="llama.cpp's tools build (bench/llm/build-llama-tools)")
    parser.add_argument("--name", default="llm-engine-gap")
    args = parser.parse_args()
    if not 1 <= args.streams <= SLOTS:
        raise SystemExit(f"--streams must be 1 to {SLOTS}")
    tools = Path(args.tools)
    if not (tools / "bin" / "llama-batched-bench").is_file():
        raise SystemExit(f"{tools}/bin/llama-batched-bench is missing: bench/llm/build-llama-tools")
    result_file.require_clean_tree(result_file.RESULTS)  # a kept run measures a committed tree
    command = "bench/llm/engine_gap.py " + " ".join(sys.argv[1:])
    tmp = Path(tempfile.mkdtemp(prefix="llm-gap-"))
    repo = tmp / "repo"
    add_llm(repo, "smollm2", parallel=SLOTS,
            extra={"context_length": CONTEXT_PER_SEQUENCE, "threads": args.threads,
                   "flash_attention": "on"})
    load_before = result_file.load()
    rounds = []
    number = 0
    for round_number in range(args.rounds):
        row = {}

        def run_engine():
            row["engine_1"] = engine(tools, args.threads, args.output_tokens, 1)
            row["engine_n"] = engine(tools, args.threads, args.output_tokens, args.streams)

        def run_inferd():
            nonlocal number
            server = InferdServer(repo, tmp / "inferd.log", name="gap",
                                  binary=Path(args.binary)).start()
            try:
                stream(server.port, prompt_of(10**6 + round_number), 8)  # warm-up
                number += 1
                row["inferd_1"] = one_stream(server, number, args.output_tokens)
                number += 1
                row["inferd_n"] = concurrent(server, number * 100, args.streams,
                                             args.output_tokens)
            finally:
                server.stop()

        # Alternating order: the engine first in even rounds, inferd first in odd ones.
        for step in ((run_engine, run_inferd) if round_number % 2 == 0
                     else (run_inferd, run_engine)):
            step()
        row["overhead_1"] = row["inferd_1"]["tpot_ms"] / row["engine_1"]["step_ms"] - 1
        row["ratio_n"] = row["inferd_n"]["decode_tokens_per_s"] / row["engine_n"]["tokens_per_s"]
        rounds.append(row)
        print(f"round {round_number}: engine step {row['engine_1']['step_ms']:.2f} ms, inferd "
              f"TPOT {row['inferd_1']['tpot_ms']:.2f} ms ({100 * row['overhead_1']:+.1f}%); "
              f"engine S_TG@{args.streams} {row['engine_n']['tokens_per_s']:.1f}, inferd "
              f"{row['inferd_n']['decode_tokens_per_s']:.1f} ({row['ratio_n']:.3f}x)", flush=True)
    load_after = result_file.load()

    m = result_file.meta([args.binary], command, load_before, load_after)
    summary = {
        "overhead_1": spread([r["overhead_1"] for r in rounds]),
        "ratio_n": spread([r["ratio_n"] for r in rounds]),
        "engine_step_ms": spread([r["engine_1"]["step_ms"] for r in rounds]),
        "inferd_tpot_ms": spread([r["inferd_1"]["tpot_ms"] for r in rounds]),
        "inferd_decode_call_ms": spread([r["inferd_1"]["decode_call_ms"] for r in rounds]),
        # Per token, what the client waits beyond inferd's own llama_decode calls.
        "inferd_outside_decode_ms": spread([r["inferd_1"]["tpot_ms"] - r["inferd_1"]["decode_call_ms"]
                                            for r in rounds]),
        # inferd's llama_decode call over the engine's step (the same call, in two processes).
        "decode_call_over_engine": spread([r["inferd_1"]["decode_call_ms"] /
                                           r["engine_1"]["step_ms"] - 1 for r in rounds]),
        "client_cpu_ms_per_token": spread([r["inferd_1"]["client_cpu_ms_per_token"]
                                           for r in rounds]),
        "engine_n_tokens_per_s": spread([r["engine_n"]["tokens_per_s"] for r in rounds]),
        "inferd_n_decode_tokens_per_s": spread([r["inferd_n"]["decode_tokens_per_s"]
                                                for r in rounds]),
        "inferd_n_wall_tokens_per_s": spread([r["inferd_n"]["wall_tokens_per_s"]
                                              for r in rounds]),
    }
    report = {"meta": m, "threads": args.threads, "output_tokens": args.output_tokens,
              "streams": args.streams, "prompt_tokens": PROMPT_TOKENS,
              "engine_command": rounds[0]["engine_1"]["command"], "summary": summary,
              "rounds": rounds}
    stem = result_file.write_new(ROOT / "bench" / "results", args.name, report,
                                 render(report))
    print(stem.with_suffix(".md").read_text())
    return 0


def render(report: dict) -> str:
    s, n = report["summary"], report["streams"]

    def cell(x, scale=1.0, fmt="{:.2f}"):
        return (f"{fmt.format(scale * x['median'])} [{fmt.format(scale * x['min'])}–"
                f"{fmt.format(scale * x['max'])}]")

    o, r = s["overhead_1"]["median"], s["ratio_n"]["median"]

    def verdict(values, ok):
        # Met or missed only when every round agrees: a median between rounds on both sides
        # of the goal is the machine's noise, not a result.
        hits = [ok(v) for v in values]
        return "met" if all(hits) else "**MISSED**" if not any(hits) else \
            "inconclusive (rounds on both sides of the goal)"
    lines = ["# inferd's LLM path against llama.cpp's decode step (issue 34)", ""]
    lines += result_file.header(report["meta"])
    lines += ["", f"SmolLM2-135M-Instruct Q4_1, {report['threads']} threads, flash attention on, "
              f"{SLOTS} x {CONTEXT_PER_SEQUENCE} context, batch 512, {report['prompt_tokens']}-"
              f"token prompts (engine; inferd's are about as long, each unique), "
              f"{report['output_tokens']} output tokens (inferd: greedy, up to that many), "
              f"{len(report['rounds'])} rounds, engine and inferd in alternating order, a fresh "
              "server per round. Medians over rounds [min–max].", "",
              f"Engine: `{report['engine_command']}` (and -npl {n}).", "",
              "## Goals", "",
              f"- {verdict(s['overhead_1']['all'], lambda v: v <= 0.05)}: one stream, time per token over the "
              f"engine's decode step at -npl 1 ≤ +5 %: {100 * o:+.1f} % "
              f"(per-round {cell(s['overhead_1'], 100, '{:+.1f}')} %)",
              f"- {verdict(s['ratio_n']['all'], lambda v: v >= 0.95)}: {n} streams ≥ 0.95× the engine's "
              f"S_TG at -npl {n}: {r:.3f}× (per-round {cell(s['ratio_n'], 1, '{:.3f}')})", "",
              "S_TG counts generated tokens over decode time only (no prompt, no sampling). "
              f"inferd's figure at {n} streams is measured the same way: each stream's tokens "
              "after its first over the time from its first token to its last, summed over the "
              f"{n} concurrent streams (prompt processing and time to first token left out). "
              "Its wall-clock rate (all tokens over the time from the first request to the "
              f"last token) was {cell(s['inferd_n_wall_tokens_per_s'], 1, '{:.1f}')} tokens/s.",
              "", "## Per round", "",
              "| round | engine step ms (npl 1) | inferd TPOT ms (prompt, output tokens) | overhead | inferd mean "
              f"llama_decode ms | engine S_TG@{n} | inferd decode tok/s@{n} | ratio |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, row in enumerate(report["rounds"]):
        lines.append(f"| {i} | {row['engine_1']['step_ms']:.2f} | {row['inferd_1']['tpot_ms']:.2f}"
                     f" ({row['inferd_1']['prompt_tokens']}, {row['inferd_1']['tokens']})"
                     f" | {100 * row['overhead_1']:+.1f} % | "
                     f"{row['inferd_1']['decode_call_ms']:.2f} | "
                     f"{row['engine_n']['tokens_per_s']:.1f} | "
                     f"{row['inferd_n']['decode_tokens_per_s']:.1f} | {row['ratio_n']:.3f} |")
    lines += ["", "## Where inferd's time per token goes (one stream)", "",
              f"- engine decode step (llama-batched-bench, npl 1): {cell(s['engine_step_ms'])} ms",
              f"- inferd's own timer around llama_decode (inferd_llm_decode_seconds_total over "
              f"_steps_total, read at the first token and the end: decode steps only): "
              f"{cell(s['inferd_decode_call_ms'])} ms",
              f"- time per token the client sees: {cell(s['inferd_tpot_ms'])} ms, of which "
              f"outside inferd's llama_decode calls: {cell(s['inferd_outside_decode_ms'])} ms; "
              f"inferd's llama_decode call over the engine's step: "
              f"{cell(s['decode_call_over_engine'], 100, '{:+.1f}')} %",
              f"- the client's own CPU per token (this script, same 2 cores): "
              f"{cell(s['client_cpu_ms_per_token'], 1, '{:.3f}')} ms", "",
              "Per inferd thread, last round (kernel schedstat over the one-stream request, "
              "per output token; threads under 10 µs of CPU per token left out; the two "
              "metrics reads are included):", "",
              "| thread (name/tid) | CPU ms | run-queue wait ms | timeslices |",
              "|---|---:|---:|---:|"]
    last = report["rounds"][-1]["inferd_1"]["threads"]
    for name, t in sorted(last.items(), key=lambda kv: -kv[1]["cpu_ms_per_token"]):
        lines.append(f"| {name} | {t['cpu_ms_per_token']:.3f} | "
                     f"{t['wait_ms_per_token']:.3f} | {t['slices_per_token']:.2f} |")
    lines += [""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
