"""SIGTERM: requests in flight finish with correct answers, then the process exits 0."""

import http.client
import json
import signal
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

from inferd_harness import assert_close, make_repository, wait_until

N_REQUESTS = 6
ROWS = 16  # text_classifier's max_batch_size; one such request takes ~0.25 s here
DRAIN_TIMEOUT_S = 10  # --shutdown-timeout: far more than the ~1.5 s of queued work
EXIT_TIMEOUT_S = 30


def _token_rows(seed):
    return np.random.RandomState(seed).randint(0, 1000, size=(ROWS, 128)).astype(np.int64)


def _body(rows):
    return json.dumps({"inputs": [{"name": "token_ids", "datatype": "INT64",
                                   "shape": list(rows.shape), "data": rows.ravel().tolist()}]})


def _wait_exit(proc, timeout):
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"inferd did not exit within {timeout} s of SIGTERM")


def _assert_refused(port):
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_sigterm_drains_requests_in_flight_then_exits_0(start_server, tmp_path, torch_ref):
    repo = make_repository(tmp_path / "repo", {"text_classifier": "text_classifier"})
    server = start_server(repo, "--shutdown-timeout", str(DRAIN_TIMEOUT_S))
    rows = [_token_rows(seed) for seed in range(N_REQUESTS)]

    start = threading.Barrier(N_REQUESTS + 1, timeout=30)
    sent = [threading.Event() for _ in range(N_REQUESTS)]
    first_done = threading.Event()
    results = [None] * N_REQUESTS  # (status, body text) or an exception

    def worker(i):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            # A first request on the connection makes sure the server has accepted it.
            conn.request("GET", "/v2/health/live")
            resp = conn.getresponse()
            assert resp.status == 200 and json.loads(resp.read()) == {"live": True}
            start.wait()
            conn.request("POST", "/v2/models/text_classifier/infer", body=_body(rows[i]),
                         headers={"Content-Type": "application/json"})
            sent[i].set()
            resp = conn.getresponse()
            results[i] = (resp.status, resp.read().decode())
            conn.close()
        except Exception as e:  # reported by the assertions below
            results[i] = e
            start.abort()
        finally:
            sent[i].set()
            first_done.set()

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(N_REQUESTS)]
    for t in threads:
        t.start()

    # An idle keep-alive connection, to watch readiness during the drain.
    probe = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    probe.request("GET", "/v2/health/ready")
    probe_resp = probe.getresponse()
    assert probe_resp.status == 200, probe_resp.read()
    probe_resp.read()

    start.wait()
    for event in sent:
        assert event.wait(30), "a request was not sent"
    # Once one answer is back, the server has long since read the other requests (10 KB each),
    # which are now queued behind one another: that is "in flight".
    assert first_done.wait(60), "no answer within 60 s"
    outstanding = sum(r is None for r in results)
    server.proc.send_signal(signal.SIGTERM)
    sigterm_at = time.monotonic()

    # While draining: readiness turns 503 {"ready": false} and the connection is closed.
    # The first probe waits until the server says it has the signal (it logs that once it
    # has turned not-ready): a probe the server reads at the very moment the signal lands
    # may still be answered 200 (it was ready when it looked), and then carries
    # `Connection: close`, which tells the client to leave just the same.
    wait_until(lambda: "received SIGTERM" in server.log(), 10,
               "the server's log says it received SIGTERM")
    saw_not_ready = None
    while time.monotonic() - sigterm_at < 10:
        try:
            probe.request("GET", "/v2/health/ready")
            resp = probe.getresponse()
            body = json.loads(resp.read())
        except (OSError, http.client.HTTPException) as e:
            saw_not_ready = e
            break
        if resp.status == 503:
            saw_not_ready = body
            assert body == {"ready": False}, body
            assert resp.getheader("Connection", "").lower() == "close", resp.getheaders()
            break
        assert resp.status == 200, (resp.status, body)
        if resp.getheader("Connection", "").lower() == "close":
            saw_not_ready = "200 with Connection: close"
            break
        time.sleep(0.005)
    probe.close()
    answers_pending_after_probe = sum(r is None for r in results)

    for t in threads:
        t.join(EXIT_TIMEOUT_S)
    code = _wait_exit(server.proc, EXIT_TIMEOUT_S)

    assert outstanding >= 1, "every answer was back before SIGTERM; the test proved nothing"
    want = torch_ref.run("text_classifier", np.concatenate(rows))
    for i, result in enumerate(results):
        assert not isinstance(result, BaseException), f"request {i} failed: {result!r}"
        assert result is not None, f"request {i} got no answer"
        status, text = result
        assert status == 200, f"request {i}: {status} {text[:300]}"
        out = json.loads(text)["outputs"][0]
        assert out["shape"] == [ROWS, 2]
        assert_close(np.reshape(out["data"], out["shape"]), want[i * ROWS:(i + 1) * ROWS],
                     what=f"request {i}")
    assert code == 0, f"exit code {code}"
    if answers_pending_after_probe:
        # The drain was still going on when the probe asked: it must have seen 503.
        assert isinstance(saw_not_ready, dict) or saw_not_ready == "200 with Connection: close", (
            f"readiness during the drain: expected 503 {{'ready': false}}, got {saw_not_ready!r}")
    _assert_refused(server.port)
    log = server.log()
    assert "received SIGTERM" in log, log[-2000:]
    assert "drain timed out" not in log


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_idle_server_exits_0_promptly_on_signal(start_server, small_repository, sig):
    server = start_server(small_repository)
    assert server.get("/v2/health/live").status_code == 200
    began = time.monotonic()
    server.proc.send_signal(sig)
    code = _wait_exit(server.proc, 10)
    assert code == 0
    assert time.monotonic() - began < 10
    _assert_refused(server.port)
