"""Every door a raw image comes in by, for a pipeline whose input is one image (BYTES, dims [],
content: image): a raw image/jpeg body, a multipart upload, JSON base64 (plain, data: URL,
{"b64"}), KServe v2 JSON with {"b64"} elements and binary BYTES, gRPC bytes_contents. Each
must give the same tensor as the op-only reference; /predict answers {"label", "score",
"top_k"} for a pipeline with an `answer`; the wrong kind of body is a 4xx saying what to send."""

from __future__ import annotations

import base64
import json
import pathlib
import struct

import grpc
import numpy as np
import pytest
import requests

from inferd_harness import InferdServer
from pipeline_helpers import add_pipeline, softmax, top_k
from tools.grpc_stubs import pb, pb_grpc

IMAGES = pathlib.Path(__file__).resolve().parents[1] / "data" / "images"
JPEG = (IMAGES / "odd_1001x333.jpg").read_bytes()
PNG = (IMAGES / "odd_257x199.png").read_bytes()
LABELS = [f"class{i}" for i in range(10)]
HEADER = "Inference-Header-Content-Length"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("front_doors") / "repo"
    repo.mkdir()
    image_input = [{"name": "image", "datatype": "BYTES", "dims": [], "content": "image"}]
    pre = {"name": "pre", "op": "image_to_tensor", "inputs": {"image": "image"},
           "outputs": {"tensor": "pixels"},
           "params": {"center_crop": [1, 10], "color": "gray", "layout": "NHWC"}}
    add_pipeline(repo, "pixels", {
        "max_batch_size": 4, "inputs": image_input,
        "outputs": [{"name": "pixels", "datatype": "FP32", "dims": [1, 10, 1]}],
        "pipeline": {"steps": [pre]}})
    add_pipeline(repo, "classify", {
        "max_batch_size": 4, "inputs": image_input,
        "outputs": [{"name": "top_labels", "datatype": "BYTES", "dims": [3]},
                    {"name": "top_scores", "datatype": "FP32", "dims": [3]}],
        "pipeline": {"steps": [
            pre,
            {"name": "flat", "op": "reshape", "inputs": {"x": "pixels"}, "outputs": {"y": "flat"},
             "params": {"shape": [10]}},
            {"name": "probs", "op": "softmax", "inputs": {"x": "flat"}, "outputs": {"y": "probs"}},
            {"name": "top", "op": "top_k", "inputs": {"x": "probs"},
             "outputs": {"labels": "top_labels", "scores": "top_scores"},
             "params": {"k": 3, "labels": "labels.txt"}}],
            "answer": {"labels": "top_labels", "scores": "top_scores"}}},
        assets={"labels.txt": "\n".join(LABELS) + "\n"})
    log = tmp_path_factory.mktemp("front_doors_log") / "inferd.log"
    srv = InferdServer(repo, log, name="front_doors").start()
    yield srv
    srv.stop()


def expected_pixels(data: bytes) -> np.ndarray:
    from PIL import Image, ImageOps
    import io
    from torchvision import transforms
    with Image.open(io.BytesIO(data)) as im:
        gray = ImageOps.exif_transpose(im).convert("RGB").convert("L")
    crop = transforms.CenterCrop((1, 10))(gray)
    return (np.asarray(crop, np.float32) / np.float32(255)).reshape(10)


def predict(server, model, **kwargs) -> requests.Response:
    return requests.post(f"{server.url}/predict?model={model}", timeout=60, **kwargs)


def test_raw_image_body(server):
    for data, kind in [(JPEG, "image/jpeg"), (PNG, "image/png"), (JPEG, "application/octet-stream")]:
        resp = predict(server, "pixels", data=data, headers={"Content-Type": kind})
        assert resp.status_code == 200, resp.text
        np.testing.assert_array_equal(np.asarray(resp.json()["output"], np.float32).reshape(10),
                                      expected_pixels(data))


def test_multipart_upload(server):
    resp = predict(server, "pixels", files={"input": ("photo.jpg", JPEG, "image/jpeg")})
    assert resp.status_code == 200, resp.text
    np.testing.assert_array_equal(np.asarray(resp.json()["output"], np.float32).reshape(10),
                                  expected_pixels(JPEG))
    # The only file part, whatever its name, beside a plain field.
    resp = predict(server, "pixels", files={"photo": ("p.png", PNG, "image/png")},
                   data={"note": "hello"})
    assert resp.status_code == 200, resp.text
    np.testing.assert_array_equal(np.asarray(resp.json()["output"], np.float32).reshape(10),
                                  expected_pixels(PNG))


@pytest.mark.parametrize("wrap", ["plain", "data_url", "b64"])
def test_json_base64(server, wrap):
    encoded = base64.b64encode(PNG).decode()
    value = {"plain": encoded, "data_url": "data:image/png;base64," + encoded,
             "b64": {"b64": encoded}}[wrap]
    resp = predict(server, "pixels", json={"input": value})
    assert resp.status_code == 200, resp.text
    np.testing.assert_array_equal(np.asarray(resp.json()["output"], np.float32).reshape(10),
                                  expected_pixels(PNG))


def test_bad_base64_names_input(server):
    resp = predict(server, "pixels", json={"input": "not base64 !!"})
    assert resp.status_code == 400, resp.text
    assert "'input'" in resp.json()["error"] and "base64" in resp.json()["error"]


def test_wrong_kind_of_body_says_what_to_send(server):
    resp = predict(server, "pixels", data="a sentence", headers={"Content-Type": "text/plain"})
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert "takes an image" in error and "text/plain" in error, error
    resp = predict(server, "pixels", json={"input": [1, 2, 3]})
    assert resp.status_code == 400 and "takes an image" in resp.json()["error"], resp.text


def test_kserve_json_b64_elements(server):
    body = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [2],
                        "data": [{"b64": base64.b64encode(PNG).decode()},
                                 {"b64": base64.b64encode(PNG).decode()}]}]}
    resp = requests.post(f"{server.url}/v2/models/pixels/infer", json=body, timeout=60)
    assert resp.status_code == 200, resp.text
    got = np.asarray(resp.json()["outputs"][0]["data"], np.float32).reshape(2, 10)
    np.testing.assert_array_equal(got[1], expected_pixels(PNG))
    bad = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1], "data": [{"b64": "%%"}]}]}
    resp = requests.post(f"{server.url}/v2/models/pixels/infer", json=bad, timeout=60)
    assert resp.status_code == 400 and "base64" in resp.json()["error"], resp.text


def test_kserve_binary_bytes(server):
    header = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1],
                          "parameters": {"binary_data_size": len(JPEG) + 4}}]}
    head = json.dumps(header).encode()
    resp = requests.post(f"{server.url}/v2/models/pixels/infer",
                         data=head + struct.pack("<I", len(JPEG)) + JPEG,
                         headers={HEADER: str(len(head)),
                                  "Content-Type": "application/octet-stream"}, timeout=60)
    assert resp.status_code == 200, resp.text
    np.testing.assert_array_equal(np.asarray(resp.json()["outputs"][0]["data"], np.float32),
                                  expected_pixels(JPEG))


def test_grpc_bytes_contents(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name="pixels")
        tensor = request.inputs.add(name="image", datatype="BYTES", shape=[1])
        tensor.contents.bytes_contents.append(JPEG)
        response = stub.ModelInfer(request, timeout=30)
        got = np.frombuffer(response.raw_output_contents[0], "<f4")
        np.testing.assert_array_equal(got, expected_pixels(JPEG))


def test_predict_answer_shape(server):
    resp = predict(server, "classify", data=JPEG, headers={"Content-Type": "image/jpeg"})
    assert resp.status_code == 200, resp.text
    answer = resp.json()
    idx, scores = top_k(softmax(expected_pixels(JPEG).astype(np.float64)), 3)
    assert answer["label"] == LABELS[idx[0]]
    assert abs(answer["score"] - scores[0]) < 1e-5
    assert [e["label"] for e in answer["top_k"]] == [LABELS[i] for i in idx]
    np.testing.assert_allclose([e["score"] for e in answer["top_k"]], scores, atol=1e-5)
    # Several instances (KServe-free JSON: a list of base64 strings is not one image).
    resp = predict(server, "classify", json={"input": {"b64": base64.b64encode(PNG).decode()}})
    assert resp.status_code == 200 and "label" in resp.json(), resp.text


def test_tfserving_b64_row_and_column(server):
    encoded = {"b64": base64.b64encode(PNG).decode()}
    for body in ({"instances": [encoded, encoded]}, {"instances": [{"image": encoded}]}):
        resp = requests.post(f"{server.url}/v1/models/pixels:predict", json=body, timeout=60)
        assert resp.status_code == 200, resp.text
        got = np.asarray(resp.json()["predictions"], np.float32).reshape(-1, 10)
        np.testing.assert_array_equal(got[0], expected_pixels(PNG))
    resp = requests.post(f"{server.url}/v1/models/pixels:predict", json={"inputs": [encoded]},
                         timeout=60)
    assert resp.status_code == 200, resp.text
    np.testing.assert_array_equal(np.asarray(resp.json()["outputs"], np.float32).reshape(10),
                                  expected_pixels(PNG))
