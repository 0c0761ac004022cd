"""KServe's own Python model server: the demo model as a `kserve.Model`, KServe v2 protocol.

  python kserve_app.py --model-file M/1/model.pt --model mlp_scorer --output score --port P

What a KServe user writes for a custom PyTorch predictor: a `kserve.Model` subclass that
loads the file in `load()` and answers `predict()` with an `InferResponse`, served by
`kserve.ModelServer` (FastAPI/uvicorn), which parses the KServe v2 JSON itself. The body
every other server gets is KServe v2 already, so it needs no route of its own.

No batching: KServe batches in its agent, a sidecar container a Kubernetes InferenceService
adds in front of the model server (`batcher: {maxBatchSize, maxLatency}`), not in the
Python server, so each request is its own forward pass here. One worker; gRPC off (only
its HTTP front is measured, and its default port is fixed); the rest KServe's defaults.
"""

import os
import sys

import kserve
import torch
from kserve import InferOutput, InferRequest, InferResponse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kserve_json  # noqa: E402


class Model(kserve.Model):
    def __init__(self, name: str, model_file: str, output: str):
        super().__init__(name)
        self.model_file, self.output = model_file, output
        self.module = None

    def load(self) -> bool:
        self.module = torch.jit.freeze(torch.jit.load(self.model_file, map_location="cpu").eval())
        self.ready = True
        return self.ready

    def predict(self, payload: InferRequest, headers=None, response_headers=None) -> InferResponse:
        x = torch.from_numpy(payload.inputs[0].as_numpy())
        with torch.inference_mode():
            out = self.module(x).numpy()
        output = InferOutput(name=self.output, shape=list(out.shape), datatype="FP32")
        output.set_data_from_numpy(out, binary_data=False)
        return InferResponse(response_id=payload.id or "", model_name=self.name,
                             infer_outputs=[output])


def main() -> None:
    args = kserve_json.app_arguments()
    model = Model(args.model, args.model_file, args.output)
    model.load()
    kserve.ModelServer(http_port=args.port, workers=1, enable_grpc=False).start([model])


if __name__ == "__main__":
    main()
