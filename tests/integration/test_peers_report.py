"""bench/peers without running a server: every row of the peers table names what its server
ran, BentoML's answer shape is checked like the others', and a server's worker that starts a
session of its own (BentoML's) is still counted and stopped."""

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "peers"))

import peer_servers as ps  # noqa: E402
import peers_bench  # noqa: E402
import peers_report  # noqa: E402

SPEC = ps.ModelSpec("mlp_scorer", "/nonexistent/model.pt", "features", "FP32", [256], "score",
                    [1], 32, 1000)


def _run_record(tmp_path) -> dict:
    """A run's record as peers_bench writes it, with the configs the real make_* functions
    give and one wrk cell per server."""
    configs = {"mlp_scorer/inferd": "backend: torch\nmax_batch_size: 32\n",
               "mlp_scorer/triton": ps.triton_config(SPEC),
               "mlp_scorer/bentoml": ps.make_bentoml(SPEC, str(tmp_path)).config}
    for name in ("ray", "litserve", "kserve"):
        configs[f"mlp_scorer/{name}"] = ps.make_python_app(name, SPEC, str(tmp_path)).config
    cells = [{"model": "mlp_scorer", "client": "wrk-json", "concurrency": 8, "peer": peer,
              "runs": [{"qps": 90.0}, {"qps": 100.0}, {"qps": 120.0}], "errors": [],
              "summary": {"qps": 100.0, "p50_ms": 1.0, "p99_ms": 2.0, "cpu_ms": 1.0,
                          "errors": 0, "requests": 100, "rounds": 1}} for peer in ps.ALL]
    return {"date": "2026-12-06", "bench_command": "bench/peers/run", "git_commit": "x",
            "started": "s", "ended": "e", "perf_analyzer": "pa",
            "machine": {"nproc": 2, "cpu_model": "cpu", "kernel": "k", "wrk": "wrk"},
            "loadavg": {"start": [1, 1, 1], "end": [1, 1, 1]},
            "settings": {"peers": list(ps.ALL), "models": ["mlp_scorer"], "concurrency": [8],
                         "clients": ["wrk-json"], "warmup_requests": 20, "warmup": 2,
                         "duration": 8, "rounds": 1, "max_batch": {"mlp_scorer": 32},
                         "queue_delay_us": {"mlp_scorer": 1000}, "slo_ms": 100.0},
            "versions": peers_bench.versions(list(ps.ALL)), "configs": configs,
            "fronts": {}, "cells": cells, "checks": [], "failures": [], "batching": {},
            "idle_cores": {}}


def test_every_row_names_what_its_server_ran(tmp_path):
    rep = _run_record(tmp_path)
    text = peers_report.markdown(rep, "peers")
    rows = {peer: [line for line in text.splitlines() if line.startswith("| 8 | ")
                   and peers_report.ran(rep, "mlp_scorer", peer) in line] for peer in ps.ALL}
    assert all(len(found) == 1 for found in rows.values()), rows
    for peer in ps.ALL:
        label = peers_report.ran(rep, "mlp_scorer", peer)
        assert "?" not in label, label  # every setting found in the run's own record
        assert ("32" in label) or peer in ("inferd-autotune", "kserve"), label  # its batch
    assert all("| 100.0 | 90.0–120.0 |" in found[0] for found in rows.values())  # the spread
    assert "Python backend" in peers_report.ran(rep, "mlp_scorer", "triton")
    assert "max_queue_delay 1000 µs" in peers_report.ran(rep, "mlp_scorer", "triton")
    bento = peers_report.ran(rep, "mlp_scorer", "bentoml")
    assert bento.startswith("BentoML 1.4.40, adaptive batching"), bento
    assert f"max_latency_ms {ps.BENTOML_MAX_LATENCY_MS}" in bento and "1 worker" in bento
    # The stronger Triton that cannot run here is named wherever Triton is measured.
    assert "LibTorch" in text and "ONNX Runtime" in text
    assert "no batching" in peers_report.ran(rep, "mlp_scorer", "kserve")
    assert "agent sidecar" in text  # KServe's batcher, which cannot run here
    rep["settings"]["peers"] = ["inferd", "bentoml"]
    assert "LibTorch" not in peers_report.markdown(rep, "peers")


def test_bentoml_answer_array_is_checked_against_the_expected_row():
    body = {"expected_name": "score", "expected": [0.5]}
    good = {"status": 200, "body": [{"name": "score", "shape": [1, 1], "data": [0.5]}]}
    wrong = {"status": 200, "body": [{"name": "score", "shape": [1, 1], "data": [0.6]}]}
    other = {"status": 200, "body": [{"name": "logits", "shape": [1, 1], "data": [0.5]}]}
    assert peers_bench.check(good, body).startswith("matches")
    assert peers_bench.check(wrong, body).startswith("DIFFERS")
    assert peers_bench.check(other, body).startswith("FAILED: no output 'score'")


def test_a_worker_in_a_session_of_its_own_is_counted_and_stopped(tmp_path):
    # The server starts a worker with setsid, as BentoML's process manager does.
    script = ("import subprocess, sys, time\n"
              "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
              " start_new_session=True)\n"
              "print(w.pid, flush=True)\n"
              "time.sleep(60)\n")
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    worker = int(server.stdout.readline())
    peer = ps.Peer("bentoml", "mlp_scorer", [], str(tmp_path / "log"), "", process=server)
    try:
        assert worker in ps.session_pids(server.pid)
        ps.stop(peer, grace_s=5)
        deadline = time.monotonic() + 5
        while Path(f"/proc/{worker}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # a killed child of an exited parent is reaped by init
        assert not Path(f"/proc/{worker}").exists(), "the worker outlived stop()"
    finally:
        server.kill()
        subprocess.run(["kill", "-9", str(worker)], capture_output=True)
