"""SIGTERM with gRPC calls in flight: each finishes with the right answer, then the process
exits 0 (the gRPC server drains with the HTTP server)."""

from __future__ import annotations

import signal
import time

import grpc
import numpy as np

from tools.grpc_stubs import pb, pb_grpc
from inferd_harness import ATOL, make_repository

N_REQUESTS = 4
ROWS = 16  # text_classifier's max_batch_size: each call takes a noticeable time


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
        time.sleep(0.2)  # the calls have reached the server
        server.proc.send_signal(signal.SIGTERM)
        for r, future in zip(rows, futures):
            response = future.result()
            got = np.frombuffer(response.raw_output_contents[0], "<f4").reshape(ROWS, 2)
            np.testing.assert_allclose(got, torch_ref.run("text_classifier", r), atol=ATOL)
    assert server.proc.wait(timeout=30) == 0
    assert "stopped" in server.log() and "drain timed out" not in server.log()
