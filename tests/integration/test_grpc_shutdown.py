"""SIGTERM with gRPC calls in flight: each finishes with the right answer, then the process
exits 0 (the gRPC server drains with the HTTP server).

"In flight" is shown, not assumed: the signal goes only once /metrics reports calls waiting
in the model's queue, and the test fails if every call had already been answered when it
went (then it would prove nothing about draining)."""

from __future__ import annotations

import signal
import time

import grpc
import numpy as np
import requests
from prometheus_client.parser import text_string_to_metric_families

from tools.grpc_stubs import pb, pb_grpc
from inferd_harness import ATOL, make_repository

N_REQUESTS = 8
ROWS = 16  # text_classifier's max_batch_size: each call is a batch of its own, run in turn


def queue_depth(port: int, model: str) -> float:
    text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "inferd_queue_depth" and sample.labels.get("model") == model:
                return sample.value
    return 0.0


def wait_for_queued_calls(port: int, model: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while queue_depth(port, model) < 1:
        assert time.monotonic() < deadline, f"no call reached {model}'s queue in {timeout_s} s"
        time.sleep(0.01)


def test_sigterm_finishes_grpc_calls_in_flight(start_server, tmp_path, torch_ref):
    repo = make_repository(tmp_path / "repo", {"text_classifier": "text_classifier"})
    server = start_server(repo, "--shutdown-timeout", "20")
    rows = [np.random.RandomState(s).randint(0, 1000, (ROWS, 128)).astype(np.int64)
            for s in range(N_REQUESTS)]
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        futures = []
        for r in rows:
            request = pb.ModelInferRequest(model_name="text_classifier")
            request.inputs.add(name="token_ids", datatype="INT64", shape=[ROWS, 128])
            request.raw_input_contents.append(r.tobytes())
            futures.append(stub.ModelInfer.future(request, timeout=60))
        wait_for_queued_calls(server.port, "text_classifier")
        unanswered = sum(not future.done() for future in futures)
        server.proc.send_signal(signal.SIGTERM)
        assert unanswered >= 1, "every call was answered before SIGTERM: nothing was drained"
        for r, future in zip(rows, futures):
            response = future.result()
            got = np.frombuffer(response.raw_output_contents[0], "<f4").reshape(ROWS, 2)
            np.testing.assert_allclose(got, torch_ref.run("text_classifier", r), atol=ATOL)
    assert server.proc.wait(timeout=30) == 0
    assert "stopped" in server.log() and "drain timed out" not in server.log()
