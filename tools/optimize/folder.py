"""Reading and writing inferd model folders: config.yaml, 1/<model file>, sample.json.

A folder written here is what `inferd --model-repository` serves: the config keeps the
source model's inputs, outputs and batching, and names the backend and precision of the
new file.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np
import yaml

# Protocol datatype -> numpy dtype, for the datatypes the tools handle.
NUMPY_TYPES = {
    "FP32": np.float32,
    "FP64": np.float64,
    "FP16": np.float16,
    "INT64": np.int64,
    "INT32": np.int32,
    "INT8": np.int8,
    "UINT8": np.uint8,
    "BOOL": np.bool_,
}

MODEL_FILES = {"torch": "model.pt", "onnx": "model.onnx"}


@dataclass(frozen=True)
class Spec:
    """One input or output: name, protocol datatype, dims without the batch dimension."""

    name: str
    datatype: str
    dims: List[int]

    @property
    def numpy_type(self):
        if self.datatype not in NUMPY_TYPES:
            raise ValueError(f"{self.name}: datatype {self.datatype} is not supported by the "
                             f"tools (supported: {', '.join(NUMPY_TYPES)})")
        return NUMPY_TYPES[self.datatype]


def parse_spec(text: str) -> Spec:
    """'pixels:FP32:64' or 'image:FP32:3,224,224' -> Spec."""
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(f"'{text}': expected NAME:DATATYPE:D1,D2,... (e.g. pixels:FP32:64)")
    name, datatype, dims = parts
    return Spec(name, datatype.upper(), [int(d) for d in dims.split(",") if d])


def read_config(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    if not isinstance(config, dict):
        raise ValueError(f"{path}: not a config.yaml mapping")
    return config


def specs(config: dict, side: str) -> List[Spec]:
    return [Spec(t["name"], t["datatype"], [int(d) for d in t["dims"]])
            for t in config.get(side, [])]


def make_config(inputs: Sequence[Spec], outputs: Sequence[Spec], max_batch_size: int) -> dict:
    """A minimal config for a new model: one CPU instance."""
    return {
        "max_batch_size": int(max_batch_size),
        "inputs": [{"name": s.name, "datatype": s.datatype, "dims": list(s.dims)} for s in inputs],
        "outputs": [{"name": s.name, "datatype": s.datatype, "dims": list(s.dims)}
                    for s in outputs],
        "instances": [{"count": 1, "device": "cpu"}],
    }


def derived_config(base: dict, backend: str, precision: str) -> dict:
    """`base` with the new backend and precision. Backend-specific parameters are dropped
    (each backend rejects the other's keys); everything else (batching, queue) is kept."""
    config = {k: v for k, v in base.items() if k not in ("backend", "parameters", "precision")}
    ordered = {"backend": backend}
    ordered.update(config)
    if precision != "fp32":
        ordered["precision"] = precision
    return ordered


def example_inputs(inputs: Sequence[Spec], batch: int, seed: int = 0,
                   int_high: int = 100, float_scale: float = 1.0) -> Dict[str, np.ndarray]:
    """Synthetic inputs: normal floats, integers in [0, int_high); variable dims become 1."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for spec in inputs:
        shape = [batch] + [d if d > 0 else 1 for d in spec.dims]
        if np.issubdtype(spec.numpy_type, np.integer):
            arrays[spec.name] = rng.integers(0, int_high, shape).astype(spec.numpy_type)
        elif spec.numpy_type == np.bool_:
            arrays[spec.name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            arrays[spec.name] = (rng.standard_normal(shape) * float_scale).astype(spec.numpy_type)
    return arrays


def write_folder(out: str, config: dict, comment: str, model_writer, inputs: Dict[str, np.ndarray],
                 outputs: Dict[str, np.ndarray], output_specs: Sequence[Spec],
                 extra_files: Optional[Dict[str, str]] = None) -> str:
    """Writes a fresh model folder; `model_writer(path)` writes the model file. Returns its path.

    `model_writer` may return the outputs the written file gives for `inputs`; they then
    replace `outputs` in sample.json.

    sample.json is a KServe v2 infer request for `inputs` plus the outputs the new file
    gave for it ("expected_outputs"), the format the demo models use.
    """
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "1"))
    path = os.path.join(out, "1", MODEL_FILES[config["backend"]])
    try:
        outputs = model_writer(path) or outputs
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)  # never leave a folder that failed verification
        raise
    with open(os.path.join(out, "config.yaml"), "w", encoding="utf-8") as f:
        f.write(f"# {comment}\n")
        yaml.safe_dump(config, f, sort_keys=False, default_flow_style=None)
    types = {s.name: s.datatype for s in output_specs}
    sample = {
        "inputs": [_tensor_json(name, array, _datatype_of(array)) for name, array in inputs.items()],
        "expected_outputs": [_tensor_json(name, array, types.get(name, _datatype_of(array)))
                             for name, array in outputs.items()],
    }
    with open(os.path.join(out, "sample.json"), "w", encoding="utf-8") as f:
        json.dump(sample, f)
        f.write("\n")
    for name, text in (extra_files or {}).items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)
    return path


def _datatype_of(array: np.ndarray) -> str:
    for name, dtype in NUMPY_TYPES.items():
        if array.dtype == dtype:
            return name
    raise ValueError(f"no protocol datatype for numpy {array.dtype}")


def _tensor_json(name: str, array: np.ndarray, datatype: str) -> dict:
    return {"name": name, "datatype": datatype, "shape": list(array.shape),
            "data": array.reshape(-1).tolist()}


def file_size_text(path: str) -> str:
    size = os.path.getsize(path)
    return f"{size / 1e6:.2f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"
