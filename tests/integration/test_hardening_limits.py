"""Limits on what a client can make inferd do (issue 13, the classes after the defects):
header and body read timeouts (Slowloris), accept back-off when out of file descriptors,
model names checked before they touch the filesystem, client errors without server paths,
client text escaped in log lines, and the per-model instance cap."""

from __future__ import annotations

import http.client
import os
import re
import resource
import shutil
import socket
import time

import grpc
import pytest
import yaml

from tools.grpc_stubs import pb, pb_grpc
from inferd_harness import DEMO_MODELS, assert_error, edit_config, sample_request, wait_until


def _closed_within(sock: socket.socket, seconds: float, trickle: bytes | None = None) -> float:
    """Seconds until the server closes `sock` (sending `trickle` every 0.3 s meanwhile)."""
    start = time.monotonic()
    sock.settimeout(0.3)
    while time.monotonic() - start < seconds:
        try:
            if trickle:
                sock.sendall(trickle)
            if sock.recv(4096) == b"":
                return time.monotonic() - start
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - start
    raise AssertionError(f"the server kept the connection open for {seconds} s")


@pytest.fixture
def timeouts_server(start_server, small_repository):
    return start_server(small_repository, "--header-timeout", "1", "--body-timeout", "2")


def test_slowloris_header_is_cut_off_after_the_header_timeout(timeouts_server):
    with socket.create_connection(("127.0.0.1", timeouts_server.port)) as sock:
        sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n")
        # Before the fix the only limit was the 120 s idle timeout, whatever the client sent.
        assert _closed_within(sock, 10, trickle=b"X-a: b\r\n") < 5


def test_a_connection_that_sends_nothing_is_closed(timeouts_server):
    with socket.create_connection(("127.0.0.1", timeouts_server.port)) as sock:
        assert _closed_within(sock, 10) < 5


def test_a_body_that_never_arrives_is_cut_off_after_the_body_timeout(timeouts_server):
    with socket.create_connection(("127.0.0.1", timeouts_server.port)) as sock:
        sock.sendall(b"POST /v2/models/mlp_scorer/infer HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        assert _closed_within(sock, 10, trickle=b" ") < 6


def test_a_kept_alive_connection_may_idle_longer_than_the_header_timeout(timeouts_server):
    conn = http.client.HTTPConnection("127.0.0.1", timeouts_server.port, timeout=10)
    conn.request("GET", "/v2/health/live")
    assert conn.getresponse().read() is not None
    # A fixed sleep on purpose: idling past the 1 s header timeout (and the 2 s body timeout)
    # is what is tested; no condition on the server says "still holding the connection".
    time.sleep(2.5)
    conn.request("GET", "/v2/health/live")
    assert conn.getresponse().status == 200
    conn.close()


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_out_of_file_descriptors_backs_off_instead_of_spinning(start_server, small_repository):
    server = start_server(small_repository)
    pid = server.proc.pid
    in_use = len(os.listdir(f"/proc/{pid}/fd"))
    soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (in_use + 8, hard))
    socks = []
    try:
        for _ in range(40):  # more than the limit: the backlog holds the rest
            socks.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        # The server has run out of descriptors once it reports a failed accept.
        wait_until(lambda: "accept failed" in server.log(), 10,
                   "the server's log reports a failed accept (out of descriptors)")
        log_before = server.log().count("accept failed")
        cpu_before = _cpu_seconds(pid)
        # A fixed window on purpose: the test measures CPU time and log lines per 3 s.
        time.sleep(3)
        cpu = _cpu_seconds(pid) - cpu_before
        lines = server.log().count("accept failed") - log_before
        # Spinning on EMFILE took a whole core and wrote a line per try.
        assert cpu < 1.0, f"{cpu:.2f} CPU seconds in 3 s while out of descriptors"
        assert lines <= 5, f"{lines} 'accept failed' lines in 3 s"
    finally:
        for s in socks:
            s.close()
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
    deadline = time.monotonic() + 10
    while True:
        try:
            if server.get("/v2/health/live", timeout=2).status_code == 200:
                break
        except Exception:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def _raw_post(server, path: str) -> tuple[int, str]:
    """POST `path` exactly as written (http.client does not normalise '..')."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("POST", path, body=b"", headers={"Content-Length": "0"})
    resp = conn.getresponse()
    out = resp.status, resp.read().decode(errors="replace")
    conn.close()
    return out


@pytest.mark.parametrize("name", ["..", ".git", "%2e%2e%2fetc", "a\\b", "m" * 300])
def test_load_refuses_invalid_model_names(start_server, small_repository, name):
    server = start_server(small_repository)
    status, body = _raw_post(server, f"/v2/repository/models/{name}/load")
    assert status in (400, 404), body
    if status == 400:
        assert "not valid" in body, body
    assert str(small_repository) not in body, body


def test_grpc_load_refuses_a_path_as_model_name(start_server, small_repository):
    server = start_server(small_repository)
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as error:
            stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="../mlp_scorer"))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not valid" in error.value.details()


def test_load_errors_name_files_relative_to_the_repository(start_server, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(DEMO_MODELS / "digits", repo / "garbage")
    (repo / "garbage" / "1" / "model.pt").write_bytes(bytes(range(256)) * 40)
    server = start_server(repo)
    index = server.post("/v2/repository/index", raw="").json()
    reason = next(row["reason"] for row in index if row["name"] == "garbage")
    assert "garbage/1/model.pt" in reason, reason
    assert str(repo) not in reason, reason
    resp = server.post("/v2/repository/models/garbage/load", raw="")
    message = assert_error(resp, 400, "garbage/1/model.pt")
    assert str(repo) not in message, message
    resp = server.post("/v2/models/garbage/infer", {"inputs": []})
    assert str(repo) not in resp.text, resp.text
    assert str(repo) in server.log(), "the server's own log keeps the full path"


def test_dashboard_data_names_no_server_folder(start_server, tmp_path):
    # Regression (issue 30): /dashboard/data listed the recent errors with their raw
    # messages, absolute paths included.
    repo = tmp_path / "repo"
    shutil.copytree(DEMO_MODELS / "digits", repo / "garbage")
    (repo / "garbage" / "1" / "model.pt").write_bytes(bytes(range(256)) * 40)
    server = start_server(repo)
    # The reply's body names the file relative to the repository; the recorded error did not.
    resp = server.post("/v2/models/garbage/infer", sample_request("digits"))
    assert str(repo) not in resp.text, resp.text
    data = server.get("/dashboard/data")
    assert data.status_code == 200
    messages = [e["message"] for e in data.json()["recent_errors"]]
    assert any("garbage/1/model.pt" in m for m in messages), messages
    assert str(repo) not in data.text, messages


def test_client_text_in_an_error_cannot_forge_a_log_line(start_server, small_repository):
    server = start_server(small_repository)
    resp = server.post("/v2/logging", raw='{"x\\n2026-01-01 [critical] FORGED": 1}')
    assert resp.status_code == 400, resp.text
    # Once the client's text is in the log, so is whatever line it could have forged.
    wait_until(lambda: "FORGED" in server.log(), 10, "the error's log line")
    assert not re.search(r"^2026-01-01 \[critical\] FORGED", server.log(), re.M), server.log()
    assert "FORGED" in server.log()


@pytest.mark.parametrize("instances,needle", [
    ("[{count: 100000}]", "must be 1..64, got 100000"),
    ("[" + ", ".join(["{count: 64}"] * 3) + "]", "128 execution instances in all"),
])
def test_a_config_asking_for_too_many_instances_is_refused(start_server, tmp_path, instances,
                                                           needle):
    repo = tmp_path / "repo"
    shutil.copytree(DEMO_MODELS / "digits", repo / "greedy")
    edit_config(repo / "greedy", lambda config: config.update(instances=yaml.safe_load(instances)))
    server = start_server(repo)
    index = server.post("/v2/repository/index", raw="").json()
    row = next(r for r in index if r["name"] == "greedy")
    assert row["state"] == "UNAVAILABLE", row
    assert needle in row["reason"], row
