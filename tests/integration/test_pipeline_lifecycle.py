"""A pipeline pins nothing: with a memory budget that fits only one of two step models,
requests alternating between two pipelines (one over each model) all succeed, the step models
are evicted and reloaded in turn, and the pipelines stay READY."""

from __future__ import annotations

import numpy as np

from inferd_harness import load_sample
from lifecycle_helpers import copy_model, lifecycle
from pipeline_helpers import add_pipeline, index_by_name, kserve_input, output


def _pipeline_over(model: str) -> dict:
    return {"max_batch_size": 8,
            "inputs": [{"name": "pixels", "datatype": "FP32", "dims": [64]}],
            "outputs": [{"name": "best", "datatype": "INT64", "dims": [1]}],
            "pipeline": {"steps": [
                {"name": "net", "model": model, "inputs": {"pixels": "pixels"},
                 "outputs": {"probabilities": "probs"}},
                {"name": "pick", "op": "argmax", "inputs": {"x": "probs"},
                 "outputs": {"index": "best"}}]}}


def test_pipelines_keep_answering_while_their_step_models_take_turns(start_server, tmp_path):
    probe_repo = tmp_path / "probe"
    copy_model(probe_repo, "digits", "digits")
    probe = start_server(probe_repo)
    [row] = [v for v in lifecycle(probe)["versions"] if v["name"] == "digits"]
    probe.stop()
    size = row["memory_bytes"]
    assert size > 0, row

    repo = tmp_path / "repo"
    for i, name in enumerate(["digits_a", "digits_b"]):
        folder = copy_model(repo, name, "digits")
        with open(folder / "1" / "model.pt", "ab") as f:  # distinct files: no shared weights
            f.write(b"\0" * (i + 1))
        add_pipeline(repo, f"pipe_{name[-1]}", _pipeline_over(name))
    server = start_server(repo, "--lazy-load", "--memory-budget", f"cpu={size + size // 2}")

    item = load_sample("digits")["inputs"][0]
    pixels = np.asarray(item["data"], dtype=np.float32).reshape(item["shape"])
    expected = None
    for i in range(10):
        pipe = "pipe_a" if i % 2 == 0 else "pipe_b"
        resp = server.post(f"/v2/models/{pipe}/infer", {"inputs": [kserve_input("pixels", pixels)]})
        assert resp.status_code == 200, (i, pipe, resp.text)
        best = output(resp.json(), "best")["data"]
        expected = expected or best
        assert best == expected, (i, pipe, best)

    counters = lifecycle(server)["counters"]
    assert counters["evictions"] >= 8, counters
    assert counters["reloads"] >= 8, counters
    rows = index_by_name(server)
    assert rows["pipe_a"]["state"] == "READY", rows["pipe_a"]
    assert rows["pipe_b"]["state"] == "READY", rows["pipe_b"]
    # At most one step model fits at a time.
    ready_steps = [n for n in ("digits_a", "digits_b") if rows[n]["state"] == "READY"]
    assert len(ready_steps) <= 1, rows
