"""Regression (issue 13, defect 3): a reload after a config.yaml change must load what the new
config says and never use memory freed with the old version.

Before the fix the model manager compared the new config with itself when looking for an
engine to share, so a reload kept the old engine: a torch model whose reload added
`precision: bf16` kept serving fp32, and the ONNX engine (which kept a reference to the old
version's config) answered 500 to every request after two reloads."""

from __future__ import annotations

import shutil

import numpy as np
import yaml

from inferd_harness import DEMO_MODELS, InferdServer, assert_close, output_array
from test_onnx_backend import ONNX_MODELS

PIXELS = np.random.default_rng(5).integers(0, 17, (8, 64)).astype(np.float32)


def _infer_digits(server, name: str):
    return server.post(f"/v2/models/{name}/infer", {"inputs": [{
        "name": "pixels", "datatype": "FP32", "shape": [8, 64],
        "data": PIXELS.reshape(-1).tolist()}]})


def _reload(server, name: str):
    resp = server.post(f"/v2/repository/models/{name}/load", raw="")
    assert resp.status_code == 200, resp.text


def test_torch_reload_adding_bf16_serves_bf16(start_server, tmp_path, torch_ref):
    repo = tmp_path / "repo"
    shutil.copytree(DEMO_MODELS / "digits", repo / "digits")
    server = start_server(repo)
    want = torch_ref.run("digits", PIXELS)
    resp = _infer_digits(server, "digits")
    assert resp.status_code == 200, resp.text
    assert_close(output_array(resp.json(), "probabilities"), want, what="fp32 before reload")

    config = repo / "digits" / "config.yaml"
    config.write_text(yaml.safe_dump({**yaml.safe_load(config.read_text()), "precision": "bf16"}))
    _reload(server, "digits")
    resp = _infer_digits(server, "digits")
    assert resp.status_code == 200, resp.text
    got = output_array(resp.json(), "probabilities")
    assert_close(got, want, atol=0.05, what="bf16 vs fp32")
    assert np.abs(got - want).max() > 1e-6, "after the reload to bf16 the output is still fp32's"


def test_onnx_reloads_with_changed_config_keep_answering(start_server, tmp_path, torch_ref):
    repo = tmp_path / "repo"
    shutil.copytree(ONNX_MODELS / "digits", repo / "digits")
    server = start_server(repo)
    want = torch_ref.run("digits", PIXELS)
    config = repo / "digits" / "config.yaml"
    original = yaml.safe_load(config.read_text())
    # Changes the engine does not depend on, so the loaded session may be shared; each
    # reload retires the version whose config the old engine used to point at.
    for delay in (1000, 2000, 3000):
        config.write_text(yaml.safe_dump(
            {**original, "dynamic_batching": {"max_queue_delay_us": delay}}))
        _reload(server, "digits")
        for _ in range(3):
            resp = _infer_digits(server, "digits")
            assert resp.status_code == 200, f"after the reload with delay {delay}: {resp.text}"
            assert_close(output_array(resp.json(), "probabilities"), want, what="onnx digits")
    # A change the engine does depend on (its intra-op threads) loads a new engine.
    config.write_text(yaml.safe_dump({**original, "parameters": {"intra_op_threads": 1}}))
    _reload(server, "digits")
    resp = _infer_digits(server, "digits")
    assert resp.status_code == 200, resp.text
