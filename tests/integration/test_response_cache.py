"""The response cache (config.yaml `response_cache:`): a repeated request is answered from
memory with the very outputs the model gave, counted as hits and misses in the statistics
(KServe and gRPC) and in /metrics; the cache stays under its byte bound; and after a reload
with new weights the next answer is the new model's, never the cached one."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch
from prometheus_client.parser import text_string_to_metric_families

from inferd_harness import DEMO_MODELS, assert_close, output_array
from tools.grpc_stubs import pb, pb_grpc

CACHE_BYTES = 1 << 20


def _repository(tmp_path, max_bytes: int = CACHE_BYTES):
    repo = tmp_path / "repo"
    shutil.copytree(DEMO_MODELS / "digits", repo / "digits")
    with open(repo / "digits" / "config.yaml", "a") as config:
        config.write(f"response_cache: {{max_bytes: {max_bytes}}}\n")
    return repo


def _pixels(seed: int, rows: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 17, (rows, 64)).astype(np.float32)


def _infer(server, pixels: np.ndarray):
    resp = server.post("/v2/models/digits/infer", {"inputs": [{
        "name": "pixels", "datatype": "FP32", "shape": list(pixels.shape),
        "data": pixels.reshape(-1).tolist()}]})
    assert resp.status_code == 200, resp.text
    return output_array(resp.json(), "probabilities")


def _stats(server) -> dict:
    resp = server.get("/v2/models/digits/stats")
    assert resp.status_code == 200, resp.text
    return resp.json()["model_stats"][0]


def _cache_lookups(server) -> dict:
    found = {}
    for family in text_string_to_metric_families(server.get("/metrics").text):
        for sample in family.samples:
            if sample.name == "inferd_response_cache_lookups_total" and \
                    sample.labels.get("model") == "digits":
                found[sample.labels["result"]] = sample.value
    return found


def test_a_repeated_request_is_a_hit_with_the_models_own_answer(start_server, tmp_path,
                                                                 torch_ref):
    server = start_server(_repository(tmp_path))
    pixels = _pixels(1, rows=3)
    want = torch_ref.run("digits", pixels)
    first = _infer(server, pixels)
    second = _infer(server, pixels)
    assert_close(first, want)
    np.testing.assert_array_equal(second, first)  # the cached bytes, exactly
    stats = _stats(server)
    assert stats["inference_stats"]["cache_miss"]["count"] == 1
    assert stats["inference_stats"]["cache_hit"]["count"] == 1
    assert stats["inference_stats"]["success"]["count"] == 2
    assert stats["inference_count"] == 3, "the hit ran the model again"
    assert stats["response_cache"]["entries"] == 1
    assert 0 < stats["response_cache"]["bytes"] <= CACHE_BYTES
    assert _cache_lookups(server) == {"hit": 1.0, "miss": 1.0}

    # Another input is a miss; the same rows in another request shape are another key too.
    _infer(server, _pixels(2, rows=3))
    _infer(server, pixels[:1])
    assert _stats(server)["inference_stats"]["cache_miss"]["count"] == 3

    # gRPC reads the same counters (Triton's InferStatistics fields 7 and 8).
    import grpc
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        reply = stub.ModelStatistics(pb.ModelStatisticsRequest(name="digits"), timeout=10)
    infer_stats = reply.model_stats[0].inference_stats
    assert infer_stats.cache_hit.count == 1 and infer_stats.cache_miss.count == 3


def test_the_cache_stays_under_its_bound(start_server, tmp_path):
    max_bytes = 64 << 10  # the smallest bound: each 40-byte answer is charged ~330 bytes
    server = start_server(_repository(tmp_path, max_bytes))
    for seed in range(400):
        _infer(server, _pixels(100 + seed))
    held = _stats(server)["response_cache"]
    assert held["max_bytes"] == max_bytes
    assert 0 < held["bytes"] <= max_bytes
    assert held["evictions"] > 0
    assert held["entries"] < 400
    # The most recent answer is still there; the first one was evicted.
    before = _stats(server)["inference_stats"]["cache_hit"]["count"]
    _infer(server, _pixels(100 + 399))
    _infer(server, _pixels(100))
    after = _stats(server)["inference_stats"]
    assert after["cache_hit"]["count"] == before + 1


def test_after_a_reload_with_new_weights_the_answer_is_the_new_models(start_server, tmp_path,
                                                                      torch_ref):
    repo = _repository(tmp_path)
    server = start_server(repo)
    pixels = _pixels(7, rows=2)
    old = _infer(server, pixels)
    assert_close(_infer(server, pixels), old)  # cached

    # The same version folder, new weights: every parameter halved.
    path = repo / "digits" / "1" / "model.pt"
    module = torch.jit.load(str(path), map_location="cpu")
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.mul_(0.5)
    torch.jit.save(module, str(path))
    with torch.inference_mode():
        want = module.eval()(torch.from_numpy(pixels)).numpy()
    assert np.abs(want - old).max() > 1e-3, "the new weights should change the answer"

    # The load API reloads a ready model when its config.yaml changed (a new comment will
    # do); the changed file then gets a new engine (its digest differs).
    with open(repo / "digits" / "config.yaml", "a") as config:
        config.write("# weights halved\n")
    resp = server.post("/v2/repository/models/digits/load", raw="")
    assert resp.status_code == 200, resp.text
    assert_close(_infer(server, pixels), want, what="the answer after the reload")
    stats = _stats(server)
    assert stats["inference_stats"]["cache_hit"]["count"] == 0, "a fresh version starts empty"


@pytest.mark.parametrize("cache, fragment", [
    ("{}", "response_cache.max_bytes: is required"),
    ("{max_bytes: 100}", "response_cache.max_bytes: must be in 65536.."),
    ("{max_bytes: 1048576, ttl_s: 5}", "response_cache.ttl_s: unknown field"),
])
def test_a_bad_cache_config_leaves_the_model_unavailable_naming_the_field(
        start_server, tmp_path, cache, fragment):
    repo = tmp_path / "repo"
    shutil.copytree(DEMO_MODELS / "digits", repo / "digits")
    with open(repo / "digits" / "config.yaml", "a") as config:
        config.write(f"response_cache: {cache}\n")
    server = start_server(repo)
    index = server.post("/v2/repository/index", raw="").json()
    entry = next(e for e in index if e["name"] == "digits")
    assert entry["state"] == "UNAVAILABLE", entry
    assert fragment in entry["reason"], entry
