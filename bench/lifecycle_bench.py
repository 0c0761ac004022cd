#!/usr/bin/env python3
"""Model lifecycle costs (issue 4's benchmark), per demo model, medians of repeats:

  * cold load: POST /v2/repository/models/M/load on a model that is not loaded (wall time
    seen by the client, and the server's own load time from GET /v2/repository/stats,
    which covers file digest, engine load, warm-up and any batch tuning);
  * lazy first request: the first inference of a `load: lazy` model (load + inference)
    against a warm inference of the same model;
  * eviction and reload: two copies of the model under a budget that fits one, requests
    alternating between them, so each request evicts the other copy and reloads its own.

Writes bench/results/<date>-lifecycle.md and .json. Run on a quiet machine for numbers
that mean something; the result file says which machine state it was measured under.

    .venv/bin/python bench/lifecycle_bench.py --repeats 3 [--models digits mlp_scorer]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from inferd_harness import (DEMO_MODEL_NAMES, DEMO_MODELS, INFERD_BINARY,  # noqa: E402
                            InferdServer, sample_request)
sys.path.insert(0, str(ROOT / "bench"))
import result_file  # noqa: E402


def copy_model(repo: Path, name: str, demo: str, extra: str = "", salt: bytes = b"") -> None:
    (repo / name / "1").mkdir(parents=True)
    (repo / name / "config.yaml").write_text((DEMO_MODELS / demo / "config.yaml").read_text() + extra)
    shutil.copy(DEMO_MODELS / demo / "1" / "model.pt", repo / name / "1" / "model.pt")
    if salt:  # a distinct file, so that the two copies do not share weights
        with open(repo / name / "1" / "model.pt", "ab") as f:
            f.write(salt)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000, result


def stats(server) -> dict:
    return server.get("/v2/repository/stats").json()


def infer(server, name, demo):
    resp = server.post(f"/v2/models/{name}/infer", sample_request(demo))
    assert resp.status_code == 200, resp.text
    return resp


def bench_model(demo: str, repeats: int, work: Path) -> dict:
    out: dict = {"model": demo}
    # Cold load and unload.
    repo = work / f"{demo}-cold"
    copy_model(repo, "m", demo)
    copy_model(repo, "anchor", "digits", salt=b"anchor")  # not shareable with m
    server = InferdServer(repo, work / f"{demo}-cold.log",
                          ["--model-control", "explicit", "--load-model", "anchor"]).start()
    loads, server_ms, memory = [], [], 0
    try:
        for _ in range(repeats):
            ms, resp = timed(lambda: server.post("/v2/repository/models/m/load", raw=""))
            assert resp.status_code == 200, resp.text
            row = next(v for v in stats(server)["versions"] if v["name"] == "m")
            loads.append(ms)
            server_ms.append(row["last_load_ms"])
            memory = row["memory_bytes"]
            assert server.post("/v2/repository/models/m/unload", raw="").status_code == 200
    finally:
        server.stop()
    out.update(cold_load_ms=statistics.median(loads), cold_load_server_ms=statistics.median(server_ms),
               memory_bytes=memory, cold_load_samples_ms=loads)

    # Lazy first request against a warm one.
    firsts, warms = [], []
    for i in range(repeats):
        repo = work / f"{demo}-lazy-{i}"
        copy_model(repo, "m", demo, "load: lazy\n")
        server = InferdServer(repo, work / f"{demo}-lazy-{i}.log").start()
        try:
            firsts.append(timed(lambda: infer(server, "m", demo))[0])
            warms.append(statistics.median(timed(lambda: infer(server, "m", demo))[0]
                                           for _ in range(5)))
        finally:
            server.stop()
    out.update(lazy_first_request_ms=statistics.median(firsts),
               warm_request_ms=statistics.median(warms), lazy_first_samples_ms=firsts)

    # Eviction and reload: a budget for one of two copies.
    repo = work / f"{demo}-evict"
    copy_model(repo, "a", demo, "load: lazy\n", salt=b"\0")
    copy_model(repo, "b", demo, "load: lazy\n", salt=b"\0\0")
    budget = int(memory * 1.5) if memory else 1
    server = InferdServer(repo, work / f"{demo}-evict.log", ["--memory-budget", f"cpu={budget}"]).start()
    swaps = []
    try:
        infer(server, "a", demo)
        for i in range(repeats * 2):
            swaps.append(timed(lambda: infer(server, "b" if i % 2 == 0 else "a", demo))[0])
        counters = stats(server)["counters"]
    finally:
        server.stop()
    out.update(evict_and_reload_request_ms=statistics.median(swaps), evict_samples_ms=swaps,
               evictions=counters["evictions"], reloads=counters["reloads"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=DEMO_MODEL_NAMES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="measured under shared load",
                        help="machine state, written into the results")
    args = parser.parse_args()
    result_file.require_clean_tree(result_file.RESULTS)  # a kept run measures a committed tree
    load_before = result_file.load()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for demo in args.models:
            print(f"[lifecycle] {demo}", flush=True)
            results.append(bench_model(demo, args.repeats, Path(tmp)))
    command = "bench/lifecycle_bench.py " + " ".join(sys.argv[1:])
    meta = result_file.meta([str(INFERD_BINARY)], command, load_before, result_file.load())
    stem = result_file.new_stem(result_file.RESULTS, "lifecycle")  # never over a kept file
    stem.with_suffix(".json").write_text(json.dumps(
        {"label": args.label, "command": command, "repeats": args.repeats, "results": results,
         "meta": meta}, indent=2) + "\n")
    lines = [f"# Model lifecycle costs ({args.label})", "",
             f"`{command}` — medians of {args.repeats} repeat(s); times in ms.", ""]
    lines += result_file.header(meta) + ["",
             "| model | weights | cold load (client) | cold load (server) | lazy first request "
             "| warm request | evict + reload request |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['model']} | {r['memory_bytes'] / 2**10:,.0f} KiB | {r['cold_load_ms']:.0f} "
                     f"| {r['cold_load_server_ms']:.0f} | {r['lazy_first_request_ms']:.0f} "
                     f"| {r['warm_request_ms']:.1f} | {r['evict_and_reload_request_ms']:.0f} |")
    lines += ["", "Cold load (server) is the loader's own time: SHA-256 of the file, LibTorch load "
              "and freeze, warm-up run. The evict + reload request includes unloading the other "
              "copy, purging the allocator, loading, warming up and the inference itself."
              + """ The lazy first request runs on a fresh server whose first LibTorch load it is, so it also pays LibTorch's one-time start-up (~150 ms here: the gap between the small models' lazy first request and their cold load); a lazy model in a server that has loaded anything before costs about its cold load plus one request."""]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
