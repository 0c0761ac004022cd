"""The optimization toolchain end to end: each tool (tools/optimize) writes a model folder,
and inferd serves every one of them, answering what the tool recorded (sample.json) and,
for the digits variants, classifying the digits test set as accurately as the tool said.
Also the precision modes (int8 on both engines, bf16 on LibTorch) and their load errors."""

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from inferd_harness import (DEMO_MODELS, REPO_ROOT, InferdServer, assert_close, clean_env,
                            output_array)

PY = sys.executable
DIGITS_PT = str(DEMO_MODELS / "digits" / "1" / "model.pt")
DIGITS_FACTORY = "tools.demo_models.onnx_twins:digits_classifier"


def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", *args], cwd=REPO_ROOT, env=clean_env(), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)


def _run_tools(root: Path) -> dict:
    """Writes one folder per tool invocation under root; returns {name: tool output}."""
    out = lambda name: str(root / name)  # noqa: E731
    jobs = {
        "mlp_onnx": ["tools.optimize.export", "--factory", "tools.demo_models.nets:MlpScorer",
                     "--weights", str(DEMO_MODELS / "mlp_scorer" / "1" / "model.pt"),
                     "--like", str(DEMO_MODELS / "mlp_scorer" / "config.yaml"),
                     "--to", "onnx", "--out", out("mlp_onnx")],
        "digits_ts_trace": ["tools.optimize.export", "--factory", DIGITS_FACTORY,
                            "--weights", DIGITS_PT, "--input", "pixels:FP32:64",
                            "--output", "probabilities:FP32:10", "--max-batch-size", "64",
                            "--to", "torchscript", "--method", "trace",
                            "--out", out("digits_ts_trace")],
        "digits_onnx": ["tools.optimize.export", "--factory", DIGITS_FACTORY,
                        "--weights", DIGITS_PT,
                        "--like", str(DEMO_MODELS / "digits" / "config.yaml"),
                        "--to", "onnx", "--out", out("digits_onnx")],
        "digits_torch_int8": ["tools.optimize.quantize", "--engine", "torch",
                              "--factory", DIGITS_FACTORY, "--weights", DIGITS_PT,
                              "--like", str(DEMO_MODELS / "digits" / "config.yaml"),
                              "--out", out("digits_torch_int8")],
        "digits_distilled": ["tools.optimize.distill", "--teacher", str(DEMO_MODELS / "digits"),
                             "--hidden", "32", "--to", "onnx", "--out", out("digits_distilled")],
        "digits_pruned": ["tools.optimize.prune", "--source", str(DEMO_MODELS / "digits"),
                          "--amount", "0.5", "--to", "torchscript", "--out", out("digits_pruned")],
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(jobs, pool.map(lambda a: _tool(*a), jobs.values())))
    # The ONNX quantizations start from the exported ONNX folder.
    source = out("digits_onnx")
    if results["digits_onnx"].returncode == 0:
        second = {
            "digits_onnx_int8_static": ["tools.optimize.quantize", "--engine", "onnx",
                                        "--method", "static", "--source", source,
                                        "--calibration-digits",
                                        "--out", out("digits_onnx_int8_static")],
            "digits_onnx_int8_dynamic": ["tools.optimize.quantize", "--engine", "onnx",
                                         "--method", "dynamic", "--source", source,
                                         "--calibration-digits",
                                         "--out", out("digits_onnx_int8_dynamic")],
        }
        with ThreadPoolExecutor(max_workers=2) as pool:
            results.update(zip(second, pool.map(lambda a: _tool(*a), second.values())))
    return {name: r.returncode == 0 and r.stdout or f"FAILED ({r.returncode}):\n{r.stdout}"
            for name, r in results.items()}


TOOL_MODELS = ["mlp_onnx", "digits_ts_trace", "digits_onnx", "digits_torch_int8",
               "digits_distilled", "digits_pruned", "digits_onnx_int8_static",
               "digits_onnx_int8_dynamic"]
DIGITS_VARIANTS = [m for m in TOOL_MODELS if m.startswith("digits")] + ["digits_bf16"]


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _unknown_op_graph(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["batch", 64])
    y = helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])
    node = helper.make_node("NoSuchOperator", ["pixels"], ["probabilities"])
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))


def _fixed_batch_graph(path: Path) -> None:
    import warnings

    import torch
    with torch.enable_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation notice
        torch.onnx.export(torch.nn.Sequential(torch.nn.Linear(64, 10), torch.nn.Softmax(dim=1)),
                          (torch.zeros(1, 64),), str(path), input_names=["pixels"],
                          output_names=["probabilities"], opset_version=17, dynamo=False)


@pytest.fixture(scope="module")
def tools_repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("tools_repo")
    logs = _run_tools(root)
    failed = {k: v for k, v in logs.items() if v.startswith("FAILED")}
    assert not failed, "\n\n".join(f"{k}: {v}" for k, v in failed.items())

    # Precision modes and their errors, from the demo digits model and the tools' output.
    bf16 = root / "digits_bf16"
    shutil.copytree(DEMO_MODELS / "digits", bf16)
    _append(bf16 / "config.yaml", "precision: bf16\n")
    fp16 = root / "torch_fp16"
    shutil.copytree(DEMO_MODELS / "digits", fp16)
    _append(fp16 / "config.yaml", "precision: fp16\n")
    int8_fp32_file = root / "torch_int8_not_quantized"
    shutil.copytree(DEMO_MODELS / "digits", int8_fp32_file)
    _append(int8_fp32_file / "config.yaml", "precision: int8\n")
    for engine, name in [("torch", "digits_torch_int8"), ("onnx", "digits_onnx_int8_static")]:
        undeclared = root / f"{engine}_quantized_declared_fp32"
        shutil.copytree(root / name, undeclared)
        text = (undeclared / "config.yaml").read_text().replace("precision: int8\n", "")
        (undeclared / "config.yaml").write_text(text)
    unknown_op = root / "onnx_unknown_operator"
    shutil.copytree(root / "digits_onnx", unknown_op)
    _unknown_op_graph(unknown_op / "1" / "model.onnx")
    fixed = root / "onnx_fixed_batch"
    shutil.copytree(root / "digits_onnx", fixed)
    _fixed_batch_graph(fixed / "1" / "model.onnx")
    return root, logs


@pytest.fixture(scope="module")
def tools_server(tools_repo):
    root, _ = tools_repo
    server = InferdServer(root, root / "inferd.log", name="tools_server").start()
    yield server
    server.stop()


def _index(server) -> dict:
    resp = server.post("/v2/repository/index", raw="")
    assert resp.status_code == 200, resp.text
    return {entry["name"]: entry for entry in resp.json()}


@pytest.mark.parametrize("model", TOOL_MODELS)
def test_tool_output_serves_and_answers_what_the_tool_recorded(tools_repo, tools_server, model):
    root, _ = tools_repo
    assert _index(tools_server)[model]["state"] == "READY"
    sample = json.loads((root / model / "sample.json").read_text())
    resp = tools_server.post(f"/v2/models/{model}/infer", {"inputs": sample["inputs"]})
    assert resp.status_code == 200, resp.text
    for expected in sample["expected_outputs"]:
        want = np.asarray(expected["data"]).reshape(expected["shape"])
        assert_close(output_array(resp.json(), expected["name"]), want, what=model)


def _served_accuracy(server, model: str) -> float:
    sys.path.insert(0, str(REPO_ROOT))
    from tools.optimize.digits_data import digits_split
    data = digits_split()
    correct = 0
    for i in range(0, len(data.x_test), 64):
        rows = data.x_test[i:i + 64]
        resp = server.post(f"/v2/models/{model}/infer", {"inputs": [{
            "name": "pixels", "datatype": "FP32", "shape": list(rows.shape),
            "data": rows.reshape(-1).tolist()}]})
        assert resp.status_code == 200, resp.text
        predicted = output_array(resp.json(), "probabilities").argmax(axis=1)
        correct += int((predicted == data.y_test[i:i + 64]).sum())
    return correct / len(data.x_test)


@pytest.mark.parametrize("model", DIGITS_VARIANTS)
def test_digits_variant_classifies_the_test_set(tools_repo, tools_server, model):
    root, _ = tools_repo
    served = _served_accuracy(tools_server, model)
    reference = json.loads((DEMO_MODELS / "digits" / "accuracy.json").read_text())
    # Every variant stays within 3 points of the fp32 model it came from.
    assert served >= reference["test_accuracy"] - 0.03, (model, served, reference)
    recorded = root / model / "accuracy.json"
    if recorded.is_file() and model != "digits_bf16":
        assert abs(served - json.loads(recorded.read_text())["test_accuracy"]) < 1e-9


def test_bf16_is_close_to_fp32_but_not_identical(tools_server, torch_ref):
    rng = np.random.default_rng(5)
    pixels = rng.integers(0, 17, (8, 64)).astype(np.float32)
    resp = tools_server.post("/v2/models/digits_bf16/infer", {"inputs": [{
        "name": "pixels", "datatype": "FP32", "shape": [8, 64],
        "data": pixels.reshape(-1).tolist()}]})
    assert resp.status_code == 200, resp.text
    got = output_array(resp.json(), "probabilities")
    want = torch_ref.run("digits", pixels)
    assert_close(got, want, atol=0.05, what="bf16 vs fp32")
    assert np.abs(got - want).max() > 1e-6, "bf16 output identical to fp32: not running in bf16"


def test_int8_files_are_smaller_than_fp32(tools_repo):
    root, _ = tools_repo
    fp32 = (root / "digits_onnx" / "1" / "model.onnx").stat().st_size
    for name in ["digits_onnx_int8_static", "digits_onnx_int8_dynamic"]:
        assert (root / name / "1" / "model.onnx").stat().st_size < fp32 / 2, name
    assert ((root / "digits_torch_int8" / "1" / "model.pt").stat().st_size <
            (DEMO_MODELS / "digits" / "1" / "model.pt").stat().st_size)


def test_distill_and_prune_report_smaller_models(tools_repo):
    root, logs = tools_repo
    distilled = json.loads((root / "digits_distilled" / "accuracy.json").read_text())
    assert distilled["parameters"] < distilled["teacher_parameters"] / 3
    pruned = json.loads((root / "digits_pruned" / "accuracy.json").read_text())
    assert pruned["parameters"] < pruned["parameters_before"] * 0.6
    assert "fine-tuned" in logs["digits_pruned"] and "student accuracy" in logs["digits_distilled"]


@pytest.mark.parametrize("model, fragments", [
    ("torch_fp16", ["precision: fp16 is not supported by backend 'torch' on device cpu"]),
    ("torch_int8_not_quantized", ["declares precision int8 but the module calls no quantized "
                                  "operator"]),
    ("torch_quantized_declared_fp32", ["a quantized (int8) module, but config.yaml declares "
                                       "precision fp32"]),
    ("onnx_quantized_declared_fp32", ["a quantized (int8) model, but config.yaml declares "
                                      "precision fp32"]),
    ("onnx_unknown_operator", ["ONNX Runtime rejected the model", "NoSuchOperator"]),
    ("onnx_fixed_batch", ["fixes the first dimension of 'pixels' at 1; export with a dynamic "
                          "batch axis"]),
])
def test_unsupported_precision_or_graph_fails_its_load_with_a_clear_reason(
        tools_server, model, fragments):
    entry = _index(tools_server)[model]
    assert entry["state"] == "UNAVAILABLE", entry
    for fragment in fragments:
        assert fragment in entry["reason"], entry["reason"]


def test_tools_reject_missing_arguments_with_a_message():
    done = _tool("tools.optimize.quantize", "--engine", "onnx", "--out", "/tmp/never-written")
    assert done.returncode != 0
    assert "--engine onnx needs --source" in done.stdout
    assert not os.path.exists("/tmp/never-written")


def test_gemm_rewrite_before_dynamic_quantization_is_exact(tmp_path):
    # Regression: ORT 1.23.2's dynamic quantizer rewrites Gemm itself, and on the exported
    # transformer that rewrite alone moved the logits by 0.35; tools.optimize rewrites first.
    sys.path.insert(0, str(REPO_ROOT))
    import onnx
    import onnxruntime as ort
    from tools.optimize.onnx_graph import gemm_to_matmul
    onnx_models = REPO_ROOT / "build" / "demo-models-onnx"
    source = str(onnx_models / "text_classifier" / "1" / "model.onnx")
    target = str(tmp_path / "model.onnx")
    # Layer 0's out_proj (whose weight the identical layers 1-3 share) and the head.
    assert gemm_to_matmul(source, target) == 2
    assert len([n for n in onnx.load(target).graph.node if n.op_type == "Gemm"]) == 3
    ids = np.random.default_rng(3).integers(0, 30522, (4, 128)).astype(np.int64)
    want = ort.InferenceSession(source).run(None, {"token_ids": ids})[0]
    got = ort.InferenceSession(target).run(None, {"token_ids": ids})[0]
    assert np.abs(got - want).max() < 1e-5
