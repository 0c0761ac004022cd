"""HTTP and gRPC give the same answer, and the same class of status, for the same situation.

Each row of CASES is one situation; it runs once over KServe v2 REST and once over the Open
Inference Protocol's gRPC service, and both must end in the row's status class with the same
message (errors) or the same outputs or metadata (successes). Both frontends call the one
inference service in the core (src/core/service/inference_path.h), so a row that fails here is a
frontend decoding or encoding differently, or a status mapped differently
(frontends/http/http_status.cc, frontends/grpc/grpc_status.cc).

Regressions named here: gRPC ModelMetadata needed the model loaded (UNAVAILABLE for a lazy or
evicted model, where HTTP answered 200) and listed only the loaded versions.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import Callable

import grpc
import numpy as np
import pytest
import requests

from tools.grpc_stubs import pb, pb_grpc
from inferd_harness import HTTP_TIMEOUT_S, load_sample
from lifecycle_helpers import copy_model, lifecycle, state
from test_queue_policy import _occupy, _warm_up_and_calibrate, _write_sequencer

# The HTTP status each status class maps to (frontends/http/http_status.cc).
HTTP_STATUS_CLASS = {200: "OK", 400: "INVALID_ARGUMENT", 404: "NOT_FOUND",
                     429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
                     504: "DEADLINE_EXCEEDED"}

_NUMPY = {"FP32": "<f4", "FP64": "<f8", "INT32": "<i4", "INT64": "<i8"}


@dataclass
class Infer:
    """One inference request, sent the same way over both protocols."""
    model: str
    inputs: list[tuple[str, str, list[int], np.ndarray]]  # name, datatype, shape, data
    version: int | None = None
    timeout_us: int | None = None


@dataclass
class Output:
    name: str
    datatype: str
    shape: list[int]
    data: np.ndarray  # flat, float64

    def __eq__(self, other):
        # JSON carries the float32 values as decimals: equal to within float32 rounding.
        return ((self.name, self.datatype, self.shape) == (other.name, other.datatype, other.shape)
                and np.allclose(self.data, other.data, rtol=1e-6, atol=1e-7))


@dataclass
class Metadata:
    model: str
    version: int | None = None


@dataclass
class Case:
    name: str
    request: Callable[[str], Infer | Metadata]  # protocol ("http", "grpc") -> request
    expect: str  # status class (gRPC code name)
    server: str = "main"  # the fixture's server this row runs against
    before: Callable | None = None  # run before each protocol's request, given the server
    after: Callable | None = None  # run after it, given what `before` returned
    extra: dict = field(default_factory=dict)


def _digits_inputs(rows: int = 1, width: int = 64, datatype: str = "FP32"):
    data = np.asarray(load_sample("digits")["inputs"][0]["data"][:width] * rows)
    if datatype != "FP32":
        data = data.astype(np.int32)  # JSON integers, so that both protocols decode it
    return [("pixels", datatype, [rows, width], data.reshape(rows, width))]


# --- the two protocols -----------------------------------------------------------------------

def _http_infer(server, request: Infer):
    path = f"/v2/models/{request.model}"
    if request.version is not None:
        path += f"/versions/{request.version}"
    body = {"inputs": [{"name": name, "datatype": datatype, "shape": shape,
                        "data": data.reshape(-1).tolist()}
                       for name, datatype, shape, data in request.inputs]}
    if request.timeout_us is not None:
        body["parameters"] = {"timeout": request.timeout_us}
    resp = requests.post(server.url + path + "/infer", data=json.dumps(body),
                         headers={"Content-Type": "application/json"}, timeout=HTTP_TIMEOUT_S)
    if resp.status_code != 200:
        return HTTP_STATUS_CLASS.get(resp.status_code, str(resp.status_code)), resp.json()["error"]
    return "OK", [Output(o["name"], o["datatype"], o["shape"], np.asarray(o["data"], np.float64))
                  for o in resp.json()["outputs"]]


def _grpc_infer(stub, request: Infer):
    message = pb.ModelInferRequest(model_name=request.model,
                                   model_version="" if request.version is None
                                   else str(request.version))
    for name, datatype, shape, data in request.inputs:
        message.inputs.add(name=name, datatype=datatype, shape=shape)
        message.raw_input_contents.append(data.astype(_NUMPY[datatype]).tobytes())
    if request.timeout_us is not None:
        message.parameters["timeout"].int64_param = request.timeout_us
    try:
        response = stub.ModelInfer(message, timeout=HTTP_TIMEOUT_S)
    except grpc.RpcError as error:
        return error.code().name, error.details()
    outputs = []
    for index, out in enumerate(response.outputs):
        data = np.frombuffer(response.raw_output_contents[index], _NUMPY[out.datatype])
        outputs.append(Output(out.name, out.datatype, list(out.shape), data.astype(np.float64)))
    return "OK", outputs


def _http_metadata(server, request: Metadata):
    path = f"/v2/models/{request.model}"
    if request.version is not None:
        path += f"/versions/{request.version}"
    resp = requests.get(server.url + path, timeout=HTTP_TIMEOUT_S)
    if resp.status_code != 200:
        return HTTP_STATUS_CLASS.get(resp.status_code, str(resp.status_code)), resp.json()["error"]
    meta = resp.json()
    return "OK", {"name": meta["name"], "versions": meta["versions"], "platform": meta["platform"],
                  "inputs": [(t["name"], t["datatype"], t["shape"]) for t in meta["inputs"]],
                  "outputs": [(t["name"], t["datatype"], t["shape"]) for t in meta["outputs"]]}


def _grpc_metadata(stub, request: Metadata):
    try:
        meta = stub.ModelMetadata(pb.ModelMetadataRequest(
            name=request.model, version="" if request.version is None else str(request.version)),
            timeout=HTTP_TIMEOUT_S)
    except grpc.RpcError as error:
        return error.code().name, error.details()
    return "OK", {"name": meta.name, "versions": list(meta.versions), "platform": meta.platform,
                  "inputs": [(t.name, t.datatype, list(t.shape)) for t in meta.inputs],
                  "outputs": [(t.name, t.datatype, list(t.shape)) for t in meta.outputs]}


# --- fixtures --------------------------------------------------------------------------------

class Servers:
    def __init__(self, start_server, tmp_path):
        main = tmp_path / "main"
        copy_model(main, "digits", "digits")
        copy_model(main, "lazy", "digits", extra_config="load: lazy\n")
        # One slow-loading lazy model per protocol: the first request's load goes on after its
        # deadline, so each protocol needs a model of its own that has not loaded yet.
        for protocol in ("http", "grpc"):
            copy_model(main, f"slow_{protocol}", "resnet18", extra_config="load: lazy\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TorchScript deprecation warnings
            _write_sequencer(main / "full", "{max_queue_size: 1}")  # one instance
        self.main = start_server(main)
        self.main.iterations_per_s = _warm_up_and_calibrate(self.main, ["full"])
        [digits] = [v for v in lifecycle(self.main)["versions"] if v["name"] == "digits"]
        size = digits["memory_bytes"]
        assert size > 0, digits
        # Room for one of the two: loading one evicts the other.
        budget = tmp_path / "budget"
        for index, name in enumerate(("evictee", "evictor")):
            model_dir = copy_model(budget, name, "digits", extra_config="load: lazy\n")
            with open(model_dir / "1" / "model.pt", "ab") as f:
                f.write(b"\0" * (index + 1))  # distinct files: no weight sharing
        self.budget = start_server(budget, "--memory-budget", f"cpu={size + size // 2}")
        self.channels = {}

    def stub(self, which: str):
        server = getattr(self, which)
        if which not in self.channels:
            channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
            grpc.channel_ready_future(channel).result(timeout=30)
            self.channels[which] = channel
        return pb_grpc.GRPCInferenceServiceStub(self.channels[which])

    def close(self):
        for channel in self.channels.values():
            channel.close()


@pytest.fixture
def servers(start_server, tmp_path):
    servers = Servers(start_server, tmp_path)
    yield servers
    servers.close()


def _evict_evictee(server):
    """Leaves `evictee` evicted: it was loaded, then `evictor` took its memory."""
    for name in ("evictee", "evictor"):
        resp = server.post(f"/v2/models/{name}/infer",
                           {"inputs": [{"name": "pixels", "datatype": "FP32", "shape": [1, 64],
                                        "data": [0.0] * 64}]})
        assert resp.status_code == 200, resp.text
    row = state(server, "evictee", 1)
    assert row["state"] == "UNLOADED" and "evicted" in row["reason"], row


def _fill_queue(server):
    """Keeps `full`'s only instance busy and its one-request queue full (test_queue_policy)."""
    return _occupy(server, "full")


def _drain_queue(busy):
    for call in (busy, busy.probe):
        assert call.result().status_code == 200, call.result().text


CASES = [
    Case("success", lambda p: Infer("digits", _digits_inputs()), "OK"),
    Case("unknown model", lambda p: Infer("nope", _digits_inputs()), "NOT_FOUND"),
    Case("unknown version", lambda p: Infer("digits", _digits_inputs(), version=9), "NOT_FOUND"),
    Case("bad input shape", lambda p: Infer("digits", _digits_inputs(width=63)),
         "INVALID_ARGUMENT"),
    Case("wrong datatype", lambda p: Infer("digits", _digits_inputs(datatype="INT32")),
         "INVALID_ARGUMENT"),
    Case("unknown model metadata", lambda p: Metadata("nope"), "NOT_FOUND"),
    Case("unknown version metadata", lambda p: Metadata("digits", 9), "NOT_FOUND"),
    Case("lazy model metadata", lambda p: Metadata("lazy"), "OK"),
    Case("evicted model metadata", lambda p: Metadata("evictee"), "OK", server="budget",
         before=_evict_evictee),
    Case("evicted model infer", lambda p: Infer("evictee", _digits_inputs()), "OK",
         server="budget", before=_evict_evictee),
    Case("timeout while loading",
         lambda p: Infer(f"slow_{p}", [("image", "FP32", [1, 3, 224, 224],
                                        np.zeros((1, 3, 224, 224)))], timeout_us=1000),
         "DEADLINE_EXCEEDED"),
    Case("queue full", lambda p: Infer("full", [("x", "FP32", [1, 2], np.array([[0.0, 1.0]]))]),
         "RESOURCE_EXHAUSTED", before=_fill_queue, after=_drain_queue),
]


def _run(servers, case: Case, protocol: str):
    server = getattr(servers, case.server)
    prepared = case.before(server) if case.before is not None else None
    request = case.request(protocol)
    if isinstance(request, Infer):
        answer = (_http_infer(server, request) if protocol == "http"
                  else _grpc_infer(servers.stub(case.server), request))
    else:
        answer = (_http_metadata(server, request) if protocol == "http"
                  else _grpc_metadata(servers.stub(case.server), request))
    if case.after is not None:
        case.after(prepared)
    return answer


def test_http_and_grpc_agree_on_every_case(servers):
    disagreements = []
    for case in CASES:
        answers = {protocol: _run(servers, case, protocol) for protocol in ("http", "grpc")}
        (http_class, http_answer), (grpc_class, grpc_answer) = answers["http"], answers["grpc"]
        if case.name == "timeout while loading":  # each protocol had a model of its own
            http_answer = http_answer.replace("slow_http", "slow_M")
            grpc_answer = grpc_answer.replace("slow_grpc", "slow_M")
        if http_class != case.expect or grpc_class != case.expect or http_answer != grpc_answer:
            disagreements.append(f"{case.name}: expected {case.expect}; "
                                 f"HTTP {http_class} {str(http_answer)[:200]!r}; "
                                 f"gRPC {grpc_class} {str(grpc_answer)[:200]!r}")
    assert not disagreements, "\n".join(disagreements)


def test_grpc_model_config_of_a_model_that_is_not_loaded(servers):
    # As metadata: read from the config, without loading the model.
    config = servers.stub("main").ModelConfig(pb.ModelConfigRequest(name="lazy")).config
    assert config.name == "lazy" and config.max_batch_size == 64
    assert [i.name for i in config.input] == ["pixels"]
    assert state(servers.main, "lazy", 1)["state"] == "UNLOADED"
