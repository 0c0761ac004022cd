"""The C++ client (src/client, through build/inferd_client_example) against the real server:
HTTP and gRPC, sync and async, give PyTorch's answer; an error comes back as the server's
status."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from inferd_harness import INFERD_BINARY

EXAMPLE = INFERD_BINARY.parent / "inferd_client_example"


def test_cpp_client_http_and_grpc_sync_and_async(demo_server, torch_ref):
    if not EXAMPLE.is_file():
        pytest.fail(f"{EXAMPLE} not built")
    out = subprocess.run([str(EXAMPLE), "--http", f"127.0.0.1:{demo_server.port}",
                          "--grpc", f"127.0.0.1:{demo_server.grpc_port}"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = {entry["transport"]: entry for entry in map(json.loads, out.stdout.splitlines())}
    # The example's rows: row r, column c = (r + 1) * c / 1000.
    rows = np.array([[(r + 1) * c / 1000.0 for c in range(256)] for r in range(2)], np.float32)
    expected = torch_ref.run("mlp_scorer", rows).ravel()
    for transport in ("http-sync", "http-async", "grpc-sync", "grpc-async"):
        entry = lines[transport]
        assert entry["output"] == "score" and entry["shape"] == [2, 1], entry
        np.testing.assert_allclose(entry["data"], expected, atol=1e-5)
    assert lines["http-bad-shape"]["error"] == "INVALID_ARGUMENT"
    assert lines["grpc-bad-shape"]["error"] == "INVALID_ARGUMENT"
