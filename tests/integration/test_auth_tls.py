"""TLS on both listeners (--tls-cert-file/--tls-key-file), with a certificate made at test time
by openssl: real curl with --cacert over HTTPS, a real gRPC client (grpcio's
ssl_channel_credentials), API keys over TLS, and plaintext refused on the TLS port."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import grpc
import numpy as np
import pytest

from auth_helpers import make_certificates, write_keys
from tools.grpc_stubs import pb, pb_grpc
from inferd_harness import REPO_ROOT, sample_request

sys.path.insert(0, str(REPO_ROOT / "python"))


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    from inferd_harness import InferdServer, make_repository
    root = tmp_path_factory.mktemp("auth_tls")
    certs = make_certificates(root / "certs")
    keys = write_keys(root)
    repo = make_repository(root / "repo", {"mlp_scorer": "mlp_scorer"})
    server = InferdServer(repo, root / "inferd.log",
                          ["--tls-cert-file", str(certs.cert), "--tls-key-file", str(certs.key),
                           "--api-keys-file", str(keys.path)],
                          name="tls", tls_ca=certs.ca).start()
    yield server, certs, keys
    server.stop()


def curl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "--max-time", "30", *args], capture_output=True,
                          text=True, timeout=60)


def test_curl_over_https(tls_server):
    server, certs, keys = tls_server
    ready = curl("--cacert", str(certs.ca), "-o", "/dev/null", "-w", "%{http_code}",
                 f"https://127.0.0.1:{server.port}/v2/health/ready")
    assert ready.returncode == 0, ready.stderr
    assert ready.stdout == "200"
    body = json.dumps(sample_request("mlp_scorer"))
    infer = curl("--cacert", str(certs.ca), "-H", f"Authorization: Bearer {keys.app}",
                 "-H", "Content-Type: application/json", "--data-binary", body,
                 f"https://127.0.0.1:{server.port}/v2/models/mlp_scorer/infer")
    assert infer.returncode == 0, infer.stderr
    assert json.loads(infer.stdout)["outputs"][0]["name"] == "score"
    # Keep-alive over TLS: two requests on one connection.
    twice = curl("--cacert", str(certs.ca), "-o", "/dev/null", "-o", "/dev/null",
                 "-w", "%{http_code}%{num_connects} ",
                 f"https://127.0.0.1:{server.port}/v2/health/live",
                 f"https://127.0.0.1:{server.port}/v2/health/live")
    assert twice.stdout.split() == ["2001", "2000"], twice.stdout


def test_curl_refuses_an_untrusted_certificate(tls_server):
    server, _, _ = tls_server
    result = curl(f"https://127.0.0.1:{server.port}/v2/health/ready")
    assert result.returncode == 60, result  # CURLE_PEER_FAILED_VERIFICATION


def test_plaintext_on_the_tls_port_gets_no_answer(tls_server):
    server, _, _ = tls_server
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        try:
            while chunk := s.recv(4096):
                reply += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    assert b"HTTP/1.1 200" not in reply


def test_python_client_over_https(tls_server):
    from inferd_client import Client
    server, certs, keys = tls_server
    with Client(f"https://127.0.0.1:{server.port}", api_key=keys.app,
                ca_file=str(certs.ca)) as client:
        assert client.is_ready()
        result = client.infer("mlp_scorer", {"features": np.zeros((1, 256), np.float32)})
        assert result.as_numpy("score").shape == (1, 1)


def test_grpc_with_ssl_channel_credentials(tls_server):
    server, certs, keys = tls_server
    credentials = grpc.ssl_channel_credentials(root_certificates=certs.ca.read_bytes())
    with grpc.secure_channel(f"127.0.0.1:{server.grpc_port}", credentials) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        assert stub.ServerLive(pb.ServerLiveRequest(), timeout=30).live
        request = pb.ModelInferRequest(model_name="mlp_scorer")
        request.inputs.add(name="features", datatype="FP32", shape=[1, 256])
        request.raw_input_contents.append(np.zeros((1, 256), "<f4").tobytes())
        response = stub.ModelInfer(request, metadata=[("authorization", f"Bearer {keys.app}")],
                                   timeout=30)
        assert response.outputs[0].name == "score"
        with pytest.raises(grpc.RpcError) as refused:
            stub.ModelInfer(request, timeout=30)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_grpc_plaintext_client_cannot_talk_to_the_tls_port(tls_server):
    server, _, _ = tls_server
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as failed:
            stub.ServerLive(pb.ServerLiveRequest(), timeout=5)
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_missing_certificate_stops_the_start(tmp_path, small_repository):
    from inferd_harness import INFERD_BINARY, clean_env
    result = subprocess.run([str(INFERD_BINARY), "--model-repository", str(small_repository),
                             "--tls-cert-file", str(tmp_path / "nope.pem"),
                             "--tls-key-file", str(tmp_path / "nope.key"), "--http-port", "0",
                             "--grpc-port", "0", "--host", "127.0.0.1"], env=clean_env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "nope.pem" in result.stdout + result.stderr
