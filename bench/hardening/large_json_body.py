"""A 60 MB JSON body against inferd: how long small requests on other connections wait while
it is received and parsed, and how much larger the process is afterwards (issue 13).

    .venv/bin/python bench/hardening/large_json_body.py [--binary build/inferd]... [--repeat 3]

Starts build/inferd on a copy of mlp_scorer, measures resident memory (VmRSS), then sends a
KServe infer request whose JSON body is ~60 MB of numbers (shape [58593, 256], over the
model's max_batch_size, so it is parsed, decoded and refused: what a hostile client costs),
while a second connection sends GET /v2/health/ready and a small mlp_scorer infer back to
back. Prints one JSON object per run: small-request latency percentiles during the big
request, the big request's own time and status, and VmRSS before, at peak and 2 s after.
Writes them as bench/results/<date>-large-json-body.md and .json (--result PATH without .md
writes elsewhere), with the command, commits, binaries and load (bench/result_file.py).
Each --binary (repeatable: before and after a change) gets its own server and --repeat runs."""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "integration"))
from inferd_harness import DEMO_MODELS, INFERD_BINARY, InferdServer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import result_file  # noqa: E402  (bench/result_file.py)

SMALL = json.dumps({"inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 256],
                                "data": [0.5] * 256}]})


def rss_bytes(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def big_body(target_bytes: int) -> bytes:
    rows = target_bytes // (256 * 4)
    row = "[" + ",".join(["0.5"] * 256) + "]"
    data = ",".join([row] * rows)
    return ('{"inputs": [{"name": "features", "datatype": "FP32", "shape": [%d, 256], "data": [%s]}]}'
            % (rows, data)).encode()


def one_run(server: InferdServer, body: bytes) -> dict:
    pid = server.proc.pid
    time.sleep(1.0)
    rss_before = rss_bytes(pid)
    latencies: list[float] = []
    peak = [rss_before]
    done = threading.Event()
    big_result: dict = {}

    def send_big():
        start = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        conn.request("POST", "/v2/models/mlp_scorer/infer", body=body,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read()
        big_result.update(status=resp.status, seconds=round(time.monotonic() - start, 3),
                          error=text[:120].decode(errors="replace"))
        conn.close()
        done.set()

    def watch_rss():
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes(pid))
            time.sleep(0.005)

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    for _ in range(20):  # warm the connection and the model
        conn.request("POST", "/v2/models/mlp_scorer/infer", body=SMALL,
                     headers={"Content-Type": "application/json"})
        conn.getresponse().read()
    threads = [threading.Thread(target=send_big), threading.Thread(target=watch_rss)]
    for t in threads:
        t.start()
    while not done.is_set():
        start = time.monotonic()
        conn.request("POST", "/v2/models/mlp_scorer/infer", body=SMALL,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200, resp.status
        latencies.append((time.monotonic() - start) * 1000)
    for t in threads:
        t.join()
    conn.close()
    time.sleep(2.0)
    rss_after = rss_bytes(pid)
    latencies.sort()
    return {
        "body_mb": round(len(body) / 1e6, 1),
        "big_request": big_result,
        "small_requests_during": len(latencies),
        "small_p50_ms": round(statistics.median(latencies), 2) if latencies else None,
        "small_p99_ms": round(latencies[int(0.99 * (len(latencies) - 1))], 2) if latencies else None,
        "small_max_ms": round(latencies[-1], 2) if latencies else None,
        "rss_before_mb": round(rss_before / 2**20, 1),
        "rss_peak_mb": round(peak[0] / 2**20, 1),
        "rss_after_mb": round(rss_after / 2**20, 1),
    }


def write_result(path: str, meta: dict, runs: list) -> None:
    json.dump({"meta": meta, "runs": runs}, open(path + ".json", "w"), indent=2)
    lines = ["# A large JSON body: other connections' latency and resident memory (issue 13)", ""]
    lines += result_file.header(meta)
    lines += ["- mlp_scorer (`--max-request-bytes 134217728`, other flags default); small = back-to-back 1-row infers and health checks on "
              "a second connection while the big body is sent, parsed and refused; VmRSS before, "
              f"at peak and 2 s after; every run: `{path.rsplit('/', 1)[-1]}.json`", "",
              "| binary | run | body MB | big status | big s | small requests during | small p50 ms "
              "| small p99 ms | small max ms | RSS before MB | RSS peak MB | RSS after MB |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        big = r["big_request"]
        lines.append(f"| `{r['binary']}` | {r['run']} | {r['body_mb']} | {big.get('status')} | "
                     f"{big.get('seconds')} | {r['small_requests_during']} | {r['small_p50_ms']} | "
                     f"{r['small_p99_ms']} | {r['small_max_ms']} | {r['rss_before_mb']} | "
                     f"{r['rss_peak_mb']} | {r['rss_after_mb']} |")
    lines.append("")
    open(path + ".md", "w").write("\n".join(lines))
    print(f"wrote {path}.md and .json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", action="append", help="repeatable; default build/inferd")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mb", type=float, default=60)
    parser.add_argument("--result", default="", help="path without .md (default: a new "
                        "bench/results/<date>-large-json-body[-N]); never an existing file's")
    args = parser.parse_args()
    # A new dated file, never over a kept one; refused on a tree with uncommitted changes.
    if args.result:
        result_file.refuse_existing(Path(args.result))
    else:
        args.result = str(result_file.new_stem(result_file.RESULTS, "large-json-body"))
    binaries = [str(Path(b).resolve()) for b in (args.binary or [str(INFERD_BINARY)])]
    command = ("bench/hardening/large_json_body.py" + "".join(f" --binary {b}" for b in binaries)
               + f" --repeat {args.repeat} --mb {args.mb:g}")
    import inferd_harness
    load_before = result_file.load()
    runs = []
    body = big_body(int(args.mb * 1e6))
    for binary in binaries:
        inferd_harness.INFERD_BINARY = Path(binary)
        tmp = Path(tempfile.mkdtemp(prefix="inferd-large-body-"))
        shutil.copytree(DEMO_MODELS / "mlp_scorer", tmp / "repo" / "mlp_scorer")
        server = InferdServer(tmp / "repo", tmp / "inferd.log",
                              ["--max-request-bytes", str(128 << 20)], name="large-body").start()
        try:
            for i in range(args.repeat):
                run = one_run(server, body)
                print(json.dumps(run), flush=True)
                runs.append(dict(run, binary=binary, run=i + 1))
        finally:
            server.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    meta = result_file.meta(binaries, command, load_before, result_file.load())
    write_result(args.result, meta, runs)


if __name__ == "__main__":
    main()
