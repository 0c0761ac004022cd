"""Issue 5's report: what reduced precision, distillation and pruning buy on this CPU, on
both engines, served through inferd. Writes a new bench/results/<date>-optimization[-N].{md,json}
(never over an earlier run; bench/results/optimization.* is the first) and refuses to measure
on a tree with uncommitted changes.

    .venv/bin/python bench/optimization_bench.py             # the full table (~10 min)
    .venv/bin/python bench/optimization_bench.py --seconds 1 --repeats 1   # quick look

1. Builds every variant with the tools a user runs (tools/optimize; the commands are
   recorded in the JSON): digits fp32 / int8 / distilled / pruned, text_classifier and
   mlp_scorer fp32 / int8, resnet18 fp32, each as TorchScript (backend torch) and ONNX
   (backend onnx). All get max_batch_size 32 so that batch-32 requests are accepted.
2. Serves them all from one inferd (default threads) and measures, per variant and
   repeat, sequentially over one keep-alive connection: p50 latency of batch-1 requests
   and items/s of batch-32 requests (JSON bodies built once; the client's own time is
   included and is the same for every variant of a model).
3. Quality through the server: accuracy on the 360-image digits test set, or, for models
   without labels, the largest absolute output difference from the fp32 TorchScript
   model on the same 32 rows.
Reported: medians over the repeats. File size is the served model file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

import numpy as np
import onnxruntime
import requests
import torch
import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)
sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO_ROOT, "bench"))

from inferd_harness import InferdServer  # noqa: E402  (the tests' server runner)
from tools.optimize.digits_data import digits_split  # noqa: E402
import result_file  # noqa: E402

DEMO = os.path.join(REPO_ROOT, "build", "demo-models")
DEMO_ONNX = os.path.join(REPO_ROOT, "build", "demo-models-onnx")
DIGITS_FACTORY = "tools.demo_models.onnx_twins:digits_classifier"

# (model, variant, engine) in table order.
ROWS = [
    ("digits", "fp32", "torch"), ("digits", "fp32", "onnx"),
    ("digits", "int8", "torch"), ("digits", "int8", "onnx"),
    ("digits", "distilled", "torch"), ("digits", "distilled", "onnx"),
    ("digits", "pruned", "torch"), ("digits", "pruned", "onnx"),
    ("text_classifier", "fp32", "torch"), ("text_classifier", "fp32", "onnx"),
    ("text_classifier", "int8", "torch"), ("text_classifier", "int8", "onnx"),
    ("mlp_scorer", "fp32", "torch"), ("mlp_scorer", "fp32", "onnx"),
    ("mlp_scorer", "int8", "torch"), ("mlp_scorer", "int8", "onnx"),
    ("resnet18", "fp32", "torch"), ("resnet18", "fp32", "onnx"),
]
FACTORIES = {"digits": DIGITS_FACTORY, "mlp_scorer": "tools.demo_models.nets:MlpScorer",
             "text_classifier": "tools.demo_models.nets:TextClassifier"}
INT_HIGH = {"text_classifier": "30522"}


def name_of(model: str, variant: str, engine: str) -> str:
    return f"{model}_{variant}_{engine}"


def build_commands(model: str, variant: str, engine: str, out: str) -> List[List[str]]:
    """The tool commands that write one variant (empty: copied from the demo repositories)."""
    demo_pt = os.path.join(DEMO, model, "1", "model.pt")
    like = os.path.join(DEMO, model, "config.yaml")
    to = "onnx" if engine == "onnx" else "torchscript"
    if variant == "fp32":
        return []
    if variant == "distilled":
        return [["tools.optimize.distill", "--teacher", os.path.join(DEMO, "digits"),
                 "--to", to, "--out", out]]
    if variant == "pruned":
        return [["tools.optimize.prune", "--source", os.path.join(DEMO, "digits"),
                 "--to", to, "--out", out]]
    extra = ["--int-high", INT_HIGH[model]] if model in INT_HIGH else []
    if engine == "torch":
        return [["tools.optimize.quantize", "--engine", "torch", "--factory", FACTORIES[model],
                 "--weights", demo_pt, "--like", like, *extra, "--out", out]]
    source = os.path.join(DEMO_ONNX, model)
    if model == "text_classifier":
        method = ["--method", "dynamic"]  # no activation calibration for the transformer
    elif model == "digits":
        method = ["--method", "static", "--calibration-digits"]
    else:  # mlp_scorer: its inputs are standard normal, what synthetic calibration draws
        method = ["--method", "static"]
    return [["tools.optimize.quantize", "--engine", "onnx", *method, "--source", source,
             *extra, "--atol", "1.0", "--out", out]]


def build_repository(repo: str, rows, log) -> Dict[str, List[str]]:
    commands = {}
    for model, variant, engine in rows:
        name = name_of(model, variant, engine)
        out = os.path.join(repo, name)
        cmds = build_commands(model, variant, engine, out)
        commands[name] = [" ".join(["python -m", *c]) for c in cmds]
        if not cmds:
            shutil.copytree(os.path.join(DEMO if engine == "torch" else DEMO_ONNX, model), out)
        for c in cmds:
            log(f"  {name}: {' '.join(c[:3])} ...")
            done = subprocess.run([sys.executable, "-m", *c], cwd=REPO_ROOT, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if done.returncode != 0:
                raise SystemExit(f"{name}: tool failed:\n{done.stdout}")
        config_path = os.path.join(out, "config.yaml")
        with open(config_path, encoding="utf-8") as f:
            config = yaml.safe_load(f)
        config["max_batch_size"] = 32
        config.pop("dynamic_batching", None)  # one request = one batch: measure the engine
        with open(config_path, "w", encoding="utf-8") as f:
            yaml.safe_dump(config, f, sort_keys=False)
    return commands


def inputs_for(model: str, rows: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if model == "digits":
        x = digits_split().x_test
        return x[np.arange(rows) % len(x)]
    if model == "text_classifier":
        return rng.integers(0, 30522, (rows, 128)).astype(np.int64)
    if model == "resnet18":
        return rng.standard_normal((rows, 3, 224, 224)).astype(np.float32)
    return rng.standard_normal((rows, 256)).astype(np.float32)


INPUT_NAMES = {"digits": "pixels", "text_classifier": "token_ids", "mlp_scorer": "features",
               "resnet18": "image"}
OUTPUT_NAMES = {"digits": "probabilities", "text_classifier": "logits", "mlp_scorer": "score",
                "resnet18": "logits"}


def body(model: str, array: np.ndarray) -> bytes:
    datatype = "INT64" if array.dtype == np.int64 else "FP32"
    return json.dumps({"inputs": [{"name": INPUT_NAMES[model], "datatype": datatype,
                                   "shape": list(array.shape),
                                   "data": array.reshape(-1).tolist()}]}).encode()


def infer(session: requests.Session, url: str, payload: bytes) -> dict:
    resp = session.post(url, data=payload, headers={"Content-Type": "application/json"},
                        timeout=300)
    if resp.status_code != 200:
        raise RuntimeError(f"{url}: {resp.status_code} {resp.text[:300]}")
    return resp.json()


def output_of(answer: dict, name: str) -> np.ndarray:
    for out in answer["outputs"]:
        if out["name"] == name:
            return np.asarray(out["data"], dtype=np.float64).reshape(out["shape"])
    raise RuntimeError(f"no output {name}")


def timed_runs(session, url: str, payload: bytes, seconds: float, min_count: int,
               max_count: int) -> List[float]:
    times = []
    start = time.perf_counter()
    while len(times) < max_count and (len(times) < min_count or
                                      time.perf_counter() - start < seconds):
        t0 = time.perf_counter()
        infer(session, url, payload)
        times.append(time.perf_counter() - t0)
    return times


def measure(server, name: str, model: str, args) -> dict:
    session = requests.Session()
    url = f"{server.url}/v2/models/{name}/infer"
    one, batch = body(model, inputs_for(model, 1, 1)), body(model, inputs_for(model, 32, 2))
    for _ in range(3):
        infer(session, url, one)
    infer(session, url, batch)
    p50s, rates = [], []
    for _ in range(args.repeats):
        lat = timed_runs(session, url, one, args.seconds, 5, 2000)
        p50s.append(statistics.median(lat) * 1e3)
        thr = timed_runs(session, url, batch, args.seconds, 2, 500)
        rates.append(32 * len(thr) / sum(thr))
    return {"p50_ms_batch1": statistics.median(p50s), "items_per_s_batch32":
            statistics.median(rates), "p50_ms_repeats": p50s, "items_per_s_repeats": rates}


def quality(server, name: str, model: str, reference: Dict[str, np.ndarray]) -> dict:
    session = requests.Session()
    url = f"{server.url}/v2/models/{name}/infer"
    if model == "digits":
        data = digits_split()
        correct = 0
        for i in range(0, len(data.x_test), 32):
            rows = data.x_test[i:i + 32]
            predicted = output_of(infer(session, url, body(model, rows)),
                                  OUTPUT_NAMES[model]).argmax(axis=1)
            correct += int((predicted == data.y_test[i:i + 32]).sum())
        return {"accuracy": correct / len(data.x_test)}
    out = output_of(infer(session, url, body(model, inputs_for(model, 32, 9))), OUTPUT_NAMES[model])
    if model not in reference:
        reference[model] = out  # the first row of each model is its fp32 TorchScript
    return {"max_abs_diff_vs_fp32_torch": float(np.abs(out - reference[model]).max())}


def table(results: List[dict]) -> str:
    lines = ["| model | variant | engine | file size | p50 batch 1 (ms) | items/s batch 32 | "
             "quality |", "|---|---|---|---:|---:|---:|---|"]
    for r in results:
        size = r["file_bytes"]
        size_text = f"{size / 1e6:.2f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"
        q = (f"accuracy {r['accuracy']:.4f}" if "accuracy" in r
             else f"max diff {r['max_abs_diff_vs_fp32_torch']:.2g}")
        lines.append(f"| {r['model']} | {r['variant']} | {r['engine']} | {size_text} | "
                     f"{r['p50_ms_batch1']:.3f} | {r['items_per_s_batch32']:.0f} | {q} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per timed run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default="digits,text_classifier,mlp_scorer,resnet18")
    parser.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "bench", "results"))
    parser.add_argument("--name", default="optimization")
    parser.add_argument("--note", default="measured under shared load",
                        help="a line stating the conditions, printed above the table")
    args = parser.parse_args()
    models = args.models.split(",")
    rows = [r for r in ROWS if r[0] in models]
    log = lambda text: print(text, flush=True)  # noqa: E731
    result_file.require_clean_tree(args.out_dir)  # a kept run measures a committed tree
    load_before = result_file.load()

    work = tempfile.mkdtemp(prefix="inferd-optimization-")
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    log(f"building {len(rows)} variants in {repo}")
    commands = build_repository(repo, rows, log)
    server = InferdServer(repo, os.path.join(work, "inferd.log"),
                          ["--max-request-bytes", str(256 << 20)], name="bench").start()
    results, reference = [], {}
    try:
        for model, variant, engine in rows:
            name = name_of(model, variant, engine)
            folder_files = os.listdir(os.path.join(repo, name, "1"))
            model_file = os.path.join(repo, name, "1", folder_files[0])
            record = {"model": model, "variant": variant, "engine": engine,
                      "file_bytes": os.path.getsize(model_file), "commands": commands[name]}
            record.update(quality(server, name, model, reference))
            record.update(measure(server, name, model, args))
            log(f"  {name}: {record['p50_ms_batch1']:.3f} ms p50, "
                f"{record['items_per_s_batch32']:.0f} items/s")
            results.append(record)
    finally:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)

    machine = {"cpus": os.cpu_count(), "platform": platform.platform(),
               "processor": platform.processor(), "torch": torch.__version__,
               "onnxruntime_python": onnxruntime.__version__}
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    command = "python bench/optimization_bench.py " + " ".join(sys.argv[1:])
    meta = result_file.meta([], command, load_before, result_file.load())
    stem = str(result_file.new_stem(args.out_dir, args.name))  # never over a kept file
    with open(stem + ".json", "w", encoding="utf-8") as f:
        json.dump({"when": stamp, "note": args.note, "command": command, "machine": machine,
                   "meta": meta,
                   "seconds": args.seconds, "repeats": args.repeats, "results": results},
                  f, indent=2)
        f.write("\n")
    text = "\n".join([
        "# Optimization report: precision, distillation, pruning on both engines",
        "",
        f"**{args.note}** ({stamp}; {machine['cpus']} CPUs; torch {machine['torch']}, "
        f"ONNX Runtime 1.23.2). Command: `{command}`; every variant served by one inferd "
        "(default threads, max_batch_size 32, no dynamic batching), requests sent one at a "
        f"time over one keep-alive connection; medians of {args.repeats} repeats of "
        f"{args.seconds:g} s. JSON bodies: the client's encoding and the server's parsing are "
        "included, and weigh most on resnet18 at batch 32 (about 40 MB of JSON).",
        "",
        *result_file.header(meta),
        "",
        table(results),
        "",
        "Quality: digits accuracy on its 360-image test set, through the server; otherwise "
        "the largest absolute output difference from the fp32 TorchScript model on the "
        "same 32 rows (random-weight models have no labels). Variants were written by the "
        "commands in the JSON beside this file.",
        ""])
    with open(stem + ".md", "w", encoding="utf-8") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
