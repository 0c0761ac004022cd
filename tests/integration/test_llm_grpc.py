"""Streaming generation over gRPC as Triton serves language models (decoupled responses on
ModelStreamInfer, the vLLM backend's text_input / stream / text_output tensors), driven by
Triton's own client: the streamed text equals the non-streamed generate's, every response
says whether it is the last, and a cancelled stream frees its sequence."""

from __future__ import annotations

import json
import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from llm_helpers import LLM_MODEL, generation_stats, wait_until_idle

MODEL = LLM_MODEL
PROMPT = "The three primary colors are"


def inputs(prompt: str, stream: bool, **sampling):
    text = grpcclient.InferInput("text_input", [1], "BYTES")
    text.set_data_from_numpy(np.array([prompt.encode()], dtype=np.object_))
    flag = grpcclient.InferInput("stream", [1], "BOOL")
    flag.set_data_from_numpy(np.array([stream], dtype=bool))
    params = grpcclient.InferInput("sampling_parameters", [1], "BYTES")
    params.set_data_from_numpy(np.array([json.dumps(sampling).encode()], dtype=np.object_))
    return [text, flag, params]


def final(result) -> bool:
    return result.get_response().parameters["triton_final_response"].bool_param


def collect(client, responses: queue.Queue, timeout: float = 30):
    """(text pieces, last result) of one request, reading until its final response."""
    pieces = []
    while True:
        result, error = responses.get(timeout=timeout)
        assert error is None, error
        pieces.append(result.as_numpy("text_output")[0].decode())
        if final(result):
            return pieces, result


@pytest.fixture
def stream(llm_server):
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{llm_server.grpc_port}")
    responses: queue.Queue = queue.Queue()
    client.start_stream(callback=lambda result, error: responses.put((result, error)))
    yield client, responses
    client.stop_stream(cancel_requests=True)
    client.close()


def test_streamed_text_equals_the_non_streamed_generate(llm_server, stream):
    client, responses = stream
    sampling = {"temperature": 0, "max_tokens": 12, "cache_prompt": False}
    whole = llm_server.post(f"/v2/models/{MODEL}/generate",
                            {"text_input": PROMPT, "parameters": sampling})
    assert whole.status_code == 200, whole.text
    client.async_stream_infer(MODEL, inputs(PROMPT, True, **sampling), request_id="s-1")
    pieces, last = collect(client, responses)
    assert len(pieces) > 1  # one response per piece of text, not one at the end
    assert "".join(pieces) == whole.json()["text_output"]
    response = last.get_response()
    assert response.id == "s-1" and response.model_name == MODEL
    assert response.parameters["completion_tokens"].int64_param == 12
    assert response.parameters["finish_reason"].string_param == "length"
    # Without stream: one response, final, the prompt before the text (as the vLLM backend).
    client.async_stream_infer(MODEL, inputs(PROMPT, False, **sampling), request_id="w-1")
    pieces, _ = collect(client, responses)
    assert pieces == [PROMPT + whole.json()["text_output"]]


def test_errors_arrive_on_the_stream_and_it_goes_on(llm_server, stream):
    client, responses = stream
    client.async_stream_infer(MODEL, inputs(PROMPT, True, temperature=9))
    result, error = responses.get(timeout=30)
    assert result is None and "'temperature' must be a number in [0, 2]" in str(error)
    deep = inputs(PROMPT, True)
    deep[2].set_data_from_numpy(np.array(
        [b'{"stop": ' + b"[" * 1000 + b"]" * 1000 + b"}"], dtype=np.object_))
    client.async_stream_infer(MODEL, deep)
    result, error = responses.get(timeout=30)
    assert result is None and "deeper than 64 levels" in str(error)
    client.async_stream_infer(MODEL, inputs(PROMPT, True, temperature=0, max_tokens=2))
    pieces, _ = collect(client, responses)
    assert "".join(pieces)


def test_a_cancelled_stream_frees_its_sequence(llm_server):
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{llm_server.grpc_port}")
    responses: queue.Queue = queue.Queue()
    client.start_stream(callback=lambda result, error: responses.put((result, error)))
    before = generation_stats(llm_server)
    # Greedy counting goes on for hundreds of tokens, which take seconds at one thread: the
    # sequence is still running when cancelled.
    client.async_stream_infer(MODEL, inputs("1, 2, 3, 4,", True, temperature=0, max_tokens=400))
    result, error = responses.get(timeout=30)
    assert error is None and not final(result)
    assert generation_stats(llm_server)["active_sequences"] == 1
    client.stop_stream(cancel_requests=True)
    client.close()
    stats = wait_until_idle(llm_server)
    assert stats["active_sequences"] == 0, stats
    assert stats["requests_failed"] == before["requests_failed"] + 1  # ended as cancelled
    assert stats["completion_tokens"] - before["completion_tokens"] < 300, stats
    assert llm_server.post(f"/v2/models/{MODEL}/generate",
                           {"text_input": "Hi", "parameters": {"max_tokens": 2}}).status_code == 200
