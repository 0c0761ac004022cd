"""One request of the load, per protocol: KServe v2 HTTP with JSON tensors, HTTP with binary
tensors, gRPC (inference.GRPCInferenceService, stubs generated from proto/ at start), and the
seed's `POST /predict` (the Flask baseline). Bodies are built once; a sender is per thread."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass

import numpy as np

PROTOCOLS = ("http-json", "http-binary", "grpc", "predict")
HEADER_LENGTH = "Inference-Header-Content-Length"
_NUMPY = {"FP32": "float32", "FP64": "float64", "FP16": "float16", "INT64": "int64",
          "INT32": "int32", "INT16": "int16", "INT8": "int8", "UINT8": "uint8", "BOOL": "bool"}


@dataclass
class InputSpec:
    name: str
    datatype: str
    shape: list[int]

    def random(self, rng: np.random.Generator) -> np.ndarray:
        dtype = _NUMPY[self.datatype]
        if self.datatype == "BOOL":
            return rng.integers(0, 2, self.shape).astype(bool)
        if np.issubdtype(np.dtype(dtype), np.integer):
            return rng.integers(0, 100, self.shape).astype(dtype)
        return rng.standard_normal(self.shape).astype(dtype)


def model_inputs(host: str, port: int, model: str, batch: int,
                 shapes: dict[str, list[int]]) -> list[InputSpec]:
    """The model's inputs from GET /v2/models/M, variable dimensions set to `batch` (first)
    or 1, unless `shapes` gives them."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", f"/v2/models/{model}")
    response = conn.getresponse()
    body = response.read()
    conn.close()
    if response.status != 200:
        raise SystemExit(f"GET /v2/models/{model}: {response.status} {body[:200]!r}")
    specs = []
    for entry in json.loads(body)["inputs"]:
        shape = shapes.get(entry["name"]) or [
            (batch if i == 0 else 1) if d < 0 else d for i, d in enumerate(entry["shape"])]
        specs.append(InputSpec(entry["name"], entry["datatype"], shape))
    return specs


class HttpSender:
    def __init__(self, host: str, port: int, path: str, body: bytes, headers: dict[str, str]):
        self.host, self.port, self.path, self.body, self.headers = host, port, path, body, headers
        self.conn = None

    def __call__(self) -> bool:
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
            self.conn.request("POST", self.path, body=self.body, headers=self.headers)
            response = self.conn.getresponse()
            response.read()
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return response.status == 200
        except (OSError, http.client.HTTPException):
            self.close()
            return False

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class GrpcSender:
    def __init__(self, target: str, request_bytes: bytes, modules):
        import grpc
        self.grpc = grpc
        pb, pb_grpc = modules
        self.channel = grpc.insecure_channel(target, options=[
            ("grpc.max_receive_message_length", 1 << 30),
            ("grpc.max_send_message_length", 1 << 30)])
        self.stub = pb_grpc.GRPCInferenceServiceStub(self.channel)
        self.request = pb.ModelInferRequest.FromString(request_bytes)

    def __call__(self) -> bool:
        try:
            self.stub.ModelInfer(self.request, timeout=120)
            return True
        except self.grpc.RpcError:
            return False

    def close(self):
        self.channel.close()


def grpc_modules():
    """inferd's gRPC messages and stubs (tools/grpc_stubs.py generates them on first import)."""
    from ..grpc_stubs import pb, pb_grpc
    return pb, pb_grpc


@dataclass
class SenderFactory:
    """Picklable recipe for a sender, so worker processes can build their own."""
    protocol: str
    host: str
    port: int
    path: str = ""
    body: bytes = b""
    headers: dict | None = None

    def make(self):
        if self.protocol == "grpc":
            return GrpcSender(f"{self.host}:{self.port}", self.body, grpc_modules())
        return HttpSender(self.host, self.port, self.path, self.body, self.headers or {})


def build_factory(protocol: str, host: str, port: int, model: str,
                  inputs: list[InputSpec], seed: int = 0) -> SenderFactory:
    rng = np.random.default_rng(seed)
    arrays = [(spec, spec.random(rng)) for spec in inputs]
    if protocol == "predict":
        if len(arrays) != 1:
            raise SystemExit("--protocol predict serves one-input models")
        body = json.dumps({"input": arrays[0][1].tolist()}).encode()
        return SenderFactory(protocol, host, port, f"/predict?model={model}", body,
                             {"Content-Type": "application/json"})
    if protocol == "http-json":
        body = json.dumps({"inputs": [
            {"name": s.name, "datatype": s.datatype, "shape": s.shape,
             "data": a.ravel().tolist()} for s, a in arrays]}).encode()
        return SenderFactory(protocol, host, port, f"/v2/models/{model}/infer", body,
                             {"Content-Type": "application/json"})
    if protocol == "http-binary":
        header = json.dumps({
            "inputs": [{"name": s.name, "datatype": s.datatype, "shape": s.shape,
                        "parameters": {"binary_data_size": a.nbytes}} for s, a in arrays],
            "parameters": {"binary_data_output": True}}).encode()
        body = header + b"".join(np.ascontiguousarray(a).tobytes() for _, a in arrays)
        return SenderFactory(protocol, host, port, f"/v2/models/{model}/infer", body,
                             {"Content-Type": "application/octet-stream",
                              HEADER_LENGTH: str(len(header))})
    if protocol == "grpc":
        pb, _ = grpc_modules()
        request = pb.ModelInferRequest(model_name=model)
        for spec, a in arrays:
            request.inputs.add(name=spec.name, datatype=spec.datatype, shape=spec.shape)
            request.raw_input_contents.append(np.ascontiguousarray(a).tobytes())
        return SenderFactory(protocol, host, port, body=request.SerializeToString())
    raise SystemExit(f"unknown protocol {protocol}; one of {', '.join(PROTOCOLS)}")
