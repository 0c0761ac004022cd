#!/usr/bin/env python3
"""The in-process engine limit: the model's forward pass timed back to back, with no server.

inferd's speed only means something next to what the engine alone can do (DESIGN.md,
"Measuring"), so this script loads the model the way inferd's torch backend does (same
LibTorch, `eval()`, `torch.jit.freeze` unless config.yaml says `freeze: false`,
`optimize_for_inference` only if it says so, intra-op threads = its `intra_op_threads` or
the CPUs this process may run on), feeds it the benchmark's batch-1 input already as a tensor, and times forward passes
under `torch.inference_mode()` for as long as a wrk run lasts. No HTTP, no JSON: inferd's
QPS divided by this one is what the server keeps of the engine.

For concurrency C > 1, C Python threads call forward in a loop (TorchScript releases the
GIL while the graph runs), mirroring C clients each with one request in flight. Prints one
JSON line: QPS, p50/p90/p99 latency in ms, the number of forward passes, and the setup.

With --batch-sizes, one thread instead times forward passes on the same row repeated to
each batch size in turn and reports items/s per size and the best: the engine's limit for
a server that batches (bench/batching_bench.py), since a batching server can at best run
the model at its most efficient batch size all the time.

    .venv/bin/python bench/engine_limit.py build/demo-models/mlp_scorer --concurrency 16
    .venv/bin/python bench/engine_limit.py build/demo-models/resnet18 --batch-sizes 1,2,4,8,16
"""

import argparse
import json
import math
import os
import sys
import threading
import time
from typing import List, Tuple

import torch

import bodies

DTYPES = {"FP32": torch.float32, "FP64": torch.float64, "FP16": torch.float16,
          "BF16": torch.bfloat16, "INT64": torch.int64, "INT32": torch.int32,
          "INT16": torch.int16, "INT8": torch.int8, "UINT8": torch.uint8, "BOOL": torch.bool}


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Time a model's forward pass in-process (the limit).")
    p.add_argument("model_dir", help="a model folder, e.g. build/demo-models/resnet18")
    p.add_argument("--concurrency", type=int, default=1, help="threads calling forward")
    p.add_argument("--duration", type=float, default=10, help="seconds of timed forward passes")
    p.add_argument("--warmup", type=float, default=2, help="seconds of untimed load first")
    p.add_argument("--warmup-calls", type=int, default=3,
                   help="sequential forward passes before the warm-up load (slow first passes)")
    p.add_argument("--batch-sizes", type=lambda t: [int(b) for b in t.split(",") if b.strip()],
                   default=[], help="sweep mode: one thread, these batch sizes, --duration each")
    args = p.parse_args(argv)
    if args.batch_sizes and (args.concurrency != 1 or min(args.batch_sizes) < 1):
        p.error("--batch-sizes takes positive sizes and runs one thread (no --concurrency)")
    return args


def backend_parameters(model_dir: str) -> dict:
    """config.yaml's `parameters:` entries (freeze, optimize_for_inference, intra_op_threads)
    as inferd reads them.

    Read without a YAML parser (none in the venv): the block's indented `key: value` lines,
    or a one-line flow mapping `parameters: {key: value, ...}`.
    """
    params, inside = {}, False
    with open(os.path.join(model_dir, "config.yaml")) as f:
        for line in f:
            text = line.split("#", 1)[0].rstrip()
            if text.startswith("parameters:"):
                flow = text[len("parameters:"):].strip()
                if flow.startswith("{") and flow.endswith("}"):
                    for item in filter(None, (i.strip() for i in flow[1:-1].split(","))):
                        key, value = item.split(":", 1)
                        params[key.strip()] = value.strip().strip("'\"")
                    continue
                inside = True
            elif inside and text.startswith((" ", "\t")) and ":" in text:
                key, value = text.split(":", 1)
                params[key.strip()] = value.strip().strip("'\"")
            elif text:
                inside = False
    return params


def load_model(model_file: str, params: dict) -> Tuple[torch.jit.ScriptModule, bool]:
    """Loads as inferd does: eval, freeze (falling back to unfrozen), optional optimisation.

    Returns the module and whether it is frozen.
    """
    module = torch.jit.load(model_file, map_location="cpu")
    module.eval()
    frozen = False
    if params.get("freeze", "true") == "true":
        try:
            module, frozen = torch.jit.freeze(module), True
        except Exception as exc:  # pylint: disable=broad-except  # inferd falls back on any error
            print(f"engine_limit: unfrozen; torch.jit.freeze failed: {exc}", file=sys.stderr)
    if params.get("optimize_for_inference") == "true":
        module = torch.jit.optimize_for_inference(module)
    return module, frozen


def make_input(repository: str, model: str) -> Tuple[torch.Tensor, dict]:
    """The bench body's tensor (bodies.make_body: sample.json's first row, batch 1) and the body."""
    body = bodies.make_body(repository, model)
    dtype = DTYPES[body.get("datatype", "FP32")]
    return torch.tensor(body["body"]["input"], dtype=dtype), body


def first_output(output) -> torch.Tensor:
    """The tensor to check: the output itself, or the first of a tuple/list/dict."""
    if isinstance(output, dict):
        output = next(iter(output.values()))
    if isinstance(output, (tuple, list)):
        output = output[0]
    return output


def check(module, x: torch.Tensor, body: dict) -> Tuple[float, str]:
    """One cold forward: its time in ms and how it compares with sample.json's expected row."""
    with torch.inference_mode():
        started = time.perf_counter()
        output = first_output(module(x))
        elapsed_ms = (time.perf_counter() - started) * 1e3
    answer = {"status": 200, "body": {"output": output.tolist()}}
    return elapsed_ms, bodies.check_answer(answer, body)


def load(module, x: torch.Tensor, threads: int, seconds: float) -> Tuple[List[float], float]:
    """`threads` threads call forward back to back for `seconds`; returns latencies (s) and span.

    The span runs from the common start (a barrier) to the last completed call, so calls
    started before the deadline count in full, as wrk counts requests it sent in time.
    """
    latencies: List[List[float]] = [[] for _ in range(threads)]
    finished = [0.0] * threads
    clock = {}
    barrier = threading.Barrier(threads, action=lambda: clock.update(start=time.perf_counter()))

    def worker(index: int) -> None:
        mine = latencies[index]
        with torch.inference_mode():  # thread-local: each thread enters it
            barrier.wait()
            deadline = clock["start"] + seconds
            while True:
                before = time.perf_counter()
                if before >= deadline:
                    break
                module(x)
                after = time.perf_counter()
                mine.append(after - before)
                finished[index] = after

    pool = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return [t for mine in latencies for t in mine], max(finished) - clock["start"]


def percentile_ms(sorted_s: List[float], percent: float) -> float:
    """Nearest-rank percentile of sorted latencies in seconds, in ms."""
    rank = max(1, math.ceil(percent / 100 * len(sorted_s)))
    return sorted_s[rank - 1] * 1e3


def summary(latencies: List[float], span_s: float) -> dict:
    ordered = sorted(latencies)
    return {"requests": len(ordered), "errors": 0, "duration_s": round(span_s, 6),
            "qps": len(ordered) / span_s, "p50_ms": percentile_ms(ordered, 50),
            "p90_ms": percentile_ms(ordered, 90), "p99_ms": percentile_ms(ordered, 99),
            "mean_ms": sum(ordered) / len(ordered) * 1e3, "max_ms": ordered[-1] * 1e3}


def sweep(module, x: torch.Tensor, args: argparse.Namespace) -> dict:
    """Items/s at each batch size (the bench row repeated), one thread; the best one and all.

    Each size gets its own warm-up: the profiling executor re-specialises the graph for a
    new input shape, so its first passes at that shape are slow and would not be the limit.
    """
    sizes = []
    for batch in args.batch_sizes:
        xb = x.repeat(batch, *([1] * (x.dim() - 1)))
        with torch.inference_mode():
            for _ in range(args.warmup_calls):
                module(xb)
        if args.warmup > 0:
            load(module, xb, 1, args.warmup)
        latencies, span_s = load(module, xb, 1, args.duration)
        s = summary(latencies, span_s)
        sizes.append({"batch_size": batch, "passes": s["requests"], "duration_s": s["duration_s"],
                      "items_per_s": s["qps"] * batch,
                      **{k: s[k] for k in ("p50_ms", "p90_ms", "p99_ms", "mean_ms", "max_ms")}})
    best = max(sizes, key=lambda row: row["items_per_s"])
    return {"label": f"engine (best batch {best['batch_size']})", "sweep": sizes,
            "best_batch_size": best["batch_size"], "qps": best["items_per_s"],
            "items_per_s": best["items_per_s"], "requests": best["passes"], "errors": 0,
            **{k: best[k] for k in ("p50_ms", "p90_ms", "p99_ms", "mean_ms", "max_ms")}}


def main(argv: List[str]) -> int:
    args = parse_args(argv)
    model_dir = os.path.abspath(args.model_dir)
    repository, model = os.path.dirname(model_dir), os.path.basename(model_dir)
    params = backend_parameters(model_dir)
    # The model's own parameters.intra_op_threads, else inferd's default intra-op count.
    torch.set_num_threads(int(params.get("intra_op_threads", 0)) or len(os.sched_getaffinity(0)))
    model_file = bodies.model_file(repository, model)
    module, frozen = load_model(model_file, params)
    x, body = make_input(repository, model)
    first_ms, verdict = check(module, x, body)
    setup = {"model": model, "model_file": model_file, "torch": torch.__version__,
             "intra_op_threads": torch.get_num_threads(),
             "interop_threads": torch.get_num_interop_threads(), "frozen": frozen,
             "input_shape": list(x.shape), "input_dtype": str(x.dtype).replace("torch.", ""),
             "ld_preload": os.environ.get("LD_PRELOAD", ""), "first_ms": first_ms,
             "check": verdict}
    if args.batch_sizes:
        print(json.dumps({"server": "engine", "concurrency": 1, **setup, **sweep(module, x, args)}),
              flush=True)
        return 0
    with torch.inference_mode():
        for _ in range(args.warmup_calls):
            module(x)
    if args.warmup > 0:
        load(module, x, args.concurrency, args.warmup)
    latencies, span_s = load(module, x, args.concurrency, args.duration)
    plural = "thread" if args.concurrency == 1 else "threads"
    result = {"server": "engine", "label": f"engine ({args.concurrency} {plural})",
              "concurrency": args.concurrency, **setup, **summary(latencies, span_s)}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
