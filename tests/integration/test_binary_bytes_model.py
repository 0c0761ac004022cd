"""BYTES end to end: a TorchScript model whose forward takes List[str] (written here with
PyTorch) served by inferd and fed strings over JSON, binary HTTP and gRPC, batched with
other requests; each answer is the model's own output."""

from __future__ import annotations

import json
import struct
import threading
from typing import List

import grpc
import numpy as np
import pytest
import requests

from tools.grpc_stubs import pb, pb_grpc

HEADER = "Inference-Header-Content-Length"
CONFIG = """backend: torch
max_batch_size: 8
inputs:
  - {name: text, datatype: BYTES, dims: [1]}
outputs:
  - {name: stats, datatype: FP32, dims: [2]}
dynamic_batching:
  max_queue_delay_us: 2000
"""


def expected(texts: List[bytes]) -> np.ndarray:
    """What the model computes: [length, number of 'a' characters] per string."""
    return np.array([[len(t), t.count(b"a")] for t in texts], np.float32)


@pytest.fixture(scope="module")
def text_server(tmp_path_factory, request):
    import torch

    class TextStats(torch.nn.Module):
        def forward(self, text: List[str]) -> torch.Tensor:
            rows: List[List[float]] = []
            for t in text:
                rows.append([float(len(t)), float(t.count("a"))])
            return torch.tensor(rows, dtype=torch.float32)

    repo = tmp_path_factory.mktemp("bytes-repo")
    (repo / "text_stats" / "1").mkdir(parents=True)
    torch.jit.save(torch.jit.script(TextStats()), str(repo / "text_stats" / "1" / "model.pt"))
    (repo / "text_stats" / "config.yaml").write_text(CONFIG)
    from inferd_harness import InferdServer
    server = InferdServer(repo, tmp_path_factory.mktemp("bytes-log") / "inferd.log").start()
    yield server
    server.stop()


TEXTS = [b"banana", b"", b"a cat and a hat"]


def test_bytes_over_json(text_server):
    body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [3, 1],
                        "data": [t.decode() for t in TEXTS]}]}
    response = requests.post(f"{text_server.url}/v2/models/text_stats/infer", json=body,
                             timeout=60)
    assert response.status_code == 200, response.text
    out = response.json()["outputs"][0]
    assert out["shape"] == [3, 2]
    np.testing.assert_array_equal(np.array(out["data"], np.float32).reshape(3, 2),
                                  expected(TEXTS))


def test_bytes_over_binary_http(text_server):
    blob = b"".join(struct.pack("<I", len(t)) + t for t in TEXTS)
    head = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [3, 1],
                                   "parameters": {"binary_data_size": len(blob)}}],
                       "parameters": {"binary_data_output": True}}).encode()
    response = requests.post(f"{text_server.url}/v2/models/text_stats/infer", data=head + blob,
                             headers={HEADER: str(len(head))}, timeout=60)
    assert response.status_code == 200, response.text
    length = int(response.headers[HEADER])
    got = np.frombuffer(response.content[length:], "<f4").reshape(3, 2)
    np.testing.assert_array_equal(got, expected(TEXTS))


@pytest.mark.parametrize("raw", [True, False])
def test_bytes_over_grpc(text_server, raw):
    request = pb.ModelInferRequest(model_name="text_stats")
    tensor = request.inputs.add(name="text", datatype="BYTES", shape=[3, 1])
    if raw:
        request.raw_input_contents.append(b"".join(struct.pack("<I", len(t)) + t for t in TEXTS))
    else:
        tensor.contents.bytes_contents.extend(TEXTS)
    with grpc.insecure_channel(f"127.0.0.1:{text_server.grpc_port}") as channel:
        response = pb_grpc.GRPCInferenceServiceStub(channel).ModelInfer(request, timeout=60)
    got = np.frombuffer(response.raw_output_contents[0], "<f4").reshape(3, 2)
    np.testing.assert_array_equal(got, expected(TEXTS))


def test_concurrent_bytes_requests_are_batched_and_answered_per_request(text_server):
    texts = [b"a" * i + b"xyz" * (i % 3) for i in range(24)]
    answers, errors = {}, []

    def send(i):
        body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1, 1],
                            "data": [texts[i].decode()]}]}
        try:
            r = requests.post(f"{text_server.url}/v2/models/text_stats/infer", json=body,
                              timeout=60)
            answers[i] = r.json()["outputs"][0]["data"]
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, text in enumerate(texts):
        np.testing.assert_array_equal(np.array(answers[i], np.float32), expected([text])[0])
    stats = requests.get(f"{text_server.url}/v2/models/text_stats/stats", timeout=30).json()
    s = stats["model_stats"][0]
    assert s["inference_count"] >= len(texts)


def test_malformed_bytes_is_400_and_server_keeps_serving(text_server):
    head = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1, 1],
                                   "parameters": {"binary_data_size": 6}}]}).encode()
    response = requests.post(f"{text_server.url}/v2/models/text_stats/infer",
                             data=head + struct.pack("<I", 40) + b"ab",
                             headers={HEADER: str(len(head))}, timeout=60)
    assert response.status_code == 400
    assert "claims 40 bytes" in response.json()["error"]
    test_bytes_over_json(text_server)
