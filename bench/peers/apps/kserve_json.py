"""The KServe v2 JSON front given to peers that have none (Ray Serve, LitServe, TorchServe,
BentoML).

Only what the benchmark sends: one input tensor in, one output tensor out, `data` flat or
nested, row-major. Using the same body for every server means wrk sends the same bytes to
each and every server pays for parsing the same JSON.
"""

import argparse
import json

import numpy as np

_NUMPY = {"FP32": np.float32, "FP64": np.float64, "INT64": np.int64, "INT32": np.int32}
_KSERVE = {np.dtype(v).name: k for k, v in _NUMPY.items()}


def decode(body):
    """(input name, array with the request's shape) from a KServe v2 JSON request body."""
    payload = json.loads(body) if isinstance(body, (bytes, bytearray, str)) else body
    return decode_tensor(payload["inputs"][0])


def decode_tensor(tensor: dict):
    """(name, array with the tensor's shape) from one entry of a request's `inputs`."""
    dtype = _NUMPY[tensor.get("datatype", "FP32")]
    return tensor["name"], np.asarray(tensor["data"], dtype=dtype).reshape(tensor["shape"])


def encode_tensor(name: str, array) -> dict:
    """One entry of a KServe v2 JSON response's `outputs`."""
    array = np.asarray(array)
    return {"name": name, "datatype": _KSERVE.get(array.dtype.name, "FP32"),
            "shape": list(array.shape), "data": array.ravel().tolist()}


def encode(model: str, name: str, array) -> dict:
    """The KServe v2 JSON response for one output tensor."""
    return {"model_name": model, "outputs": [encode_tensor(name, array)]}


def app_arguments() -> argparse.Namespace:
    """The command line bench/peers/peer_servers.py gives the Ray Serve and LitServe apps."""
    parser = argparse.ArgumentParser()
    for flag in ("--model-file", "--model", "--output"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--max-batch", type=int, default=32)
    parser.add_argument("--wait-ms", type=float, default=1.0)
    return parser.parse_args()
