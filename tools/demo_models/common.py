"""Shared helpers for writing demo models: determinism, config.yaml, sample.json, export.

The server's tests compare its answers against numbers written here, so everything that
ends up on disk must be reproducible byte for byte and exact when parsed back.
"""

import json
import os
import random
from dataclasses import dataclass
from typing import List, Sequence

import numpy as np
import torch

# Expected outputs are checked against the eager module with this absolute tolerance.
ATOL = 1e-5


@dataclass(frozen=True)
class TensorSpec:
    """One input or output of a model as config.yaml describes it (dims exclude batch)."""

    name: str
    datatype: str
    dims: Sequence[int]


def set_determinism(seed: int, threads: int) -> None:
    """Seeds every RNG we touch and pins the thread count.

    A fixed thread count matters as much as seeds: CPU reductions (matmul, sums) split
    work by thread, and a different split can change the last bit of a float.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    # Harmless on CPU for the ops used here; it turns any silently non-deterministic
    # kernel into a loud error instead.
    torch.use_deterministic_algorithms(True)


def _yaml_list(dims: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(d)) for d in dims) + "]"


def _yaml_tensors(specs: Sequence[TensorSpec]) -> List[str]:
    lines = []
    for spec in specs:
        lines.append(f"  - name: {spec.name}")
        lines.append(f"    datatype: {spec.datatype}")
        lines.append(f"    dims: {_yaml_list(spec.dims)}")
    return lines


def write_config(
    model_dir: str,
    comment: str,
    max_batch_size: int,
    inputs: Sequence[TensorSpec],
    outputs: Sequence[TensorSpec],
) -> str:
    """Writes config.yaml by hand: PyYAML is not a dependency and the format is tiny.

    The server validates keys strictly, so this emits exactly the documented keys.
    """
    lines = [f"# {comment}", "backend: torch", f"max_batch_size: {int(max_batch_size)}"]
    lines.append("inputs:")
    lines += _yaml_tensors(inputs)
    lines.append("outputs:")
    lines += _yaml_tensors(outputs)
    lines += ["instances:", "  - count: 1", "    device: cpu", "parameters: {}"]
    path = os.path.join(model_dir, "config.yaml")
    _write_text(path, "\n".join(lines) + "\n")
    return path


def rounded_fp32(values: np.ndarray, decimals: int) -> np.ndarray:
    """Rounds to a few decimals and converts to float32.

    Short decimals keep sample.json small; the float32 tensor is what the model sees,
    and `json_data` writes the short decimal that parses back to exactly that float32.
    """
    return np.round(values.astype(np.float64), decimals).astype(np.float32)


def json_data(tensor: torch.Tensor, decimals: int = -1) -> list:
    """Flattens a tensor into JSON numbers that parse back to exactly the same values.

    Integers are written as ints. Floats are written as float(x) of the float32 value
    (exact), or, when `decimals` >= 0, as the short decimal the value was rounded from
    (checked: parsing it as a double and casting to float32 gives the same bits).
    """
    array = tensor.detach().cpu().contiguous().numpy().reshape(-1)
    if not np.issubdtype(array.dtype, np.floating):
        return [int(v) for v in array]
    if decimals >= 0:
        data = [round(float(v), decimals) for v in array]
    else:
        data = [float(v) for v in array]
    back = np.asarray(json.loads(json.dumps(data)), dtype=array.dtype)
    if back.tobytes() != array.tobytes():
        raise AssertionError("JSON float round trip is not exact")
    return data


def tensor_json(name: str, datatype: str, tensor: torch.Tensor, decimals: int = -1) -> dict:
    """One KServe v2 tensor object: name, datatype, shape, flat row-major data."""
    return {
        "name": name,
        "datatype": datatype,
        "shape": list(tensor.shape),
        "data": json_data(tensor, decimals),
    }


def write_sample(model_dir: str, inputs: List[dict], expected_outputs: List[dict]) -> str:
    """Writes a KServe v2 infer request body plus the outputs PyTorch computed for it."""
    body = {"inputs": inputs, "expected_outputs": expected_outputs}
    path = os.path.join(model_dir, "sample.json")
    _write_text(path, json.dumps(body) + "\n")
    return path


def export_and_check(
    model: torch.nn.Module,
    scripted: torch.jit.ScriptModule,
    model_dir: str,
    sample_inputs: Sequence[torch.Tensor],
) -> torch.Tensor:
    """Saves the TorchScript module as <model_dir>/1/model.pt and returns its output.

    The expected output comes from the reloaded file, because that file is what the
    server runs; it must also match the eager module within ATOL, or the export is
    wrong. Runs under no_grad, as the server does (this selects the same kernels, e.g.
    the transformer fast path, that inference will use).
    """
    version_dir = os.path.join(model_dir, "1")
    os.makedirs(version_dir, exist_ok=True)
    path = os.path.join(version_dir, "model.pt")
    torch.jit.save(scripted, path)
    loaded = torch.jit.load(path, map_location="cpu")
    loaded.eval()
    with torch.no_grad():
        expected = model(*sample_inputs)
        got = loaded(*sample_inputs)
    assert_close(got, expected, "reloaded TorchScript vs eager")
    size = os.path.getsize(path)
    shown = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"
    print(f"  wrote {path} ({shown})")
    return got


def assert_close(got: torch.Tensor, expected: torch.Tensor, what: str) -> float:
    """Raises unless two outputs agree within ATOL; returns the max abs difference."""
    if got.shape != expected.shape:
        raise AssertionError(f"{what}: shape {tuple(got.shape)} != {tuple(expected.shape)}")
    diff = (got - expected).abs().max().item() if got.numel() else 0.0
    if not diff <= ATOL:
        raise AssertionError(f"{what}: max abs diff {diff:.3g} > {ATOL}")
    print(f"  {what}: max abs diff {diff:.3g}")
    return diff


def write_lines(path: str, lines: Sequence[str]) -> None:
    _write_text(path, "".join(f"{line}\n" for line in lines))


def write_json(path: str, obj: dict) -> None:
    _write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
