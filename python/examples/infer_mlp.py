"""Example: score two rows with the demo mlp_scorer over binary HTTP, with and without numpy.

  PYTHONPATH=python python python/examples/infer_mlp.py [--url localhost:8080]
"""

import argparse

from inferd_client import Client

parser = argparse.ArgumentParser()
parser.add_argument("--url", default="localhost:8080")
args = parser.parse_args()

with Client(args.url) as client:
    print("ready:", client.is_ready())
    # Plain lists: the datatype is given, the shape comes from the nesting.
    rows = [[0.01 * i for i in range(256)], [0.5] * 256]
    result = client.infer("mlp_scorer", {"features": rows}, datatypes={"features": "FP32"})
    print("score (lists):", result.outputs["score"].nested())
    try:
        import numpy as np
    except ImportError:
        raise SystemExit(0)
    result = client.infer("mlp_scorer", {"features": np.asarray(rows, dtype=np.float32)})
    print("score (numpy):", result.as_numpy("score").ravel())
