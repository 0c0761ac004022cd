"""inferd-perf against the real server: closed and open loop over every protocol, with the
server's breakdown and the CSV, JSON and PNG outputs. Short windows: this checks the tool,
it is not a benchmark."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
import urllib.request

import pytest

from inferd_harness import DEMO_MODELS, REPO_ROOT, free_port
from llm_helpers import LLM_MODEL, generation_stats

PERF = REPO_ROOT / "tools" / "bin" / "inferd-perf"
QUICK = ["--measurement-interval", "0.3", "--warmup", "0.1", "--stable-windows", "2",
         "--max-windows", "2"]


def run_perf(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(PERF), *args], capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("protocol", ["http-json", "http-binary", "grpc"])
def test_closed_loop_every_protocol(demo_server, tmp_path, protocol):
    out = run_perf("-m", "mlp_scorer", "--url", f"127.0.0.1:{demo_server.port}",
                   "--grpc-url", f"127.0.0.1:{demo_server.grpc_port}", "--protocol", protocol,
                   "--concurrency-range", "1:2:1", "--csv", str(tmp_path / "r.csv"),
                   "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.png"), *QUICK)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = list(csv.DictReader(open(tmp_path / "r.csv")))
    assert [r["level"] for r in rows] == ["1", "2"]
    for row in rows:
        assert row["protocol"] == protocol and int(row["requests"]) > 0 and row["errors"] == "0"
        assert 0 < float(row["p50_us"]) <= float(row["p99_us"])
        assert float(row["server_compute_infer_us"]) > 0  # from /v2/models/M/stats
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["meta"]["inputs"][0]["shape"] == [1, 256] and len(report["results"]) == 2
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_open_loop_poisson(demo_server, tmp_path):
    out = run_perf("-m", "mlp_scorer", "--url", f"127.0.0.1:{demo_server.port}",
                   "--request-rate-range", "100:200:100", "--poisson",
                   "--json", str(tmp_path / "r.json"), *QUICK)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = json.loads((tmp_path / "r.json").read_text())["results"]
    assert [r["mode"] for r in rows] == ["rate", "rate"]
    # An open loop sends what it is told to, whatever the latency: ~rate x window x windows.
    for row, rate in zip(rows, (100, 200)):
        assert 0.5 * rate * 0.6 < row["requests"] < 1.5 * rate * 0.6


def test_predict_protocol_drives_seed_endpoint(demo_server):
    out = run_perf("-m", "mlp_scorer", "--url", f"127.0.0.1:{demo_server.port}",
                   "--protocol", "predict", "--input-shape", "features=1,256",
                   "--concurrency-range", "1", *QUICK)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "predict mlp_scorer: 1 clients" in out.stdout


def test_errors_are_counted_and_fail_the_run(demo_server):
    # A shape the model refuses: every request answers 400.
    out = run_perf("-m", "mlp_scorer", "--url", f"127.0.0.1:{demo_server.port}",
                   "--input-shape", "features=1,3", "--concurrency-range", "1", *QUICK)
    assert out.returncode == 1
    assert "errors 0" not in out.stdout


def test_drives_the_flask_baseline(tmp_path):
    """The seed's Flask server (bench/flask_baseline.py) measured by the same tool."""
    port = free_port()
    flask = subprocess.Popen([sys.executable, str(REPO_ROOT / "bench" / "flask_baseline.py"),
                              "--model", str(DEMO_MODELS / "mlp_scorer" / "1" / "model.pt"),
                              "--port", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/predict", timeout=2)
            except urllib.error.HTTPError:
                break  # it answers (405 for GET): up
            except OSError:
                if time.monotonic() > deadline or flask.poll() is not None:
                    pytest.fail("the Flask baseline did not start")
                time.sleep(0.2)
        out = run_perf("-m", "mlp_scorer", "--url", f"127.0.0.1:{port}", "--protocol", "predict",
                       "--input-shape", "input=1,256", "--concurrency-range", "1",
                       "--json", str(tmp_path / "r.json"), *QUICK)
        assert out.returncode == 0, out.stdout + out.stderr
        row = json.loads((tmp_path / "r.json").read_text())["results"][0]
        assert row["requests"] > 0 and row["errors"] == 0
        assert "server_queue_us" not in row  # Flask has no statistics endpoint
    finally:
        flask.terminate()
        flask.wait(timeout=30)


def test_generate_mode_reports_ttft_tpot_and_the_servers_token_counts(llm_server, tmp_path):
    def completion_tokens():
        g = generation_stats(llm_server)
        # Prompt tokens processed plus those reused from the cache: every prompt token.
        return g["completion_tokens"], g["prompt_tokens"] + g["cached_prompt_tokens"]

    before = completion_tokens()
    out = run_perf("-m", LLM_MODEL, "--url", f"127.0.0.1:{llm_server.port}", "--generate",
                   "--prompt-tokens", "16", "--output-tokens", "6", "--requests", "3",
                   "--concurrency-range", "1:2:1", "--json", str(tmp_path / "g.json"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "output tokens/s, TTFT p50" in out.stdout
    rows = json.loads((tmp_path / "g.json").read_text())["results"]
    assert [r["concurrency"] for r in rows] == [1, 2]
    for row in rows:
        assert row["requests"] == 3 and row["errors"] == 0, row
        assert row["output_tokens"] == sum(row["output_tokens_per_request"])
        assert all(1 <= n <= 6 for n in row["output_tokens_per_request"]), row
        assert 0 < row["ttft_p50_ms"] <= row["ttft_p99_ms"] and row["tpot_p50_ms"] > 0
        assert row["output_tokens_per_s"] > 0
        assert 12 <= row["prompt_tokens"] / 3 <= 24, row  # about the 16 asked for
    # The counts are the server's own: its statistics grew by exactly as many tokens.
    after = completion_tokens()
    assert after[0] - before[0] == sum(r["output_tokens"] for r in rows)
    assert after[1] - before[1] == sum(r["prompt_tokens"] for r in rows)
