"""INT8 quantization, written as a ready-to-serve model folder (config.yaml `precision: int8`).

ONNX Runtime (the source is an ONNX model folder, e.g. from tools.optimize.export):
    python -m tools.optimize.quantize --engine onnx --method static \\
        --source models/digits_onnx --calibration-digits --out models/digits_onnx_int8
    python -m tools.optimize.quantize --engine onnx --method dynamic \\
        --source models/text_onnx --out models/text_onnx_int8
  static:  weights and activations in int8 (QDQ format, per-tensor, MinMax calibration on
           --calibration FILE.npz, the digits training set, or synthetic inputs);
  dynamic: int8 weights, activations quantized per batch at run time (no calibration).

PyTorch dynamic quantization (nn.Linear weights in int8), traced to TorchScript:
    python -m tools.optimize.quantize --engine torch --factory tools.demo_models.nets:MlpScorer \\
        --weights build/demo-models/mlp_scorer/1/model.pt \\
        --like build/demo-models/mlp_scorer/config.yaml --out models/mlp_scorer_torch_int8

The result is run beside its fp32 source on the same inputs; the tool prints the largest
output difference (and top-1 agreement for classifiers) and fails above --atol.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from typing import Dict, Iterator, List

import numpy as np
import torch

from tools.optimize import engines, folder
from tools.optimize.digits_data import digits_split
from tools.optimize.export import (VERIFY_BATCH, add_io_arguments, io_from_arguments,
                                   set_precision_metadata)
from tools.optimize.modules import load_module
from tools.optimize.onnx_graph import gemm_to_matmul


def calibration_inputs(args, specs: List[folder.Spec]) -> Dict[str, np.ndarray]:
    """Rows to calibrate on, keyed by input name."""
    if args.calibration:
        data = np.load(args.calibration)
        missing = [s.name for s in specs if s.name not in data]
        if missing:
            raise SystemExit(f"{args.calibration}: no array for input(s) {', '.join(missing)}")
        return {s.name: data[s.name].astype(s.numpy_type) for s in specs}
    if args.calibration_digits:
        if len(specs) != 1:
            raise SystemExit("--calibration-digits needs a model with one input (64 pixels)")
        x = digits_split().x_train[: args.calibration_samples]
        return {specs[0].name: x.astype(specs[0].numpy_type)}
    print("  note: no calibration data given; calibrating on synthetic inputs (standard "
          "normal floats, integers in [0, --int-high)); pass --calibration for real data")
    return folder.example_inputs(specs, args.calibration_samples, seed=3, int_high=args.int_high)


class _Reader:
    """onnxruntime.quantization's CalibrationDataReader over rows, in small batches."""

    def __init__(self, inputs: Dict[str, np.ndarray], batch: int = 16):
        rows = len(next(iter(inputs.values())))
        self._batches: Iterator = iter(
            [{k: v[i:i + batch] for k, v in inputs.items()} for i in range(0, rows, batch)])

    def get_next(self):
        return next(self._batches, None)

    def rewind(self):  # not needed by MinMax; part of the reader protocol
        pass


def quantize_onnx(source_model: str, out_path: str, method: str,
                  calibration: Dict[str, np.ndarray] | None, per_channel: bool) -> None:
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory() as tmp:
        # ORT's recommended pre-processing: symbolic shape inference and graph clean-up, so
        # that more operators can be quantized.
        prepared = os.path.join(tmp, "prepared.onnx")
        try:
            quant_pre_process(source_model, prepared, skip_symbolic_shape=False)
        except Exception as e:  # pre-processing is an optimization; quantize the original
            print(f"  note: ORT pre-processing failed ({e}); quantizing the model as is")
            prepared = source_model
        if method == "dynamic":
            # Rewrite Gemm ourselves: the quantizer's own rewrite is not exact (onnx_graph).
            without_gemm = os.path.join(tmp, "without_gemm.onnx")
            if gemm_to_matmul(prepared, without_gemm):
                prepared = without_gemm
            # Only MatMuls with a constant (weight) operand: quantizing activation x
            # activation products (attention's QK^T, AV) on the fly cost the transformer
            # 2121 ms against 859 ms per batch of 32 here, for no smaller file.
            quantize_dynamic(prepared, out_path, weight_type=QuantType.QInt8,
                             per_channel=per_channel,
                             extra_options={"MatMulConstBOnly": True})
        else:
            reader = _Reader(calibration)
            CalibrationDataReader.register(_Reader)
            quantize_static(prepared, out_path, reader, quant_format=QuantFormat.QDQ,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            per_channel=per_channel)
    set_precision_metadata(out_path, "int8")


def quantize_torch(module: torch.nn.Module, path: str, inputs: Dict[str, np.ndarray]) -> None:
    """Dynamic quantization of every nn.Linear, traced and frozen into TorchScript.

    Traced, not scripted: nn.TransformerEncoderLayer's fast-path check reads
    `linear1.weight`, which a dynamically quantized Linear has as a method, so the scripted
    module fails at run time. Tracing with the fast path off records only the plain ops.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization's deprecation notice
        quantized = torch.ao.quantization.quantize_dynamic(module, {torch.nn.Linear},
                                                           dtype=torch.qint8)
    args = tuple(torch.from_numpy(a) for a in inputs.values())
    was_enabled = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.freeze(torch.jit.trace(quantized, args, check_trace=False).eval())
    finally:
        torch.backends.mha.set_fastpath_enabled(was_enabled)
    torch.jit.save(traced, path)


def report_difference(got: List[np.ndarray], want: List[np.ndarray], atol: float) -> None:
    diff = engines.max_abs_diff(got, want)
    line = f"  verify int8 vs fp32 (batch {len(want[0])}): max abs diff {diff:.3g}"
    if want[0].ndim == 2 and want[0].shape[1] > 1:
        agree = float((got[0].argmax(axis=1) == want[0].argmax(axis=1)).mean())
        line += f", top-1 agreement {agree:.3f}"
    print(f"{line} (tolerance {atol:g})")
    if diff > atol:
        raise SystemExit(f"verification failed: int8 output differs by {diff:.3g} > {atol:g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", required=True, choices=["onnx", "torch"])
    parser.add_argument("--method", choices=["static", "dynamic"], default="dynamic",
                        help="onnx only (torch is always dynamic)")
    parser.add_argument("--source", help="onnx: the fp32 model folder (config.yaml, 1/model.onnx)")
    parser.add_argument("--factory", help="torch: package.module:callable -> nn.Module")
    parser.add_argument("--weights", help="torch: state_dict or TorchScript file")
    add_io_arguments(parser)
    parser.add_argument("--calibration", help="onnx static: .npz with one array per input")
    parser.add_argument("--calibration-digits", action="store_true",
                        help="onnx static: calibrate on the digits training set")
    parser.add_argument("--calibration-samples", type=int, default=256)
    parser.add_argument("--per-channel", action="store_true")
    parser.add_argument("--verify-inputs", help=".npz of inputs to compare int8 with fp32 on "
                        "(default: digits test rows with --calibration-digits, else synthetic)")
    parser.add_argument("--atol", type=float, default=0.25)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    if args.engine == "onnx":
        if not args.source:
            raise SystemExit("--engine onnx needs --source (an ONNX model folder)")
        base = folder.read_config(os.path.join(args.source, "config.yaml"))
        source_model = os.path.join(args.source, "1", "model.onnx")
    else:
        if not args.factory:
            raise SystemExit("--engine torch needs --factory (and usually --weights, --like)")
        base = io_from_arguments(args)
    in_specs, out_specs = folder.specs(base, "inputs"), folder.specs(base, "outputs")
    batched = int(base.get("max_batch_size", 0)) > 0
    if args.verify_inputs:
        data = np.load(args.verify_inputs)
        verify = {s.name: data[s.name].astype(s.numpy_type) for s in in_specs}
    elif args.calibration_digits:
        verify = {in_specs[0].name: digits_split().x_test.astype(in_specs[0].numpy_type)}
    else:
        verify = folder.example_inputs(in_specs, VERIFY_BATCH if batched else 1, seed=4,
                                       int_high=args.int_high)

    if args.engine == "onnx":
        want = engines.run_onnx(source_model, verify)
        calibration = calibration_inputs(args, in_specs) if args.method == "static" else None
        config = folder.derived_config(base, "onnx", "int8")

        def writer(path: str) -> None:
            quantize_onnx(source_model, path, args.method, calibration, args.per_channel)
            report_difference(engines.run_onnx(path, verify), want, args.atol)
        what = f"ONNX Runtime {args.method} quantization of {source_model}"
    else:
        module = load_module(args.factory, args.weights)
        want = engines.run_eager(module, verify)
        config = folder.derived_config(base, "torch", "int8")
        config["parameters"] = {"freeze": False}  # frozen by the tool already
        trace_inputs = folder.example_inputs(in_specs, 2 if batched else 1, seed=1,
                                             int_high=args.int_high)

        def writer(path: str) -> None:
            quantize_torch(module, path, trace_inputs)
            report_difference(engines.run_torchscript(path, verify), want, args.atol)
        what = f"PyTorch dynamic quantization of {args.factory}"

    sample_inputs = {k: v[:2] for k, v in verify.items()}

    def verified(path: str) -> Dict[str, np.ndarray]:
        writer(path)
        run = engines.run_onnx if args.engine == "onnx" else engines.run_torchscript
        return dict(zip([s.name for s in out_specs], run(path, sample_inputs)))

    # sample.json: the first rows of the verification inputs and the int8 outputs for them.
    path = folder.write_folder(args.out, config, what, verified, sample_inputs, {}, out_specs)
    print(f"wrote {path} ({folder.file_size_text(path)})")


if __name__ == "__main__":
    main()
