"""Triton's own Python client (tritonclient from PyPI) against inferd, over HTTP (binary
tensors, JSON tensors) and gRPC: health, metadata, config, statistics, inference, streaming."""

from __future__ import annotations

import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from inferd_harness import ATOL, DEMO_METADATA


@pytest.fixture(scope="module")
def http_client(demo_server):
    client = httpclient.InferenceServerClient(f"127.0.0.1:{demo_server.port}")
    yield client
    client.close()


@pytest.fixture(scope="module")
def grpc_client(demo_server):
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{demo_server.grpc_port}")
    yield client
    client.close()


def rows(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 256)).astype(np.float32)


@pytest.mark.parametrize("binary", [True, False])
def test_http_infer(http_client, torch_ref, binary):
    x = rows(3, 11)
    inp = httpclient.InferInput("features", list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=binary)
    out = httpclient.InferRequestedOutput("score", binary_data=binary)
    result = http_client.infer("mlp_scorer", [inp], outputs=[out], request_id="t-1")
    assert result.get_response()["id"] == "t-1"
    np.testing.assert_allclose(result.as_numpy("score"), torch_ref.run("mlp_scorer", x), atol=ATOL)


def test_http_infer_without_requested_outputs(http_client, torch_ref):
    x = rows(1, 12)
    inp = httpclient.InferInput("features", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    result = http_client.infer("mlp_scorer", [inp])
    np.testing.assert_allclose(result.as_numpy("score"), torch_ref.run("mlp_scorer", x), atol=ATOL)


def test_http_health_and_metadata(http_client):
    assert http_client.is_server_live() and http_client.is_server_ready()
    assert http_client.is_model_ready("mlp_scorer")
    assert http_client.get_server_metadata()["name"] == "inferd"
    meta = http_client.get_model_metadata("mlp_scorer")
    assert meta["inputs"][0]["name"] == "features"
    index = http_client.get_model_repository_index()
    assert {m["name"] for m in index} >= {"mlp_scorer", "resnet18"}
    stats = http_client.get_inference_statistics("mlp_scorer")
    assert stats["model_stats"][0]["name"] == "mlp_scorer"


def test_http_error_is_raised_with_message(http_client):
    inp = httpclient.InferInput("features", [1, 3], "FP32")
    inp.set_data_from_numpy(np.zeros((1, 3), np.float32))
    with pytest.raises(InferenceServerException) as error:
        http_client.infer("mlp_scorer", [inp])
    assert "shape [1,3]" in str(error.value)


def test_grpc_infer(grpc_client, torch_ref):
    x = rows(2, 13)
    inp = grpcclient.InferInput("features", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    result = grpc_client.infer("mlp_scorer", [inp],
                               outputs=[grpcclient.InferRequestedOutput("score")],
                               request_id="g-7")
    assert result.get_response().id == "g-7"
    np.testing.assert_allclose(result.as_numpy("score"), torch_ref.run("mlp_scorer", x), atol=ATOL)


def test_grpc_async_infer(grpc_client, torch_ref):
    x = rows(1, 14)
    inp = grpcclient.InferInput("features", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    done: queue.Queue = queue.Queue()
    grpc_client.async_infer("mlp_scorer", [inp], callback=lambda result, error: done.put((result, error)))
    result, error = done.get(timeout=60)
    assert error is None
    np.testing.assert_allclose(result.as_numpy("score"), torch_ref.run("mlp_scorer", x), atol=ATOL)


def test_grpc_stream_infer(grpc_client, torch_ref):
    answers: queue.Queue = queue.Queue()
    grpc_client.start_stream(callback=lambda result, error: answers.put((result, error)))
    try:
        inputs = {}
        for i in range(4):
            x = rows(1, 20 + i)
            inp = grpcclient.InferInput("features", list(x.shape), "FP32")
            inp.set_data_from_numpy(x)
            grpc_client.async_stream_infer("mlp_scorer", [inp], request_id=str(i))
            inputs[str(i)] = x
        for _ in range(4):
            result, error = answers.get(timeout=60)
            assert error is None
            x = inputs.pop(result.get_response().id)
            np.testing.assert_allclose(result.as_numpy("score"), torch_ref.run("mlp_scorer", x),
                                       atol=ATOL)
    finally:
        grpc_client.stop_stream()


def test_grpc_health_metadata_config_stats(grpc_client):
    assert grpc_client.is_server_live() and grpc_client.is_server_ready()
    assert grpc_client.is_model_ready("resnet18")
    assert grpc_client.get_server_metadata().name == "inferd"
    meta = grpc_client.get_model_metadata("resnet18", as_json=True)
    assert meta["inputs"][0]["shape"] == ["-1", "3", "224", "224"]
    config = grpc_client.get_model_config("mlp_scorer", as_json=True)["config"]
    assert config["name"] == "mlp_scorer" and config["input"][0]["data_type"] == "TYPE_FP32"
    stats = grpc_client.get_inference_statistics("mlp_scorer", as_json=True)
    assert stats["model_stats"][0]["name"] == "mlp_scorer"
    index = grpc_client.get_model_repository_index(as_json=True)
    assert {m["name"] for m in index["models"]} >= {"mlp_scorer", "resnet18"}


def _config_facts(config: dict) -> dict:
    """What Triton's clients read from a model config, with gRPC's JSON (int64 as strings,
    defaults left out) and HTTP's (numbers, every field) brought to one form."""
    def tensors(key):
        return [(t["name"], t["data_type"], [int(d) for d in t.get("dims", [])])
                for t in config.get(key, [])]
    batching = config.get("dynamic_batching")
    return {
        "name": config["name"], "platform": config["platform"], "backend": config["backend"],
        "max_batch_size": int(config.get("max_batch_size", 0)),
        "input": tensors("input"), "output": tensors("output"),
        "dynamic_batching": None if batching is None else (
            [int(s) for s in batching.get("preferred_batch_size", [])],
            int(batching.get("max_queue_delay_microseconds", 0))),
        "instance_group": [(g.get("name"), g.get("kind", "KIND_AUTO"), int(g.get("count", 0)))
                           for g in config.get("instance_group", [])],
        "parameters": {k: v.get("string_value", "") for k, v in
                       config.get("parameters", {}).items()},
    }


@pytest.mark.parametrize("model", ["mlp_scorer", "resnet18", "text_classifier", "digits"])
def test_http_config_matches_grpc_config(http_client, grpc_client, model):
    http = http_client.get_model_config(model)
    grpc = grpc_client.get_model_config(model, as_json=True)["config"]
    assert _config_facts(http) == _config_facts(grpc)
    expected = DEMO_METADATA[model]
    assert http["max_batch_size"] == expected["max_batch_size"]
    # Triton's config gives dims without the batch dimension, and TYPE_ names.
    assert [(t["name"], "TYPE_" + t["datatype"], t["shape"][1:]) for t in expected["inputs"]] == \
        [(t["name"], t["data_type"], t["dims"]) for t in http["input"]]
    assert http["instance_group"][0]["kind"] == "KIND_CPU"


def test_http_config_of_unknown_model_raises(http_client):
    with pytest.raises(InferenceServerException) as error:
        http_client.get_model_config("no_such_model")
    assert "no_such_model" in str(error.value)


def test_grpc_errors_carry_status_and_message(grpc_client):
    inp = grpcclient.InferInput("features", [1, 3], "FP32")
    inp.set_data_from_numpy(np.zeros((1, 3), np.float32))
    with pytest.raises(InferenceServerException) as error:
        grpc_client.infer("mlp_scorer", [inp])
    assert error.value.status() == "StatusCode.INVALID_ARGUMENT"
    assert "shape [1,3]" in error.value.message()
    with pytest.raises(InferenceServerException) as error:
        grpc_client.get_model_metadata("no_such_model")
    assert error.value.status() == "StatusCode.NOT_FOUND"
    with pytest.raises(InferenceServerException) as error:
        grpc_client.load_model("no_such_model")
    assert error.value.status() == "StatusCode.NOT_FOUND"
