"""The onnx backend on the ONNX twins of the demo models (build/demo-models-onnx, written by
tools.demo_models.onnx_twins): every model answers like its TorchScript twin, batches on a
dynamic axis, and broken ONNX models fail their load with the right message while the rest
of the repository serves."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from inferd_harness import (DEMO_METADATA, DEMO_MODELS, DEMO_MODEL_NAMES, InferdServer, REPO_ROOT,
                            assert_close, edit_config, inputs_as_arrays, output_array)

ONNX_MODELS = Path(os.environ.get("INFERD_DEMO_ONNX_MODELS",
                                  REPO_ROOT / "build" / "demo-models-onnx"))


def onnx_sample(model: str) -> dict:
    with open(ONNX_MODELS / model / "sample.json") as f:
        sample = json.load(f)
    return {"inputs": sample["inputs"]}


@pytest.fixture(scope="module")
def onnx_server(tmp_path_factory):
    if not (ONNX_MODELS / "digits" / "config.yaml").is_file():
        pytest.fail(f"ONNX demo twins not found at {ONNX_MODELS}: run scripts/setup")
    log = tmp_path_factory.mktemp("onnx_server") / "inferd.log"
    server = InferdServer(ONNX_MODELS, log, name="onnx_server").start()
    yield server
    server.stop()


def _random_rows(model: str, rows: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    spec = DEMO_METADATA[model]["inputs"][0]
    shape = [rows] + spec["shape"][1:]
    if spec["datatype"] == "INT64":
        return {spec["name"]: rng.integers(0, 30522, shape).astype(np.int64)}
    if model == "digits":
        return {spec["name"]: rng.integers(0, 17, shape).astype(np.float32)}
    return {spec["name"]: rng.standard_normal(shape).astype(np.float32)}


def _request(arrays: dict[str, np.ndarray]) -> dict:
    datatypes = {np.dtype(np.float32): "FP32", np.dtype(np.int64): "INT64"}
    return {"inputs": [{"name": name, "datatype": datatypes[a.dtype], "shape": list(a.shape),
                        "data": a.reshape(-1).tolist()} for name, a in arrays.items()]}


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
def test_metadata_reports_onnxruntime_and_the_twins_signature(onnx_server, model):
    resp = onnx_server.get(f"/v2/models/{model}")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["platform"] == "onnxruntime_onnx"
    assert body["inputs"] == DEMO_METADATA[model]["inputs"]
    assert body["outputs"] == DEMO_METADATA[model]["outputs"]


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
def test_sample_matches_torchscript_twin(onnx_server, torch_ref, model):
    request = onnx_sample(model)
    resp = onnx_server.post(f"/v2/models/{model}/infer", request)
    assert resp.status_code == 200, resp.text
    out_name = DEMO_METADATA[model]["outputs"][0]["name"]
    want = torch_ref.run(model, *inputs_as_arrays(request["inputs"]).values())
    assert_close(output_array(resp.json(), out_name), want, what=f"{model} onnx vs torch")


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
def test_batch_of_three_matches_torchscript_twin(onnx_server, torch_ref, model):
    # Three rows: neither the export's batch (2) nor the warm-up's (1), so a batch dimension
    # baked into the graph would fail here.
    arrays = _random_rows(model, 3, seed=7)
    resp = onnx_server.post(f"/v2/models/{model}/infer", _request(arrays))
    assert resp.status_code == 200, resp.text
    out_name = DEMO_METADATA[model]["outputs"][0]["name"]
    got = output_array(resp.json(), out_name)
    assert got.shape[0] == 3
    assert_close(got, torch_ref.run(model, *arrays.values()), what=f"{model} batch 3")


def test_concurrent_requests_are_batched_and_answered_correctly(onnx_server, torch_ref):
    from concurrent.futures import ThreadPoolExecutor
    requests_rows = [_random_rows("mlp_scorer", 1 + i % 3, seed=100 + i) for i in range(24)]

    def send(arrays):
        resp = onnx_server.post("/v2/models/mlp_scorer/infer", _request(arrays))
        assert resp.status_code == 200, resp.text
        return output_array(resp.json(), "score")

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(send, requests_rows))
    for arrays, got in zip(requests_rows, results):
        assert_close(got, torch_ref.run("mlp_scorer", *arrays.values()))


# --- one repository with both engines and broken ONNX models ------------------------------

def _copy_onnx(root: Path, demo: str, name: str) -> Path:
    shutil.copytree(ONNX_MODELS / demo, root / name)
    return root / name


@pytest.fixture(scope="module")
def mixed_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("onnx_mixed_repo")
    _copy_onnx(root, "digits", "digits_onnx")
    shutil.copytree(DEMO_MODELS / "digits", root / "digits_torch")

    garbage = _copy_onnx(root, "digits", "bad_graph")
    (garbage / "1" / "model.onnx").write_bytes(b"\x08\x07" + bytes(range(256)) * 8)

    missing = _copy_onnx(root, "digits", "missing_file")
    (missing / "1" / "model.onnx").unlink()

    fp16 = _copy_onnx(root, "digits", "fp16_on_cpu")
    (fp16 / "config.yaml").write_text((fp16 / "config.yaml").read_text() + "precision: fp16\n")

    not_quantized = _copy_onnx(root, "digits", "int8_not_quantized")
    (not_quantized / "config.yaml").write_text(
        (not_quantized / "config.yaml").read_text() + "precision: int8\n")

    renamed = _copy_onnx(root, "digits", "wrong_input_name")
    edit_config(renamed, lambda c: c["inputs"][0].update(name="image"))

    wrong_type = _copy_onnx(root, "digits", "wrong_input_type")
    edit_config(wrong_type, lambda c: [t.update(datatype="FP64") for t in c["inputs"] + c["outputs"]])

    unknown_param = _copy_onnx(root, "digits", "unknown_parameter")
    (unknown_param / "config.yaml").write_text(
        (unknown_param / "config.yaml").read_text() +
        "parameters: {graph_optimisation_level: all}\n")

    cuda_provider = _copy_onnx(root, "digits", "cuda_provider")
    (cuda_provider / "config.yaml").write_text(
        (cuda_provider / "config.yaml").read_text() + "parameters: {execution_provider: cuda}\n")

    bad_provider = _copy_onnx(root, "digits", "unknown_provider")
    (bad_provider / "config.yaml").write_text(
        (bad_provider / "config.yaml").read_text() +
        "parameters: {execution_provider: tensorrt}\n")

    tuned = _copy_onnx(root, "digits", "tuned_threads")
    (tuned / "config.yaml").write_text(
        (tuned / "config.yaml").read_text() +
        "parameters: {graph_optimization_level: basic, intra_op_threads: 1, "
        "allow_spinning: true, execution_provider: cpu}\n")

    shared = _copy_onnx(root, "mlp_scorer", "two_instances")
    edit_config(shared, lambda c: c["instances"][0].update(count=2))

    server = InferdServer(root, root / "inferd.log", name="onnx_mixed_server").start()
    yield server
    server.stop()


def _index(server) -> dict:
    resp = server.post("/v2/repository/index", raw="")
    assert resp.status_code == 200, resp.text
    return {entry["name"]: entry for entry in resp.json()}


@pytest.mark.parametrize("model", ["digits_onnx", "digits_torch", "tuned_threads"])
def test_both_engines_serve_side_by_side_and_agree(mixed_server, torch_ref, model):
    assert _index(mixed_server)[model]["state"] == "READY"
    request = onnx_sample("digits")
    resp = mixed_server.post(f"/v2/models/{model}/infer", request)
    assert resp.status_code == 200, resp.text
    want = torch_ref.run("digits", *inputs_as_arrays(request["inputs"]).values())
    assert_close(output_array(resp.json(), "probabilities"), want)


@pytest.mark.parametrize("model, fragments", [
    ("bad_graph", ["bad_graph/1/model.onnx: ONNX Runtime rejected the model:"]),
    ("missing_file", ["missing_file/1/model.onnx", "missing"]),
    ("fp16_on_cpu", ["fp16_on_cpu/config.yaml: precision: fp16 is not supported by backend "
                     "'onnx' on device cpu"]),
    ("int8_not_quantized", ["declares precision int8 but this is not a quantized model",
                            "tools.optimize.quantize"]),
    ("wrong_input_name", ["wrong_input_name/config.yaml: inputs[0].name: the graph has no "
                          "inputs named 'image' (its inputs: pixels)"]),
    ("wrong_input_type", ["inputs[0].datatype: FP64, but the graph's 'pixels' is FP32"]),
    ("unknown_parameter", ["parameters.graph_optimisation_level: unknown parameter for backend "
                           "'onnx'"]),
    # This build's ONNX Runtime is the CPU library (a GPU machine with onnxruntime_gpu has
    # not run inferd yet, docs/gpu.md).
    ("cuda_provider", ["cuda_provider/config.yaml: parameters.execution_provider: cuda: this "
                       "server's ONNX Runtime", "has no CUDAExecutionProvider (it offers "
                       "CPUExecutionProvider"]),
    ("unknown_provider", ["parameters.execution_provider: must be cpu or cuda, got 'tensorrt'"]),
])
def test_broken_onnx_model_is_unavailable_with_actionable_reason(mixed_server, model, fragments):
    entry = _index(mixed_server)[model]
    assert entry["state"] == "UNAVAILABLE", entry
    for fragment in fragments:
        assert fragment in entry["reason"], entry["reason"]


def test_instances_share_one_session_and_run_concurrently(mixed_server, torch_ref):
    from concurrent.futures import ThreadPoolExecutor
    assert _index(mixed_server)["two_instances"]["state"] == "READY"
    rows = [_random_rows("mlp_scorer", 4, seed=200 + i) for i in range(16)]

    def send(arrays):
        resp = mixed_server.post("/v2/models/two_instances/infer", _request(arrays))
        assert resp.status_code == 200, resp.text
        return output_array(resp.json(), "score")

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(send, rows))
    for arrays, got in zip(rows, results):
        assert_close(got, torch_ref.run("mlp_scorer", *arrays.values()))
