"""Triton Python-backend model: the post-processing step of the pipelines benchmark's Triton
ensemble (bench/pipelines_triton.py): logits in, softmax, the k likeliest labels and their
scores out (`labels` BYTES [k], `scores` FP32 [k]), as inferd's softmax + top_k ops answer.
Parameters: `k` and `labels` (a labels.txt path, one label per line)."""

import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        self.k = int(params["k"])
        with open(params["labels"], encoding="utf-8") as f:
            self.labels = np.array([line.encode() for line in f.read().splitlines()],
                                   dtype=object)

    def execute(self, requests):
        responses = []
        for request in requests:
            logits = pb_utils.get_input_tensor_by_name(request, "logits").as_numpy()
            shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
            probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
            top = np.argsort(-probabilities, axis=-1, kind="stable")[:, :self.k]
            scores = np.take_along_axis(probabilities, top, axis=-1).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor("labels", self.labels[top]),
                pb_utils.Tensor("scores", scores)]))
        return responses
