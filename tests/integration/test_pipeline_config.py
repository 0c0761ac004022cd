"""Pipelines whose config is wrong (backend: pipeline): each is UNAVAILABLE in the repository
index with a reason naming the file and the field to fix, while the models around it serve.
Parse-time faults (a cycle) and load-time faults (an unknown model, op or param; a dtype or
shape that does not match between steps) alike."""

from __future__ import annotations

import pytest

from pipeline_helpers import add_pipeline, copy_demo, index_by_name

DIGITS_IN = [{"name": "pixels", "datatype": "FP32", "dims": [64]}]
TOP_OUT = [{"name": "top", "datatype": "BYTES", "dims": [3]}]


def _digits_top(**step_overrides) -> dict:
    net = {"name": "net", "model": "digits", "inputs": {"pixels": "pixels"},
           "outputs": {"probabilities": "probs"}}
    top = {"name": "top", "op": "top_k", "inputs": {"x": "probs"}, "outputs": {"labels": "top"},
           "params": {"k": 3}}
    net.update(step_overrides.get("net", {}))
    top.update(step_overrides.get("top", {}))
    return {"max_batch_size": 8, "inputs": DIGITS_IN, "outputs": TOP_OUT,
            "pipeline": {"steps": [net, top]}}


BROKEN = {
    "cycle": ({"max_batch_size": 8, "inputs": DIGITS_IN,
               "outputs": [{"name": "b_out", "datatype": "FP32", "dims": [64]}],
               "pipeline": {"steps": [
                   {"name": "a", "op": "softmax", "inputs": {"x": "b_out"}, "outputs": {"y": "a_out"}},
                   {"name": "b", "op": "softmax", "inputs": {"x": "a_out"}, "outputs": {"y": "b_out"}},
               ]}},
              ["config.yaml", "pipeline.steps: cycle a -> b -> a",
               "steps[0].inputs.x reads b's output 'b_out'"]),
    "unknown_model": (_digits_top(net={"model": "digitz"}),
                      ["config.yaml", "pipeline.steps[0].model: no model 'digitz' in the repository"]),
    "dtype_mismatch": ({"max_batch_size": 8,
                        "inputs": [{"name": "pixels", "datatype": "INT64", "dims": [64]}],
                        "outputs": TOP_OUT, "pipeline": _digits_top()["pipeline"]},
                       ["pipeline.steps[0].inputs.pixels: model 'digits' takes FP32 [64]",
                        "the pipeline input 'pixels' gives INT64 [64]"]),
    "shape_mismatch": ({"max_batch_size": 8,
                        "inputs": [{"name": "pixels", "datatype": "FP32", "dims": [32]}],
                        "outputs": TOP_OUT, "pipeline": _digits_top()["pipeline"]},
                       ["pipeline.steps[0].inputs.pixels: model 'digits' takes FP32 [64]",
                        "gives FP32 [32]"]),
    "unknown_op": (_digits_top(top={"op": "top_kk"}),
                   ["pipeline.steps[1].op: 'top_kk' is not an op (known: ", "softmax", "top_k"]),
    "unknown_param": (_digits_top(top={"params": {"k": 3, "kk": 4}}),
                      ["pipeline.steps[1]", "params.kk: unknown field"]),
    "labels_count": (_digits_top(top={"params": {"k": 3, "labels": "labels.txt"}}),
                     ["pipeline.steps[1].inputs.x: op 'top_k' takes FP32 [4]",
                      "steps[0] ('net') gives FP32 [10]"]),
    "batch_too_big": ({**_digits_top(), "max_batch_size": 128},
                      ["pipeline.steps[0].model: model 'digits' takes batches of at most 64"]),
    "not_on_torch": ({"backend": "torch", "pipeline": {"steps": []}},
                     ["pipeline: is for backend: pipeline only"]),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from inferd_harness import InferdServer
    repo = tmp_path_factory.mktemp("pipeline_config") / "repo"
    repo.mkdir()
    copy_demo(repo, "digits")
    for name, (config, _) in BROKEN.items():
        folder = add_pipeline(repo, name, config, assets={"labels.txt": "a\nb\nc\nd\n"})
        if name == "not_on_torch":  # add_pipeline writes backend: pipeline first; override it
            text = (folder / "config.yaml").read_text().replace("backend: pipeline\n", "", 1)
            (folder / "config.yaml").write_text(text)
    add_pipeline(repo, "good", _digits_top())
    log = tmp_path_factory.mktemp("pipeline_config_log") / "inferd.log"
    srv = InferdServer(repo, log, name="pipeline_config").start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_pipeline_is_unavailable_naming_the_field(server, name):
    row = index_by_name(server)[name]
    assert row["state"] == "UNAVAILABLE", row
    for fragment in BROKEN[name][1]:
        assert fragment in row["reason"], f"{fragment!r} not in {row['reason']!r}"


def test_the_good_pipeline_and_its_step_model_serve_beside_the_broken_ones(server):
    rows = index_by_name(server)
    assert rows["good"]["state"] == "READY", rows["good"]
    assert rows["digits"]["state"] == "READY", rows["digits"]
    resp = server.post("/v2/models/good/infer", {"inputs": [
        {"name": "pixels", "datatype": "FP32", "shape": [1, 64], "data": [0.0] * 64}]})
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["shape"] == [1, 3]
