"""Triton's perf_analyzer (the one in the tritonclient 2.51.0 wheel, installed into
build/perf-venv by scripts/setup-perf-analyzer) against inferd over HTTP with JSON and binary
tensors, over gRPC, and with the tensors in system shared memory over both. It reads the
model's metadata and config first (GET /v2/models/M/config over HTTP), so this is the test
that a Triton user's first tool works.
Short windows: it checks the tool runs, it is not a benchmark (bench/peers/ is)."""

from __future__ import annotations

import csv
import subprocess

import pytest

from inferd_harness import REPO_ROOT


@pytest.fixture(scope="module")
def perf_analyzer() -> str:
    out = subprocess.run([str(REPO_ROOT / "scripts" / "setup-perf-analyzer")],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip().splitlines()[-1]


def inference_count(server, model: str) -> int:
    stats = server.get(f"/v2/models/{model}/stats").json()
    return sum(s["inference_count"] for s in stats["model_stats"])


@pytest.mark.parametrize("protocol,tensor_format", [("http", "json"), ("http", "binary"),
                                                    ("grpc", "binary"), ("http", "shm"),
                                                    ("grpc", "shm")])
def test_perf_analyzer_runs_against_inferd(demo_server, perf_analyzer, tmp_path, protocol,
                                           tensor_format):
    before = inference_count(demo_server, "mlp_scorer")
    port = demo_server.port if protocol == "http" else demo_server.grpc_port
    report = tmp_path / "pa.csv"
    cmd = [perf_analyzer, "-m", "mlp_scorer", "-i", protocol, "-u", f"127.0.0.1:{port}",
           "--concurrency-range", "1:2:1", "--measurement-interval", "250",
           # The CI machine is shared and noisy: accept any three windows as stable (this
           # checks the tool runs, not the numbers).
           "--stability-percentage", "999", "--max-trials", "10", "-f", str(report)]
    if tensor_format == "shm":
        # Inputs and outputs in system shared memory, which perf_analyzer registers with the
        # server (and unregisters, CUDA regions included, before and after).
        cmd += ["--shared-memory", "system"]
    elif protocol == "http":
        cmd += ["--input-tensor-format", tensor_format, "--output-tensor-format", tensor_format]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = list(csv.DictReader(open(report)))
    assert sorted(r["Concurrency"] for r in rows) == ["1", "2"]  # rows are by throughput
    assert all(float(r["Inferences/Second"]) > 0 for r in rows)
    # The requests reached the model (perf_analyzer counts failed ones as errors and exits 1).
    assert inference_count(demo_server, "mlp_scorer") > before
