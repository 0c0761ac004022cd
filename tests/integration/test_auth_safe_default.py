"""The safe default: on a non-loopback address without API keys, management endpoints are
off (and the start-up log says so) unless --allow-unauthenticated-management opens them.
The servers bind 0.0.0.0; every request goes to 127.0.0.1."""

from __future__ import annotations

from inferd_harness import assert_error, sample_request


def wildcard(start_server, repository, *args):
    return start_server(repository, *args, port_flag=False, env={"INFERD_HOST": "0.0.0.0"})


def test_management_is_off_on_a_public_address_without_keys(start_server, small_repository):
    server = wildcard(start_server, small_repository)
    assert "management endpoints (load, unload" in server.log()
    for path in ["/v2/repository/models/mlp_scorer/unload", "/v2/repository/index",
                 "/v2/repository/models/mlp_scorer/load"]:
        assert_error(server.post(path, {}), 403, "management endpoints are off",
                     "--api-keys-file", "--allow-unauthenticated-management")
    assert_error(server.post("/v2/logging", {"log_level": "debug"}), 403)
    # Inference and monitoring stay open, and the model was not unloaded.
    assert server.get("/v2/models/mlp_scorer/ready").status_code == 200
    assert server.post("/v2/models/mlp_scorer/infer",
                       sample_request("mlp_scorer")).status_code == 200
    assert server.get("/metrics").status_code == 200


def test_the_flag_opens_management(start_server, small_repository):
    server = wildcard(start_server, small_repository, "--allow-unauthenticated-management")
    assert "anyone who reaches the port can load and unload" in server.log()
    assert server.post("/v2/repository/models/digits/unload", {}).status_code == 200
    assert server.get("/v2/models/digits/ready").status_code != 200


def test_loopback_keeps_management_open(start_server, small_repository):
    server = start_server(small_repository)
    assert "listening on loopback: every endpoint is open to local clients" in server.log()
    assert server.post("/v2/repository/index", {}).status_code == 200


# Regression (issue 30): nginx on the same host (deploy/nginx) connects from loopback and
# relays anyone's requests, so anyone who reached nginx could unload models.
def test_loopback_management_refuses_requests_relayed_by_a_proxy(start_server, small_repository):
    import grpc
    from tools.grpc_stubs import pb, pb_grpc
    server = start_server(small_repository)
    unload = "/v2/repository/models/digits/unload"
    for header in ["X-Forwarded-For", "Forwarded", "X-Real-IP"]:
        resp = server.post(unload, {}, headers={header: "127.0.0.1"})
        assert_error(resp, 403, "relayed by a proxy", "--api-keys-file", "--trusted-proxies")
    assert_error(server.post("/v2/logging", {"log_level": "debug"},
                             headers={"X-Forwarded-For": "203.0.113.7"}), 403)
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        try:
            stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="digits"),
                                       metadata=[("x-forwarded-for", "203.0.113.7")])
            raise AssertionError("a relayed gRPC unload was allowed")
        except grpc.RpcError as error:
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error
    # Nothing was unloaded; relayed inference still works; a local client still manages.
    assert server.get("/v2/models/digits/ready").status_code == 200
    assert server.post("/v2/models/digits/infer", sample_request("digits"),
                       headers={"X-Forwarded-For": "203.0.113.7"}).status_code == 200
    assert server.post(unload, {}).status_code == 200


def test_trusted_proxies_name_the_local_client(start_server, small_repository):
    server = start_server(small_repository, "--trusted-proxies", "127.0.0.1")
    unload = "/v2/repository/models/{}/unload"
    # A client the proxy saw from elsewhere, even behind a forged loopback entry: refused.
    assert_error(server.post(unload.format("digits"), {},
                             headers={"X-Forwarded-For": "127.0.0.1, 203.0.113.7"}), 403)
    assert server.get("/v2/models/digits/ready").status_code == 200
    # A client on this host, through the trusted proxy: allowed.
    assert server.post(unload.format("digits"), {},
                       headers={"X-Forwarded-For": "127.0.0.1"}).status_code == 200


def test_an_invalid_key_file_stops_the_start(tmp_path, small_repository):
    import subprocess
    from inferd_harness import INFERD_BINARY, clean_env
    bad = tmp_path / "keys.yaml"
    bad.write_text("keys: [{name: a, key: short, roles: [inference]}]\n")
    result = subprocess.run([str(INFERD_BINARY), "--model-repository", str(small_repository),
                             "--api-keys-file", str(bad), "--http-port", "0", "--grpc-port", "0",
                             "--host", "127.0.0.1"], env=clean_env(), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert "shorter than 16 characters" in result.stdout + result.stderr
