"""Building the eager PyTorch module a tool starts from: `--factory pkg.module:callable`
(called with no arguments; returns an nn.Module) plus optional `--weights` (a state_dict
saved with torch.save, or a TorchScript file whose parameters are copied)."""

from __future__ import annotations

import importlib
import zipfile
from typing import Optional

import torch


def load_module(factory: str, weights: Optional[str]) -> torch.nn.Module:
    module_name, _, attribute = factory.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"--factory '{factory}': expected package.module:callable")
    target = getattr(importlib.import_module(module_name), attribute)
    module = target()
    if not isinstance(module, torch.nn.Module):
        raise SystemExit(f"--factory '{factory}' returned {type(module).__name__}, "
                         "not a torch.nn.Module")
    if weights:
        module.load_state_dict(load_state_dict(weights), strict=True)
    return module.eval()


def load_state_dict(path: str) -> dict:
    """A state_dict from torch.save, or the parameters and buffers of a TorchScript file."""
    if _is_torchscript(path):
        return dict(torch.jit.load(path, map_location="cpu").state_dict())
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        raise SystemExit(f"{path}: not a state_dict (a dict of tensors) nor a TorchScript file")
    return state


def _is_torchscript(path: str) -> bool:
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        return any(name.endswith("/code/__torch__.py") or "/code/" in name
                   for name in archive.namelist())
