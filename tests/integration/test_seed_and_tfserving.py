"""The seed's POST /predict and TF-Serving's POST /v1/models/M:predict."""

import numpy as np
import pytest

from inferd_harness import (assert_close, assert_error, load_sample, make_repository,
                            sample_request)


def _mlp_rows():
    item = sample_request("mlp_scorer")["inputs"][0]
    return np.asarray(item["data"], dtype=np.float32).reshape(item["shape"])


def _digits_rows():
    item = sample_request("digits")["inputs"][0]
    return np.asarray(item["data"], dtype=np.float32).reshape(item["shape"])


def _digits_expected():
    expected = load_sample("digits")["expected_outputs"][0]
    return np.reshape(expected["data"], expected["shape"])


# --- POST /predict ---------------------------------------------------------------------------

def test_predict_single_instance_has_no_batch_dimension(demo_server, torch_ref):
    rows = _mlp_rows()
    resp = demo_server.post("/predict?model=mlp_scorer", {"input": rows[0].tolist()})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert set(body) == {"output"}
    assert isinstance(body["output"], list) and len(body["output"]) == 1
    assert not isinstance(body["output"][0], list), f"batch dimension present: {body}"
    assert_close(body["output"], torch_ref.run("mlp_scorer", rows[:1])[0])


def test_predict_batch_keeps_the_batch_dimension(demo_server, torch_ref):
    rows = _mlp_rows()
    resp = demo_server.post("/predict?model=mlp_scorer", {"input": rows.tolist()})
    assert resp.status_code == 200, resp.text
    output = resp.json()["output"]
    assert len(output) == 2 and all(isinstance(r, list) and len(r) == 1 for r in output), output
    assert_close(output, torch_ref.run("mlp_scorer", rows))


def test_predict_digits_single_instance(demo_server):
    rows = _digits_rows()
    resp = demo_server.post("/predict?model=digits", {"input": rows[1].tolist()})
    assert resp.status_code == 200, resp.text
    assert_close(resp.json()["output"], _digits_expected()[1])


def test_predict_without_model_on_a_multi_model_server_is_400(demo_server):
    resp = demo_server.post("/predict", {"input": _mlp_rows()[0].tolist()})
    assert_error(resp, 400, "--default-model")


@pytest.mark.parametrize("body,fragment", [
    ({"inputs": [[0.0] * 256]}, "input"),
    ({"input": [[0.0] * 255]}, "256"),
    ({"input": "abc"}, "input"),
])
def test_predict_bad_bodies_are_400(demo_server, body, fragment):
    resp = demo_server.post("/predict?model=mlp_scorer", body)
    assert_error(resp, 400, fragment)


def test_predict_unknown_model_is_404(demo_server):
    resp = demo_server.post("/predict?model=no_such_model", {"input": [0.0] * 256})
    assert_error(resp, 404, "no_such_model")


def test_predict_uses_default_model_flag(start_server, small_repository, torch_ref):
    server = start_server(small_repository, "--default-model", "mlp_scorer")
    rows = _mlp_rows()
    resp = server.post("/predict", {"input": rows[0].tolist()})
    assert resp.status_code == 200, resp.text
    assert_close(resp.json()["output"], torch_ref.run("mlp_scorer", rows[:1])[0])
    # ?model= still wins over the default.
    resp = server.post("/predict?model=digits", {"input": _digits_rows()[0].tolist()})
    assert resp.status_code == 200, resp.text
    assert_close(resp.json()["output"], _digits_expected()[0])


def test_predict_uses_the_only_model_without_flag(start_server, tmp_path, torch_ref):
    repo = make_repository(tmp_path / "repo", {"mlp_scorer": "mlp_scorer"})
    server = start_server(repo)
    rows = _mlp_rows()
    resp = server.post("/predict", {"input": rows[1].tolist()})
    assert resp.status_code == 200, resp.text
    assert_close(resp.json()["output"], torch_ref.run("mlp_scorer", rows[1:])[0])


# --- TF-Serving ------------------------------------------------------------------------------

def test_tfserving_row_format_returns_predictions(demo_server):
    resp = demo_server.post("/v1/models/digits:predict", {"instances": _digits_rows().tolist()})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert set(body) == {"predictions"}
    predictions = body["predictions"]
    assert len(predictions) == 2 and all(len(p) == 10 for p in predictions), predictions
    assert_close(predictions, _digits_expected())
    assert list(np.argmax(predictions, axis=1)) == list(_digits_expected().argmax(axis=1))


def test_tfserving_row_format_with_named_inputs(demo_server):
    instances = [{"pixels": row} for row in _digits_rows().tolist()]
    resp = demo_server.post("/v1/models/digits:predict", {"instances": instances})
    assert resp.status_code == 200, resp.text
    assert_close(resp.json()["predictions"], _digits_expected())


def test_tfserving_columnar_format_returns_outputs(demo_server):
    resp = demo_server.post("/v1/models/digits:predict", {"inputs": _digits_rows().tolist()})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert set(body) == {"outputs"}
    assert_close(body["outputs"], _digits_expected())


def test_tfserving_columnar_format_with_named_inputs(demo_server):
    resp = demo_server.post("/v1/models/digits:predict",
                            {"inputs": {"pixels": _digits_rows().tolist()}})
    assert resp.status_code == 200, resp.text
    assert_close(resp.json()["outputs"], _digits_expected())


def test_tfserving_versioned_path(demo_server):
    resp = demo_server.post("/v1/models/digits/versions/1:predict",
                            {"instances": _digits_rows().tolist()})
    assert resp.status_code == 200, resp.text
    assert_close(resp.json()["predictions"], _digits_expected())


@pytest.mark.parametrize("body", [
    {"instances": [[0.0] * 64], "inputs": [[0.0] * 64]},
    {},
    {"signature_name": "serving_default"},
])
def test_tfserving_needs_exactly_one_of_instances_and_inputs(demo_server, body):
    resp = demo_server.post("/v1/models/digits:predict", body)
    assert_error(resp, 400, "instances", "inputs")


def test_tfserving_unknown_model_is_404(demo_server):
    resp = demo_server.post("/v1/models/no_such_model:predict", {"instances": [[0.0] * 64]})
    assert_error(resp, 404, "no_such_model")


def test_tfserving_bad_version_is_400(demo_server):
    resp = demo_server.post("/v1/models/digits/versions/abc:predict", {"instances": [[0.0] * 64]})
    assert_error(resp, 400, "abc")
