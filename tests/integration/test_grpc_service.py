"""inference.GRPCInferenceService and grpc.health.v1.Health against the real server, with
stubs generated from our .proto (grpcio). Same semantics and error mapping as HTTP."""

from __future__ import annotations

import threading

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tools.grpc_stubs import pb, pb_grpc
from inferd_harness import ATOL, DEMO_MODELS


@pytest.fixture(scope="module")
def channel(demo_server):
    with grpc.insecure_channel(f"127.0.0.1:{demo_server.grpc_port}") as ch:
        grpc.channel_ready_future(ch).result(timeout=30)
        yield ch


@pytest.fixture(scope="module")
def stub(channel):
    return pb_grpc.GRPCInferenceServiceStub(channel)


def mlp_request(rows: np.ndarray, **kwargs) -> "pb.ModelInferRequest":
    request = pb.ModelInferRequest(model_name="mlp_scorer", **kwargs)
    tensor = request.inputs.add(name="features", datatype="FP32", shape=list(rows.shape))
    del tensor
    request.raw_input_contents.append(rows.astype("<f4").tobytes())
    return request


def output_array(response, index=0) -> np.ndarray:
    out = response.outputs[index]
    assert out.datatype == "FP32"
    return np.frombuffer(response.raw_output_contents[index], "<f4").reshape(list(out.shape))


def test_health_and_server_metadata(stub, channel):
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    assert stub.ServerReady(pb.ServerReadyRequest()).ready
    meta = stub.ServerMetadata(pb.ServerMetadataRequest())
    assert meta.name == "inferd" and meta.version
    assert "model_repository" in meta.extensions
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "inference.GRPCInferenceService"):
        answer = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_model_ready_and_metadata_match_http(stub, demo_server):
    assert stub.ModelReady(pb.ModelReadyRequest(name="mlp_scorer")).ready
    assert stub.ModelReady(pb.ModelReadyRequest(name="mlp_scorer", version="1")).ready
    meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="mlp_scorer"))
    http = demo_server.get("/v2/models/mlp_scorer").json()
    assert meta.name == http["name"] and list(meta.versions) == http["versions"]
    assert meta.platform == http["platform"]
    assert [(t.name, t.datatype, list(t.shape)) for t in meta.inputs] == \
        [(t["name"], t["datatype"], t["shape"]) for t in http["inputs"]]
    assert [(t.name, t.datatype, list(t.shape)) for t in meta.outputs] == \
        [(t["name"], t["datatype"], t["shape"]) for t in http["outputs"]]


def test_unknown_model_is_not_found(stub):
    for call, request in [(stub.ModelReady, pb.ModelReadyRequest(name="nope")),
                          (stub.ModelMetadata, pb.ModelMetadataRequest(name="nope")),
                          (stub.ModelConfig, pb.ModelConfigRequest(name="nope")),
                          (stub.ModelInfer, pb.ModelInferRequest(model_name="nope"))]:
        with pytest.raises(grpc.RpcError) as error:
            call(request)
        assert error.value.code() == grpc.StatusCode.NOT_FOUND, call
        assert "nope" in error.value.details()


def test_infer_raw_matches_torch(stub, torch_ref):
    rows = np.random.default_rng(1).standard_normal((3, 256)).astype(np.float32)
    response = stub.ModelInfer(mlp_request(rows, id="g-1"))
    assert response.model_name == "mlp_scorer" and response.model_version == "1"
    assert response.id == "g-1"
    assert response.outputs[0].name == "score"
    expected = torch_ref.run("mlp_scorer", rows)
    np.testing.assert_allclose(output_array(response), expected, atol=ATOL)


def test_infer_typed_contents(stub, torch_ref):
    rows = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 256)
    request = pb.ModelInferRequest(model_name="mlp_scorer")
    request.inputs.add(name="features", datatype="FP32", shape=[1, 256],
                       contents=pb.InferTensorContents(fp32_contents=rows.ravel().tolist()))
    request.outputs.add(name="score")
    response = stub.ModelInfer(request)
    np.testing.assert_allclose(output_array(response), torch_ref.run("mlp_scorer", rows),
                               atol=ATOL)


def test_infer_int64_input_model(stub, torch_ref):
    tokens = (np.arange(2 * 128, dtype=np.int64).reshape(2, 128) % 1000)
    request = pb.ModelInferRequest(model_name="text_classifier")
    request.inputs.add(name="token_ids", datatype="INT64", shape=[2, 128])
    request.raw_input_contents.append(tokens.astype("<i8").tobytes())
    response = stub.ModelInfer(request)
    np.testing.assert_allclose(output_array(response), torch_ref.run("text_classifier", tokens),
                               atol=ATOL)


@pytest.mark.parametrize("mutate, needle", [
    (lambda r: (r.inputs[0].__setattr__("datatype", "FP64"),
                r.raw_input_contents.__setitem__(0, bytes(8 * 256))),
     "does not match the model's FP32"),
    (lambda r: r.inputs[0].__setattr__("datatype", "FP64"), "needs 256 x 8 bytes"),
    (lambda r: r.inputs[0].__setattr__("datatype", "FP99"), "datatype 'FP99' is not one of"),
    (lambda r: r.inputs[0].__setattr__("name", "x"), "unknown input 'x'"),
    (lambda r: r.raw_input_contents.__setitem__(0, b"\0" * 12), "raw_input_contents has 12"),
    (lambda r: r.raw_input_contents.append(b"1234"), "raw_input_contents has 2 entries"),
    (lambda r: r.outputs.add(name="nope"), "unknown requested output 'nope'"),
    (lambda r: r.parameters["priority"].__setattr__("string_param", "hi"), "parameter 'priority'"),
    (lambda r: r.__setattr__("model_version", "x1"), "'x1' is not a version number"),
])
def test_bad_infer_requests_are_invalid_argument(stub, mutate, needle):
    request = mlp_request(np.zeros((1, 256), np.float32))
    mutate(request)
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in error.value.details()
    # ...and the server keeps serving.
    assert stub.ModelInfer(mlp_request(np.zeros((1, 256), np.float32))).outputs


def test_unknown_version_is_not_found(stub):
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(mlp_request(np.zeros((1, 256), np.float32), model_version="7"))
    assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_stream_infer_answers_every_request_and_reports_errors_inline(stub, torch_ref):
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((1, 256)).astype(np.float32) for _ in range(6)]

    def requests():
        for i, rows in enumerate(batches):
            yield mlp_request(rows, id=str(i))
            if i == 2:
                bad = mlp_request(rows, id="bad")
                bad.inputs[0].datatype = "INT8"
                yield bad

    answers = list(stub.ModelStreamInfer(requests()))
    assert len(answers) == len(batches) + 1
    errors = [a for a in answers if a.error_message]
    assert len(errors) == 1 and "INT8" in errors[0].error_message
    by_id = {a.infer_response.id: a.infer_response for a in answers if not a.error_message}
    for i, rows in enumerate(batches):
        np.testing.assert_allclose(output_array(by_id[str(i)]),
                                   torch_ref.run("mlp_scorer", rows), atol=ATOL)


def test_concurrent_unary_calls(stub, torch_ref):
    rows = np.random.default_rng(3).standard_normal((1, 256)).astype(np.float32)
    expected = torch_ref.run("mlp_scorer", rows)
    failures = []

    def worker():
        for _ in range(20):
            try:
                np.testing.assert_allclose(output_array(stub.ModelInfer(mlp_request(rows))),
                                           expected, atol=ATOL)
            except Exception as e:  # noqa: BLE001 - collected and reported below
                failures.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]


def test_model_config(stub):
    config = stub.ModelConfig(pb.ModelConfigRequest(name="mlp_scorer")).config
    assert config.name == "mlp_scorer" and config.backend == "torch"
    assert config.max_batch_size > 0
    assert [(i.name, i.data_type, list(i.dims)) for i in config.input] == \
        [("features", pb.TYPE_FP32, [256])]
    assert [(o.name, o.data_type, list(o.dims)) for o in config.output] == \
        [("score", pb.TYPE_FP32, [1])]


def test_model_statistics_match_http(stub, demo_server):
    stub.ModelInfer(mlp_request(np.zeros((2, 256), np.float32)))
    stats = stub.ModelStatistics(pb.ModelStatisticsRequest(name="mlp_scorer")).model_stats
    assert len(stats) == 1 and stats[0].name == "mlp_scorer" and stats[0].version == "1"
    assert stats[0].inference_count >= 2 and stats[0].execution_count >= 1
    assert stats[0].inference_stats.success.count >= 1
    assert stats[0].inference_stats.queue.ns > 0
    everything = stub.ModelStatistics(pb.ModelStatisticsRequest()).model_stats
    http = demo_server.get("/v2/models/stats").json()["model_stats"]
    assert sorted(s.name for s in everything) == sorted(s["name"] for s in http)


def test_repository_index_matches_http(stub, demo_server):
    index = stub.RepositoryIndex(pb.RepositoryIndexRequest()).models
    http = demo_server.post("/v2/repository/index", {}).json()
    assert [(m.name, m.state) for m in index] == [(m["name"], m["state"]) for m in http]
    ready = stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True)).models
    assert all(m.state == "READY" for m in ready)


def test_repository_unload_and_load_change_what_is_served(start_server, small_repository):
    server = start_server(small_repository)  # its own server: the demo one keeps its models
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
        grpc.channel_ready_future(ch).result(timeout=30)
        own = pb_grpc.GRPCInferenceServiceStub(ch)
        own.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="mlp_scorer"))
        assert not own.ModelReady(pb.ModelReadyRequest(name="mlp_scorer")).ready
        assert own.ModelReady(pb.ModelReadyRequest(name="digits")).ready
        own.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="mlp_scorer"))
        assert own.ModelReady(pb.ModelReadyRequest(name="mlp_scorer")).ready
        rows = np.ones((1, 256), np.float32)
        assert own.ModelInfer(mlp_request(rows)).raw_output_contents
        with pytest.raises(grpc.RpcError) as error:
            own.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="no_such_model"))
        assert error.value.code() == grpc.StatusCode.NOT_FOUND, error.value.details()
        assert "no_such_model" in error.value.details()


def test_lazy_model_loads_on_its_first_grpc_request_and_is_counted(start_server,
                                                                   small_repository):
    server = start_server(small_repository, "--lazy-load")
    assert server.get("/v2/models/mlp_scorer/ready").status_code == 503  # not loaded yet
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
        grpc.channel_ready_future(ch).result(timeout=30)
        own = pb_grpc.GRPCInferenceServiceStub(ch)
        answer = own.ModelInfer(mlp_request(np.ones((2, 256), np.float32)), timeout=60)
    assert len(answer.raw_output_contents[0]) == 2 * 4
    assert server.get("/v2/models/mlp_scorer/ready").status_code == 200
    metrics = server.get("/metrics").text
    assert 'inferd_requests_total{model="mlp_scorer",outcome="success",version="1"} 1' in metrics, \
        [line for line in metrics.splitlines() if line.startswith("inferd_requests_total")]
