"""The binary tensor extension over HTTP against the real server: binary inputs and outputs
(FP32, INT64, BYTES), mixed with JSON, and malformed bodies answered 400 while the server
keeps serving."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import requests

from inferd_harness import ATOL

HEADER = "Inference-Header-Content-Length"


def binary_post(server, model: str, header: dict, tensors: list[bytes],
                json_length: int | None = None) -> requests.Response:
    head = json.dumps(header).encode()
    body = head + b"".join(tensors)
    length = len(head) if json_length is None else json_length
    return requests.post(f"{server.url}/v2/models/{model}/infer", data=body,
                         headers={HEADER: str(length),
                                  "Content-Type": "application/octet-stream"}, timeout=60)


def split_reply(response: requests.Response) -> tuple[dict, bytes]:
    length = int(response.headers[HEADER])
    return json.loads(response.content[:length]), response.content[length:]


def mlp_header(rows: int, size: int | None = None, **extra) -> dict:
    header = {"inputs": [{"name": "features", "datatype": "FP32", "shape": [rows, 256],
                          "parameters": {"binary_data_size": rows * 256 * 4 if size is None
                                         else size}}]}
    header.update(extra)
    return header


def test_binary_in_binary_out_matches_torch(demo_server, torch_ref):
    rows = np.random.default_rng(5).standard_normal((4, 256)).astype(np.float32)
    response = binary_post(demo_server, "mlp_scorer",
                           mlp_header(4, parameters={"binary_data_output": True}),
                           [rows.tobytes()])
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "application/octet-stream"
    head, tail = split_reply(response)
    out = head["outputs"][0]
    assert out["name"] == "score" and out["shape"] == [4, 1] and "data" not in out
    assert out["parameters"]["binary_data_size"] == len(tail) == 16
    np.testing.assert_allclose(np.frombuffer(tail, "<f4").reshape(4, 1),
                               torch_ref.run("mlp_scorer", rows), atol=ATOL)


def test_binary_in_json_out(demo_server, torch_ref):
    rows = np.random.default_rng(6).standard_normal((2, 256)).astype(np.float32)
    response = binary_post(demo_server, "mlp_scorer", mlp_header(2), [rows.tobytes()])
    assert response.status_code == 200, response.text
    assert HEADER not in response.headers
    data = np.array(response.json()["outputs"][0]["data"]).reshape(2, 1)
    np.testing.assert_allclose(data, torch_ref.run("mlp_scorer", rows), atol=ATOL)


def test_json_in_binary_out_per_output(demo_server, torch_ref):
    rows = np.linspace(0, 1, 256, dtype=np.float32).reshape(1, 256)
    body = {"inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 256],
                        "data": rows.ravel().tolist()}],
            "outputs": [{"name": "score", "parameters": {"binary_data": True}}]}
    response = demo_server.post("/v2/models/mlp_scorer/infer", body)
    assert response.status_code == 200, response.text
    head, tail = split_reply(response)
    np.testing.assert_allclose(np.frombuffer(tail, "<f4").reshape(1, 1),
                               torch_ref.run("mlp_scorer", rows), atol=ATOL)


def test_binary_int64_input(demo_server, torch_ref):
    tokens = np.arange(128, dtype=np.int64).reshape(1, 128)
    header = {"inputs": [{"name": "token_ids", "datatype": "INT64", "shape": [1, 128],
                          "parameters": {"binary_data_size": 128 * 8}}],
              "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]}
    response = binary_post(demo_server, "text_classifier", header, [tokens.tobytes()])
    assert response.status_code == 200, response.text
    _, tail = split_reply(response)
    np.testing.assert_allclose(np.frombuffer(tail, "<f4").reshape(1, 2),
                               torch_ref.run("text_classifier", tokens), atol=ATOL)


def test_unaligned_binary_input_is_still_correct(demo_server, torch_ref):
    rows = np.random.default_rng(7).standard_normal((1, 256)).astype(np.float32)
    header = mlp_header(1, parameters={"binary_data_output": True})
    head = json.dumps(header).encode()
    for pad in range(4):  # one of these puts the tensor at an unaligned offset
        padded = head + b" " * pad
        response = requests.post(f"{demo_server.url}/v2/models/mlp_scorer/infer",
                                 data=padded + rows.tobytes(), headers={HEADER: str(len(padded))},
                                 timeout=60)
        assert response.status_code == 200, response.text
        _, tail = split_reply(response)
        np.testing.assert_allclose(np.frombuffer(tail, "<f4").reshape(1, 1),
                                   torch_ref.run("mlp_scorer", rows), atol=ATOL)


def bytes_element(text: bytes) -> bytes:
    return struct.pack("<I", len(text)) + text


@pytest.mark.parametrize("header, tensors, json_length, needle", [
    (mlp_header(1), [bytes(1024)], 10**6, "Inference-Header-Content-Length is 1000000"),
    (mlp_header(1), [bytes(1024)], -1, "is not a non-negative integer"),
    (mlp_header(2, size=1024), [bytes(1024)], None, "shape [2,256] of FP32 needs 512 x 4"),
    (mlp_header(1), [bytes(1000)], None, "binary_data_size is 1024 but only 1000 bytes"),
    (mlp_header(1), [bytes(1028)], None, "4 bytes of binary data are left over"),
    (mlp_header(1, size=-5), [bytes(1024)], None, "'binary_data_size' must be a non-negative"),
    ({"inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 256], "data": [0] * 256,
                  "parameters": {"binary_data_size": 1024}}]}, [bytes(1024)], None,
     "has both 'data' and 'binary_data_size'"),
    ({"inputs": [{"name": "features", "datatype": "BYTES", "shape": [1, 2],
                  "parameters": {"binary_data_size": 9}}]},
     [bytes_element(b"abc") + b"\x09\x00"], None, "BYTES element 1 of 2 is truncated"),
    ({"inputs": [{"name": "features", "datatype": "BYTES", "shape": [1, 1],
                  "parameters": {"binary_data_size": 7}}]},
     [struct.pack("<I", 50) + b"abc"], None, "claims 50 bytes but only 3 remain"),
])
def test_malformed_binary_bodies_are_400(demo_server, header, tensors, json_length, needle):
    response = binary_post(demo_server, "mlp_scorer", header, tensors, json_length)
    assert response.status_code == 400, response.text
    assert needle in response.json()["error"]
    assert demo_server.get("/v2/health/ready").status_code == 200


def test_json_header_that_is_not_json_is_400(demo_server):
    response = requests.post(f"{demo_server.url}/v2/models/mlp_scorer/infer",
                             data=b"{not json" + bytes(8), headers={HEADER: "9"}, timeout=60)
    assert response.status_code == 400


def test_binary_size_without_header_is_400(demo_server):
    response = demo_server.post("/v2/models/mlp_scorer/infer", mlp_header(1))
    assert response.status_code == 400
    assert "Inference-Header-Content-Length" in response.json()["error"]


def test_bytes_input_passes_codecs_and_reaches_validation(demo_server):
    # mlp_scorer takes FP32: a well-formed BYTES input is decoded and then refused by the
    # model's signature, over JSON and binary alike.
    body = {"inputs": [{"name": "features", "datatype": "BYTES", "shape": [1, 1],
                        "data": ["hello"]}]}
    response = demo_server.post("/v2/models/mlp_scorer/infer", body)
    assert response.status_code == 400
    assert "datatype BYTES does not match the model's FP32" in response.json()["error"]
    header = {"inputs": [{"name": "features", "datatype": "BYTES", "shape": [1, 1],
                          "parameters": {"binary_data_size": 9}}]}
    response = binary_post(demo_server, "mlp_scorer", header, [bytes_element(b"hello")])
    assert response.status_code == 400
    assert "datatype BYTES does not match the model's FP32" in response.json()["error"]
