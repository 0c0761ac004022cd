"""Model optimization toolchain: PyTorch module -> TorchScript / ONNX -> INT8, distilled, pruned.

Each step is one command that writes a ready-to-serve inferd model folder (config.yaml,
1/model.pt or 1/model.onnx, sample.json) and verifies the written file's outputs against
its source before it reports success:

    python -m tools.optimize.export    PyTorch module -> TorchScript or ONNX
    python -m tools.optimize.quantize  ONNX -> INT8 (static with calibration, or dynamic);
                                       PyTorch module -> dynamically quantized TorchScript
    python -m tools.optimize.distill   teacher -> smaller student trained on the digits data
    python -m tools.optimize.prune     structured pruning of hidden units, then a fine-tune
"""
