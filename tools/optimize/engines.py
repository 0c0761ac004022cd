"""Runs model files the way inferd will (TorchScript with LibTorch, ONNX with ONNX Runtime)
and compares outputs, so every tool can verify what it wrote before it reports success."""

from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np
import onnxruntime as ort
import torch


def run_torchscript(path: str, inputs: Dict[str, np.ndarray]) -> List[np.ndarray]:
    module = torch.jit.load(path, map_location="cpu").eval()
    with torch.no_grad():
        result = module(*[torch.from_numpy(np.ascontiguousarray(a)) for a in inputs.values()])
    return as_arrays(result)


def run_onnx(path: str, inputs: Dict[str, np.ndarray], threads: int = 1) -> List[np.ndarray]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


def run_eager(module: torch.nn.Module, inputs: Dict[str, np.ndarray]) -> List[np.ndarray]:
    with torch.no_grad():
        result = module(*[torch.from_numpy(np.ascontiguousarray(a)) for a in inputs.values()])
    return as_arrays(result)


def as_arrays(result) -> List[np.ndarray]:
    if isinstance(result, torch.Tensor):
        return [result.detach().float().numpy() if result.dtype == torch.bfloat16
                else result.detach().numpy()]
    return [t.detach().numpy() for t in result]


def max_abs_diff(got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> float:
    if len(got) != len(want):
        raise AssertionError(f"{len(got)} outputs, expected {len(want)}")
    worst = 0.0
    for g, w in zip(got, want):
        if g.shape != w.shape:
            raise AssertionError(f"output shape {g.shape}, expected {w.shape}")
        if g.size:
            worst = max(worst, float(np.abs(g.astype(np.float64) - w.astype(np.float64)).max()))
    return worst


def check_close(got: Sequence[np.ndarray], want: Sequence[np.ndarray], atol: float,
                what: str) -> float:
    """Raises unless outputs agree within `atol`; prints and returns the max difference."""
    diff = max_abs_diff(got, want)
    verdict = "ok" if diff <= atol else "FAILED"
    print(f"  verify {what}: max abs diff {diff:.3g} (tolerance {atol:g}) {verdict}")
    if diff > atol:
        raise SystemExit(f"verification failed: {what}: max abs diff {diff:.3g} > {atol:g}")
    return diff
