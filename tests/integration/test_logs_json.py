"""Structured logs: with --log-format json every line inferd writes is a JSON object; the
access log has one line per request carrying the request id (the client's X-Request-ID or a
generated one, returned in the reply), model, version, status, latency and batch size; the
level, format and access log change at runtime through /v2/logging."""

from __future__ import annotations

import json
import re
import time

import requests

from inferd_harness import assert_error, sample_request, wait_until


def post_with_id(server, path: str, body, request_id: str) -> requests.Response:
    return requests.post(server.url + path, json=body, headers={"X-Request-ID": request_id},
                         timeout=60)


def json_lines(server) -> list[dict]:
    lines = []
    for line in server.log().splitlines():
        if line.startswith("--- start: "):  # written by the test harness
            continue
        lines.append(json.loads(line))  # every line inferd writes must parse
    return lines


def access_lines(server, request_id: str, timeout: float = 5.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        found = [line for line in json_lines(server)
                 if line.get("logger") == "access" and line.get("request_id") == request_id]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_every_log_line_is_json_and_access_lines_carry_the_request(start_server,
                                                                   small_repository):
    server = start_server(small_repository, "--log-format", "json")
    r = post_with_id(server, "/v2/models/digits/infer", sample_request("digits"),
                     "client-chosen-42")
    assert r.status_code == 200
    assert r.headers["X-Request-ID"] == "client-chosen-42"
    [line] = access_lines(server, "client-chosen-42")
    assert line["level"] == "info"
    assert line["model"] == "digits" and line["version"] == "1"
    assert line["status"] == 200 and line["outcome"] == "success"
    assert line["method"] == "POST" and line["path"] == "/v2/models/digits/infer"
    assert line["batch_size"] >= 2  # the sample holds 2 rows
    assert 0 < line["latency_ms"] < 60000
    assert line["time"].endswith("Z")

    lifecycle = [l for l in json_lines(server) if l.get("logger") == "inferd"]
    assert any("digits" in l["msg"] and "READY" in l["msg"] for l in lifecycle)


def test_a_request_without_an_id_gets_one_and_errors_carry_the_reason(start_server,
                                                                      small_repository):
    server = start_server(small_repository, "--log-format", "json")
    r = server.post("/v2/models/digits/infer", raw='{"inputs": 5}')
    assert_error(r, 400)
    generated = r.headers["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", generated), generated
    # Made per request, not once per process.
    assert server.post("/v2/models/digits/infer", raw='{"inputs": 5}').headers["X-Request-ID"] \
        != generated
    [line] = access_lines(server, generated)
    assert line["level"] == "warning"
    assert line["status"] == 400 and line["outcome"] == "bad_input"
    assert line["error"] == r.json()["error"]
    # Two requests never share a generated id.
    assert server.get("/v2/health/live").headers["X-Request-ID"] != generated


def test_unusable_client_ids_are_replaced(start_server, small_repository):
    server = start_server(small_repository)
    r = server.get("/v2/health/live", headers={"X-Request-ID": "x" * 200})
    assert r.headers["X-Request-ID"] != "x" * 200 and len(r.headers["X-Request-ID"]) == 32


def test_plain_format_is_one_readable_line_per_request(start_server, small_repository):
    server = start_server(small_repository)
    post_with_id(server, "/v2/models/mlp_scorer/infer", sample_request("mlp_scorer"), "plain-1")
    deadline = time.monotonic() + 5
    while "id=plain-1" not in server.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    [line] = [l for l in server.log().splitlines() if "id=plain-1" in l]
    assert "POST /v2/models/mlp_scorer/infer 200" in line
    assert "model=mlp_scorer version=1" in line


def test_log_settings_change_at_runtime(start_server, small_repository):
    server = start_server(small_repository)
    assert server.get("/v2/logging").json() == {"log_level": "info", "log_format": "plain",
                                                "access_log": True}
    r = server.post("/v2/logging", {"log_level": "debug", "log_format": "json"})
    assert r.status_code == 200, r.text
    assert r.json() == {"log_level": "debug", "log_format": "json", "access_log": True}
    assert server.get("/v2/logging").json()["log_level"] == "debug"
    # From now on the lines are JSON.
    server.get("/v2/health/ready", headers={"X-Request-ID": "after-switch"})
    deadline = time.monotonic() + 5
    while '"request_id":"after-switch"' not in server.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    [line] = [l for l in server.log().splitlines() if "after-switch" in l]
    assert json.loads(line)["path"] == "/v2/health/ready"

    # A bad request changes nothing and says why.
    assert_error(server.post("/v2/logging", {"log_level": "loud"}), 400, "log_level", "loud")
    assert_error(server.post("/v2/logging", {"log_level": "warn", "colour": "red"}), 400,
                 "colour")
    assert_error(server.post("/v2/logging", {"access_log": "no"}), 400, "access_log")
    assert server.get("/v2/logging").json()["log_level"] == "debug"

    # Access log off: requests no longer log.
    assert server.post("/v2/logging", {"access_log": False}).json()["access_log"] is False
    server.get("/v2/health/live", headers={"X-Request-ID": "silent-1"})
    server.post("/v2/logging", {"access_log": True})
    # The access log is written in order by one thread: once a later request's line is
    # there, a line for silent-1 would be there too.
    server.get("/v2/health/live", headers={"X-Request-ID": "after-silent"})
    wait_until(lambda: "after-silent" in server.log(), 10, "the next request's access line")
    assert "silent-1" not in server.log()
    assert server.get("/v2/logging", timeout=5).status_code == 200


def test_queued_access_lines_are_written_before_exit(start_server, small_repository):
    """The access log is written by a background thread: what is queued at SIGTERM still
    reaches the log."""
    server = start_server(small_repository, "--log-format", "json")
    with requests.Session() as session:
        for i in range(200):
            session.get(server.url + "/v2/health/live", headers={"X-Request-ID": f"burst-{i}"},
                        timeout=10)
    assert server.stop() == 0
    ids = {line["request_id"] for line in json_lines(server) if line.get("logger") == "access"}
    assert {f"burst-{i}" for i in range(200)} <= ids
    assert any(line.get("msg", "").startswith("stopped") for line in json_lines(server))


def test_a_lazily_loaded_model_is_in_its_requests_access_line(start_server, tmp_path):
    """The model a request reached is noted on the loader thread after a lazy load and handed
    to the connection's own thread (Responder::NoteModel); the access line still names it,
    and a client that leaves while the model loads takes nothing down with it."""
    import socket

    from lifecycle_helpers import copy_model

    copy_model(tmp_path / "repo", "lazy", "resnet18", extra_config="load: lazy\n")
    copy_model(tmp_path / "repo", "lazy_left", "resnet18", extra_config="load: lazy\n")
    server = start_server(tmp_path / "repo", "--log-format", "json")
    body = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 3, 224, 224],
                        "data": [0.0] * (3 * 224 * 224)}]}
    payload = json.dumps(body).encode()
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as leaving:
        leaving.sendall(b"POST /v2/models/lazy_left/infer HTTP/1.1\r\nHost: x\r\n"
                        b"X-Request-ID: left-early\r\nContent-Type: application/json\r\n"
                        b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
    r = post_with_id(server, "/v2/models/lazy/infer", body, "lazy-1")
    assert r.status_code == 200, r.text
    [line] = access_lines(server, "lazy-1")
    assert line["model"] == "lazy" and line["version"] == "1", line
    assert line["status"] == 200
    wait_until(lambda: server.get("/v2/models/lazy_left/ready").status_code == 200, 60,
               "the model the departed client asked for to finish loading")
    assert post_with_id(server, "/v2/models/lazy_left/infer", body, "after").status_code == 200
