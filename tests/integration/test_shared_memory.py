"""Triton's system shared-memory extension, driven by Triton's own Python client
(tritonclient.utils.shared_memory creates the regions as a Triton user's code would): inputs
read from and outputs written to shared memory over HTTP and gRPC, the status and
unregister calls, the CUDA calls a cleaning client makes, and what a careless or hostile
client can do with a region (nothing that stops the server serving)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import requests
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

from inferd_harness import ATOL

ROWS = 4
FEATURES = 256


def features(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((ROWS, FEATURES)).astype(np.float32)


@pytest.fixture
def region():
    """A 64 KiB region, unlinked afterwards."""
    key = f"/inferd_it_{os.getpid()}_{np.random.default_rng().integers(1 << 30)}"
    handle = shm.create_shared_memory_region("it_region", key, 1 << 16)
    yield key, handle
    shm.destroy_shared_memory_region(handle)


@pytest.fixture
def http_client(demo_server):
    client = httpclient.InferenceServerClient(f"127.0.0.1:{demo_server.port}")
    client.unregister_system_shared_memory()
    yield client
    client.unregister_system_shared_memory()
    client.close()


@pytest.fixture
def grpc_client(demo_server):
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{demo_server.grpc_port}")
    client.unregister_system_shared_memory()
    yield client
    client.unregister_system_shared_memory()
    client.close()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_inputs_and_outputs_pass_through_shared_memory(protocol, http_client, grpc_client,
                                                       region, torch_ref):
    client, module = (http_client, httpclient) if protocol == "http" else (grpc_client,
                                                                         grpcclient)
    key, handle = region
    x = features(21)
    expected = torch_ref.run("mlp_scorer", x)
    # The input at offset 0, the output after it at an offset of its own.
    shm.set_shared_memory_region(handle, [x])
    client.register_system_shared_memory("io", key, 1 << 16)
    status = client.get_system_shared_memory_status()
    regions = status if protocol == "http" else list(status.regions.values())
    names = [r["name"] for r in regions] if protocol == "http" else [r.name for r in regions]
    assert names == ["io"]

    inp = module.InferInput("features", list(x.shape), "FP32")
    inp.set_shared_memory("io", x.nbytes)
    out = module.InferRequestedOutput("score")
    out.set_shared_memory("io", expected.nbytes, offset=x.nbytes)
    result = client.infer("mlp_scorer", [inp], outputs=[out])

    # The reply describes the output but carries none of its bytes: they are in the region.
    if protocol == "http":
        output = result.get_output("score")
        assert output["shape"] == list(expected.shape) and "data" not in output
    else:
        assert result.get_response().raw_output_contents == [b""]
    got = shm.get_contents_as_numpy(handle, np.float32, list(expected.shape), offset=x.nbytes)
    np.testing.assert_allclose(got, expected, atol=ATOL)


def test_shared_memory_output_beside_an_inline_one_over_http(http_client, region, torch_ref):
    """An input from shared memory, its output inline (JSON): both paths in one request."""
    key, handle = region
    x = features(22)
    shm.set_shared_memory_region(handle, [x])
    http_client.register_system_shared_memory("in", key, x.nbytes)
    inp = httpclient.InferInput("features", list(x.shape), "FP32")
    inp.set_shared_memory("in", x.nbytes)
    result = http_client.infer("mlp_scorer", [inp],
                               outputs=[httpclient.InferRequestedOutput("score",
                                                                        binary_data=False)])
    np.testing.assert_allclose(result.as_numpy("score"), torch_ref.run("mlp_scorer", x),
                               atol=ATOL)


def test_status_and_unregister_over_http(demo_server, http_client, region):
    key, _ = region
    http_client.register_system_shared_memory("a", key, 1024)
    http_client.register_system_shared_memory("b", key, 1024, offset=1024)
    body = requests.get(f"{demo_server.url}/v2/systemsharedmemory/status", timeout=10).json()
    assert body == [{"name": "a", "key": key, "offset": 0, "byte_size": 1024},
                    {"name": "b", "key": key, "offset": 1024, "byte_size": 1024}]
    one = requests.get(f"{demo_server.url}/v2/systemsharedmemory/region/b/status", timeout=10)
    assert one.status_code == 200 and one.json()[0]["offset"] == 1024
    missing = requests.get(f"{demo_server.url}/v2/systemsharedmemory/region/zz/status",
                           timeout=10)
    assert missing.status_code == 404 and "zz" in missing.json()["error"]

    http_client.unregister_system_shared_memory("a")
    assert [r["name"] for r in http_client.get_system_shared_memory_status()] == ["b"]
    http_client.unregister_system_shared_memory("a")  # again: not an error
    http_client.unregister_system_shared_memory()
    assert http_client.get_system_shared_memory_status() == []
    # Taken names are refused until unregistered.
    http_client.register_system_shared_memory("a", key, 1024)
    with pytest.raises(InferenceServerException, match="already registered"):
        http_client.register_system_shared_memory("a", key, 1024)


def test_cuda_calls_answer_as_for_a_server_without_cuda_regions(demo_server, grpc_client,
                                                               http_client):
    # perf_analyzer unregisters both kinds before and after a run.
    http_client.unregister_cuda_shared_memory()
    grpc_client.unregister_cuda_shared_memory()
    assert http_client.get_cuda_shared_memory_status() == []
    reply = requests.post(f"{demo_server.url}/v2/cudasharedmemory/region/c/register",
                          json={"raw_handle": {"b64": "AAAA"}, "device_id": 0, "byte_size": 4},
                          timeout=10)
    assert reply.status_code == 501 and "system shared memory" in reply.json()["error"]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_bad_regions_and_windows_are_refused_with_reasons(protocol, http_client, grpc_client,
                                                          region):
    client, module = (http_client, httpclient) if protocol == "http" else (grpc_client,
                                                                         grpcclient)
    key, _ = region
    for bad_key, reason in [("/does_not_exist_inferd", "does not exist"),
                            ("/../../etc/passwd", "not a POSIX shared-memory name")]:
        with pytest.raises(InferenceServerException, match=reason):
            client.register_system_shared_memory("bad", bad_key, 16)
    with pytest.raises(InferenceServerException, match="runs past the end"):
        client.register_system_shared_memory("big", key, 1 << 20)

    client.register_system_shared_memory("small", key, 64)
    x = features(23)
    inp = module.InferInput("features", list(x.shape), "FP32")
    inp.set_shared_memory("small", x.nbytes)  # larger than the region
    with pytest.raises(InferenceServerException, match="runs past the end of region 'small'"):
        client.infer("mlp_scorer", [inp])
    inp.set_shared_memory("nowhere", 64)
    with pytest.raises(InferenceServerException, match="'nowhere' is not registered"):
        client.infer("mlp_scorer", [inp])

    # An output region too small for the output fails that request only.
    client.register_system_shared_memory("in", key, x.nbytes, offset=1024)
    inp.set_shared_memory("in", x.nbytes)
    out = module.InferRequestedOutput("score")
    out.set_shared_memory("small", 4)
    with pytest.raises(InferenceServerException, match="more than its shared_memory_byte_size"):
        client.infer("mlp_scorer", [inp], outputs=[out])


def test_a_region_shrunk_under_the_server_fails_requests_without_crashing_it(
        demo_server, http_client, region):
    """A mapping of a shrunk object faults (SIGBUS) on access; inferd reads with pread, so
    the request gets an error and the server goes on."""
    key, _ = region
    http_client.register_system_shared_memory("shrinking", key, 1 << 16)
    fd = os.open(f"/dev/shm{key}", os.O_RDWR)
    try:
        os.ftruncate(fd, 16)
    finally:
        os.close(fd)
    x = features(24)
    inp = httpclient.InferInput("features", list(x.shape), "FP32")
    inp.set_shared_memory("shrinking", x.nbytes)
    with pytest.raises(InferenceServerException, match="has shrunk"):
        http_client.infer("mlp_scorer", [inp])
    assert http_client.is_server_live() and http_client.is_model_ready("mlp_scorer")


def test_registering_is_management_and_refused_on_a_public_port_without_keys(
        start_server, small_repository, region):
    """Registering makes the server open a file on its host and write into it: on a
    non-loopback address without API keys it is refused, like loading a model."""
    key, _ = region
    server = start_server(small_repository, port_flag=False, env={"INFERD_HOST": "0.0.0.0"})
    reply = server.post("/v2/systemsharedmemory/region/r/register",
                        {"key": key, "offset": 0, "byte_size": 16})
    assert reply.status_code == 403 and "management endpoints are off" in reply.json()["error"]
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
    with pytest.raises(InferenceServerException, match="management endpoints are off"):
        client.register_system_shared_memory("r", key, 16)
    client.close()
    # Status is monitoring: it answers, with nothing registered.
    assert server.get("/v2/systemsharedmemory/status").json() == []
