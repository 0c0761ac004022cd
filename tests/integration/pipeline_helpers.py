"""Helpers for the pipeline tests (test_pipeline_*.py): repositories that hold demo model
copies and pipeline folders (backend: pipeline) over them."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import yaml

from inferd_harness import DEMO_MODELS


def copy_demo(repo: Path, name: str, demo: str | None = None) -> Path:
    """<repo>/<name>/ as a copy of demo model `demo` (default: `name`)."""
    target = repo / name
    shutil.copytree(DEMO_MODELS / (demo or name), target)
    return target


def add_pipeline(repo: Path, name: str, config: dict, assets: dict[str, str] | None = None,
                 version: int = 1) -> Path:
    """<repo>/<name>/config.yaml (backend: pipeline added) and a version folder holding
    `assets` ({file name: text})."""
    folder = repo / name
    (folder / str(version)).mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(
        yaml.safe_dump({"backend": "pipeline", **config}, sort_keys=False))
    for file, text in (assets or {}).items():
        (folder / str(version) / file).write_text(text)
    return folder


def index_by_name(server) -> dict[str, dict]:
    resp = server.post("/v2/repository/index", raw="")
    assert resp.status_code == 200, resp.text
    return {row["name"]: row for row in resp.json()}


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the k best per row; ties: the lower index first (stable sort)."""
    order = np.argsort(-scores, axis=-1, kind="stable")[..., :k]
    return order, np.take_along_axis(scores, order, axis=-1)


def kserve_input(name: str, array: np.ndarray, datatype: str = "FP32") -> dict:
    return {"name": name, "datatype": datatype, "shape": list(array.shape),
            "data": array.flatten().tolist()}


def output(resp_json: dict, name: str):
    for out in resp_json["outputs"]:
        if out["name"] == name:
            return out
    raise AssertionError(f"no output {name!r} in {resp_json}")
