"""TorchServe handler: the demo model's TorchScript file, batched by TorchServe's frontend.

TorchServe's own inference API is `POST /predictions/<model>`; the body is the same KServe
v2 JSON request the other servers get, parsed here, and the answer is KServe v2 JSON.
With `batchSize` and `maxBatchDelay` set for the model, `handle` receives up to batchSize
requests at once: one forward pass over all of them, then one answer per request.
"""

import json
import os

import numpy as np
import torch

import kserve_json


class Handler:
    def __init__(self):
        self.module = None

    def initialize(self, context):
        props = context.system_properties
        path = os.path.join(props["model_dir"], context.manifest["model"]["serializedFile"])
        self.module = torch.jit.freeze(torch.jit.load(path, map_location="cpu").eval())
        self.model = context.manifest["model"]["modelName"]
        # peer.json (an --extra-files of the archive) names the output tensor.
        with open(os.path.join(props["model_dir"], "peer.json")) as f:
            self.output = json.load(f)["output"]

    def handle(self, data, context):
        arrays = [kserve_json.decode(row.get("data") or row.get("body"))[1] for row in data]
        sizes = [a.shape[0] for a in arrays]
        with torch.inference_mode():
            out = self.module(torch.from_numpy(np.concatenate(arrays))).numpy()
        return [kserve_json.encode(self.model, self.output, part)
                for part in np.split(out, np.cumsum(sizes)[:-1])]


_service = Handler()


def handle(data, context):
    if _service.module is None:
        _service.initialize(context)
    return None if data is None else _service.handle(data, context)
