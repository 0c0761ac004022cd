"""POST /v1/embeddings through the llama backend: vectors equal llama.cpp's own (through
llama-cpp-python, `Llama(embedding=True).embed()`) at the same settings, the OpenAI client
unchanged (it asks for base64 by default), bounded inputs, and clear refusals for models that
do not compute embeddings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_helpers import SETTINGS, add_llm, smollm2_gguf

MODEL = "embedder"
PLAIN = "chat_only"  # a llama model without parameters.embeddings
TEXTS = ["The quick brown fox jumps over the lazy dog.", "Paris is the capital of France.",
         "def add(a, b): return a + b"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from inferd_harness import InferdServer

    repo = tmp_path_factory.mktemp("embed_repo")
    add_llm(repo, MODEL, parallel=2, extra={"embeddings": "true", "pooling": "mean"})
    add_llm(repo, PLAIN, parallel=1, lazy=True)
    server = InferdServer(repo, repo.parent / "inferd.log", name="embed_server").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def reference():
    """llama.cpp's embeddings through llama-cpp-python, at the server's settings: one
    thread, a 512-token context and batch, no flash attention, mean pooling."""
    import llama_cpp

    return llama_cpp.Llama(model_path=str(smollm2_gguf()), embedding=True,
                           pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                           n_ctx=SETTINGS["batch_size"], n_batch=SETTINGS["batch_size"],
                           n_ubatch=SETTINGS["batch_size"], n_threads=SETTINGS["threads"],
                           n_threads_batch=SETTINGS["threads"], flash_attn=False, verbose=False)


def embed(server, input, **extra):
    return server.post("/v1/embeddings", {"model": MODEL, "input": input, **extra})


def test_embeddings_equal_llama_cpps(server, reference):
    response = embed(server, TEXTS, encoding_format="float")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["object"] == "list" and body["model"] == MODEL
    assert [item["index"] for item in body["data"]] == [0, 1, 2]
    # One text per call, as the server embeds them (one input per engine call).
    want = [reference.embed(text, normalize=True) for text in TEXTS]
    for item, expected in zip(body["data"], want):
        got = item["embedding"]
        assert item["object"] == "embedding"
        assert len(got) == len(expected) == reference.n_embd()
        assert abs(math.sqrt(sum(v * v for v in got)) - 1) < 1e-5
        assert max(abs(a - b) for a, b in zip(got, expected)) < 1e-4
    tokens = sum(len(reference.tokenize(t.encode(), add_bos=True, special=True)) for t in TEXTS)
    assert body["usage"] == {"prompt_tokens": tokens, "total_tokens": tokens}
    # A single string is a list of one; different texts give different vectors.
    single = embed(server, TEXTS[1]).json()["data"]
    assert len(single) == 1 and single[0]["embedding"] == body["data"][1]["embedding"]
    assert body["data"][0]["embedding"] != body["data"][1]["embedding"]


def test_openai_client_embeddings_create(server):
    import openai

    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    floats = embed(server, TEXTS[:2], encoding_format="float").json()["data"]
    # The client asks for base64 unless told otherwise, and decodes it back to floats.
    for encoding in ({}, {"encoding_format": "float"}):
        reply = client.embeddings.create(model=MODEL, input=TEXTS[:2], **encoding)
        # The same float32 values either way (JSON's text reads back as the same float32).
        for got, want in zip(reply.data, floats, strict=True):
            assert np.array_equal(np.float32(got.embedding), np.float32(want["embedding"]))
        assert reply.usage.prompt_tokens > 0
    with pytest.raises(openai.BadRequestError) as error:
        client.embeddings.create(model=PLAIN, input="hi")
    assert "parameters.embeddings: true" in str(error.value)


def test_bounded_inputs_and_clear_errors(server):
    cases = [
        ({"input": ["x"] * 513}, 400, "at most 512 texts"),
        ({"input": "hello " * 600}, 400, "tokens per input (parameters.ubatch_size)"),
        ({"input": []}, 400, "must not be empty"),
        ({"input": [[1, 2, 3]]}, 400, "token ids"),
        ({"input": "hi", "encoding_format": "int8"}, 400, "base64"),
        ({"input": "hi", "dimensions": 3}, 400, "this model's embeddings have 576"),
        ({"input": "hi", "model": PLAIN}, 400, "parameters.embeddings: true"),
        ({"input": "hi", "model": "nope"}, 404, "nope"),
    ]
    for body, status, message in cases:
        response = server.post("/v1/embeddings", {"model": MODEL, **body})
        assert response.status_code == status, (body, response.text)
        error = response.json()["error"]
        assert message in error["message"], (body, error)
        assert error["type"] in ("invalid_request_error", "not_found_error")
    # The model without embeddings was refused from its config: it was never loaded for it.
    assert server.get(f"/v2/models/{PLAIN}/ready").status_code != 200
    assert embed(server, "still serving").status_code == 200
    generation = server.get(f"/v2/models/{MODEL}/stats").json()["model_stats"][0]["generation"]
    assert generation["embedding_requests"] >= 1 and generation["embedding_tokens"] > 0
