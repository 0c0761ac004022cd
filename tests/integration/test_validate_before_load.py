"""Cheap checks before expensive work (issues 30 and 31): a request whose tensors do not match
a lazy model's signature is refused without loading the model, over HTTP and gRPC, so no
client can make the server load every lazy model (and evict warm ones) with requests that are
refused anyway. A good request then loads it once."""

from __future__ import annotations

import numpy as np
import pytest

from inferd_harness import sample_request
from lifecycle_helpers import copy_model, lifecycle, state


@pytest.fixture()
def lazy_server(start_server, tmp_path):
    copy_model(tmp_path / "repo", "lazy", "digits", extra_config="load: lazy\n")
    server = start_server(tmp_path / "repo")
    assert state(server, "lazy", 1)["state"] == "UNLOADED"
    return server


def _loads(server) -> int:
    rows = lifecycle(server)["versions"]
    return sum(row["loads"] for row in rows if row["name"] == "lazy")


def test_a_malformed_http_request_does_not_load_a_lazy_model(lazy_server):
    server = lazy_server
    name = sample_request("digits")["inputs"][0]["name"]
    bad_bodies = [
        {"inputs": [{"name": "no_such_input", "datatype": "FP32", "shape": [1, 64],
                     "data": [0.0] * 64}]},
        {"inputs": [{"name": name, "datatype": "FP32", "shape": [1, 3], "data": [0.0] * 3}]},
        {"inputs": [{"name": name, "datatype": "INT8", "shape": [1, 64], "data": [0] * 64}]},
    ]
    for body in bad_bodies:
        refused = server.post("/v2/models/lazy/infer", body)
        assert refused.status_code == 400, refused.text
    refused = server.post("/v1/models/lazy:predict", {"instances": [[0.0] * 3]})
    assert refused.status_code == 400, refused.text
    assert state(server, "lazy", 1)["state"] == "UNLOADED"
    assert _loads(server) == 0
    good = server.post("/v2/models/lazy/infer", sample_request("digits"))
    assert good.status_code == 200, good.text
    assert _loads(server) == 1


def test_a_malformed_grpc_request_does_not_load_a_lazy_model(lazy_server):
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException

    server = lazy_server
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
    name = sample_request("digits")["inputs"][0]["name"]
    wrong_shape = grpcclient.InferInput(name, [1, 3], "FP32")
    wrong_shape.set_data_from_numpy(np.zeros((1, 3), dtype=np.float32))
    with pytest.raises(InferenceServerException) as refused:
        client.infer("lazy", [wrong_shape])
    assert "shape" in str(refused.value)
    assert state(server, "lazy", 1)["state"] == "UNLOADED"
    assert _loads(server) == 0
