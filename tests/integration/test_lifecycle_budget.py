"""Memory budget: 20 models with a budget that fits 4 under random traffic. Every request
succeeds, evictions and reloads are counted, and the memory in use never exceeds the budget.
Also: pinned models stay, and a load that cannot fit gets a clear 503."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor

import requests

from lifecycle_helpers import assert_sample_output, copy_model, infer, lifecycle, state

MODELS = 20


def _weights_bytes(start_server, tmp_path) -> int:
    """The digits model's counted footprint, measured by a server."""
    copy_model(tmp_path / "probe", "digits", "digits")
    probe = start_server(tmp_path / "probe")
    [row] = [v for v in lifecycle(probe)["versions"] if v["name"] == "digits"]
    probe.stop()
    assert row["memory_bytes"] > 0, row
    return row["memory_bytes"]


def test_twenty_models_with_a_budget_for_four_under_random_traffic(start_server, tmp_path):
    size = _weights_bytes(start_server, tmp_path)
    budget = size * 4 + size // 2  # room for 4, not 5
    repo = tmp_path / "repo"
    names = [f"digits_{i:02d}" for i in range(MODELS)]
    for i, name in enumerate(names):
        # Distinct files (a trailing comment in the zip), so that weights are not shared.
        model_dir = copy_model(repo, name, "digits")
        with open(model_dir / "1" / "model.pt", "ab") as f:
            f.write(b"\0" * (i + 1))
    server = start_server(repo, "--lazy-load", "--memory-budget", f"cpu={budget}")

    over_budget = []
    stop = threading.Event()

    def watch_budget():
        while not stop.is_set():
            for device in lifecycle(server)["devices"]:
                if device["used_bytes"] > device["budget_bytes"]:
                    over_budget.append(device)

    watcher = threading.Thread(target=watch_budget)
    watcher.start()
    rng = random.Random(4)
    plan = [rng.choice(names) for _ in range(300)]
    failures = []

    def client(chunk):
        with requests.Session() as session:
            for name in chunk:
                resp = infer(server, name, "digits", session=session)
                if resp.status_code != 200:
                    failures.append((name, resp.status_code, resp.text))
                else:
                    assert_sample_output(resp, "digits")

    try:
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(client, [plan[i::3] for i in range(3)]))
    finally:
        stop.set()
        watcher.join()

    assert failures == [], failures[:5]
    assert over_budget == [], over_budget[:3]
    report = lifecycle(server)
    counters = report["counters"]
    assert counters["evictions"] > 0, counters
    assert counters["reloads"] > 0, counters
    ready = [v for v in report["versions"] if v["state"] == "READY"]
    assert len(ready) <= 4, ready
    assert sum(v["requests"] for v in report["versions"]) == len(plan)
    assert "evicting" in server.log() and "least recently used" in server.log()


def test_pinned_model_stays_and_an_impossible_load_is_a_clear_503(start_server, tmp_path):
    size = _weights_bytes(start_server, tmp_path)
    repo = tmp_path / "repo"
    copy_model(repo, "pinned", "digits", extra_config="pin: true\n")
    model_dir = copy_model(repo, "other", "digits", extra_config="load: lazy\n")
    with open(model_dir / "1" / "model.pt", "ab") as f:
        f.write(b"\0")  # a different file: no weight sharing
    server = start_server(repo, "--memory-budget", f"cpu={size + size // 2}")
    resp = infer(server, "other", "digits")
    assert resp.status_code == 503, resp.text
    message = resp.json()["error"]
    assert "memory budget" in message and "pinned models hold" in message, message
    assert state(server, "pinned", 1)["state"] == "READY"
    assert_sample_output(infer(server, "pinned", "digits"), "digits")
    # The server keeps serving, and the failed model can load once room is made.
    assert server.post("/v2/repository/models/pinned/unload", raw="").status_code == 200
    assert_sample_output(infer(server, "other", "digits"), "digits")


def test_budget_flag_is_validated(start_server, tmp_path):
    import subprocess
    from inferd_harness import INFERD_BINARY, clean_env
    copy_model(tmp_path / "repo", "digits", "digits")
    proc = subprocess.run([str(INFERD_BINARY), "--model-repository", str(tmp_path / "repo"),
                           "--memory-budget", "cpu=lots", "--http-port", "0"],
                          capture_output=True, text=True, timeout=30, env=clean_env())
    assert proc.returncode != 0
    assert "--memory-budget" in proc.stdout + proc.stderr
