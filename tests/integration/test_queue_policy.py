"""The queue policy against the real binary: a bounded queue refuses with 429 + Retry-After,
requests that wait past their timeout get 504 (or 429) without running, and higher-priority
requests overtake lower ones.

The tests need a model whose requests take as long as the test says, and that reports the
order it ran them in. "sequencer" is a small TorchScript model written here: input x [B, 2],
where x[:, 0] is a number of spin iterations (work) and x[:, 1] a value; output y [B, 2] with
y[:, 0] = 2 * value and y[:, 1] = how many calls the model had run, this one included.
With one instance, y[:, 1] is the request's position in execution order.
"""

from __future__ import annotations

import json
import threading
import time
import warnings

import pytest
import requests

from inferd_harness import HTTP_TIMEOUT_S, InferdServer, assert_error, metric, wait_until

# How long the "busy" request keeps the only instance occupied. Everything the tests queue
# behind it is sent well within this, even on a loaded 2-core machine.
BUSY_S = 3.0
# How long each request of the full-queue test runs.
SLOW_S = 0.5


def _write_sequencer(model_dir, queue: str):
    import torch

    class Sequencer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.count = 0
            self.register_buffer("w", torch.randn(128, 128, generator=torch.Generator()
                                                  .manual_seed(0)) / 12)

        def forward(self, x):
            n = int(x[:, 0].max().item())
            acc = torch.ones(32, 128)
            for _ in range(n):
                acc = torch.tanh(acc @ self.w)
            self.count += 1
            seq = torch.full_like(x[:, 0:1], float(self.count)) + acc.mean() * 0.0
            return torch.cat([x[:, 1:2] * 2.0, seq], dim=1)

    (model_dir / "1").mkdir(parents=True)
    torch.jit.script(Sequencer()).save(str(model_dir / "1" / "model.pt"))
    (model_dir / "config.yaml").write_text(f"""
backend: torch
max_batch_size: 8
inputs:
  - {{name: x, datatype: FP32, dims: [2]}}
outputs:
  - {{name: y, datatype: FP32, dims: [2]}}
instances:
  - {{count: 1, device: cpu}}
# One request per run: the model numbers its runs, and the tests read the order from that.
dynamic_batching: {{enabled: false}}
queue: {queue}
parameters: {{freeze: false}}
""")


def _warm_up_and_calibrate(server, models) -> float:
    """Spin iterations per second, as measured on the server. TorchScript's profiling executor
    runs a method's first calls, and code it has not yet seen run, several times slower, so
    every model first runs a few requests that go through the loop."""
    for model in models:
        for _ in range(3):
            resp = server.post(f"/v2/models/{model}/infer", raw=_body(50, 0))
            assert resp.status_code == 200, resp.text
    # The fastest of a few runs: the busy request must last at least as long as planned.
    infer = f"/v2/models/{models[0]}/infer"
    iterations = 2000
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        resp = server.post(infer, raw=_body(iterations, 0))
        assert resp.status_code == 200, resp.text
        best = min(best, time.perf_counter() - start)
    return iterations / best


QUEUES = {
    "bounded": "{max_queue_size: 2}",
    "timeouts": "{}",
    "timeouts_429": "{timeout_status: 429}",
    "priorities": "{priority_levels: 2}",
}


@pytest.fixture(scope="module")
def queue_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("queue_repo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchScript deprecation warnings
        for name, queue in QUEUES.items():
            _write_sequencer(root / name, queue)
    server = InferdServer(root, root / "inferd.log", name="queue_server").start()
    server.iterations_per_s = _warm_up_and_calibrate(server, list(QUEUES))
    yield server
    server.stop()


def _body(work: float, value: float, **parameters) -> str:
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 2], "data": [work, value]}]}
    if parameters:
        body["parameters"] = parameters
    return json.dumps(body)


def _iterations(server, seconds: float) -> int:
    return int(seconds * server.iterations_per_s)


class Call(threading.Thread):
    """One request on its own thread; `resp` (or `error`) once joined."""

    def __init__(self, server, path, body, headers=None):
        super().__init__(daemon=True)
        self.server, self.path, self.body, self.headers = server, path, body, headers or {}
        self.resp: requests.Response | None = None
        self.error: BaseException | None = None
        self.start()

    def run(self):
        try:
            self.resp = requests.post(self.server.url + self.path, data=self.body,
                                      headers={"Content-Type": "application/json",
                                               **self.headers}, timeout=HTTP_TIMEOUT_S)
        except BaseException as e:  # reported by result()
            self.error = e

    def result(self) -> requests.Response:
        self.join(HTTP_TIMEOUT_S + 10)
        assert not self.is_alive(), f"no answer to {self.path} {self.body[:100]}"
        assert self.error is None, repr(self.error)
        return self.resp


def _stats(server, model) -> dict:
    resp = server.get(f"/v2/models/{model}/stats")
    assert resp.status_code == 200, resp.text
    return resp.json()["model_stats"][0]


def _count(stats, outcome) -> int:
    return stats["inference_stats"][outcome]["count"]


def _queue_depth(server, model) -> int:
    return _stats(server, model)["queue_depth"]


def _wait_for_queue_depth(server, model, depth, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _queue_depth(server, model) >= depth:
            return
        time.sleep(0.01)
    pytest.fail(f"{model}: queue never reached {depth} (now {_queue_depth(server, model)})")


def _http_in_flight(server) -> float:
    """HTTP requests read and not yet answered (this scrape included)."""
    return metric(server, "inferd_http_requests_in_flight")


def _occupy(server, model) -> Call:
    """Starts a request that keeps `model`'s only instance busy for about BUSY_S, and returns
    once the instance has started it."""
    in_flight = _http_in_flight(server)
    busy = Call(server, f"/v2/models/{model}/infer",
                _body(_iterations(server, BUSY_S), -1.0))
    # A probe queued behind it proves that the instance is busy (with one instance, a queued
    # request means a running one), and that the busy request is the running one: the probe
    # is sent once the server has read the busy request.
    wait_until(lambda: _http_in_flight(server) > in_flight, 30,
               f"the server reads the busy request for {model}")
    probe = Call(server, f"/v2/models/{model}/infer", _body(0, -2.0))
    _wait_for_queue_depth(server, model, 1)
    busy.probe = probe
    return busy


def _y(resp) -> list[float]:
    out = resp.json()["outputs"][0]
    assert out["name"] == "y" and out["shape"] == [1, 2], out
    return out["data"]


def test_full_queue_answers_429_with_retry_after_and_the_rest_succeed(queue_server):
    server = queue_server
    before = _stats(server, "bounded")
    n = 12
    start = threading.Barrier(n, timeout=60)
    results: list = [None] * n

    def client(k):
        start.wait()
        results[k] = requests.post(server.url + "/v2/models/bounded/infer",
                                   data=_body(_iterations(server, SLOW_S), k),
                                   headers={"Content-Type": "application/json"},
                                   timeout=HTTP_TIMEOUT_S)

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HTTP_TIMEOUT_S + 10)
    assert all(r is not None for r in results), "some requests got no answer"

    statuses = [r.status_code for r in results]
    assert set(statuses) <= {200, 429}, statuses
    # One running and two queued at most while the others arrive within SLOW_S.
    assert statuses.count(429) >= 1, statuses
    assert statuses.count(200) >= 3, statuses
    for k, resp in enumerate(results):
        if resp.status_code == 200:
            assert _y(resp)[0] == 2 * k, resp.text
        else:
            assert_error(resp, 429, "max_queue_size 2", "bounded")
            assert resp.headers.get("Retry-After") == "1", resp.headers

    # Still serving, and the refusals are counted as failures.
    after = server.post("/v2/models/bounded/infer", raw=_body(0, 7))
    assert after.status_code == 200, after.text
    assert _y(after)[0] == 14
    stats = _stats(server, "bounded")
    assert _count(stats, "fail") - _count(before, "fail") == statuses.count(429), stats
    assert _count(stats, "success") - _count(before, "success") == statuses.count(200) + 1, stats


@pytest.mark.parametrize("model,status", [("timeouts", 504), ("timeouts_429", 429)])
def test_request_that_waits_past_its_timeout_is_answered_without_running(queue_server, model,
                                                                         status):
    server = queue_server
    before = _stats(server, model)
    busy = _occupy(server, model)
    infer = f"/v2/models/{model}/infer"
    late = [Call(server, infer, _body(0, 10 + k, timeout=1000)) for k in range(3)]
    late_header = Call(server, infer, _body(0, 20), {"Inference-Timeout-Us": "1000"})
    late_predict = Call(server, f"/predict?model={model}", json.dumps({"input": [0, 21]}),
                        {"Inference-Timeout-Us": "1000"})
    patient = Call(server, infer, _body(0, 30, timeout=120_000_000))

    # Answered on time, while the only instance is still busy (for about BUSY_S).
    for call in late + [late_header, late_predict]:
        resp = call.result()
        message = assert_error(resp, status, "timeout", "1000 us")
        assert model in message
        if status == 429:
            assert resp.headers.get("Retry-After") == "1", resp.headers
    assert busy.is_alive(), "the late requests were answered only after the busy one"
    assert busy.result().status_code == 200, busy.resp.text
    assert patient.result().status_code == 200, patient.resp.text
    assert _y(patient.resp)[0] == 60
    assert busy.probe.result().status_code == 200

    stats = _stats(server, model)
    # The expired requests never ran: only the busy one, the probe and the patient one did.
    assert stats["execution_count"] - before["execution_count"] == 3, stats
    assert _count(stats, "fail") - _count(before, "fail") == 5, stats


@pytest.mark.parametrize("value", ["soon", "-1", "1.5", ""])
def test_malformed_timeout_header_is_400(queue_server, value):
    server = queue_server
    for path, body in [("/v2/models/timeouts/infer", _body(0, 1)),
                       ("/predict?model=timeouts", json.dumps({"input": [0, 1]}))]:
        resp = requests.post(server.url + path, data=body,
                             headers={"Content-Type": "application/json",
                                      "Inference-Timeout-Us": value}, timeout=HTTP_TIMEOUT_S)
        if value == "":
            assert resp.status_code == 200, resp.text  # an empty header is no header
        else:
            assert_error(resp, 400, "Inference-Timeout-Us", value)


def test_high_priority_requests_overtake_queued_low_priority_ones(queue_server):
    server = queue_server
    infer = "/v2/models/priorities/infer"
    busy = _occupy(server, "priorities")  # its probe has the default level: 2, the lowest
    low = [Call(server, infer, _body(0, 100 + k, priority=2)) for k in range(3)]
    _wait_for_queue_depth(server, "priorities", 1 + 3)
    high = [Call(server, infer, _body(0, 200 + k, priority=1)) for k in range(3)]
    _wait_for_queue_depth(server, "priorities", 1 + 3 + 3)

    busy_seq = _y(busy.result())[1]
    order = {}
    for name, calls in [("low", low), ("high", high)]:
        for k, call in enumerate(calls):
            resp = call.result()
            assert resp.status_code == 200, resp.text
            value, seq = _y(resp)
            assert value == 2 * (100 + k if name == "low" else 200 + k)
            order[seq] = f"{name}{k}"
    probe_seq = _y(busy.probe.result())[1]
    assert all(seq > busy_seq for seq in order), (busy_seq, order)
    ran = [order[seq] for seq in sorted(order)]
    # Every high one before every low one; FIFO within a level is not asserted, as the
    # requests of one level were sent concurrently.
    assert sorted(ran[:3]) == ["high0", "high1", "high2"], ran
    assert sorted(ran[3:]) == ["low0", "low1", "low2"], ran
    assert probe_seq < min(seq for seq, name in order.items() if name.startswith("low"))


def test_priority_outside_the_levels_is_400(queue_server):
    server = queue_server
    resp = server.post("/v2/models/priorities/infer", raw=_body(0, 1, priority=3))
    assert_error(resp, 400, "priority 3", "1 (highest) to 2")
    resp = server.post("/v2/models/timeouts/infer", raw=_body(0, 1, priority=2))
    assert_error(resp, 400, "priority 2", "1 (highest) to 1")
    resp = server.post("/v2/models/priorities/infer", raw=_body(0, 1, priority=-1))
    assert_error(resp, 400, "priority")
    resp = server.post("/v2/models/priorities/infer", raw=_body(0, 1, priority=1))
    assert resp.status_code == 200, resp.text
