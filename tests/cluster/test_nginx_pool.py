"""deploy/nginx/render-pool's configuration in Debian's nginx, piece by piece: gRPC passes
through to the replicas (HTTP/2), a model that one replica cannot serve (503) is retried on
another, a killed replica costs no request, and bodies beyond inferd's limit are refused
by nginx itself (413)."""

from __future__ import annotations

import grpc
import numpy as np
import requests

from fleet import NginxPool, Replica
from inferd_harness import make_repository
from lifecycle_helpers import assert_sample_output, sample_request


def _pool(fleet, tmp_path, repos, *extra, balance="least_conn"):
    replicas = [Replica(f"replica-{i}", repo, tmp_path, []) for i, repo in enumerate(repos)]
    fleet["replicas"].extend(replicas)
    for r in replicas:
        r.start()
    pool = NginxPool(tmp_path / "nginx")
    fleet["pools"].append(pool)
    pool.start(replicas, balance, *extra)
    return replicas, pool


def test_grpc_passes_through_to_every_replica(fleet, tmp_path, nginx_binary, torch_ref):
    from tools.grpc_stubs import pb, pb_grpc
    repo = make_repository(tmp_path / "repo", {"mlp_scorer": "mlp_scorer"})
    replicas, pool = _pool(fleet, tmp_path, [repo, repo])
    rows = np.random.default_rng(3).standard_normal((4, 256)).astype(np.float32)
    want = torch_ref.run("mlp_scorer", rows)
    with grpc.insecure_channel(f"127.0.0.1:{pool.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        assert stub.ServerReady(pb.ServerReadyRequest(), timeout=10).ready
        for i in range(6):
            request = pb.ModelInferRequest(model_name="mlp_scorer", id=f"g-{i}")
            request.inputs.add(name="features", datatype="FP32", shape=[4, 256])
            request.raw_input_contents.append(rows.astype("<f4").tobytes())
            response = stub.ModelInfer(request, timeout=30)
            got = np.frombuffer(response.raw_output_contents[0], "<f4").reshape(4, 1)
            np.testing.assert_allclose(got, want, atol=1e-4)
    # least_conn spread the calls: both replicas answered some (their own request counters).
    served = [requests.get(r.url + "/v2/models/mlp_scorer/stats", timeout=10).json()
              ["model_stats"][0]["inference_count"] for r in replicas]
    assert all(n > 0 for n in served), served


def test_a_503_from_one_replica_is_retried_on_another(fleet, tmp_path, nginx_binary):
    good = make_repository(tmp_path / "good", {"digits": "digits"})
    broken = make_repository(tmp_path / "broken", {"digits": "digits"})
    (broken / "digits" / "1" / "model.pt").write_bytes(b"not a model")  # UNAVAILABLE: 503
    replicas, pool = _pool(fleet, tmp_path, [broken, good])
    assert requests.post(replicas[0].url + "/v2/models/digits/infer",
                         json=sample_request("digits"), timeout=30).status_code == 503
    with requests.Session() as session:
        for _ in range(10):
            resp = session.post(pool.url + "/v2/models/digits/infer",
                                json=sample_request("digits"), timeout=30)
            assert_sample_output(resp, "digits")


def test_a_killed_replica_costs_no_request(fleet, tmp_path, nginx_binary):
    repo = make_repository(tmp_path / "repo", {"digits": "digits"})
    replicas, pool = _pool(fleet, tmp_path, [repo, repo])
    with requests.Session() as session:
        for _ in range(4):  # keep-alive connections to both replicas in nginx's cache
            assert_sample_output(session.post(pool.url + "/v2/models/digits/infer",
                                              json=sample_request("digits"), timeout=30), "digits")
        replicas[0].kill()
        for _ in range(10):
            resp = session.post(pool.url + "/v2/models/digits/infer",
                                json=sample_request("digits"), timeout=30)
            assert_sample_output(resp, "digits")
            assert replicas[1].http_address in resp.headers["X-Inferd-Upstream"]


def test_bodies_over_the_limit_are_refused_by_nginx(fleet, tmp_path, nginx_binary):
    repo = make_repository(tmp_path / "repo", {"digits": "digits"})
    replicas, pool = _pool(fleet, tmp_path, [repo], "--max-body", "1m")
    resp = requests.post(pool.url + "/v2/models/digits/infer", data=b"x" * (2 << 20),
                         headers={"Content-Type": "application/json"}, timeout=30)
    assert resp.status_code == 413
    assert "X-Inferd-Upstream" not in resp.headers  # never reached a replica


# Regression (issue 30): keyless replicas on loopback answered management from any client
# nginx relayed (nginx connects from loopback), so anyone who reached nginx could unload.
def test_management_through_the_pool_needs_credentials(fleet, tmp_path, nginx_binary):
    from tools.grpc_stubs import pb, pb_grpc
    repo = make_repository(tmp_path / "repo", {"digits": "digits"})
    replicas, pool = _pool(fleet, tmp_path, [repo])
    unload = pool.url + "/v2/repository/models/digits/unload"
    resp = requests.post(unload, json={}, timeout=30)
    assert resp.status_code == 401, resp.text
    assert "API key" in resp.json()["error"]
    assert "X-Inferd-Upstream" not in resp.headers  # nginx answered
    assert requests.post(pool.url + "/v2/logging", json={"log_level": "debug"},
                         timeout=30).status_code == 401
    # With a header nginx passes it on; the keyless replica sees X-Forwarded-For and refuses.
    resp = requests.post(unload, json={}, headers={"Authorization": "Bearer anything"},
                         timeout=30)
    assert resp.status_code == 403, resp.text
    assert "--trusted-proxies" in resp.json()["error"]
    with grpc.insecure_channel(f"127.0.0.1:{pool.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        try:
            stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="digits"),
                                       timeout=30)
            raise AssertionError("a relayed gRPC unload was allowed")
        except grpc.RpcError as error:
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error
    # Nothing was unloaded, inference through the pool works, a local client still manages.
    assert requests.get(replicas[0].url + "/v2/models/digits/ready", timeout=30).status_code == 200
    assert_sample_output(requests.post(pool.url + "/v2/models/digits/infer",
                                       json=sample_request("digits"), timeout=30), "digits")
    assert requests.post(replicas[0].url + "/v2/repository/index", json={},
                         timeout=30).status_code == 200
