"""Command line and environment variables."""

import subprocess

import pytest

from inferd_harness import INFERD_BINARY, clean_env, sample_request


def _run(*args, env=None, timeout=30):
    return subprocess.run([str(INFERD_BINARY), *args], capture_output=True, text=True,
                          timeout=timeout, env=clean_env(env), stdin=subprocess.DEVNULL)


def test_help_exits_0_and_lists_the_main_flags():
    result = _run("--help")
    assert result.returncode == 0, result.stderr
    for flag in ["--model-repository", "--http-port", "--host", "--log-level",
                 "--max-request-bytes", "--default-model"]:
        assert flag in result.stdout, f"{flag} missing from --help:\n{result.stdout}"
    for env_var in ["INFERD_MODEL_REPOSITORY", "INFERD_HTTP_PORT"]:
        assert env_var in result.stdout, f"{env_var} missing from --help:\n{result.stdout}"


def test_version_matches_server_metadata(demo_server):
    result = _run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == demo_server.get("/v2").json()["version"]


@pytest.mark.parametrize("args,fragment", [
    ([], "--model-repository"),
    (["--model-repository", "x", "--http-port", "abc"], "--http-port"),
    (["--model-repository", "x", "--no-such-flag"], "--no-such-flag"),
    (["--model-repository", "x", "--log-level", "loud"], "--log-level"),
])
def test_bad_command_line_exits_nonzero_with_a_message(args, fragment):
    result = _run(*args)
    assert result.returncode != 0
    assert fragment in result.stdout + result.stderr, result.stdout + result.stderr


def test_missing_repository_exits_nonzero_naming_it(tmp_path):
    missing = tmp_path / "no_such_repo"
    result = _run("--model-repository", str(missing), "--http-port", "0",
                  "--host", "127.0.0.1")
    assert result.returncode != 0
    assert str(missing) in result.stdout + result.stderr, result.stdout + result.stderr


def test_log_says_where_it_listens(demo_server):
    assert f"listening on http://127.0.0.1:{demo_server.port}" in demo_server.log()


def test_port_and_everything_else_from_environment(start_server, small_repository):
    # No flags at all: repository, host, port and log level come from INFERD_* variables.
    server = start_server(None, env={"INFERD_MODEL_REPOSITORY": str(small_repository),
                                     "INFERD_LOG_LEVEL": "warn"}, port_flag=False)
    assert server.command() == [str(INFERD_BINARY)]
    resp = server.get("/v2/health/ready")
    assert resp.status_code == 200
    resp = server.post("/v2/models/mlp_scorer/infer", sample_request("mlp_scorer"))
    assert resp.status_code == 200, resp.text
    # --log-level warn (from the environment) hides the info lines.
    assert "listening on" not in server.log()


def test_http_port_env_with_repository_flag(start_server, small_repository):
    server = start_server(small_repository, env={"INFERD_HOST": "127.0.0.1"}, port_flag=False)
    assert "--http-port" not in server.command()
    assert server.get("/v2/health/live").json() == {"live": True}
    assert f"listening on http://127.0.0.1:{server.port}" in server.log()


def test_max_request_bytes_below_minimum_is_rejected(small_repository):
    result = _run("--model-repository", str(small_repository), "--max-request-bytes", "10")
    assert result.returncode != 0
    assert "--max-request-bytes" in result.stdout + result.stderr
