"""Many concurrent keep-alive connections: every answer is right and belongs to its request."""

import http.client
import json
import threading

import numpy as np

from inferd_harness import assert_close

N_CONNECTIONS = 200
REQUESTS_PER_CONNECTION = 3


def test_200_keep_alive_connections_get_their_own_answers(demo_server, torch_ref):
    n = N_CONNECTIONS * REQUESTS_PER_CONNECTION
    # Request k carries 1, 2 or 3 rows of its own: a reply for another request has the wrong
    # id, and most likely the wrong shape and numbers as well.
    sizes = [1 + k % 3 for k in range(n)]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rows = np.random.RandomState(1234).uniform(-2, 2, size=(sum(sizes), 256)).astype(np.float32)
    want = torch_ref.run("mlp_scorer", rows)[:, 0]

    all_open = threading.Barrier(N_CONNECTIONS, timeout=60)
    errors = []
    got = np.full(len(rows), np.nan)

    def infer(conn, k):
        mine = rows[starts[k]:starts[k] + sizes[k]]
        body = json.dumps({"id": f"req-{k}", "inputs": [
            {"name": "features", "datatype": "FP32", "shape": [sizes[k], 256],
             "data": mine.ravel().tolist()}]})
        conn.request("POST", "/v2/models/mlp_scorer/infer", body=body,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read().decode()
        assert resp.status == 200, f"request {k}: {resp.status} {text[:300]}"
        assert resp.getheader("Connection", "").lower() != "close", resp.getheaders()
        answer = json.loads(text)
        assert answer["id"] == f"req-{k}", f"request {k} got the answer for {answer['id']}"
        assert answer["outputs"][0]["shape"] == [sizes[k], 1], answer["outputs"][0]["shape"]
        got[starts[k]:starts[k] + sizes[k]] = answer["outputs"][0]["data"]

    def client(c):
        conn = http.client.HTTPConnection("127.0.0.1", demo_server.port, timeout=120)
        try:
            conn.connect()
            local = conn.sock.getsockname()
            for r in range(REQUESTS_PER_CONNECTION):
                infer(conn, c * REQUESTS_PER_CONNECTION + r)
                # Keep-alive: still the same TCP connection.
                assert conn.sock is not None and conn.sock.getsockname() == local, (
                    f"connection {c} was reopened")
                if r == 0:
                    all_open.wait()  # all connections open and used at once
        except BaseException as e:
            errors.append(f"connection {c}: {e!r}")
            all_open.abort()
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(c,), daemon=True)
               for c in range(N_CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not any(t.is_alive() for t in threads), "clients still running after 180 s"
    real_errors = [e for e in errors if "BrokenBarrierError" not in e] or errors
    assert not real_errors, f"{len(errors)} connection(s) failed, e.g. {real_errors[:5]}"
    assert not np.isnan(got).any(), f"{int(np.isnan(got).sum())} rows unanswered"
    assert_close(got, want, what="scores")
    # The server is still healthy afterwards.
    assert demo_server.get("/v2/health/ready").status_code == 200
