"""Export a PyTorch module to TorchScript or ONNX as a ready-to-serve inferd model folder.

    python -m tools.optimize.export --factory tools.demo_models.nets:MlpScorer \\
        --weights build/demo-models/mlp_scorer/1/model.pt \\
        --like build/demo-models/mlp_scorer/config.yaml --to onnx --out models/mlp_scorer_onnx

The inputs, outputs and batch size come from an existing config.yaml (--like) or from
--input/--output/--max-batch-size. The written file is run on a batch of a different size
than the export used (so a baked-in batch dimension is caught) and compared with the eager
module; the folder is written only when they agree within --atol.

ONNX export uses the TorchScript-based exporter (dynamo=False) with a dynamic batch axis,
and runs with gradients enabled: in eval mode under no_grad, nn.TransformerEncoderLayer
takes its fused fast path (aten::_transformer_encoder_layer_fwd), which has no ONNX
symbolic (measured with torch 2.11: "Exporting the operator
'aten::_transformer_encoder_layer_fwd' to ONNX opset version 17 is not supported"); with
gradients enabled it runs the plain ops, which export.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Dict, List

import numpy as np
import onnx
import torch

from tools.optimize import engines, folder
from tools.optimize.modules import load_module

EXPORT_BATCH = 2
VERIFY_BATCH = 3


def add_io_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--like", help="take inputs, outputs and batching from this config.yaml")
    parser.add_argument("--input", action="append", default=[], metavar="NAME:DATATYPE:DIMS",
                        help="an input, dims without the batch dimension (repeatable)")
    parser.add_argument("--output", action="append", default=[], metavar="NAME:DATATYPE:DIMS")
    parser.add_argument("--max-batch-size", type=int, default=32)
    parser.add_argument("--int-high", type=int, default=100,
                        help="integer example inputs are drawn from [0, int-high)")


def io_from_arguments(args) -> dict:
    """The base config (inputs, outputs, batching) from --like or --input/--output."""
    if args.like:
        return folder.read_config(args.like)
    if not args.input or not args.output:
        raise SystemExit("give --like CONFIG.yaml, or --input and --output")
    return folder.make_config([folder.parse_spec(s) for s in args.input],
                              [folder.parse_spec(s) for s in args.output], args.max_batch_size)


def export_onnx(module: torch.nn.Module, path: str, inputs: Dict[str, np.ndarray],
                output_names: List[str], batched: bool, opset: int,
                precision: str = "fp32") -> None:
    """Writes `module` to `path` as ONNX with a dynamic batch axis named 'batch'."""
    names = list(inputs)
    dynamic_axes = {name: {0: "batch"} for name in names + output_names} if batched else None
    args = tuple(torch.from_numpy(a) for a in inputs.values())
    with torch.enable_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's deprecation notices
        torch.onnx.export(module, args, path, input_names=names, output_names=output_names,
                          dynamic_axes=dynamic_axes, opset_version=opset, dynamo=False)
    set_precision_metadata(path, precision)


def set_precision_metadata(path: str, precision: str) -> None:
    """Records the precision the file was made for (the server checks it for int8)."""
    model = onnx.load(path)
    del model.metadata_props[:]
    entry = model.metadata_props.add()
    entry.key, entry.value = "inferd.precision", precision
    onnx.save(model, path)


def export_torchscript(module: torch.nn.Module, path: str, inputs: Dict[str, np.ndarray],
                       method: str, optimize: bool) -> None:
    """Scripts or traces, freezes and (optionally) optimizes for inference, then saves."""
    args = tuple(torch.from_numpy(a) for a in inputs.values())
    with torch.no_grad():
        if method == "script":
            scripted = torch.jit.script(module)
        else:
            scripted = torch.jit.trace(module, args, check_trace=False)
        scripted = torch.jit.freeze(scripted.eval())
        if optimize:
            scripted = torch.jit.optimize_for_inference(scripted)
    torch.jit.save(scripted, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factory", required=True, help="package.module:callable -> nn.Module")
    parser.add_argument("--weights", help="state_dict (torch.save) or TorchScript file")
    add_io_arguments(parser)
    parser.add_argument("--to", required=True, choices=["onnx", "torchscript"])
    parser.add_argument("--method", choices=["script", "trace"], default="script",
                        help="TorchScript only: torch.jit.script (keeps control flow) or trace")
    parser.add_argument("--no-optimize", action="store_true",
                        help="TorchScript only: skip torch.jit.optimize_for_inference")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--out", required=True, help="the model folder to write")
    args = parser.parse_args()

    base = io_from_arguments(args)
    module = load_module(args.factory, args.weights)
    in_specs, out_specs = folder.specs(base, "inputs"), folder.specs(base, "outputs")
    batched = int(base.get("max_batch_size", 0)) > 0
    export_inputs = folder.example_inputs(in_specs, EXPORT_BATCH if batched else 1,
                                          seed=1, int_high=args.int_high)
    verify_inputs = folder.example_inputs(in_specs, VERIFY_BATCH if batched else 1,
                                          seed=2, int_high=args.int_high)
    want = engines.run_eager(module, verify_inputs)

    backend = "onnx" if args.to == "onnx" else "torch"
    config = folder.derived_config(base, backend, "fp32")
    if backend == "torch":
        # Frozen here already; freezing again at load would only log a warning.
        config["parameters"] = {"freeze": False}

    def writer(path: str) -> None:
        if backend == "onnx":
            export_onnx(module, path, export_inputs, [s.name for s in out_specs], batched,
                        args.opset)
        else:
            export_torchscript(module, path, export_inputs, args.method, not args.no_optimize)

    def verified_writer(path: str) -> None:
        writer(path)
        run = engines.run_onnx if backend == "onnx" else engines.run_torchscript
        engines.check_close(run(path, verify_inputs), want, args.atol,
                            f"{args.to} file vs eager module (batch {VERIFY_BATCH})")

    path = folder.write_folder(
        args.out, config, f"exported by tools.optimize.export from {args.factory} ({args.to})",
        verified_writer, verify_inputs, dict(zip([s.name for s in out_specs], want)), out_specs)
    print(f"wrote {path} ({folder.file_size_text(path)})")


if __name__ == "__main__":
    main()
