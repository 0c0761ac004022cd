"""inferd-perf --generate: generation load on an OpenAI-compatible server. Closed loop: each of
`concurrency` clients streams /v1/completions requests one after another (greedy, a prompt of
about `prompt_tokens` tokens, `max_tokens` = `output_tokens`) until `requests` have finished,
and the report gives time to first token (p50, p99), time per output token after the first
(p50), output tokens per second over the run, and the token counts the server reported in
each stream's usage (stream_options.include_usage). Works against any server that speaks
OpenAI's streaming completions: inferd, llama.cpp's llama-server, vLLM."""

from __future__ import annotations

import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .measure import percentile

# Common English words: about one token each in the usual BPE vocabularies (the server's
# usage says how many the prompt really had).
WORDS = ("the of and to in is it that was for on are with as his they at be this from have or "
         "by one had not but what all were when we there can an your which their said if do will "
         "each about how up out them then she many some so these would other into has more her "
         "two like him see time could no make than first been its who now people my made over "
         "did down only way find use may water long little very after words called just where "
         "most know").split()


def make_prompt(tokens: int, salt: int) -> str:
    """About `tokens` tokens; `salt` first, so that no two prompts share a cached prefix."""
    words = [f"{salt}:"] + [WORDS[(salt + i) % len(WORDS)] for i in range(max(0, tokens - 3))]
    return " ".join(words)


def one_stream(host: str, port: int, model: str, prompt: str, output_tokens: int,
               headers: dict) -> dict:
    """Streams one completion: ttft and tpot in seconds, tokens from the server's usage."""
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": output_tokens,
                       "temperature": 0, "stream": True,
                       "stream_options": {"include_usage": True}})
    conn = http.client.HTTPConnection(host, port, timeout=600)
    start = time.perf_counter()
    first = None
    usage = None
    try:
        conn.request("POST", "/v1/completions", body,
                     {"Content-Type": "application/json", **headers})
        response = conn.getresponse()
        if response.status != 200:
            return {"error": f"HTTP {response.status}: {response.read()[:200]!r}"}
        for line in response:
            if not line.startswith(b"data: ") or line.strip() == b"data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("error"):
                return {"error": str(event["error"])}
            if event.get("usage"):
                usage = event["usage"]
            if first is None and event.get("choices") and event["choices"][0].get("text"):
                first = time.perf_counter()
    except (OSError, http.client.HTTPException, ValueError) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        conn.close()
    end = time.perf_counter()
    if usage is None:
        return {"error": "the stream carried no usage (stream_options.include_usage)"}
    tokens = usage["completion_tokens"]
    first = first or end
    return {"ttft": first - start, "tpot": (end - first) / max(1, tokens - 1), "tokens": tokens,
            "prompt_tokens": usage["prompt_tokens"], "seconds": end - start}


def run(host: str, port: int, model: str, concurrency: int, requests: int, prompt_tokens: int,
        output_tokens: int, headers: dict | None = None) -> dict:
    """One closed-loop run; the report's row."""
    results: list[dict] = []
    lock = threading.Lock()
    next_request = iter(range(requests))

    def client():
        while True:
            with lock:
                i = next(next_request, None)
            if i is None:
                return
            r = one_stream(host, port, model, make_prompt(prompt_tokens, i), output_tokens,
                           headers or {})
            with lock:
                results.append(r)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for _ in range(concurrency):
            pool.submit(client)
    wall = time.perf_counter() - start
    ok = [r for r in results if "error" not in r]
    errors = [r["error"] for r in results if "error" in r]
    output = sum(r["tokens"] for r in ok)
    ttft = sorted(r["ttft"] * 1e3 for r in ok)
    tpot = sorted(r["tpot"] * 1e3 for r in ok if r["tokens"] > 1)
    return {"mode": "generate", "model": model, "concurrency": concurrency,
            "requests": len(results), "errors": len(errors), "first_error": errors[0] if errors else "",
            "prompt_tokens_requested": prompt_tokens, "output_tokens_requested": output_tokens,
            "prompt_tokens": sum(r["prompt_tokens"] for r in ok),
            "output_tokens": output,
            "output_tokens_per_request": [r["tokens"] for r in ok],
            "ttft_p50_ms": percentile(ttft, 50), "ttft_p99_ms": percentile(ttft, 99),
            "tpot_p50_ms": percentile(tpot, 50),
            "output_tokens_per_s": output / wall if wall > 0 else 0.0, "seconds": wall}


def print_generation_row(row: dict) -> None:
    print(f"generate {row['model']}: {row['concurrency']} clients, {row['requests']} requests: "
          f"{row['output_tokens_per_s']:.1f} output tokens/s, TTFT p50 {row['ttft_p50_ms']:.1f} ms, "
          f"p99 {row['ttft_p99_ms']:.1f} ms, TPOT p50 {row['tpot_p50_ms']:.2f} ms, "
          f"{row['output_tokens']} output tokens, {row['prompt_tokens']} prompt tokens, "
          f"errors {row['errors']}{' (' + row['first_error'] + ')' if row['errors'] else ''}",
          flush=True)
