"""Raw inputs in, labels out: inferd's demo pipelines against the Python server a user would
otherwise write, and against inferd's own tensor path (the limit), side by side in one run.

Workloads (the demo pipelines of tools/demo_models/pipelines.py):
    image   a JPEG (scikit-learn's china.jpg, 427x640) -> resnet18 -> top 5 ImageNet labels
    text    {"input": "<a sentence>"} -> WordPiece tokenizer -> text_classifier -> top label
Servers:
    inferd pipeline   POST /predict?model=resnet18_top5 (image/jpeg body) or
                      ?model=text_classifier_pipeline (JSON body)
    inferd tensors    the step model alone on pre-made tensors (KServe v2 binary body): the
                      same model without pre- and post-processing, what the pipeline adds to
    python server     bench/pipelines_python_server.py: Flask + PIL + torchvision +
                      tokenizers + torch.jit, the same answers
    triton ensemble   bench/pipelines_triton.py: Triton 2.51's ensemble scheduler over
                      Python-backend pre-processing, the step model (Python backend, torch.jit)
                      and Python-backend post-processing; KServe v2 binary body with the raw
                      input as BYTES. Needs `bench/peers/setup triton`; without it the report
                      says why under "not run".

Every client count of every workload is run against every server in each round; servers
start afresh each round, in rotating order (inferd first in round 0); the report
gives medians over rounds with the spread (min..max). wrk drives every server with one
thread and a static body (bench/predict.lua). Results go to a new file
bench/results/<date>-pipelines[-N].{json,md}; an existing file is never overwritten.

    .venv/bin/python bench/pipelines_bench.py --rounds 3 --duration 5
"""

import argparse
import io
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import numpy as np
import requests

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
import pipelines_triton  # noqa: E402
import result_file  # noqa: E402
import servers  # noqa: E402

LUA_SCRIPT = str(BENCH_DIR / "predict.lua")
SENTENCE = ("The service answered every request quickly and the staff were friendly, "
            "although the waiting room was crowded and a little too warm.")
STEP_MODELS = {"image": "resnet18", "text": "text_classifier"}
PIPELINES = {"image": "resnet18_top5", "text": "text_classifier_pipeline"}
TEXT_LENGTH = 128  # the demo pipeline's tokenize max_length and text_classifier's input dims


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inferd-binary", default=str(ROOT / "build" / "inferd"))
    p.add_argument("--models", default=str(ROOT / "build" / "demo-models"))
    p.add_argument("--pipelines", default=str(ROOT / "build" / "demo-pipelines"))
    p.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    p.add_argument("--triton", default=str(ROOT / "build" / "peers" / "triton"),
                   help="bench/peers/setup triton's folder ('' to leave Triton out)")
    p.add_argument("--workloads", default="image,text")
    p.add_argument("--clients", default="1,8,64")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=int, default=5, help="seconds per timed wrk run")
    p.add_argument("--warmup", type=int, default=2, help="seconds of wrk before each timed run")
    p.add_argument("--wrk-timeout", type=int, default=30)
    p.add_argument("--out-dir", default=str(BENCH_DIR / "results"))
    p.add_argument("--name", default="pipelines")
    return p.parse_args(argv)


# ---- request bodies ------------------------------------------------------------------------

def kserve_binary(input_name: str, array: np.ndarray, datatype: str,
                  output_name: str) -> tuple:
    """A KServe v2 binary-tensor body and its Inference-Header-Content-Length."""
    header = json.dumps({
        "inputs": [{"name": input_name, "shape": list(array.shape), "datatype": datatype,
                    "parameters": {"binary_data_size": array.nbytes}}],
        "outputs": [{"name": output_name, "parameters": {"binary_data": True}}],
    }).encode()
    return header + array.tobytes(), len(header)


def make_bodies(args: argparse.Namespace, work: Path) -> Dict[str, dict]:
    """Per workload and path: the body file, its content type, URL path and the extra header.

    The tensor path's tensors are what the pipeline computes before its model step, made
    here with the reference libraries (PIL + torchvision, tokenizers)."""
    from PIL import Image
    from tokenizers import Tokenizer
    from torchvision import transforms

    pipelines = Path(args.pipelines)
    workloads = args.workloads.split(",")
    bodies = {}

    def add(key: str, data: bytes, content_type: str, path: str, header_length: int = 0):
        file = work / f"{key.replace('/', '-')}.body"
        file.write_bytes(data)
        bodies[key] = {"file": str(file), "content_type": content_type, "path": path,
                       "header_length": header_length}

    if "image" in workloads:
        jpeg = (pipelines / "resnet18_top5" / "samples" / "china.jpg").read_bytes()
        pixels = transforms.Compose([
            transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])(Image.open(io.BytesIO(jpeg)).convert("RGB")).unsqueeze(0).numpy()
        add("image/pipeline", jpeg, "image/jpeg", "/predict?model=resnet18_top5")
        data, length = pipelines_triton.request_body("image", jpeg)
        add("image/triton", data, "application/octet-stream",
            "/v2/models/resnet18_top5/infer", length)
        data, length = kserve_binary("image", pixels, "FP32", "logits")
        add("image/tensors", data, "application/octet-stream", "/v2/models/resnet18/infer",
            length)
    if "text" in workloads:
        tokenizer = Tokenizer.from_file(
            str(pipelines / "text_classifier_pipeline" / "1" / "tokenizer.json"))
        # As the pipeline's tokenize op makes them: truncated to its max_length and padded
        # with id 0 (the demo tokenizer.json has no padding section of its own).
        tokenizer.enable_truncation(TEXT_LENGTH)
        tokenizer.enable_padding(length=TEXT_LENGTH, pad_id=0)
        ids = np.array([tokenizer.encode(SENTENCE).ids], dtype=np.int64)
        add("text/pipeline", json.dumps({"input": SENTENCE}).encode(), "application/json",
            "/predict?model=text_classifier_pipeline")
        data, length = pipelines_triton.request_body("text", SENTENCE.encode())
        add("text/triton", data, "application/octet-stream",
            "/v2/models/text_classifier_pipeline/infer", length)
        data, length = kserve_binary("token_ids", ids, "INT64", "logits")
        add("text/tensors", data, "application/octet-stream", "/v2/models/text_classifier/infer",
            length)
    return bodies


# ---- servers -------------------------------------------------------------------------------

def repository(args: argparse.Namespace, work: Path) -> Path:
    """Only the models measured: the step models and their pipelines (links)."""
    repo = work / "repository"
    repo.mkdir()
    for workload in args.workloads.split(","):
        os.symlink(Path(args.models, STEP_MODELS[workload]).resolve(),
                   repo / STEP_MODELS[workload])
        os.symlink(Path(args.pipelines, PIPELINES[workload]).resolve(), repo / PIPELINES[workload])
    return repo


def start_inferd(args: argparse.Namespace, repo: Path, log: Path) -> servers.Server:
    server = servers.new_inferd(PIPELINES["image"], args.inferd_binary, str(repo), str(log))
    servers.start(server)
    names = [m for w in args.workloads.split(",") for m in (PIPELINES[w], STEP_MODELS[w])]
    wait(lambda: all(requests.get(f"{server.base_url}/v2/models/{m}/ready", timeout=2).ok
                     for m in names), server, 120)
    return server


def start_python(args: argparse.Namespace, log: Path) -> servers.Server:
    port = servers.free_port()
    command = [args.python, str(BENCH_DIR / "pipelines_python_server.py"), "--models",
               args.models, "--pipelines", args.pipelines, "--port", str(port), "--workloads",
               args.workloads]
    server = servers.start(servers.Server("python", PIPELINES["image"], port, command, str(log)))
    # The models load before app.run, so any answer (a 404 for a path it has no route for)
    # means it is ready.
    wait(lambda: requests.get(f"{server.base_url}/healthz", timeout=2).status_code == 404,
         server, 120)
    return server


def start_triton(args: argparse.Namespace, repo: Path, log: Path) -> servers.Server:
    port = servers.free_port()
    command = pipelines_triton.command(Path(args.triton), repo, port, servers.free_port())
    server = servers.start(servers.Server("triton", PIPELINES["image"], port, command, str(log)))
    names = [PIPELINES[w] for w in args.workloads.split(",")]
    wait(lambda: all(requests.get(f"{server.base_url}/v2/models/{m}/ready", timeout=2).ok
                     for m in names), server, 180)
    return server


def wait(ready, server: servers.Server, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.kind} exited ({server.process.returncode}); log:\n"
                               f"{server.log_tail()}")
        try:
            if ready():
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{server.kind} not ready after {timeout_s} s; log:\n{server.log_tail()}")


def post(server: servers.Server, body: dict) -> requests.Response:
    headers = {"Content-Type": body["content_type"]}
    if body["header_length"]:
        headers["Inference-Header-Content-Length"] = str(body["header_length"])
    return requests.post(server.base_url + body["path"], data=Path(body["file"]).read_bytes(),
                         headers=headers, timeout=60)


# ---- wrk -----------------------------------------------------------------------------------

def run_wrk(server: servers.Server, body: dict, clients: int, seconds: int,
            args: argparse.Namespace, commands: List[str]) -> dict:
    command = ["wrk", "-t1", f"-c{clients}", f"-d{seconds}s", "--latency", "--timeout",
               f"{args.wrk_timeout}s", "-s", LUA_SCRIPT, server.base_url + body["path"], "--",
               body["file"]]
    env = dict(os.environ, PREDICT_CONTENT_TYPE=body["content_type"],
               PREDICT_INFERENCE_HEADER_LENGTH=str(body["header_length"] or ""))
    commands.append(f"PREDICT_CONTENT_TYPE={body['content_type']} " + shlex.join(command))
    done = subprocess.run(command, capture_output=True, text=True, env=env,
                          timeout=seconds + args.wrk_timeout + 60)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            return json.loads(line[len("BENCH_RESULT "):])
    raise RuntimeError(f"wrk gave no BENCH_RESULT (exit {done.returncode}):\n{done.stdout[-800:]}"
                       f"\n{done.stderr[-800:]}")


def measure(server: servers.Server, label: str, keys: List[str], bodies: Dict[str, dict],
            clients: List[int], args: argparse.Namespace, cells: Dict[str, list],
            commands: List[str]) -> None:
    for key in keys:
        body = bodies[key]
        for _ in range(5):  # TorchScript's first passes are slow; keep them out of wrk's runs
            post(server, body).raise_for_status()
        for c in clients:
            run_wrk(server, body, c, args.warmup, args, [])
            result = run_wrk(server, body, c, args.duration, args, commands)
            cells.setdefault(f"{key.split('/')[0]}|{label}|{c}", []).append(result)


# ---- report --------------------------------------------------------------------------------

def summarise(runs: List[dict]) -> dict:
    qps = [r["qps"] for r in runs]
    return {"rounds": len(runs), "qps": statistics.median(qps), "qps_min": min(qps),
            "qps_max": max(qps), "p50_ms": statistics.median(r["p50_us"] for r in runs) / 1e3,
            "p99_ms": statistics.median(r["p99_us"] for r in runs) / 1e3,
            "errors": sum(r["errors"] for r in runs), "requests": sum(r["requests"] for r in runs)}


LABELS = {"pipeline": "inferd pipeline (raw input, /predict)",
          "tensors": "inferd tensors (step model alone, KServe binary)",
          "python": "Python server (Flask + PIL/torchvision/tokenizers + torch.jit)",
          "triton": "Triton 2.51 ensemble (Python-backend pre/post-processing and model)"}


def markdown(report: dict) -> str:
    m = report["meta"]
    lines = [f"# Pipelines: raw inputs to labels — {m['date_utc'][:10]}", ""]
    lines += result_file.header(m)
    lines += [f"- machine: {report['machine']}",
              f"- {report['rounds']} rounds, {report['duration_s']} s timed wrk run per cell "
              f"after {report['warmup_s']} s of warm-up; medians over rounds, spread = min..max "
              "req/s over rounds",
              ]
    if report.get("triton_not_run"):
        lines.append("- not run: Triton 2.51 ensemble with Python-backend pre/post-processing: "
                     + report["triton_not_run"])
    else:
        lines.append("- Triton 2.51 ensemble: the pre-processing model has one instance per "
                     "core, the step model one with dynamic batching, post-processing one")
    lines.append("")
    for check in report["answer_checks"]:
        others = ", ".join(f"{kind} '{check.get(kind)}'" for kind in ("python", "triton")
                           if kind in check)
        lines.append(f"- answer check, {check['workload']}: inferd top-1 "
                     f"'{check['inferd']}'; {others} — "
                     f"{'same' if check['same'] else 'DIFFERENT'}")
    lines.append("")
    for workload in report["workloads"]:
        lines += [f"## {workload}", "",
                  "| clients | server | req/s (median) | spread | p50 ms | p99 ms | errors "
                  "| ÷ Python server |", "|---:|---|---:|---|---:|---:|---:|---:|"]
        for c in report["clients"]:
            python = report["cells"].get(f"{workload}|python|{c}")
            for label in ("pipeline", "tensors", "python", "triton"):
                cell = report["cells"].get(f"{workload}|{label}|{c}")
                if not cell:
                    continue
                ratio = f"{cell['qps'] / python['qps']:.2f}×" if python and python["qps"] else "—"
                lines.append(f"| {c} | {LABELS[label]} | {cell['qps']:.1f} | "
                             f"{cell['qps_min']:.1f}..{cell['qps_max']:.1f} | {cell['p50_ms']:.2f} "
                             f"| {cell['p99_ms']:.2f} | {cell['errors']} / {cell['requests']} | "
                             f"{ratio} |")
        lines += ["", "Targets (issue 33):", ""] + targets(report, workload) + [""]
    lines += ["## Commands (first round)", "", "```"] + report["commands"] + ["```", ""]
    return "\n".join(lines)


def targets(report: dict, workload: str) -> List[str]:
    """Each target of the issue this run can judge, met or MISSED, with its figure."""
    def verdict(ok: bool) -> str:
        return "met" if ok else "**MISSED**"

    lines = []
    cells = report["cells"]
    for c in report["clients"]:
        pipeline = cells.get(f"{workload}|pipeline|{c}")
        python = cells.get(f"{workload}|python|{c}")
        if pipeline and python and python["qps"]:
            ratio = pipeline["qps"] / python["qps"]
            lines.append(f"- {workload}, {c} client(s): ≥ 2× the Python server's req/s: "
                         f"{verdict(ratio >= 2)} ({ratio:.2f}×).")
    pipeline = cells.get(f"{workload}|pipeline|1")
    tensors = cells.get(f"{workload}|tensors|1")
    if workload == "image" and pipeline and tensors:
        overhead = (pipeline["p50_ms"] / tensors["p50_ms"] - 1) * 100
        lines.append(f"- image, 1 client: pre- and post-processing add ≤ 10 % to resnet18's "
                     f"latency on pre-made tensors: {verdict(overhead <= 10)} (p50 "
                     f"{pipeline['p50_ms']:.2f} ms through the pipeline vs "
                     f"{tensors['p50_ms']:.2f} ms, {overhead:+.1f} %).")
    for c in report["clients"]:
        pipeline = cells.get(f"{workload}|pipeline|{c}")
        triton = cells.get(f"{workload}|triton|{c}")
        if pipeline and triton and triton["qps"]:
            ratio = pipeline["qps"] / triton["qps"]
            lines.append(f"- {workload}, {c} client(s): ≥ 2× Triton's ensemble's req/s "
                         f"(Python-backend steps): {verdict(ratio >= 2)} ({ratio:.2f}×).")
    if report.get("triton_not_run"):
        lines.append("- ≥ 2× Triton's ensemble (Python-backend pre/post-processing): not "
                     "measured by this run.")
    return lines


def unique_stem(out_dir: Path, name: str) -> Path:
    return result_file.new_stem(out_dir, name)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    workloads = args.workloads.split(",")
    clients = [int(c) for c in args.clients.split(",")]
    triton_not_run = (pipelines_triton.unavailable(Path(args.triton)) if args.triton
                      else "left out (--triton '')")
    result_file.require_clean_tree(Path(args.out_dir))  # a kept run measures a committed tree
    load_before = result_file.load()
    cells: Dict[str, list] = {}
    commands: List[str] = []
    checks = []
    with tempfile.TemporaryDirectory(prefix="pipelines-bench-") as tmp:
        work = Path(tmp)
        bodies = make_bodies(args, work)
        repo = repository(args, work)
        kinds = ["inferd", "python"]
        if not triton_not_run:
            kinds.append("triton")
            triton_repo = pipelines_triton.make_repository(
                work, Path(args.models), Path(args.pipelines), workloads)
        for round_index in range(args.rounds):
            shift = round_index % len(kinds)
            for kind in kinds[shift:] + kinds[:shift]:
                log = work / f"{kind}-{round_index}.log"
                if kind == "inferd":
                    server = start_inferd(args, repo, log)
                elif kind == "python":
                    server = start_python(args, log)
                else:
                    server = start_triton(args, triton_repo, log)
                try:
                    round_commands = commands if round_index == 0 else []
                    if kind == "inferd":
                        round_commands.append(shlex.join(server.command))
                        measure(server, "pipeline", [f"{w}/pipeline" for w in workloads],
                                bodies, clients, args, cells, round_commands)
                        measure(server, "tensors", [f"{w}/tensors" for w in workloads], bodies,
                                clients, args, cells, round_commands)
                        if round_index == 0:
                            for w in workloads:
                                checks.append({"workload": w, "inferd": post(
                                    server, bodies[f"{w}/pipeline"]).json().get("label")})
                    elif kind == "python":
                        round_commands.append(shlex.join(server.command))
                        measure(server, "python", [f"{w}/pipeline" for w in workloads], bodies,
                                clients, args, cells, round_commands)
                        if round_index == 0:
                            for w in workloads:
                                checks.append({"workload": w, "python": post(
                                    server, bodies[f"{w}/pipeline"]).json().get("label")})
                    else:
                        round_commands.append(shlex.join(server.command))
                        measure(server, "triton", [f"{w}/triton" for w in workloads], bodies,
                                clients, args, cells, round_commands)
                        if round_index == 0:
                            for w in workloads:
                                checks.append({"workload": w, "triton": pipelines_triton.top_label(
                                    post(server, bodies[f"{w}/triton"]).json())})
                finally:
                    servers.stop(server)
    merged = {}
    for check in checks:
        merged.setdefault(check["workload"], {"workload": check["workload"]}).update(check)
    answer_checks = [dict(c, same=all(c.get(kind) == c.get("inferd")
                                       for kind in ("python", "triton") if kind in c))
                     for c in merged.values()]
    command = "bench/pipelines_bench.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    report = {
        "meta": result_file.meta([args.inferd_binary], command, load_before, result_file.load()),
        "machine": f"{os.cpu_count()} CPUs, {_cpu_model()}",
        "rounds": args.rounds, "duration_s": args.duration, "warmup_s": args.warmup,
        "workloads": workloads, "clients": clients, "answer_checks": answer_checks,
        "triton_not_run": triton_not_run,
        "cells": {key: summarise(runs) for key, runs in cells.items()},
        "runs": cells, "commands": commands,
    }
    stem = unique_stem(Path(args.out_dir), args.name)
    stem.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(report))
    print(f"wrote {stem}.md and .json")
    return 0


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
