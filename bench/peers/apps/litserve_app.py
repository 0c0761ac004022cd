"""LitServe app: the demo model with LitServe's batching, on a KServe v2 JSON route.

  python litserve_app.py --model-file M/1/model.pt --model mlp_scorer --output score --port P \
      --max-batch 32 --wait-ms 1

One worker (as inferd and Triton run one instance). Blocks until killed.
"""

import os
import sys

import litserve as ls
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kserve_json  # noqa: E402


class ModelAPI(ls.LitAPI):
    def __init__(self, model_file: str, model: str, output: str, **kwargs):
        super().__init__(**kwargs)
        self.model_file, self.model, self.output = model_file, model, output

    def setup(self, device):
        self.module = torch.jit.freeze(torch.jit.load(self.model_file, map_location="cpu").eval())

    def decode_request(self, request):
        _, array = kserve_json.decode(request)
        return array  # one request, batch dimension kept: [1, ...]

    def batch(self, inputs):
        return torch.from_numpy(np.concatenate(inputs))

    def predict(self, x):
        with torch.inference_mode():
            return self.module(x).numpy()

    def unbatch(self, output):
        return [row[None] for row in output]

    def encode_response(self, output):
        return kserve_json.encode(self.model, self.output, output)


def main() -> None:
    args = kserve_json.app_arguments()
    api = ModelAPI(args.model_file, args.model, args.output, max_batch_size=args.max_batch,
                   batch_timeout=args.wait_ms / 1e3, api_path=f"/v2/models/{args.model}/infer")
    server = ls.LitServer(api, accelerator="cpu", workers_per_device=1)
    server.run(host="127.0.0.1", port=args.port, generate_client_file=False)


if __name__ == "__main__":
    main()
