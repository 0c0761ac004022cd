"""Configs completed from the model file (like Triton's auto-complete): an ONNX folder with
only model.onnx, or a config.yaml that gives only `backend` and `max_batch_size`, serves with
the inputs, outputs, dims and batch axis read from the graph; a TorchScript folder without
a signature is refused with a message that names what to add."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from inferd_harness import (DEMO_METADATA, DEMO_MODELS, REPO_ROOT, assert_close, load_sample,
                            output_array, sample_request)

ONNX_MODELS = Path(os.environ.get("INFERD_DEMO_ONNX_MODELS",
                                  REPO_ROOT / "build" / "demo-models-onnx"))


def _folder(root: Path, name: str, source: Path, config: str | None) -> Path:
    (root / name / "1").mkdir(parents=True)
    shutil.copy(source, root / name / "1" / source.name)
    if config is not None:
        (root / name / "config.yaml").write_text(config)
    return root / name


@pytest.fixture
def completed_server(start_server, tmp_path):
    if not (ONNX_MODELS / "mlp_scorer" / "1" / "model.onnx").is_file():
        pytest.fail(f"ONNX demo twins not found at {ONNX_MODELS}: run scripts/setup")
    root = tmp_path / "repo"
    _folder(root, "bare_onnx", ONNX_MODELS / "mlp_scorer" / "1" / "model.onnx", None)
    _folder(root, "partial_onnx", ONNX_MODELS / "digits" / "1" / "model.onnx",
            "backend: onnx\nmax_batch_size: 8\n")
    _folder(root, "bare_torch", DEMO_MODELS / "mlp_scorer" / "1" / "model.pt", None)
    _folder(root, "partial_torch", DEMO_MODELS / "digits" / "1" / "model.pt",
            "backend: torch\nmax_batch_size: 8\n")
    return start_server(root)


def _index(server) -> dict:
    return {row["name"]: row for row in server.post("/v2/repository/index").json()}


@pytest.mark.parametrize("name,demo", [("bare_onnx", "mlp_scorer"), ("partial_onnx", "digits")])
def test_onnx_folder_serves_with_the_graphs_signature(completed_server, name, demo):
    assert _index(completed_server)[name]["state"] == "READY", _index(completed_server)[name]
    meta = completed_server.get(f"/v2/models/{name}").json()
    assert meta["inputs"] == DEMO_METADATA[demo]["inputs"]
    assert meta["outputs"] == DEMO_METADATA[demo]["outputs"]
    resp = completed_server.post(f"/v2/models/{name}/infer", sample_request(demo))
    assert resp.status_code == 200, resp.text
    for expected in load_sample(demo)["expected_outputs"]:
        assert_close(output_array(resp.json(), expected["name"]).reshape(-1), expected["data"])


def test_bare_onnx_folder_batches_on_its_dynamic_axis(completed_server):
    config = completed_server.get("/v2/models/bare_onnx/config").json()
    assert config["backend"] == "onnx" and config["max_batch_size"] == 32
    assert config["input"][0]["dims"] == [256]
    assert "dynamic_batching" in config
    partial = completed_server.get("/v2/models/partial_onnx/config").json()
    assert partial["max_batch_size"] == 8 and partial["input"][0]["dims"] == [64]


@pytest.mark.parametrize("name,argument", [("bare_torch", "features"),
                                           ("partial_torch", "pixels")])
def test_torchscript_without_signature_names_what_to_add(completed_server, name, argument):
    row = _index(completed_server)[name]
    assert row["state"] == "UNAVAILABLE", row
    reason = row["reason"]
    for fragment in [f"{name}/config.yaml", "inputs: is required for a TorchScript model",
                     f"forward takes ({argument}) and returns 1 tensor(s)",
                     f"inputs: [{{name: {argument}, datatype: FP32, dims: [...]}}]",
                     "outputs: [{name: output0, datatype: FP32, dims: [...]}]"]:
        assert fragment in reason, reason
