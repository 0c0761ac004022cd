"""Hostile clients of generation over HTTP and HTTPS (issue 30): a streaming client that never
reads is cut instead of growing the server without bound; a client that leaves is noticed
over TLS too, and when it sent one early byte of a next request; a stream cut by the
shutdown deadline still ends with an error event and the chunked terminator."""

from __future__ import annotations

import json
import socket
import ssl
import struct
import time
from pathlib import Path

import pytest
import requests

from auth_helpers import make_certificates
from inferd_harness import wait_until
from llm_helpers import LLM_MODEL, add_llm, generation_stats, wait_until_idle

MODEL = LLM_MODEL
# Greedy counting goes on for hundreds of tokens (a sampled story may end at once).
COUNTING = {"model": MODEL, "prompt": "1, 2, 3, 4,", "max_tokens": 400, "temperature": 0}


def _request(path: str, body: dict, extra: bytes = b"") -> bytes:
    data = json.dumps(body)
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n{data}").encode() + extra


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


def _wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def _server_has_read_all(sock: socket.socket, server_port: int) -> bool:
    """Whether the server has read everything sent on `sock` (IPv4 loopback): the server's
    kernel acknowledged it all (tcp_info's tcpi_unacked, at byte 24, is 0) and the server's
    socket holds none of it unread (its rx_queue in /proc/net/tcp is 0)."""
    unacked = struct.unpack_from("I", sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO,
                                                      104), 24)[0]
    local = f"0100007F:{server_port:04X}"
    remote = f"0100007F:{sock.getsockname()[1]:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == local and fields[2] == remote:
            return unacked == 0 and int(fields[4].split(":")[1], 16) == 0
    raise AssertionError(f"no server socket {local} <- {remote} in /proc/net/tcp")


def _read_until_closed(sock: socket.socket, seconds: float) -> bytes:
    """What the peer sends until it closes the connection (a reset counts as closed)."""
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("streams_repo")
    add_llm(root, MODEL, parallel=8)
    return root


def test_a_stream_the_client_does_not_read_is_cut(start_server, repo):
    server = start_server(repo, "--max-stream-backlog-bytes", "16384")
    before = generation_stats(server)
    rss_before = _rss_mib(server.proc.pid)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A small receive window and small segments: the server's writes stall at once (on
    # loopback the kernel otherwise sizes the server's send buffer for 64 KB segments, and
    # it alone would hold this whole generation).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    sock.connect(("127.0.0.1", server.port))
    body = dict(COUNTING, n=8, stream=True)
    sock.sendall(_request("/v1/completions", body))
    # The client never reads; eight sequences of 400 tokens would take far longer than this.
    stats = _wait_for(lambda: (s := generation_stats(server))["active_sequences"] == 0
                      and s["requests_failed"] > before["requests_failed"] and s,
                      30, "the unread stream's sequences were cancelled")
    # Each of the eight choices is a sequence, cancelled together.
    assert stats["requests_failed"] == before["requests_failed"] + 8, stats
    assert stats["completion_tokens"] - before["completion_tokens"] < 8 * 300
    # Other clients are served meanwhile, and the server stayed small.
    assert server.post("/v1/completions", {"model": MODEL, "prompt": "Hi",
                                           "max_tokens": 2}).status_code == 200
    assert _rss_mib(server.proc.pid) - rss_before < 64
    # The server closed the connection (what it had sent still arrives first).
    _read_until_closed(sock, 10)
    sock.close()
    line = _wait_for(lambda: [l for l in server.log().splitlines()
                              if "did not read the stream" in l], 5, "the access log line")
    assert "POST /v1/completions 499" in line[0], line


def test_one_early_byte_does_not_hide_a_disconnect(start_server, repo):
    server = start_server(repo)
    before = generation_stats(server)
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(_request("/v1/completions", COUNTING))
    _wait_for(lambda: generation_stats(server)["active_sequences"] == 1, 10, "the sequence runs")
    # The first byte of a next request, pipelined behind the long non-streamed generation
    # (sent apart, so that the disconnect watch reads it, not the request's own read).
    sock.sendall(b"G")
    wait_until(lambda: _server_has_read_all(sock, server.port), 10,
               "the server read the early byte")
    sock.close()
    stats = wait_until_idle(server, seconds=60)
    assert stats["active_sequences"] == 0
    assert stats["requests_failed"] == before["requests_failed"] + 1
    # Far from its 400 tokens: the sequence stopped when the client left.
    assert stats["completion_tokens"] - before["completion_tokens"] < 300


@pytest.fixture(scope="module")
def tls_llm_server(tmp_path_factory, repo):
    from inferd_harness import InferdServer
    root = tmp_path_factory.mktemp("streams_tls")
    certs = make_certificates(root / "certs")
    server = InferdServer(repo, root / "inferd.log",
                          ["--tls-cert-file", str(certs.cert), "--tls-key-file", str(certs.key)],
                          name="tls-llm", tls_ca=certs.ca).start()
    yield server, certs
    server.stop()


def _tls_socket(server, certs) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=str(certs.ca))
    return context.wrap_socket(socket.create_connection(("127.0.0.1", server.port)),
                               server_hostname="127.0.0.1")


@pytest.mark.parametrize("stream", [True, False])
def test_a_tls_client_that_leaves_stops_its_generation(tls_llm_server, stream):
    server, _ = tls_llm_server
    before = wait_until_idle(server)
    sock = _tls_socket(*tls_llm_server)
    sock.sendall(_request("/v1/completions", dict(COUNTING, stream=stream)))
    if stream:
        received = b""
        while received.count(b"data: ") < 3:
            chunk = sock.recv(4096)
            assert chunk, "the server closed the stream"
            received += chunk
        # Answered with Connection: close: the watch read is never cancelled mid-record.
        assert b"connection: close" in received.lower()
    else:
        _wait_for(lambda: generation_stats(server)["active_sequences"] == 1, 10,
                  "the sequence runs")
    # Gone without a word: no close_notify, the process's socket simply closes.
    socket.socket(fileno=sock.detach()).close()
    stats = wait_until_idle(server, seconds=60)
    assert stats["active_sequences"] == 0
    assert stats["requests_failed"] == before["requests_failed"] + 1
    assert stats["completion_tokens"] - before["completion_tokens"] < 300


def test_tls_generation_still_answers_whole_replies(tls_llm_server):
    server, _ = tls_llm_server
    with requests.Session() as session:
        for _ in range(2):  # the second on a new connection: the first said close
            r = server.post("/v1/completions", {"model": MODEL, "prompt": "Hi", "max_tokens": 3},
                            session=session)
            assert r.status_code == 200, r.text
            assert r.headers.get("Connection", "").lower() == "close"
            assert r.json()["choices"][0]["text"] is not None
        r = server.post("/v1/completions", dict(COUNTING, max_tokens=5, stream=True),
                        session=session, stream=True)
        events = [l for l in r.iter_lines() if l.startswith(b"data: ")]
        assert events[-1] == b"data: [DONE]"
def test_a_stream_cut_by_the_shutdown_deadline_ends_with_an_error_event(start_server, repo):
    import signal
    server = start_server(repo, "--shutdown-timeout", "1")
    with requests.post(server.url + "/v1/completions", json=dict(COUNTING, stream=True),
                       stream=True, timeout=60) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        first = next(l for l in lines if l.startswith(b"data: "))
        assert b'"text"' in first
        server.proc.send_signal(signal.SIGTERM)
        # The rest reads to a clean end: requests raises ChunkedEncodingError on a stream cut
        # without its terminator.
        rest = [l for l in lines if l.startswith(b"data: ")]
    assert rest, "no event after the signal"
    last = json.loads(rest[-1][len(b"data: "):]) if rest[-1] != b"data: [DONE]" else None
    if last is None:
        last = json.loads(rest[-2][len(b"data: "):])
    assert "error" in last, rest[-3:]
    assert "shutting down" in json.dumps(last["error"]), last
    assert server.proc.wait(timeout=30) == 0
