"""Lazy loading: listed but loaded on the first request; concurrent first requests cause
one load; the wait is bounded by the request's timeout; idle models are unloaded."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import requests

from inferd_harness import assert_error, sample_request
from lifecycle_helpers import assert_sample_output, copy_model, infer, lifecycle, state, wait_for


def test_lazy_model_loads_once_on_concurrent_first_requests(start_server, tmp_path):
    copy_model(tmp_path / "repo", "lazy", "digits", extra_config="load: lazy\n")
    server = start_server(tmp_path / "repo")
    assert state(server, "lazy", 1)["state"] == "UNLOADED"
    # Metadata does not need the model in memory.
    assert server.get("/v2/models/lazy").json()["versions"] == ["1"]
    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda _: infer(server, "lazy", "digits"), range(8)))
    for resp in responses:
        assert_sample_output(resp, "digits")
    assert state(server, "lazy", 1)["state"] == "READY"
    [row] = lifecycle(server)["versions"]
    assert row["loads"] == 1, row
    assert row["requests"] == 8, row


def test_lazy_flag_makes_every_model_lazy_and_every_protocol_loads_it(start_server, tmp_path):
    copy_model(tmp_path / "repo", "digits", "digits")
    server = start_server(tmp_path / "repo", "--lazy-load")
    assert state(server, "digits", 1)["state"] == "UNLOADED"
    # POST /predict and TF-Serving load it too.
    x = sample_request("digits")["inputs"][0]["data"][:64]
    resp = server.post("/predict", {"input": x})
    assert resp.status_code == 200, resp.text
    assert len(resp.json()["output"]) == 10
    resp = server.post("/v1/models/digits:predict", {"instances": [x]})
    assert resp.status_code == 200, resp.text


def test_wait_for_a_lazy_load_is_bounded_by_the_request_timeout(start_server, tmp_path):
    copy_model(tmp_path / "repo", "big", "resnet18", extra_config="load: lazy\n")
    server = start_server(tmp_path / "repo")
    body = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 3, 224, 224],
                        "data": [0.0] * (3 * 224 * 224)}]}
    resp = requests.post(server.url + "/v2/models/big/infer", data=json.dumps(body),
                         headers={"Content-Type": "application/json",
                                  "Inference-Timeout-Us": "1000"}, timeout=60)
    assert_error(resp, 504, "still loading", "timeout")
    # The load goes on, and a request without a deadline gets the model.
    resp = server.post("/v2/models/big/infer", body)
    assert resp.status_code == 200, resp.text


def test_idle_model_is_unloaded_and_reloads_on_its_next_request(start_server, tmp_path):
    copy_model(tmp_path / "repo", "idle", "digits", extra_config="idle_unload_s: 1\n")
    server = start_server(tmp_path / "repo")
    assert state(server, "idle", 1)["state"] == "READY"
    wait_for(lambda: state(server, "idle", 1)["state"] == "UNLOADED", timeout_s=10,
             what="the idle unload")
    assert "idle" in state(server, "idle", 1)["reason"]
    assert_sample_output(infer(server, "idle", "digits"), "digits")
    counters = lifecycle(server)["counters"]
    assert counters["idle_unloads"] >= 1 and counters["reloads"] >= 1, counters
