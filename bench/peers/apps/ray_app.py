"""Ray Serve app: the demo model behind `@serve.batch`, with a KServe v2 JSON route.

  python ray_app.py --model-file M/1/model.pt --model mlp_scorer --output score --port P \
      --max-batch 32 --wait-ms 1

One replica (as inferd and Triton run one instance), Ray started locally on 127.0.0.1
without its dashboard. Blocks until killed.
"""

import os
import signal
import sys

import numpy as np
import ray
import torch
from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kserve_json  # noqa: E402


@serve.deployment(num_replicas=1, max_ongoing_requests=1000)
class Model:
    def __init__(self, model_file: str, model: str, output: str, max_batch: int, wait_s: float):
        self.module = torch.jit.freeze(torch.jit.load(model_file, map_location="cpu").eval())
        self.model, self.output = model, output
        self.predict.set_max_batch_size(max_batch)
        self.predict.set_batch_wait_timeout_s(wait_s)

    @serve.batch(max_batch_size=32, batch_wait_timeout_s=0.001)
    async def predict(self, arrays):
        sizes = [a.shape[0] for a in arrays]
        with torch.inference_mode():
            out = self.module(torch.from_numpy(np.concatenate(arrays))).numpy()
        return list(np.split(out, np.cumsum(sizes)[:-1]))

    async def __call__(self, request: Request):
        _, array = kserve_json.decode(await request.body())
        return JSONResponse(kserve_json.encode(self.model, self.output, await self.predict(array)))


def main() -> None:
    args = kserve_json.app_arguments()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, _node_ip_address="127.0.0.1")
    serve.start(http_options={"host": "127.0.0.1", "port": args.port})
    serve.run(Model.bind(args.model_file, args.model, args.output, args.max_batch,
                         args.wait_ms / 1e3),
              route_prefix=f"/v2/models/{args.model}/infer", name=args.model)
    print("ray_app: serving", flush=True)
    signal.pause()


if __name__ == "__main__":
    main()
