"""API keys and roles over HTTP against the real server: no key, a wrong key, an inference key
on management endpoints, a management key; a refused unload leaves the model serving."""

from __future__ import annotations

import sys

import pytest
import requests

from auth_helpers import write_keys
from inferd_harness import REPO_ROOT, assert_error, sample_request

sys.path.insert(0, str(REPO_ROOT / "python"))


@pytest.fixture(scope="module")
def keyed(tmp_path_factory, request):
    from inferd_harness import InferdServer, make_repository
    root = tmp_path_factory.mktemp("auth_http")
    keys = write_keys(root)
    repo = make_repository(root / "repo", {"mlp_scorer": "mlp_scorer", "digits": "digits"})
    server = InferdServer(repo, root / "inferd.log", ["--api-keys-file", str(keys.path)],
                          name="keyed").start()
    yield server, keys
    server.stop()


def infer(server, key: str | None, model: str = "mlp_scorer") -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return server.post(f"/v2/models/{model}/infer", sample_request(model), headers=headers)


def test_health_needs_no_key(keyed):
    server, _ = keyed
    assert server.get("/v2/health/live").status_code == 200
    assert server.get("/v2/health/ready").status_code == 200


def test_no_key_is_401_with_a_bearer_challenge(keyed):
    server, _ = keyed
    resp = infer(server, None)
    assert_error(resp, 401, "needs an API key", "Authorization: Bearer")
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert_error(server.get("/v2"), 401)
    assert_error(server.get("/v2/models/mlp_scorer"), 401)


def test_wrong_key_or_scheme_is_401(keyed):
    server, keys = keyed
    assert_error(infer(server, keys.app + "x"), 401, "not valid")
    resp = server.post("/v2/models/mlp_scorer/infer", sample_request("mlp_scorer"),
                       headers={"Authorization": f"Basic {keys.app}"})
    assert_error(resp, 401, "Bearer <key>")


def test_inference_key_serves_inference_and_metadata(keyed):
    server, keys = keyed
    resp = infer(server, keys.app)
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["name"] == "score"
    assert server.get("/v2/models/digits", headers=keys.header(keys.app)).status_code == 200
    assert server.get("/v2", headers=keys.header(keys.app)).status_code == 200


def test_inference_key_on_management_is_403_and_changes_nothing(keyed):
    server, keys = keyed
    for path in ["/v2/repository/models/mlp_scorer/unload", "/v2/repository/index",
                 "/v2/repository/models/mlp_scorer/load"]:
        assert_error(server.post(path, {}, headers=keys.header(keys.app)), 403,
                     "'app' has the roles [inference]", "management")
    assert_error(server.post("/v2/logging", {"log_level": "trace"}, headers=keys.header(keys.app)),
                 403)
    assert_error(server.post("/v2/repository/models/mlp_scorer/traffic", {"weights": {"1": 100}},
                             headers=keys.header(keys.app)), 403)
    # Still loaded and serving.
    assert server.get("/v2/models/mlp_scorer/ready",
                      headers=keys.header(keys.app)).status_code == 200
    assert infer(server, keys.app).status_code == 200
    # The log level is unchanged.
    level = server.get("/v2/logging", headers=keys.header(keys.ops)).json()
    assert level.get("log_level") != "trace", level


def test_monitoring_needs_monitoring_or_management(keyed):
    server, keys = keyed
    assert_error(server.get("/metrics", headers=keys.header(keys.app)), 403, "monitoring")
    assert_error(server.get("/metrics"), 401)
    metrics = server.get("/metrics", headers=keys.header(keys.watcher))
    assert metrics.status_code == 200
    assert "inferd_tenant_requests_total" in metrics.text
    assert server.get("/v2/models/stats", headers=keys.header(keys.ops)).status_code == 200
    # Monitoring is read-only: no changes.
    assert_error(server.post("/v2/repository/models/digits/unload", {},
                             headers=keys.header(keys.watcher)), 403, "management")


def test_management_key_unloads_and_loads(keyed):
    server, keys = keyed
    ops = keys.header(keys.ops)
    resp = server.post("/v2/repository/index", {}, headers=ops)
    assert resp.status_code == 200 and {m["name"] for m in resp.json()} >= {"digits"}
    assert server.post("/v2/repository/models/digits/unload", {}, headers=ops).status_code == 200
    assert server.get("/v2/models/digits/ready", headers=keys.header(keys.app)).status_code != 200
    assert server.post("/v2/repository/models/digits/load", {}, headers=ops).status_code == 200
    assert server.get("/v2/models/digits/ready", headers=keys.header(keys.app)).status_code == 200
    # A management key is not an inference key.
    assert_error(infer(server, keys.ops), 403, "inference")


def test_python_client_and_tritonclient_send_the_key(keyed):
    import numpy as np
    import tritonclient.http as triton_http

    from inferd_client import Client, InferdError
    server, keys = keyed
    features = np.random.default_rng(0).standard_normal((1, 256)).astype(np.float32)
    with Client(f"127.0.0.1:{server.port}", api_key=keys.app) as client:
        assert client.infer("mlp_scorer", {"features": features}).as_numpy("score").shape == (1, 1)
    with Client(f"127.0.0.1:{server.port}", api_key="") as anonymous:
        with pytest.raises(InferdError) as refused:
            anonymous.infer("mlp_scorer", {"features": features})
        assert refused.value.status == 401

    triton = triton_http.InferenceServerClient(f"127.0.0.1:{server.port}")
    tensor = triton_http.InferInput("features", [1, 256], "FP32")
    tensor.set_data_from_numpy(features)
    result = triton.infer("mlp_scorer", [tensor], headers=keys.header(keys.app))
    assert result.as_numpy("score").shape == (1, 1)
    triton.close()


def test_inferd_cli_reads_the_key_from_the_environment(keyed):
    import os
    import subprocess
    server, keys = keyed
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "python"), "INFERD_API_KEY": keys.ops}
    ok = subprocess.run([sys.executable, "-m", "inferd_client", "--url",
                         f"127.0.0.1:{server.port}", "list"], env=env, capture_output=True,
                        text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "mlp_scorer" in ok.stdout
    env["INFERD_API_KEY"] = keys.app
    refused = subprocess.run([sys.executable, "-m", "inferd_client", "--url",
                              f"127.0.0.1:{server.port}", "unload", "mlp_scorer"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert "403" in refused.stderr


def _peak_rss_mib(pid: int) -> float:
    from pathlib import Path
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM line")


def _raw_head(server, head: str) -> "socket.socket":
    import socket
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(head.encode())
    return sock


# Regression (issue 30): credentials were checked after the whole body was read, so a client
# without a key got "100 Continue" and made the server buffer up to --max-request-bytes.
def test_a_bad_key_is_refused_before_100_continue(keyed):
    server, _ = keyed
    sock = _raw_head(server, "POST /v2/models/mlp_scorer/infer HTTP/1.1\r\nHost: x\r\n"
                             "Authorization: Bearer not-a-key-at-all\r\n"
                             "Content-Type: application/json\r\nExpect: 100-continue\r\n"
                             "Content-Length: 50000000\r\n\r\n")
    first = sock.recv(4096).decode(errors="replace")
    sock.close()
    assert first.startswith("HTTP/1.1 401"), first
    assert "100 Continue" not in first


def test_a_bad_key_with_a_large_body_does_not_grow_the_server(keyed):
    server, keys = keyed
    peak = _peak_rss_mib(server.proc.pid)
    size = 50 * 2**20
    sock = _raw_head(server, "POST /v2/models/mlp_scorer/infer HTTP/1.1\r\nHost: x\r\n"
                             "Authorization: Bearer not-a-key-at-all\r\n"
                             f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n")
    chunk = b" " * 2**20
    try:
        for _ in range(size // len(chunk)):
            sock.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused and closed before the whole body: what we want
    sock.settimeout(30)
    try:
        reply = sock.recv(4096).decode(errors="replace")
    except ConnectionResetError:
        reply = ""
    sock.close()
    if reply:
        assert reply.startswith("HTTP/1.1 401"), reply
    assert _peak_rss_mib(server.proc.pid) - peak < 20
    assert infer(server, keys.app).status_code == 200
