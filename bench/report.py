"""Summarising repeated wrk runs and writing the results table (.md) and raw numbers (.json).

Every number a reader sees must be traceable to how it was made, so the JSON carries the
machine, the git commit, every command run and every repeat; the Markdown shows medians.
"""

import json
import os
import platform
import statistics
import subprocess
from typing import Dict, List, Optional

import result_file


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit(repo_root: str) -> str:
    """The short commit plus '-dirty' for uncommitted changes; says so when there is none."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", repo_root, *args], capture_output=True, text=True)

    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "none (no commits yet)"
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head.stdout.strip() + ("-dirty" if dirty else "")


def tool_version(command: List[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def machine_info() -> Dict[str, object]:
    m = result_file.machine()
    return {"nproc": os.cpu_count(), "cpu_model": cpu_model(), "kernel": platform.release(),
            "cores_available": m["cores_available"], "cgroup_cpu_quota": m["cgroup_cpu_quota"],
            "python": platform.python_version(),
            "wrk": tool_version(["wrk", "--version"]).split(" [")[0]}


def machine_words(m: Dict[str, object]) -> str:
    """machine_info() in words, for a result file's header."""
    return (f"{m['nproc']} CPUs ({m.get('cores_available', '?')} available to the run, cgroup "
            f"CPU quota: {m.get('cgroup_cpu_quota', 'not recorded')}), {m['cpu_model']}, "
            f"Linux {m['kernel']}")


def summarise(runs: List[dict]) -> Dict[str, float]:
    """Medians over repeats for rates and latencies; errors and requests are totals."""
    def median(key: str) -> float:
        return statistics.median(run[key] for run in runs)

    return {"qps": median("qps"), "p50_ms": median("p50_us") / 1e3,
            "p90_ms": median("p90_us") / 1e3, "p99_ms": median("p99_us") / 1e3,
            "errors": sum(run["errors"] for run in runs),
            "requests": sum(run["requests"] for run in runs), "repeats": len(runs)}


def _ratio(numerator: Optional[float], denominator: Optional[float]) -> str:
    if numerator is None or not denominator:
        return "—"
    return f"{numerator / denominator:.2f}×"


def _ratios(cell: dict, by_key: dict) -> List[str]:
    """inferd's QPS and p99 against Flask's, and its QPS against the engine's; "—" elsewhere.

    Only inferd rows carry ratios, so each row says how inferd compares and no row
    compares the baselines with each other.
    """
    def other(kind: str) -> dict:
        return by_key.get((cell["model"], cell["concurrency"], kind), {}).get("summary") or {}

    if cell["server"] != "inferd":
        return ["—"] * 3
    s, flask, engine = cell["summary"], other("flask"), other("engine")
    return [_ratio(s["qps"], flask.get("qps")), _ratio(s["p99_ms"], flask.get("p99_ms")),
            _ratio(s["qps"], engine.get("qps"))]


def _errors(cell: dict) -> str:
    """Failed requests / requests; the engine sends none, it calls forward directly."""
    s = cell["summary"]
    return "0 (no HTTP)" if cell["server"] == "engine" else f"{s['errors']} / {s['requests']}"


def table_rows(cells: List[dict]) -> List[str]:
    """One row per (model, concurrency, server); inferd rows carry the ratios."""
    by_key = {(c["model"], c["concurrency"], c["server"]): c for c in cells}
    rows = ["| model | concurrency | server | QPS | p50 ms | p99 ms | errors "
            "| QPS inferd/Flask | p99 inferd/Flask | QPS inferd/engine |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for cell in cells:
        head = f"| {cell['model']} | {cell['concurrency']} | {cell.get('label', cell['server'])} "
        s = cell.get("summary")
        if s is None:
            rows.append(head + f"| failed: {cell.get('error', '?').splitlines()[0]} "
                               "| | | | | | |")
            continue
        rows.append(head + f"| {s['qps']:.1f} | {s['p50_ms']:.2f} | {s['p99_ms']:.2f} "
                           f"| {_errors(cell)} | " + " | ".join(_ratios(cell, by_key)) + " |")
    return rows


def _load(triple) -> str:
    return "/".join(f"{x:.1f}" for x in triple)


def engine_setup(report: dict) -> str:
    """How the engine limit ran, from its first run's record (same for every run)."""
    runs = [run for cell in report["cells"] if cell["server"] == "engine" for run in cell["runs"]]
    if not runs:
        return ""
    r = runs[0]
    return (f"- engine (C threads): `bench/engine_limit.py`, the limit — the same model file "
            f"and LibTorch (torch {r['torch']}), {'frozen' if r['frozen'] else 'not frozen'}, "
            f"{r['intra_op_threads']} intra-op threads, allocator "
            f"{os.path.basename(r['ld_preload']) or 'glibc malloc'}; the batch-1 input already "
            "a tensor; C Python threads calling forward back to back under inference_mode; no "
            "HTTP, no JSON, no load generator. A fresh process per repeat, warmed up like the "
            "servers")


def markdown(report: dict) -> str:
    m, st = report["machine"], report["settings"]
    lines = [f"# inferd vs the in-process engine and the Flask baseline — {report['date']}", "",
             f"- command: `{report['bench_command']}`",
             f"- git commit: {report['git_commit']}",
             f"- machine: {machine_words(m)}, {m['wrk']}",
             f"- each (model, concurrency): fresh servers, each warmed up "
             f"({st['warmup_requests']} sequential requests + {st['warmup_s']} s of load), then "
             f"{st['repeats']} × {st['duration_s']} s of `wrk -t1 -cC` (timeout "
             f"{st['wrk_timeout_s']} s) per HTTP server, repeats interleaved across servers; "
             "QPS and latencies are medians of the repeats, errors are totals (non-2xx + socket "
             "errors / requests)",
             "- shared, noisy 2-core machine: wrk shares the cores with the server; "
             "read the ratios, not the absolute numbers; load average (1/5/15 min) "
             f"{_load(report['loadavg']['start'])} at the start, "
             f"{_load(report['loadavg']['end'])} at the end"]
    lines += [line for line in [engine_setup(report)] if line] + [""]
    lines += table_rows(report["cells"])
    lines += ["", "Sanity check (one POST /predict per server and model, one forward pass for the "
              "engine, before timing; max |Δ| against the first row of sample.json's expected "
              "output):", ""]
    for check in report["checks"]:
        how = check["status"] if check["server"] == "engine" else f"HTTP {check['status']}"
        lines.append(f"- {check['server']} / {check['model']}: {how}, "
                     f"{check['ms']:.1f} ms, {check['verdict']}")
    lines += ["", "Exact commands (server, warm-up, timed runs) are in the .json next to this file.",
              ""]
    return "\n".join(lines)


def write(report: dict, out_dir: str, name: str) -> List[str]:
    """Writes <date>-<name>[-N].md and .json into out_dir (result_file.new_stem: never over
    a kept file) and returns their paths."""
    stem = str(result_file.new_stem(out_dir, name))
    md_path, json_path = stem + ".md", stem + ".json"
    with open(md_path, "w") as f:
        f.write(markdown(report))
    with open(json_path, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    return [md_path, json_path]
