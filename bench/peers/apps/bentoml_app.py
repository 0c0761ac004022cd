"""BentoML service: the demo model behind BentoML's adaptive batching, on a KServe v2 JSON route.

  PEER_MODEL_FILE=M/1/model.pt PEER_MODEL=mlp_scorer PEER_OUTPUT=score PEER_MAX_BATCH=32 \
  PEER_MAX_LATENCY_MS=60000 bentoml serve bentoml_app:Model --host 127.0.0.1 --port P

Written as BentoML's docs write a batched model (docs "Adaptive batching"): one
`@bentoml.service` class that loads the model in `__init__` and one
`@bentoml.api(batchable=True, max_batch_size=..., max_latency_ms=...)` method taking a
list. Here that list is the KServe v2 request's own `inputs` (each request carries one
tensor of batch 1), so the body is the one every other server gets and BentoML's dispatcher
concatenates the `inputs` of the requests it groups: one forward pass per group, each
request answered with its slice of the returned list.

That slice is what a batchable API answers: a JSON array (here of one KServe v2 output
tensor), not KServe's `{"model_name": ..., "outputs": [...]}` object, which a batchable API
cannot return (BentoML splits the returned list by request). BentoML's documented way to
answer another shape is a second service in front, reached over its own HTTP hop
(`bentoml.depends`); this keeps the single service a user would start with.

max_latency_ms is not a batch window: the dispatcher learns how long to wait from the
forward passes it has timed, and refuses (503) a request that would wait past
max_latency_ms; BentoML's default is 60000. One worker (as inferd and Triton run one
instance), BentoML's default of one thread for a synchronous API.
"""

import os
import sys
import typing as t

import bentoml
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kserve_json  # noqa: E402

MODEL_FILE = os.environ["PEER_MODEL_FILE"]
MODEL = os.environ["PEER_MODEL"]
OUTPUT = os.environ["PEER_OUTPUT"]
MAX_BATCH = int(os.environ.get("PEER_MAX_BATCH", "32"))
MAX_LATENCY_MS = int(os.environ.get("PEER_MAX_LATENCY_MS", "60000"))


@bentoml.service(workers=1, traffic={"timeout": 120})
class Model:
    def __init__(self) -> None:
        self.module = torch.jit.freeze(torch.jit.load(MODEL_FILE, map_location="cpu").eval())

    @bentoml.api(route=f"/v2/models/{MODEL}/infer", batchable=True, batch_dim=0,
                 max_batch_size=MAX_BATCH, max_latency_ms=MAX_LATENCY_MS)
    def infer(self, inputs: t.List[t.Dict[str, t.Any]]) -> t.List[t.Dict[str, t.Any]]:
        arrays = [kserve_json.decode_tensor(tensor)[1] for tensor in inputs]
        sizes = [a.shape[0] for a in arrays]
        with torch.inference_mode():
            out = self.module(torch.from_numpy(np.concatenate(arrays))).numpy()
        return [kserve_json.encode_tensor(OUTPUT, part)
                for part in np.split(out, np.cumsum(sizes)[:-1])]
