"""Tenants: a rate limit answers 429 with Retry-After (gRPC RESOURCE_EXHAUSTED with a
retry-after trailer) while other tenants keep serving; the allowed-model list; per-tenant
metrics."""

from __future__ import annotations

import grpc
import numpy as np
import pytest
import requests

from auth_helpers import write_keys
from tools.grpc_stubs import pb, pb_grpc
from inferd_harness import assert_error, sample_request


@pytest.fixture
def keyed(tmp_path, start_server, small_repository):
    keys = write_keys(tmp_path)
    server = start_server(small_repository, "--api-keys-file", str(keys.path))
    return server, keys


def infer(server, key: str, model: str = "mlp_scorer") -> requests.Response:
    return server.post(f"/v2/models/{model}/infer", sample_request(model),
                       headers={"Authorization": f"Bearer {key}"})


def metric(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_rate_limit_gives_429_with_retry_after_and_bob_keeps_serving(keyed):
    server, keys = keyed
    assert infer(server, keys.alice).status_code == 200
    assert infer(server, keys.alice).status_code == 200
    limited = infer(server, keys.alice)
    assert_error(limited, 429, "tenant 'alice'", "rate limit")
    # One token per 100 s: the server says to come back in about that long.
    assert 1 <= int(limited.headers["Retry-After"]) <= 100
    for _ in range(5):
        assert infer(server, keys.bob).status_code == 200
        assert infer(server, keys.app).status_code == 200

    text = server.get("/metrics", headers=keys.header(keys.ops)).text
    assert metric(text, "inferd_tenant_requests_total", tenant="alice", outcome="success") == 2
    assert metric(text, "inferd_tenant_rejections_total", tenant="alice",
                  reason="rate_limit") == 1
    assert metric(text, "inferd_tenant_requests_total", tenant="bob", outcome="success") == 5
    assert metric(text, "inferd_tenant_request_duration_seconds_count", tenant="bob") == 5


def test_grpc_rate_limit_is_resource_exhausted_with_retry_after(keyed):
    server, keys = keyed
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name="mlp_scorer")
        request.inputs.add(name="features", datatype="FP32", shape=[1, 256])
        request.raw_input_contents.append(np.zeros((1, 256), "<f4").tobytes())
        metadata = [("authorization", f"Bearer {keys.alice}")]
        stub.ModelInfer(request, metadata=metadata)
        stub.ModelInfer(request, metadata=metadata)
        with pytest.raises(grpc.RpcError) as limited:
            stub.ModelInfer(request, metadata=metadata)
        assert limited.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        trailers = dict(limited.value.trailing_metadata())
        assert 1 <= int(trailers["retry-after"]) <= 100
        stub.ModelInfer(request, metadata=[("authorization", f"Bearer {keys.bob}")])


def test_allowed_model_list(keyed):
    server, keys = keyed
    assert_error(infer(server, keys.alice, "digits"), 403, "tenant 'alice' may not use model "
                 "'digits'")
    assert_error(server.get("/v2/models/digits", headers=keys.header(keys.alice)), 403)
    assert_error(server.post("/v1/models/digits:predict", {"instances": [[0.0] * 64]},
                             headers=keys.header(keys.alice)), 403)
    # /predict without ?model= could reach any model: a tenant with a list must name one.
    assert_error(server.post("/predict", {"input": [0.0] * 256},
                             headers=keys.header(keys.alice)), 403, "name one")
    assert server.post("/predict?model=mlp_scorer", {"input": [0.0] * 256},
                       headers=keys.header(keys.alice)).status_code == 200
    # A tenant without a list uses every model.
    assert infer(server, keys.bob, "digits").status_code == 200
    text = server.get("/metrics", headers=keys.header(keys.ops)).text
    assert metric(text, "inferd_tenant_rejections_total", tenant="alice",
                  reason="model_not_allowed") == 4
