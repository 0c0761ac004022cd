"""What one gRPC client can make the server hold (issue 30, "unbounded memory from one gRPC
stream"): a request id longer than the server's limit (256 bytes) is refused before it is
copied into any response, and a ModelStreamInfer client that does not read its responses is
cut (RESOURCE_EXHAUSTED, its generations cancelled) instead of having them queued without
bound, while other clients go on being served."""

from __future__ import annotations

import json
import threading
import time

import grpc
import numpy as np
import pytest

from inferd_harness import InferdServer, make_repository
from llm_helpers import LLM_MODEL, add_llm, generation_stats, wait_until_idle
from tools.grpc_stubs import pb, pb_grpc

MAX_ID = 256  # kMaxClientIdBytes


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("stream_limits")
    repo = make_repository(root / "repo", {"mlp_scorer": "mlp_scorer"})
    add_llm(repo, LLM_MODEL, parallel=16)
    server = InferdServer(repo, root / "inferd.log", name="stream_limits").start()
    yield server
    server.stop()


def mlp_request(request_id: str) -> "pb.ModelInferRequest":
    request = pb.ModelInferRequest(model_name="mlp_scorer", id=request_id)
    request.inputs.add(name="features", datatype="FP32", shape=[1, 256])
    request.raw_input_contents.append(np.zeros((1, 256), "<f4").tobytes())
    return request


def generate_request(request_id: str, prompt: str, max_tokens: int) -> "pb.ModelInferRequest":
    request = pb.ModelInferRequest(model_name=LLM_MODEL, id=request_id)
    request.inputs.add(name="text_input", datatype="BYTES", shape=[1]).contents.bytes_contents \
        .append(prompt.encode())
    request.inputs.add(name="stream", datatype="BOOL", shape=[1]).contents.bool_contents \
        .append(True)
    sampling = json.dumps({"temperature": 0, "max_tokens": max_tokens}).encode()
    request.inputs.add(name="sampling_parameters", datatype="BYTES", shape=[1]).contents \
        .bytes_contents.append(sampling)
    return request


def rss_bytes(server: InferdServer) -> int:
    for line in open(f"/proc/{server.proc.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_an_over_long_request_id_is_refused_naming_the_limit(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        assert stub.ModelInfer(mlp_request("i" * MAX_ID), timeout=30).id == "i" * MAX_ID
        with pytest.raises(grpc.RpcError) as refused:
            stub.ModelInfer(mlp_request("i" * (MAX_ID + 1)), timeout=30)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert f"at most {MAX_ID}" in refused.value.details()

        before = generation_stats(server)
        long_id = "g" * (1 << 20)
        answers = list(stub.ModelStreamInfer(iter([
            mlp_request("i" * (MAX_ID + 1)),
            generate_request(long_id, "Hello", max_tokens=8),
            mlp_request("fine"),
        ]), timeout=60))
    assert len(answers) == 3, [a.error_message for a in answers]
    errors = [a.error_message for a in answers if a.error_message]
    assert len(errors) == 2 and all(f"at most {MAX_ID}" in e for e in errors), errors
    assert [a.infer_response.id for a in answers if not a.error_message] == ["fine"]
    # The generation was never started: refused as the request was read.
    after = generation_stats(server)
    assert after["completion_tokens"] == before["completion_tokens"], (before, after)


def test_a_stream_client_that_does_not_read_is_cut_and_others_are_served(server):
    """A client that keeps its stream open and never reads: its generations' pieces pile up
    until the server's per-stream limit, then it is cut. A small receive window (no BDP
    probing) makes its HTTP/2 flow control stop the server's writes after a few pieces."""
    slow_requests, max_tokens = 8, 400
    wait_until_idle(server)
    before = generation_stats(server)
    rss_before = rss_bytes(server)
    options = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 16 * 1024)]
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}", options=options)
    stub = pb_grpc.GRPCInferenceServiceStub(channel)
    hold_open = threading.Event()

    def requests():
        for i in range(slow_requests):
            yield generate_request(f"slow-{i}", "1, 2, 3, 4,", max_tokens)
        hold_open.wait(120)  # the client's side stays open: only the server can end this

    responses = stub.ModelStreamInfer(requests(), timeout=180)  # never read until the end
    try:
        deadline = time.monotonic() + 60
        while generation_stats(server)["active_sequences"] < slow_requests:
            assert time.monotonic() < deadline, generation_stats(server)
            time.sleep(0.05)
        # Another client is served while the slow one's pieces pile up.
        answer = server.post(f"/v2/models/{LLM_MODEL}/generate",
                             {"text_input": "Hi", "parameters": {"max_tokens": 4}})
        assert answer.status_code == 200, answer.text

        # The slow client is cut: its generations end long before their 400 tokens.
        stats = wait_until_idle(server, seconds=120)
        assert stats["active_sequences"] == 0, stats
        assert stats["requests_failed"] - before["requests_failed"] == slow_requests, stats
        assert stats["completion_tokens"] - before["completion_tokens"] < \
            slow_requests * max_tokens, stats
        grown = rss_bytes(server) - rss_before
        assert grown < 64 << 20, f"the server grew by {grown / 2**20:.0f} MiB"

        # What the client finds once it reads: the pieces it was sent, then the reason.
        with pytest.raises(grpc.RpcError) as cut:
            for _ in responses:
                pass
        assert cut.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, cut.value
        assert "did not read its responses" in cut.value.details()
    finally:
        hold_open.set()
        responses.cancel()
        channel.close()
    assert server.post(f"/v2/models/{LLM_MODEL}/generate",
                       {"text_input": "Hi", "parameters": {"max_tokens": 2}}).status_code == 200
