"""API keys and roles over gRPC (grpcio with stubs from our .proto): the same rules as HTTP,
answered with UNAUTHENTICATED and PERMISSION_DENIED; a refused unload leaves the model
serving."""

from __future__ import annotations

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from auth_helpers import write_keys
from tools.grpc_stubs import pb, pb_grpc


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    from inferd_harness import InferdServer, make_repository
    root = tmp_path_factory.mktemp("auth_grpc")
    keys = write_keys(root)
    repo = make_repository(root / "repo", {"mlp_scorer": "mlp_scorer", "digits": "digits"})
    server = InferdServer(repo, root / "inferd.log", ["--api-keys-file", str(keys.path)],
                          name="keyed").start()
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
    grpc.channel_ready_future(channel).result(timeout=30)
    yield pb_grpc.GRPCInferenceServiceStub(channel), channel, keys
    channel.close()
    server.stop()


def auth(key: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {key}")]


def mlp_request(model: str = "mlp_scorer") -> "pb.ModelInferRequest":
    request = pb.ModelInferRequest(model_name=model)
    request.inputs.add(name="features", datatype="FP32", shape=[1, 256])
    request.raw_input_contents.append(np.zeros((1, 256), "<f4").tobytes())
    return request


def code_of(call) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value.code(), error.value.details()


def test_health_and_liveness_need_no_key(keyed):
    stub, channel, _ = keyed
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    health = health_pb2_grpc.HealthStub(channel)
    assert health.Check(health_pb2.HealthCheckRequest()).status == \
        health_pb2.HealthCheckResponse.SERVING


def test_no_key_and_wrong_key_are_unauthenticated(keyed):
    stub, _, keys = keyed
    code, details = code_of(lambda: stub.ModelInfer(mlp_request()))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "authorization: Bearer <key>" in details
    code, details = code_of(lambda: stub.ModelInfer(mlp_request(), metadata=auth(keys.app + "0")))
    assert code == grpc.StatusCode.UNAUTHENTICATED and "not valid" in details
    code, _ = code_of(lambda: stub.ServerMetadata(pb.ServerMetadataRequest()))
    assert code == grpc.StatusCode.UNAUTHENTICATED


def test_inference_key_infers(keyed):
    stub, _, keys = keyed
    response = stub.ModelInfer(mlp_request(), metadata=auth(keys.app))
    assert response.outputs[0].name == "score"
    assert stub.ModelMetadata(pb.ModelMetadataRequest(name="digits"),
                              metadata=auth(keys.app)).name == "digits"


def test_inference_key_cannot_unload_and_the_model_keeps_serving(keyed):
    stub, _, keys = keyed
    code, details = code_of(lambda: stub.RepositoryModelUnload(
        pb.RepositoryModelUnloadRequest(model_name="mlp_scorer"), metadata=auth(keys.app)))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert "management" in details
    code, _ = code_of(lambda: stub.RepositoryIndex(pb.RepositoryIndexRequest(),
                                                   metadata=auth(keys.app)))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    code, _ = code_of(lambda: stub.ModelStatistics(pb.ModelStatisticsRequest(),
                                                   metadata=auth(keys.app)))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert stub.ModelReady(pb.ModelReadyRequest(name="mlp_scorer"), metadata=auth(keys.app)).ready
    assert stub.ModelInfer(mlp_request(), metadata=auth(keys.app)).outputs


def test_management_key_unloads_and_loads(keyed):
    stub, _, keys = keyed
    index = stub.RepositoryIndex(pb.RepositoryIndexRequest(), metadata=auth(keys.ops))
    assert "digits" in {m.name for m in index.models}
    stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="digits"),
                               metadata=auth(keys.ops))
    assert not stub.ModelReady(pb.ModelReadyRequest(name="digits"), metadata=auth(keys.app)).ready
    stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="digits"),
                             metadata=auth(keys.ops))
    assert stub.ModelReady(pb.ModelReadyRequest(name="digits"), metadata=auth(keys.app)).ready
    code, _ = code_of(lambda: stub.ModelInfer(mlp_request(), metadata=auth(keys.ops)))
    assert code == grpc.StatusCode.PERMISSION_DENIED


def test_stream_needs_a_key_and_checks_each_message(keyed):
    stub, _, keys = keyed
    code, _ = code_of(lambda: list(stub.ModelStreamInfer(iter([mlp_request()]))))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    answers = list(stub.ModelStreamInfer(iter([mlp_request(), mlp_request("digits")]),
                                         metadata=auth(keys.alice)))
    # alice may use mlp_scorer only: the second message is refused, the stream goes on.
    assert len(answers) == 2
    by_error = sorted(answers, key=lambda a: a.error_message)
    assert by_error[0].error_message == "" and by_error[0].infer_response.outputs
    assert "may not use model 'digits'" in by_error[1].error_message
