"""Helpers shared by the model lifecycle tests (test_lifecycle_*.py): repositories of demo
model copies, config edits, the repository index and lifecycle stats, and polling."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

from inferd_harness import DEMO_MODELS, load_sample, output_array, sample_request


def copy_model(root: Path, name: str, demo: str, versions=(1,), extra_config: str = "") -> Path:
    """<root>/<name>/ with demo model `demo`'s config (plus `extra_config`) and its version 1
    file copied into each of `versions`."""
    model_dir = root / name
    model_dir.mkdir(parents=True, exist_ok=True)
    config = (DEMO_MODELS / demo / "config.yaml").read_text()
    (model_dir / "config.yaml").write_text(config + extra_config)
    for version in versions:
        (model_dir / str(version)).mkdir(exist_ok=True)
        shutil.copy(DEMO_MODELS / demo / "1" / "model.pt", model_dir / str(version) / "model.pt")
    return model_dir


def index(server) -> list[dict]:
    resp = server.post("/v2/repository/index", raw="")
    assert resp.status_code == 200, resp.text
    return resp.json()


def state(server, name: str, version: int | None = None) -> dict | None:
    for row in index(server):
        if row["name"] == name and (version is None or row.get("version") == str(version)):
            return row
    return None


def lifecycle(server) -> dict:
    resp = server.get("/v2/repository/stats")
    assert resp.status_code == 200, resp.text
    return resp.json()


def wait_for(predicate, timeout_s: float = 20.0, interval_s: float = 0.05, what: str = ""):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what or predicate}")


def infer(server, name: str, demo: str, session=None, version: int | None = None):
    path = f"/v2/models/{name}" + (f"/versions/{version}" if version else "") + "/infer"
    return server.post(path, sample_request(demo), session=session)


def assert_sample_output(resp, demo: str) -> None:
    assert resp.status_code == 200, resp.text
    expected = load_sample(demo)["expected_outputs"][0]
    got = output_array(resp.json(), expected["name"])
    want = np.asarray(expected["data"], dtype=np.float64).reshape(expected["shape"])
    assert np.allclose(got, want, atol=1e-4), "wrong output"
