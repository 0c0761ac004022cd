"""What one gRPC client can make the server hold (issue 30, "unbounded memory from one gRPC
stream"): a request id longer than the server's limit (256 bytes) is refused before it is
copied into any response, and a ModelStreamInfer client that does not read its responses is
cut (RESOURCE_EXHAUSTED, its generations cancelled) instead of having them queued without
bound, while other clients go on being served."""

from __future__ import annotations

import json

import grpc
import numpy as np
import pytest

from inferd_harness import InferdServer, make_repository
from llm_helpers import LLM_MODEL, add_llm, generation_stats
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
