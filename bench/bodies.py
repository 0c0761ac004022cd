"""Request bodies from a model's sample.json, and checking answers against its expected output.

The benchmark sends one instance per request (batch 1) with the numbers exactly as
sample.json writes them, so both servers parse the same bytes, and checks each server's
answer before timing it: a fast wrong answer is not a result.
"""

import json
import os
from typing import List


def nest(flat: list, shape: List[int]) -> list:
    """Reshapes a flat row-major list into nested lists, keeping the numbers as written."""
    if len(shape) <= 1:
        return list(flat)
    step = len(flat) // shape[0]
    return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def flatten(value) -> list:
    if isinstance(value, list):
        return [x for item in value for x in flatten(item)]
    return [value]


def max_batch_size(repository: str, model: str) -> int:
    """Reads max_batch_size from config.yaml without a YAML parser (one top-level scalar)."""
    with open(os.path.join(repository, model, "config.yaml")) as f:
        for line in f:
            if line.startswith("max_batch_size:"):
                return int(line.split(":", 1)[1].split("#")[0])
    return 0


def model_file(repository: str, model: str) -> str:
    """The highest numbered version's model.pt: the one inferd serves by default."""
    model_dir = os.path.join(repository, model)
    versions = sorted((int(v) for v in os.listdir(model_dir) if v.isdigit()), reverse=True)
    for version in versions:
        path = os.path.join(model_dir, str(version), "model.pt")
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"no <version>/model.pt under {model_dir}")


def make_body(repository: str, model: str) -> dict:
    """{"input": nested list} from sample.json's first input, cut to one instance (batch 1).

    Also returns the matching expected output row, so both servers can be checked for
    computing the same thing before their speed is compared.
    """
    with open(os.path.join(repository, model, "sample.json")) as f:
        sample = json.load(f)
    tensor, expected = sample["inputs"][0], sample["expected_outputs"][0]
    shape, flat = list(tensor["shape"]), flatten(tensor["data"])
    expected_flat = flatten(expected["data"])
    if max_batch_size(repository, model) > 0 and shape[0] > 1:
        per_item = len(flat) // shape[0]
        flat, shape = flat[:per_item], [1] + shape[1:]
        expected_flat = expected_flat[:len(expected_flat) // expected["shape"][0]]
    return {"body": {"input": nest(flat, shape)}, "shape": shape,
            "datatype": tensor.get("datatype", "FP32"),
            "expected_name": expected["name"], "expected": expected_flat}


def check_answer(answer: dict, body: dict) -> str:
    """Compares a /predict answer with sample.json's expected output for the same row."""
    if answer["status"] != 200:
        return f"FAILED: {json.dumps(answer['body'])[:200]}"
    output = answer["body"].get("output")
    if isinstance(output, dict):
        output = output.get(body["expected_name"])
    got = flatten(output) if output is not None else []
    want = body["expected"]
    if len(got) != len(want):
        return f"DIFFERS: {len(got)} values, expected {len(want)}"
    worst = max((abs(g - w) for g, w in zip(got, want)), default=0.0)
    ok = all(abs(g - w) <= 1e-4 + 1e-4 * abs(w) for g, w in zip(got, want))
    return f"{'matches' if ok else 'DIFFERS'} (max |Δ| {worst:.2e})"


def write_body(tmp_dir: str, model: str, body: dict) -> str:
    path = os.path.join(tmp_dir, f"{model}-body.json")
    with open(path, "w") as f:
        json.dump(body["body"], f, separators=(",", ":"))
    return path
