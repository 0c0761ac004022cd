"""The SIGTERM drain period (--drain-seconds) that rolling updates rely on: readiness turns
503 at once, but new connections and requests are still served (each reply closing its
connection) until the period ends; then the listeners close and the process exits 0.
SIGINT, or a second signal, ends the drain early."""

import http.client
import json
import signal
import socket
import time

import numpy as np
import pytest

from inferd_harness import assert_close, output_array, sample_request

DRAIN_S = 3
LONG_DRAIN_S = 120  # far longer than the tests wait: only an early end lets them pass


def _request(port, method, path, body=None):
    """One request on a new connection: (status, parsed JSON body, Connection header)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read()), resp.getheader("Connection", "")
    finally:
        conn.close()


def _refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return False
    except ConnectionRefusedError:
        return True


def _wait_exit(proc, timeout):
    try:
        return proc.wait(timeout=timeout)
    except Exception:
        pytest.fail(f"inferd did not exit within {timeout} s")


def test_sigterm_turns_not_ready_but_serves_new_requests_until_the_drain_ends(
        start_server, small_repository, torch_ref):
    server = start_server(small_repository, "--drain-seconds", str(DRAIN_S))
    request = sample_request("mlp_scorer")
    rows = np.asarray(request["inputs"][0]["data"], dtype=np.float32).reshape(2, 256)
    want = torch_ref.run("mlp_scorer", rows)
    assert _request(server.port, "GET", "/v2/health/ready")[0] == 200

    server.proc.send_signal(signal.SIGTERM)
    sigterm_at = time.monotonic()
    # Readiness fails at once (the log line is written after the flag is set).
    deadline = sigterm_at + 5
    while "not ready; still serving" not in server.log():
        assert time.monotonic() < deadline, server.log()[-2000:]
        time.sleep(0.01)
    status, body, _ = _request(server.port, "GET", "/v2/health/ready")
    assert (status, body) == (503, {"ready": False})
    assert _request(server.port, "GET", "/v2/health/live")[0] == 200

    # During the drain: new connections are accepted and inference is answered correctly,
    # each reply asking the client to reconnect (elsewhere).
    served_during_drain = 0
    while time.monotonic() - sigterm_at < DRAIN_S - 1:
        status, body, connection = _request(server.port, "POST", "/v2/models/mlp_scorer/infer",
                                            request)
        assert status == 200, body
        assert connection.lower() == "close"
        assert_close(output_array(body, "score"), want)
        served_during_drain += 1
        time.sleep(0.1)
    assert served_during_drain >= 5

    code = _wait_exit(server.proc, DRAIN_S + 20)
    stopped_after = time.monotonic() - sigterm_at
    assert code == 0
    assert stopped_after >= DRAIN_S - 0.5, f"exited {stopped_after:.1f} s after SIGTERM"
    assert _refused(server.port)
    assert "drain period over after" in server.log()


@pytest.mark.parametrize("signals", [[signal.SIGINT], [signal.SIGTERM, signal.SIGTERM],
                                     [signal.SIGTERM, signal.SIGINT]],
                         ids=["sigint-skips-it", "second-sigterm-ends-it", "sigint-ends-it"])
def test_the_drain_ends_early(start_server, small_repository, signals):
    server = start_server(small_repository, "--drain-seconds", str(LONG_DRAIN_S))
    began = time.monotonic()
    server.proc.send_signal(signals[0])
    if len(signals) > 1:
        # The second signal only once the first one was taken (pending signals coalesce).
        while "not ready; still serving" not in server.log():
            assert time.monotonic() - began < 5, server.log()[-2000:]
            time.sleep(0.01)
        assert _request(server.port, "GET", "/v2/health/ready")[0] == 503
        server.proc.send_signal(signals[1])
    assert _wait_exit(server.proc, 15) == 0
    assert time.monotonic() - began < 15
    assert _refused(server.port)
