"""Triton Python-backend model: runs the demo model's TorchScript file with torch.jit.

The pip-installed tritonserver (PyPI nvidia-pytriton) has no libtorch backend, so this is
how a Triton user serves a TorchScript file with it. With `dynamic_batching` in
config.pbtxt, Triton hands execute() every request its batcher grouped; the recommended
pattern (python_backend's README) is one forward pass over all of them, then split.
"""

import json
import os

import numpy as np
import torch
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.input_name = config["input"][0]["name"]
        self.output_name = config["output"][0]["name"]
        path = os.path.join(args["model_repository"], args["model_version"], "model.pt")
        module = torch.jit.load(path, map_location="cpu").eval()
        # inferd's default for TorchScript, so both run the same frozen graph.
        self.module = torch.jit.freeze(module)

    def execute(self, requests):
        arrays = [pb_utils.get_input_tensor_by_name(r, self.input_name).as_numpy()
                  for r in requests]
        sizes = [a.shape[0] for a in arrays]
        with torch.inference_mode():
            out = self.module(torch.from_numpy(np.concatenate(arrays))).numpy()
        responses, start = [], 0
        for size in sizes:
            tensor = pb_utils.Tensor(self.output_name, out[start:start + size])
            responses.append(pb_utils.InferenceResponse(output_tensors=[tensor]))
            start += size
        return responses
