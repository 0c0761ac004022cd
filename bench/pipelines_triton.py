"""Triton's side of bench/pipelines_bench.py: the demo pipelines as a Triton 2.51 ensemble, the
way Triton's documentation builds one (the ensemble scheduler over three models; pre- and
post-processing in its Python backend, since the PyPI tritonserver has neither DALI nor a
tokenizer): raw bytes -> Python pre-processing -> the step model -> Python post-processing.

    <workload>_pre    python backend, bench/peers/apps/triton_preprocess.py: PIL + torchvision
                      (image) or tokenizers (text), what the Python server runs
    <step model>      python backend, bench/peers/apps/triton_model.py: torch.jit on the same
                      TorchScript file, dynamic batching (the PyPI build has no libtorch backend)
    <workload>_post   python backend, bench/peers/apps/triton_postprocess.py: softmax + top k
    <pipeline>        platform "ensemble" wiring the three, with the pipeline's name

tritonserver is the binary inside PyPI's nvidia-pytriton 0.7.0, installed by
`bench/peers/setup triton` into build/peers/triton with the venv its Python stubs run in.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Dict, Optional

BENCH_DIR = Path(__file__).resolve().parent
APPS = BENCH_DIR / "peers" / "apps"

# workload -> the pipeline, its step model, the raw input's name, the step model's input
# (name, Triton type, dims), its logits' size, how many labels come back, and the tokenizer.
WORKLOADS = {
    "image": {"pipeline": "resnet18_top5", "model": "resnet18", "input": "image",
              "model_input": ("image", "TYPE_FP32", [3, 224, 224]), "classes": 1000, "k": 5},
    "text": {"pipeline": "text_classifier_pipeline", "model": "text_classifier",
             "input": "text", "model_input": ("token_ids", "TYPE_INT64", [128]), "classes": 2,
             "k": 2},
}
MAX_BATCH = 8  # resnet18_top5's max_batch_size in tools/demo_models/pipelines.py


def unavailable(triton_dir: Path) -> Optional[str]:
    """Why Triton cannot run here, or None when it can."""
    skipped = triton_dir / ".skipped"
    if skipped.exists():
        return skipped.read_text().strip()
    if not (triton_dir / "tritonserver" / "bin" / "tritonserver").exists():
        return f"not installed ({triton_dir}: run bench/peers/setup triton)"
    return None


def _python_model(name: str, inputs: list, outputs: list, params: Dict[str, str],
                  instances: int, batching: bool) -> str:
    def tensors(items):
        return ", ".join(f'{{ name: "{n}" data_type: {t} dims: [ {", ".join(map(str, d))} ] }}'
                         for n, t, d in items)

    text = (f'name: "{name}"\nbackend: "python"\nmax_batch_size: {MAX_BATCH}\n'
            f"input [ {tensors(inputs)} ]\noutput [ {tensors(outputs)} ]\n"
            f"instance_group [ {{ count: {instances} kind: KIND_CPU }} ]\n")
    if batching:
        text += "dynamic_batching { }\n"
    for key, value in params.items():
        text += f'parameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}\n'
    return text


def _write(repo: Path, name: str, config: str, app: str, model_file: Optional[Path] = None):
    version = repo / name / "1"
    version.mkdir(parents=True)
    (repo / name / "config.pbtxt").write_text(config)
    (version / "model.py").write_text((APPS / app).read_text())
    if model_file is not None:
        os.symlink(model_file, version / "model.pt")


def make_repository(work: Path, models: Path, pipelines: Path, workloads: list) -> Path:
    """A Triton model repository holding each workload's ensemble and its three steps."""
    repo = work / "triton-repository"
    for workload in workloads:
        w = WORKLOADS[workload]
        pipeline_dir = pipelines / w["pipeline"] / "1"
        model_input = w["model_input"]
        pre_params = {"workload": workload}
        if workload == "text":
            pre_params["tokenizer"] = str(pipeline_dir / "tokenizer.json")
        raw = (w["input"], "TYPE_STRING", [1])
        logits = ("logits", "TYPE_FP32", [w["classes"]])
        answers = [("labels", "TYPE_STRING", [w["k"]]), ("scores", "TYPE_FP32", [w["k"]])]
        # Pre-processing is the CPU-heavy step: one instance per core, as a Triton user
        # scales a Python model (each instance is its own stub process).
        _write(repo, f"{workload}_pre",
               _python_model(f"{workload}_pre", [raw], [model_input], pre_params,
                             os.cpu_count() or 1, batching=False),
               "triton_preprocess.py")
        _write(repo, w["model"],
               _python_model(w["model"], [model_input], [logits], {}, 1, batching=True),
               "triton_model.py", (models / w["model"] / "1" / "model.pt").resolve())
        _write(repo, f"{workload}_post",
               _python_model(f"{workload}_post", [logits], answers,
                             {"k": str(w["k"]), "labels": str(pipeline_dir / "labels.txt")},
                             1, batching=False),
               "triton_postprocess.py")
        # Ensemble tensors have names of their own: the step model's input is called
        # "image" too, so the tensor between pre-processing and the model is "model_input".
        steps = [(f"{workload}_pre", {w["input"]: w["input"]},
                  {model_input[0]: "model_input"}),
                 (w["model"], {model_input[0]: "model_input"}, {"logits": "logits"}),
                 (f"{workload}_post", {"logits": "logits"},
                  {"labels": "labels", "scores": "scores"})]
        step_text = ""
        for model, inputs, outputs in steps:
            maps = "".join(f' input_map {{ key: "{k}" value: "{v}" }}' for k, v in inputs.items())
            maps += "".join(f' output_map {{ key: "{k}" value: "{v}" }}'
                            for k, v in outputs.items())
            step_text += f'  step [ {{ model_name: "{model}" model_version: -1{maps} }} ]\n'
        ensemble = (f'name: "{w["pipeline"]}"\nplatform: "ensemble"\n'
                    f"max_batch_size: {MAX_BATCH}\n"
                    f'input [ {{ name: "{raw[0]}" data_type: TYPE_STRING dims: [ 1 ] }} ]\n'
                    "output [ " + ", ".join(
                        f'{{ name: "{n}" data_type: {t} dims: [ {d[0]} ] }}'
                        for n, t, d in answers) + " ]\n"
                    f"ensemble_scheduling {{\n{step_text}}}\n")
        (repo / w["pipeline"] / "1").mkdir(parents=True)
        (repo / w["pipeline"] / "config.pbtxt").write_text(ensemble)
    return repo


def command(triton_dir: Path, repo: Path, http_port: int, grpc_port: int) -> list:
    """tritonserver as pytriton starts it (its libraries on the loader path, the venv's bin
    first on PATH so the Python stubs' interpreter finds torch and PIL), through `env` so
    the benchmark's generic process starter can run it."""
    dist = triton_dir / "tritonserver"
    libs = (dist / "libs_path").read_text().strip()
    return ["env", f"LD_LIBRARY_PATH={libs}",
            f"PATH={triton_dir / 'bin'}:{os.environ.get('PATH', '')}",
            str(dist / "bin" / "tritonserver"), "--model-repository", str(repo),
            "--backend-directory", str(dist / "backends"),
            "--http-address", "127.0.0.1", "--http-port", str(http_port),
            "--grpc-address", "127.0.0.1", "--grpc-port", str(grpc_port),
            "--allow-metrics", "false", "--log-verbose", "0"]


def request_body(workload: str, data: bytes) -> tuple:
    """A KServe v2 request for the ensemble: the raw input as one BYTES element (binary data
    extension: a 4-byte little-endian length, then the bytes), the answers as JSON. Returns
    (body, Inference-Header-Content-Length)."""
    w = WORKLOADS[workload]
    element = struct.pack("<I", len(data)) + data
    header = json.dumps({
        "inputs": [{"name": w["input"], "shape": [1, 1], "datatype": "BYTES",
                    "parameters": {"binary_data_size": len(element)}}],
        "outputs": [{"name": "labels"}, {"name": "scores"}],
    }).encode()
    return header + element, len(header)


def top_label(answer: dict) -> Optional[str]:
    """The ensemble's first label, from its JSON answer."""
    for output in answer.get("outputs", []):
        if output["name"] == "labels":
            return output["data"][0]
    return None
