"""Pipelines over the demo models (backend: pipeline): each answers what running its step
models by hand through the same server, then numpy, answers. Served on KServe v2 JSON, gRPC
and /predict; described with platform "ensemble"; counted in its own statistics."""

from __future__ import annotations

import shutil

import grpc
import numpy as np
import pytest

from inferd_harness import DEMO_MODELS, InferdServer, load_sample
from pipeline_helpers import (add_pipeline, copy_demo, kserve_input, output, softmax, top_k)
from tools.grpc_stubs import pb, pb_grpc

DIGIT_LABELS = (DEMO_MODELS / "digits" / "labels.txt").read_text().splitlines()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("pipeline_dag") / "repo"
    repo.mkdir()
    copy_demo(repo, "digits")
    copy_demo(repo, "digits_b", "digits")
    copy_demo(repo, "text_classifier")
    folder = add_pipeline(repo, "digits_top3", {
        "max_batch_size": 8,
        "inputs": [{"name": "pixels", "datatype": "FP32", "dims": [64]}],
        "outputs": [{"name": "top_labels", "datatype": "BYTES", "dims": [3]},
                    {"name": "top_scores", "datatype": "FP32", "dims": [3]},
                    {"name": "top_indices", "datatype": "INT64", "dims": [3]}],
        "pipeline": {"steps": [
            {"name": "net", "model": "digits", "inputs": {"pixels": "pixels"},
             "outputs": {"probabilities": "probs"}},
            {"name": "top", "op": "top_k", "inputs": {"x": "probs"},
             "outputs": {"labels": "top_labels", "scores": "top_scores",
                         "indices": "top_indices"},
             "params": {"k": 3, "labels": "labels.txt"}},
        ], "answer": {"labels": "top_labels", "scores": "top_scores"}}})
    shutil.copy(DEMO_MODELS / "digits" / "labels.txt", folder / "1" / "labels.txt")
    add_pipeline(repo, "text_top", {
        "max_batch_size": 16,
        "inputs": [{"name": "token_ids", "datatype": "INT64", "dims": [128]}],
        "outputs": [{"name": "probs", "datatype": "FP32", "dims": [2]},
                    {"name": "best", "datatype": "INT64", "dims": [1]}],
        "pipeline": {"steps": [
            {"name": "net", "model": "text_classifier", "inputs": {"token_ids": "token_ids"},
             "outputs": {"logits": "logits"}},
            {"name": "probs", "op": "softmax", "inputs": {"x": "logits"}, "outputs": {"y": "probs"}},
            {"name": "top", "op": "top_k", "inputs": {"x": "probs"}, "outputs": {"indices": "best"},
             "params": {"k": 1}},
        ]}})
    # Two model steps that read the same input and nothing of each other: both in flight at
    # once, joined by the pipeline's outputs.
    add_pipeline(repo, "diamond", {
        "max_batch_size": 8,
        "inputs": [{"name": "pixels", "datatype": "FP32", "dims": [64]}],
        "outputs": [{"name": "a", "datatype": "INT64", "dims": [1]},
                    {"name": "b_score", "datatype": "FP32", "dims": [1]}],
        "pipeline": {"steps": [
            {"name": "left", "model": "digits", "inputs": {"pixels": "pixels"},
             "outputs": {"probabilities": "p_left"}},
            {"name": "right", "model": "digits_b", "inputs": {"pixels": "pixels"},
             "outputs": {"probabilities": "p_right"}},
            {"name": "pick_left", "op": "argmax", "inputs": {"x": "p_left"}, "outputs": {"index": "a"}},
            {"name": "pick_right", "op": "argmax", "inputs": {"x": "p_right"},
             "outputs": {"score": "b_score"}},
        ]}})
    # No batch dimension: ops still see [1, ...]; the client sees none.
    add_pipeline(repo, "unbatched_softmax", {
        "inputs": [{"name": "x", "datatype": "FP32", "dims": [4]}],
        "outputs": [{"name": "y", "datatype": "FP32", "dims": [4]}],
        "pipeline": {"steps": [{"name": "s", "op": "softmax", "inputs": {"x": "x"},
                                "outputs": {"y": "y"}}]}})
    log = tmp_path_factory.mktemp("pipeline_dag_log") / "inferd.log"
    srv = InferdServer(repo, log, name="pipeline_dag").start()
    yield srv
    srv.stop()


def _digits_pixels() -> np.ndarray:
    item = load_sample("digits")["inputs"][0]
    return np.asarray(item["data"], dtype=np.float32).reshape(item["shape"])


def _run_by_hand(server, model: str, name: str, array: np.ndarray, datatype: str = "FP32",
                 output_name: str | None = None) -> np.ndarray:
    resp = server.post(f"/v2/models/{model}/infer",
                       {"inputs": [kserve_input(name, array, datatype)]})
    assert resp.status_code == 200, resp.text
    out = resp.json()["outputs"][0] if output_name is None else output(resp.json(), output_name)
    return np.asarray(out["data"], dtype=np.float64).reshape(out["shape"])


def test_digits_top3_with_labels_equals_the_model_plus_numpy(server):
    pixels = _digits_pixels()
    probs = _run_by_hand(server, "digits", "pixels", pixels)
    want_idx, want_scores = top_k(probs, 3)
    resp = server.post("/v2/models/digits_top3/infer", {"inputs": [kserve_input("pixels", pixels)]})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert output(body, "top_indices")["data"] == want_idx.flatten().tolist()
    np.testing.assert_allclose(output(body, "top_scores")["data"], want_scores.flatten(), atol=1e-6)
    labels = output(body, "top_labels")
    assert labels["datatype"] == "BYTES" and labels["shape"] == [len(pixels), 3]
    assert labels["data"] == [DIGIT_LABELS[i] for i in want_idx.flatten()]


def test_text_classifier_softmax_top1_equals_the_model_plus_numpy(server):
    item = load_sample("text_classifier")["inputs"][0]
    tokens = np.asarray(item["data"], dtype=np.int64).reshape(item["shape"])
    logits = _run_by_hand(server, "text_classifier", "token_ids", tokens, "INT64")
    resp = server.post("/v2/models/text_top/infer",
                       {"inputs": [kserve_input("token_ids", tokens, "INT64")]})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    np.testing.assert_allclose(np.asarray(output(body, "probs")["data"]).reshape(-1, 2),
                               softmax(logits), atol=1e-5)
    assert output(body, "best")["data"] == top_k(softmax(logits), 1)[0].flatten().tolist()


def test_diamond_runs_two_independent_model_steps(server):
    pixels = _digits_pixels()
    probs = _run_by_hand(server, "digits", "pixels", pixels)
    resp = server.post("/v2/models/diamond/infer", {"inputs": [kserve_input("pixels", pixels)]})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert output(body, "a")["data"] == probs.argmax(axis=1).tolist()
    np.testing.assert_allclose(output(body, "b_score")["data"], probs.max(axis=1), atol=1e-6)
    # Each step model served (and counted) its own request.
    for model in ("digits", "digits_b"):
        stats = server.get(f"/v2/models/{model}/stats").json()["model_stats"][0]
        assert stats["inference_stats"]["success"]["count"] >= 1, stats


def test_unbatched_pipeline_adds_and_removes_the_batch_dim(server):
    resp = server.post("/v2/models/unbatched_softmax/infer", {"inputs": [
        {"name": "x", "datatype": "FP32", "shape": [4], "data": [1, 2, 3, 4]}]})
    assert resp.status_code == 200, resp.text
    y = output(resp.json(), "y")
    assert y["shape"] == [4]
    np.testing.assert_allclose(y["data"], softmax(np.array([1.0, 2, 3, 4])), atol=1e-6)


def test_predict_serves_a_pipeline_instance(server):
    pixels = _digits_pixels()
    probs = _run_by_hand(server, "digits", "pixels", pixels[:1])
    resp = server.post("/predict?model=digits_top3", {"input": pixels[0].tolist()})
    assert resp.status_code == 200, resp.text
    answer = resp.json()
    want_idx, want_scores = top_k(probs, 3)
    # Either the plain {"output": ...} shape or the pipeline answer shape, as long as the
    # values are the model's.
    text = resp.text
    for label in [DIGIT_LABELS[i] for i in want_idx[0]]:
        assert f'"{label}"' in text, answer
    assert f"{want_scores[0][0]:.4f}"[:5] in text, answer


def test_grpc_serves_a_pipeline(server):
    pixels = _digits_pixels()
    probs = _run_by_hand(server, "digits", "pixels", pixels)
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name="digits_top3")
        request.inputs.add(name="pixels", datatype="FP32", shape=list(pixels.shape))
        request.raw_input_contents.append(pixels.astype("<f4").tobytes())
        response = stub.ModelInfer(request, timeout=30)
        names = [o.name for o in response.outputs]
        scores_at = names.index("top_scores")
        got = np.frombuffer(response.raw_output_contents[scores_at], "<f4").reshape(-1, 3)
        np.testing.assert_allclose(got, top_k(probs, 3)[1], atol=1e-6)
        meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="digits_top3"), timeout=30)
        assert meta.platform == "ensemble"


def test_metadata_says_ensemble_and_statistics_count_requests(server):
    meta = server.get("/v2/models/digits_top3").json()
    assert meta["platform"] == "ensemble", meta
    assert [i["name"] for i in meta["inputs"]] == ["pixels"]
    before = server.get("/v2/models/diamond/stats").json()["model_stats"][0]
    for _ in range(3):
        resp = server.post("/v2/models/diamond/infer",
                           {"inputs": [kserve_input("pixels", _digits_pixels())]})
        assert resp.status_code == 200, resp.text
    after = server.get("/v2/models/diamond/stats").json()["model_stats"][0]
    assert (after["inference_stats"]["success"]["count"]
            - before["inference_stats"]["success"]["count"]) == 3


def test_a_bad_client_input_is_a_400_and_nothing_runs(server):
    resp = server.post("/v2/models/digits_top3/infer", {"inputs": [
        {"name": "pixels", "datatype": "FP32", "shape": [1, 63], "data": [0.0] * 63}]})
    assert resp.status_code == 400, resp.text
    assert "pixels" in resp.text


def test_concurrent_requests_all_get_their_own_answer(server):
    """Many clients at once through a diamond: each answer is its own input's."""
    from concurrent.futures import ThreadPoolExecutor
    import requests

    pixels = _digits_pixels()
    probs = _run_by_hand(server, "digits", "pixels", pixels)

    def client(k):
        row = k % len(pixels)
        with requests.Session() as session:
            for _ in range(20):
                resp = server.post("/v2/models/diamond/infer",
                                   {"inputs": [kserve_input("pixels", pixels[row:row + 1])]},
                                   session=session)
                assert resp.status_code == 200, resp.text
                assert output(resp.json(), "a")["data"] == [int(probs[row].argmax())]

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(client, range(8)))
