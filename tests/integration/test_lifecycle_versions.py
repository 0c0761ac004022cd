"""Versions and zero-downtime updates: version_policy and /versions/V, the load/unload API,
a hot swap under continuous load with zero failed requests, and integrity: corrupt,
truncated and digest-mismatched files fail their load with a reason while the served
version keeps serving."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading

import requests

from inferd_harness import DEMO_MODELS, assert_error
from lifecycle_helpers import (assert_sample_output, copy_model, index, infer, lifecycle, state,
                               wait_for)


def test_version_policy_all_serves_every_version_on_every_endpoint(start_server, tmp_path):
    copy_model(tmp_path / "repo", "m", "digits", versions=(1, 2), extra_config="version_policy: all\n")
    server = start_server(tmp_path / "repo")
    meta = server.get("/v2/models/m").json()
    assert meta["versions"] == ["1", "2"], meta
    for version in (1, 2):
        assert server.get(f"/v2/models/m/versions/{version}").status_code == 200
        assert server.get(f"/v2/models/m/versions/{version}/ready").status_code == 200
        resp = infer(server, "m", "digits", version=version)
        assert_sample_output(resp, "digits")
        assert resp.json()["model_version"] == str(version)
        assert server.get(f"/v2/models/m/versions/{version}/stats").status_code == 200
    assert infer(server, "m", "digits").json()["model_version"] == "2"
    assert_error(infer(server, "m", "digits", version=3), 404, "no version 3")


def test_default_policy_serves_the_latest_only(start_server, tmp_path):
    copy_model(tmp_path / "repo", "m", "digits", versions=(1, 2))
    server = start_server(tmp_path / "repo")
    assert server.get("/v2/models/m").json()["versions"] == ["2"]
    assert_error(infer(server, "m", "digits", version=1), 404, "served: 2")


def test_explicit_control_load_and_unload(start_server, tmp_path):
    repo = tmp_path / "repo"
    copy_model(repo, "a", "digits")
    copy_model(repo, "b", "digits")
    server = start_server(repo, "--model-control", "explicit", "--load-model", "a")
    assert state(server, "a", 1)["state"] == "READY"
    assert state(server, "b", 1)["state"] == "UNLOADED"
    assert_error(infer(server, "b", "digits"), 503, "not loaded", "repository load request")
    assert server.post("/v2/repository/models/b/load", raw="").status_code == 200
    assert_sample_output(infer(server, "b", "digits"), "digits")
    assert server.post("/v2/repository/models/a/unload", raw="").status_code == 200
    assert state(server, "a", 1)["state"] == "UNLOADED"
    assert_error(infer(server, "a", "digits"), 503, "not loaded")
    assert_error(server.post("/v2/repository/models/nope/load", raw=""), 404, "nope")
    assert_error(server.post("/v2/repository/models/nope/unload", raw=""), 404, "nope")


def test_load_model_needs_explicit_control(tmp_path):
    import subprocess
    from inferd_harness import INFERD_BINARY, clean_env
    copy_model(tmp_path / "repo", "a", "digits")
    proc = subprocess.run([str(INFERD_BINARY), "--model-repository", str(tmp_path / "repo"),
                           "--load-model", "a", "--http-port", "0"],
                          capture_output=True, text=True, timeout=30, env=clean_env())
    assert proc.returncode != 0
    assert "--model-control explicit" in proc.stdout + proc.stderr


def test_hot_swap_under_continuous_load_has_zero_failed_requests(start_server, tmp_path):
    repo = tmp_path / "repo"
    model_dir = copy_model(repo, "m", "mlp_scorer")
    server = start_server(repo)
    stop = threading.Event()
    results: list[tuple[int, str]] = []
    lock = threading.Lock()

    def client():
        with requests.Session() as session:
            while not stop.is_set():
                resp = infer(server, "m", "mlp_scorer", session=session)
                version = resp.json().get("model_version", "") if resp.status_code == 200 else ""
                with lock:
                    results.append((resp.status_code, version or resp.text))

    threads = [threading.Thread(target=client) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: len(results) > 50, what="traffic on version 1")
        # Publish version 2 atomically, then ask for it: it is loaded and warmed while
        # version 1 serves, then takes over.
        staging = model_dir / ".staging"
        staging.mkdir()
        shutil.copy(DEMO_MODELS / "mlp_scorer" / "1" / "model.pt", staging / "model.pt")
        os.rename(staging, model_dir / "2")
        resp = server.post("/v2/repository/models/m/load", raw="")
        assert resp.status_code == 200, resp.text
        count = len(results)
        wait_for(lambda: len(results) > count + 50, what="traffic after the swap")
    finally:
        stop.set()
        for t in threads:
            t.join()
    failures = [r for r in results if r[0] != 200]
    assert failures == [], failures[:5]
    versions = [v for _, v in results]
    assert "1" in versions and "2" in versions
    assert versions[-1] == "2"
    assert server.get("/v2/models/m").json()["versions"] == ["2"]


def _assert_failed_load_keeps_serving(server, version, *fragments):
    resp = server.post("/v2/repository/models/m/load", raw="")
    assert_error(resp, 400, "load failed", *fragments)
    row = state(server, "m", version)
    assert row["state"] == "UNAVAILABLE", row
    for fragment in fragments:
        assert fragment in row["reason"], row
    resp = infer(server, "m", "digits")
    assert_sample_output(resp, "digits")
    assert resp.json()["model_version"] == "1"


def test_truncated_file_fails_its_load_and_the_old_version_keeps_serving(start_server, tmp_path):
    model_dir = copy_model(tmp_path / "repo", "m", "digits")
    server = start_server(tmp_path / "repo")
    data = (DEMO_MODELS / "digits" / "1" / "model.pt").read_bytes()
    (model_dir / "2").mkdir()
    (model_dir / "2" / "model.pt").write_bytes(data[: len(data) // 2])
    _assert_failed_load_keeps_serving(server, 2, "2/model.pt")


def test_corrupt_file_fails_its_load_and_the_old_version_keeps_serving(start_server, tmp_path):
    model_dir = copy_model(tmp_path / "repo", "m", "digits")
    server = start_server(tmp_path / "repo")
    (model_dir / "2").mkdir()
    (model_dir / "2" / "model.pt").write_bytes(b"PK\x03\x04 this is not a model" * 100)
    _assert_failed_load_keeps_serving(server, 2, "2/model.pt", "not a loadable TorchScript file")


def test_sha256_mismatch_fails_the_load_with_a_message_saying_so(start_server, tmp_path):
    model_dir = copy_model(tmp_path / "repo", "m", "digits")
    good = hashlib.sha256((model_dir / "1" / "model.pt").read_bytes()).hexdigest()
    server = start_server(tmp_path / "repo")
    # Version 2 is the same model with one flipped byte; config.yaml pins both digests.
    data = bytearray((model_dir / "1" / "model.pt").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (model_dir / "2").mkdir()
    (model_dir / "2" / "model.pt").write_bytes(bytes(data))
    with open(model_dir / "config.yaml", "a") as f:
        f.write(f"sha256:\n  1: {good}\n  2: {good}\n")
    _assert_failed_load_keeps_serving(server, 2, "SHA-256", "truncated, corrupt")
    assert lifecycle(server)["counters"]["load_failures"] >= 1


def test_index_lists_every_version_with_its_state(start_server, tmp_path):
    copy_model(tmp_path / "repo", "m", "digits", versions=(1, 2), extra_config="version_policy: all\n")
    copy_model(tmp_path / "repo", "lazy", "digits", extra_config="load: lazy\n")
    server = start_server(tmp_path / "repo")
    rows = {(r["name"], r["version"]): r for r in index(server)}
    assert rows[("m", "1")]["state"] == "READY"
    assert rows[("m", "2")]["state"] == "READY"
    assert rows[("lazy", "1")]["state"] == "UNLOADED"
    assert "lazy" in rows[("lazy", "1")]["reason"]
