"""POST /v2/models/M/infer answers what PyTorch computes, for every demo model."""

import json

import numpy as np
import pytest

from inferd_harness import (DEMO_METADATA, DEMO_MODEL_NAMES, DEMO_MODELS, assert_close,
                            assert_error, inputs_as_arrays, load_sample, output_array,
                            sample_request)


def _torch_outputs(torch_ref, model, request):
    arrays = inputs_as_arrays(request["inputs"])
    ordered = [arrays[spec["name"]] for spec in DEMO_METADATA[model]["inputs"]]
    return torch_ref.run(model, *ordered)


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
def test_infer_matches_pytorch(demo_server, torch_ref, model):
    request = sample_request(model)
    request["id"] = f"req-{model}-42"
    resp = demo_server.post(f"/v2/models/{model}/infer", request)
    assert resp.status_code == 200, resp.text[:500]
    body = resp.json()
    assert body["model_name"] == model
    assert body["model_version"] == "1"
    assert body["id"] == f"req-{model}-42"

    batch = request["inputs"][0]["shape"][0]
    [spec] = DEMO_METADATA[model]["outputs"]
    assert [o["name"] for o in body["outputs"]] == [spec["name"]]
    out = body["outputs"][0]
    assert out["datatype"] == spec["datatype"]
    assert out["shape"] == [batch] + spec["shape"][1:]
    assert isinstance(out["data"], list) and not isinstance(out["data"][0], list), "data not flat"

    got = output_array(body, spec["name"])
    assert_close(got, _torch_outputs(torch_ref, model, request), what=f"{model} vs PyTorch")
    # The numbers recorded in sample.json when the demo models were exported.
    [expected] = load_sample(model)["expected_outputs"]
    assert expected["shape"] == out["shape"]
    assert_close(got, np.reshape(expected["data"], expected["shape"]),
                 what=f"{model} vs sample.json")


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
def test_versioned_infer_matches_unversioned(demo_server, model):
    request = sample_request(model)
    plain = demo_server.post(f"/v2/models/{model}/infer", request)
    versioned = demo_server.post(f"/v2/models/{model}/versions/1/infer", request)
    assert plain.status_code == 200, plain.text[:500]
    assert versioned.status_code == 200, versioned.text[:500]
    assert versioned.json()["model_version"] == "1"
    name = DEMO_METADATA[model]["outputs"][0]["name"]
    assert_close(output_array(versioned.json(), name), output_array(plain.json(), name), atol=0)


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
def test_nested_data_gives_the_same_answer_as_flat(demo_server, model):
    flat = sample_request(model)
    nested = json.loads(json.dumps(flat))
    for item in nested["inputs"]:
        item["data"] = np.asarray(item["data"]).reshape(item["shape"]).tolist()
        assert isinstance(item["data"][0], list)
    flat_resp = demo_server.post(f"/v2/models/{model}/infer", flat)
    nested_resp = demo_server.post(f"/v2/models/{model}/infer", nested)
    assert flat_resp.status_code == 200, flat_resp.text[:500]
    assert nested_resp.status_code == 200, nested_resp.text[:500]
    assert nested_resp.json()["outputs"] == flat_resp.json()["outputs"]


def test_id_is_absent_or_echoed(demo_server):
    request = sample_request("mlp_scorer")
    request.pop("id", None)
    resp = demo_server.post("/v2/models/mlp_scorer/infer", request)
    assert resp.status_code == 200, resp.text
    assert resp.json().get("id", "") == ""
    request["id"] = "ünïcode \"quoted\" id"
    resp = demo_server.post("/v2/models/mlp_scorer/infer", request)
    assert resp.status_code == 200, resp.text
    assert resp.json()["id"] == "ünïcode \"quoted\" id"


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
def test_requested_output_subset_returns_only_that_output(demo_server, torch_ref, model):
    request = sample_request(model)
    name = DEMO_METADATA[model]["outputs"][0]["name"]
    request["outputs"] = [{"name": name}]
    resp = demo_server.post(f"/v2/models/{model}/infer", request)
    assert resp.status_code == 200, resp.text[:500]
    body = resp.json()
    assert [o["name"] for o in body["outputs"]] == [name]
    assert_close(output_array(body, name), _torch_outputs(torch_ref, model, request))


def test_unknown_requested_output_is_400(demo_server):
    request = sample_request("mlp_scorer")
    request["outputs"] = [{"name": "no_such_output"}]
    resp = demo_server.post("/v2/models/mlp_scorer/infer", request)
    assert_error(resp, 400, "no_such_output")


def test_single_row_batch(demo_server, torch_ref):
    request = sample_request("mlp_scorer")
    item = request["inputs"][0]
    item["shape"] = [1, 256]
    item["data"] = item["data"][:256]
    resp = demo_server.post("/v2/models/mlp_scorer/infer", request)
    assert resp.status_code == 200, resp.text
    out = resp.json()["outputs"][0]
    assert out["shape"] == [1, 1]
    assert_close(output_array(resp.json(), "score"),
                 torch_ref.run("mlp_scorer", np.asarray([item["data"]], dtype=np.float32)))


def test_max_batch_size_rows_are_accepted(demo_server, torch_ref):
    rows = np.random.RandomState(7).rand(32, 256).astype(np.float32)
    request = {"inputs": [{"name": "features", "datatype": "FP32", "shape": [32, 256],
                           "data": rows.ravel().tolist()}]}
    resp = demo_server.post("/v2/models/mlp_scorer/infer", request)
    assert resp.status_code == 200, resp.text[:500]
    assert_close(output_array(resp.json(), "score"), torch_ref.run("mlp_scorer", rows))


def test_digits_predicts_the_expected_labels(demo_server):
    labels = (DEMO_MODELS / "digits" / "labels.txt").read_text().splitlines()
    assert len(labels) == 10, labels
    sample = load_sample("digits")
    expected = np.reshape(sample["expected_outputs"][0]["data"],
                          sample["expected_outputs"][0]["shape"])
    resp = demo_server.post("/v2/models/digits/infer", sample_request("digits"))
    assert resp.status_code == 200, resp.text
    probs = output_array(resp.json(), "probabilities")
    assert probs.shape == (2, 10)
    assert_close(probs.sum(axis=1), [1.0, 1.0], atol=1e-4, what="softmax row sums")
    got_labels = [labels[i] for i in probs.argmax(axis=1)]
    want_labels = [labels[i] for i in expected.argmax(axis=1)]
    assert got_labels == want_labels
    # The digits classifier is confident on its two samples.
    assert probs.max(axis=1).min() > 0.5


def test_digits_accuracy_file_reports_a_trained_model():
    accuracy = json.loads((DEMO_MODELS / "digits" / "accuracy.json").read_text())
    assert accuracy["test_accuracy"] > 0.9, accuracy
    lines = (DEMO_MODELS / "digits" / "labels.txt").read_text().splitlines()
    assert len(lines) == 10
    assert all(line.strip() for line in lines)
