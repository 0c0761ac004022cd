"""Writes the demo/test model repository: TorchScript models, configs and sample requests.

Models are made here rather than downloaded (no network in CI or on the demo machine):
random-weight networks for compute, and one small network trained on scikit-learn's
bundled digits so accuracy is real. Output is deterministic: running twice gives
byte-identical files, so tests can pin expected outputs and checksums.

    .venv/bin/python -m tools.demo_models.make_demo_models --out build/demo-models

Layout per model:
    <out>/<model>/config.yaml      what the server loads (strict keys)
    <out>/<model>/1/model.pt       TorchScript, eval mode
    <out>/<model>/sample.json      a KServe v2 request body plus "expected_outputs"
    <out>/digits/labels.txt, <out>/digits/accuracy.json
"""

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

MODEL_NAMES = ("mlp_scorer", "resnet18", "text_classifier", "digits")


def build_in_subprocess(name: str, out: str, seed: int, threads: int) -> tuple:
    """Builds one model in a fresh interpreter with PYTHONHASHSEED=0; returns (rc, log).

    Both are needed for byte-identical model.pt files, not just identical numbers:
      - torch.jit.script gathers a module's constants (conv strides, dropout p, ...) in
        a Python set and writes them into model.pt's code in set order, which follows
        the per-process string hash seed;
      - TorchScript names classes with a process-wide counter (___torch_mangle_N), so a
        model scripted after another would get different names than one built alone.
    The cost is importing torch once per model, which is why main runs them in parallel.
    """
    env = dict(os.environ, PYTHONHASHSEED="0")
    command = [
        sys.executable, "-m", "tools.demo_models.builders",
        "--model", name, "--out", out, "--seed", str(seed), "--threads", str(threads),
    ]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=False)
    return done.returncode, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/demo-models", help="model repository root")
    parser.add_argument("--models", nargs="+", choices=MODEL_NAMES, default=list(MODEL_NAMES),
                        help="which models to write (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads; fixed so float reductions are reproducible")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                        help="models built in parallel (does not change the output)")
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)
    print(f"writing demo models to {args.out}: {', '.join(args.models)}", flush=True)
    start = time.perf_counter()
    # Each build is its own process with fixed threads, so running them side by side
    # changes no bytes; logs are printed whole, in model order.
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        builds = [pool.submit(build_in_subprocess, name, args.out, args.seed, args.threads)
                  for name in args.models]
        failed = []
        for name, build in zip(args.models, builds):
            rc, log = build.result()
            print(log, end="", flush=True)
            if rc != 0:
                failed.append(name)
    if failed:
        sys.exit(f"failed to build: {', '.join(failed)}")
    print(f"all done in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
