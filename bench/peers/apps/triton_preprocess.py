"""Triton Python-backend model: the pre-processing step of the pipelines benchmark's Triton
ensemble (bench/pipelines_triton.py), the way a Triton user writes it (python_backend's
examples): raw bytes in, the step model's tensor out, with the libraries the model was
trained with.

    image  BYTES [1] (a JPEG/PNG file) -> PIL, torchvision Resize(256), CenterCrop(224),
           ToTensor, Normalize -> FP32 [3, 224, 224]
    text   BYTES [1] (UTF-8)           -> tokenizers' encode, truncated and padded to 128
           -> INT64 [128]

Which one is the model config's `parameters` key `workload`; the tokenizer is the
`tokenizer` parameter (a tokenizer.json path).
"""

import io
import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        self.workload = params["workload"]
        self.input_name = config["input"][0]["name"]
        self.output_name = config["output"][0]["name"]
        if self.workload == "image":
            from torchvision import transforms

            self.transform = transforms.Compose([
                transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
                transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
            ])
        else:
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_file(params["tokenizer"])
            self.tokenizer.enable_truncation(128)
            self.tokenizer.enable_padding(length=128, pad_id=0)

    def _one(self, data: bytes) -> np.ndarray:
        if self.workload == "image":
            from PIL import Image

            return self.transform(Image.open(io.BytesIO(data)).convert("RGB")).numpy()
        return np.array(self.tokenizer.encode(data.decode("utf-8")).ids, dtype=np.int64)

    def execute(self, requests):
        responses = []
        for request in requests:
            items = pb_utils.get_input_tensor_by_name(request, self.input_name).as_numpy()
            out = np.stack([self._one(item) for item in items.reshape(-1)])
            responses.append(pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor(self.output_name, out)]))
        return responses
