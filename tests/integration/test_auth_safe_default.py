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
    assert "listening on loopback only" in server.log()
    assert server.post("/v2/repository/index", {}).status_code == 200


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
