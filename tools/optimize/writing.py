"""Writes a trained eager module as a served model folder (TorchScript or ONNX), verified
against the module, with the digits test accuracy recorded beside it (accuracy.json)."""

from __future__ import annotations

import json
from typing import Dict

import numpy as np
import torch

from tools.optimize import engines, folder
from tools.optimize.export import export_onnx, export_torchscript

DIGITS_CONFIG = folder.make_config([folder.Spec("pixels", "FP32", [64])],
                                   [folder.Spec("probabilities", "FP32", [10])], 64)


def write_digits_model(module: torch.nn.Module, to: str, out: str, comment: str,
                       x_check: np.ndarray, facts: Dict[str, object], atol: float = 1e-4) -> str:
    """Exports `module` (pixels -> probabilities) to `out`; checks the file on `x_check`."""
    backend = "onnx" if to == "onnx" else "torch"
    config = folder.derived_config(DIGITS_CONFIG, backend, "fp32")
    if backend == "torch":
        config["parameters"] = {"freeze": False}
    check = {"pixels": np.ascontiguousarray(x_check, dtype=np.float32)}
    export_rows = {"pixels": check["pixels"][:2]}
    want = engines.run_eager(module, check)

    def writer(path: str):
        if backend == "onnx":
            export_onnx(module, path, export_rows, ["probabilities"], True, 17)
            got = engines.run_onnx(path, check)
        else:
            export_torchscript(module, path, export_rows, "script", optimize=False)
            got = engines.run_torchscript(path, check)
        engines.check_close(got, want, atol, f"{to} file vs trained module")
        return {"probabilities": got[0][:2]}

    return folder.write_folder(out, config, comment, writer, export_rows, {},
                               folder.specs(config, "outputs"),
                               {"accuracy.json": json.dumps(facts, indent=2, sort_keys=True)
                                + "\n"})
