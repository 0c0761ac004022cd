"""Writes ONNX twins of the demo models: build/demo-models-onnx/<model> (backend: onnx).

Each twin is the TorchScript demo model's weights in its eager PyTorch class, exported by
tools.optimize.export with a dynamic batch axis and checked against the TorchScript file
on the model's sample request. A separate repository (not extra models in
build/demo-models) so that the demo repository keeps its four models, and so that a twin
has the same name as its TorchScript model:

    .venv/bin/python -m tools.demo_models.onnx_twins --torch build/demo-models \\
        --out build/demo-models-onnx
    build/inferd --model-repository build/demo-models-onnx
"""

import argparse
import json
import os
import shutil
import time

import numpy as np
import torch
import torchvision
import yaml

from tools.demo_models.nets import DigitsClassifier, DigitsNet, MlpScorer, TextClassifier
from tools.optimize import engines, folder
from tools.optimize.export import export_onnx
from tools.optimize.modules import load_state_dict

# The TorchScript twin is the reference: ONNX Runtime's kernels differ from LibTorch's in
# the last bits (different summation order), far below this.
ATOL = 1e-4



def digits_classifier() -> DigitsClassifier:
    """The digits demo model's eager class (a --factory for tools.optimize)."""
    return DigitsClassifier(DigitsNet())


def resnet18() -> torch.nn.Module:
    """torchvision's ResNet-18 without weights (a --factory for tools.optimize)."""
    return torchvision.models.resnet18(weights=None)


FACTORIES = {
    "mlp_scorer": MlpScorer,
    "resnet18": resnet18,
    "text_classifier": TextClassifier,
    "digits": digits_classifier,
}


def sample_inputs(sample_path: str, config: dict) -> dict:
    with open(sample_path, encoding="utf-8") as f:
        sample = json.load(f)
    types = {s.name: s.numpy_type for s in folder.specs(config, "inputs")}
    return {t["name"]: np.asarray(t["data"], dtype=types[t["name"]]).reshape(t["shape"])
            for t in sample["inputs"]}


def make_twin(name: str, torch_repo: str, out_repo: str) -> None:
    source = os.path.join(torch_repo, name)
    config = folder.read_config(os.path.join(source, "config.yaml"))
    module = FACTORIES[name]()
    module.load_state_dict(load_state_dict(os.path.join(source, "1", "model.pt")), strict=True)
    module.eval()
    inputs = sample_inputs(os.path.join(source, "sample.json"), config)
    outputs = [s.name for s in folder.specs(config, "outputs")]

    out = os.path.join(out_repo, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "1"))
    path = os.path.join(out, "1", "model.onnx")
    torch.manual_seed(0)
    export_onnx(module, path, inputs, outputs, int(config.get("max_batch_size", 0)) > 0, 17)
    want = engines.run_torchscript(os.path.join(source, "1", "model.pt"), inputs)
    engines.check_close(engines.run_onnx(path, inputs), want, ATOL,
                        f"{name}: ONNX twin vs TorchScript on sample.json")
    twin = folder.derived_config(config, "onnx", "fp32")
    with open(os.path.join(out, "config.yaml"), "w", encoding="utf-8") as f:
        f.write(f"# {name}: ONNX twin of build/demo-models/{name} "
                "(tools.demo_models.onnx_twins)\n")
        yaml.safe_dump(twin, f, sort_keys=False, default_flow_style=None)
    shutil.copy(os.path.join(source, "sample.json"), os.path.join(out, "sample.json"))
    print(f"  wrote {path} ({folder.file_size_text(path)})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", default="build/demo-models", help="the TorchScript demo repo")
    parser.add_argument("--out", default="build/demo-models-onnx")
    parser.add_argument("--models", nargs="+", choices=list(FACTORIES), default=list(FACTORIES))
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.perf_counter()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        print(f"{name}:", flush=True)
        make_twin(name, args.torch, args.out)
    print(f"ONNX twins done in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
