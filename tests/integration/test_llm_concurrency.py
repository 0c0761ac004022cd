"""Continuous batching under load: 16 concurrent streams complete with the right token
counts, a client that disconnects mid-stream frees its sequence, the statistics and
/metrics report generation, and a language model shares one memory budget with classic
models (evicted and reloaded, every request answered)."""

from __future__ import annotations

import json
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from inferd_harness import wait_until
from llm_helpers import LLM_MODEL, add_llm, generation_stats, sse_events, wait_until_idle

MODEL = LLM_MODEL


def stream_completion(server, index, max_tokens):
    body = {"model": MODEL, "prompt": f"Count from {index}: {index}, {index + 1},",
            "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    with requests.post(server.url + "/v1/completions", json=body, stream=True,
                       timeout=300) as response:
        assert response.status_code == 200, response.text
        events = list(sse_events(response))
    assert events[-1] == "[DONE]"
    text = "".join(e["choices"][0]["text"] for e in events[:-1] if e["choices"])
    finish = [e["choices"][0]["finish_reason"] for e in events[:-1] if e["choices"]][-1]
    return text, finish, events[-2]["usage"]


def test_sixteen_concurrent_streams_complete(llm_server):
    max_tokens = 24
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda i: stream_completion(llm_server, i, max_tokens), range(16)))
    for text, finish, usage in results:
        assert text
        if finish == "length":
            assert usage["completion_tokens"] == max_tokens
        else:
            assert finish == "stop" and usage["completion_tokens"] <= max_tokens
    stats = generation_stats(llm_server)
    assert stats["active_sequences"] == 0 and stats["queued"] == 0
    # They ran together: far fewer engine steps than one sequence at a time would need.
    assert stats["decode_steps"] < 16 * max_tokens


def test_a_disconnect_mid_stream_frees_its_sequence(llm_server):
    before = generation_stats(llm_server)
    # Greedy counting goes on for hundreds of tokens (a sampled story may end at once).
    body = json.dumps({"model": MODEL, "prompt": "1, 2, 3, 4,", "max_tokens": 400,
                       "temperature": 0, "stream": True})
    sock = socket.create_connection(("127.0.0.1", llm_server.port))
    sock.sendall((f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {len(body)}\r\n\r\n{body}").encode())
    received = b""
    while received.count(b"data: ") < 3:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the stream"
        received += chunk
    assert generation_stats(llm_server)["active_sequences"] == 1
    sock.close()
    stats = wait_until_idle(llm_server)
    assert stats["active_sequences"] == 0
    assert stats["requests_failed"] == before["requests_failed"] + 1
    # Far from its 400 tokens: the sequence stopped when the client left.
    assert stats["completion_tokens"] - before["completion_tokens"] < 300
    assert llm_server.post("/v1/completions", {"model": MODEL, "prompt": "Hi",
                                               "max_tokens": 2}).status_code == 200


def test_queue_full_answers_429(tmp_path, start_server):
    repo = tmp_path / "repo"
    add_llm(repo, MODEL, parallel=1, extra={"max_queue": 1})
    server = start_server(repo)
    # Greedy counting runs its 200 tokens (a sampled story sometimes ends at its first token,
    # and then nothing waits).
    body = {"model": MODEL, "prompt": "1, 2, 3, 4,", "max_tokens": 200, "temperature": 0}

    def generate():
        return server.post("/v1/completions", body, timeout=120)

    with ThreadPoolExecutor(max_workers=2) as pool:
        running = pool.submit(generate)  # takes the one sequence
        wait_until(lambda: generation_stats(server)["active_sequences"] == 1, 30,
                   lambda: f"the first request runs (stats {generation_stats(server)})")
        queued = pool.submit(generate)  # waits in the queue of one
        wait_until(lambda: generation_stats(server)["queued"] == 1, 30,
                   lambda: f"the second request is queued (stats {generation_stats(server)})")
        refused = generate()
        assert refused.status_code == 429, refused.text
        assert "queue is full" in refused.json()["error"]["message"]
        assert refused.headers.get("Retry-After") == "1"
        assert running.result().status_code == 200
        assert queued.result().status_code == 200


def test_metrics_report_generation(llm_server):
    assert llm_server.post("/v1/completions", {"model": MODEL, "prompt": "Hello",
                                               "max_tokens": 4}).status_code == 200
    text = llm_server.get("/metrics").text
    labels = f'{{model="{MODEL}",version="1"}}'
    for series in ["inferd_llm_completion_tokens_total", "inferd_llm_prompt_tokens_total",
                   "inferd_llm_time_to_first_token_seconds_count",
                   "inferd_llm_time_per_output_token_seconds_sum",
                   "inferd_llm_active_sequences", "inferd_llm_queued_requests",
                   "inferd_llm_kv_cache_used_tokens", "inferd_llm_kv_cache_tokens"]:
        assert series + labels in text, series
    completion_line = [l for l in text.splitlines()
                       if l.startswith("inferd_llm_completion_tokens_total" + labels)][0]
    assert float(completion_line.split()[-1]) >= 4
    stats = generation_stats(llm_server)
    assert stats["kv_cache_tokens"] == 512 * 16
    assert stats["time_to_first_token_ms_mean"] > 0


def test_llms_and_classic_models_share_one_budget(tmp_path, start_server, torch_ref):
    from inferd_harness import make_repository, sample_request

    repo = make_repository(tmp_path / "repo", {"mlp_scorer": "mlp_scorer", "digits": "digits"})
    # Two language models whose footprint (weights ~98 MB + KV) fits the budget only one at a
    # time; different contexts, so they are two engines.
    add_llm(repo, "chat_a", parallel=2, extra={"context_length": 256}, lazy=True)
    add_llm(repo, "chat_b", parallel=2, extra={"context_length": 384}, lazy=True)
    server = start_server(repo, "--memory-budget", "cpu=190MiB")
    mlp = sample_request("mlp_scorer")
    for round_ in range(2):
        for name in ("chat_a", "chat_b"):
            response = server.post("/v1/completions", {"model": name, "prompt": "Hello",
                                                       "max_tokens": 4, "temperature": 0})
            assert response.status_code == 200, (round_, name, response.text)
            assert server.post("/v2/models/mlp_scorer/infer", mlp).status_code == 200
            assert server.post("/v2/models/digits/infer",
                               sample_request("digits")).status_code == 200
    counters = server.get("/v2/repository/stats").json()["counters"]
    # chat_a, chat_b, chat_a, chat_b: each load after the first evicts the other.
    assert counters["evictions"] >= 3, counters
    assert counters["reloads"] >= 2, counters
