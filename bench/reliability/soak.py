#!/usr/bin/env python3
"""Soak: inferd at ~70 % of its measured capacity for a long time; every request must succeed
and the server's resident memory must not grow.

  .venv/bin/python bench/reliability/soak.py --minutes 10

Starts build/inferd on a copy of the demo `mlp_scorer` and drives it with wrk (the Python
generator tops out far below this model's capacity): capacity is wrk's closed-loop rate
(32 connections, 10 s) in this run; the soak then paces N connections with a fixed pause
between requests (bench/reliability/paced.lua) so that they offer `--fraction` of it,
calibrated once for 10 s. It runs in 30 s windows, sampling VmRSS after each; growth is
from the end of the first window (allocator pools and caches warm) to the end. Writes
bench/results/reliability/soak.json.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import loadlib  # noqa: E402
from loadlib import InferdServer, make_repository, rss_kib, sample_body, write_result

HERE = Path(__file__).resolve().parent


def wrk(url: str, body: Path, connections: int, seconds: float, delay_ms: int) -> dict:
    env = {"PACED_BODY": str(body), "PACED_DELAY_MS": str(delay_ms), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s",
                          "--timeout", "10s", "-s", str(HERE / "paced.lua"), url],
                         env=env, capture_output=True, text=True, timeout=seconds + 60)
    line = next((l for l in out.stdout.splitlines() if l.startswith("SOAK_RESULT ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no result:\n{out.stdout}\n{out.stderr}")
    result = json.loads(line.split(" ", 1)[1])
    result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--fraction", type=float, default=0.7)
    parser.add_argument("--model", default="mlp_scorer")
    parser.add_argument("--window-s", type=float, default=30)
    parser.add_argument("--delay-ms", type=int, default=5)
    parser.add_argument("--output", default="soak",
                        help="the result's name in bench/results/reliability (never overwritten)")
    args = parser.parse_args()
    loadlib.require_clean_tree()  # a kept run measures a committed tree

    tmp = Path(tempfile.mkdtemp(prefix="inferd-soak-"))
    server = InferdServer(make_repository(tmp / "models", {args.model: args.model}),
                          tmp / "inferd.log").start()
    body = tmp / "body.json"
    body.write_bytes(sample_body(args.model))
    url = f"{server.url}/v2/models/{args.model}/infer"
    try:
        wrk(url, body, 32, 5, 0)  # warm-up
        cap = wrk(url, body, 32, 10, 0)
        capacity = cap["rps"]
        target = args.fraction * capacity
        period_ms = args.delay_ms + cap["p50_us"] / 1e3
        connections = max(1, math.ceil(target * period_ms / 1e3))
        calib = wrk(url, body, connections, 10, args.delay_ms)
        connections = max(1, round(connections * target / calib["rps"]))
        print(f"capacity {capacity:.0f} req/s; target {target:.0f} req/s: {connections} "
              f"connections pausing {args.delay_ms} ms", flush=True)
        windows, totals = [], {"requests": 0, "errors": 0, "non2xx": 0, "socket_errors": 0}
        started = time.monotonic()
        end = started + args.minutes * 60
        while time.monotonic() < end - 1:
            span = min(args.window_s, end - time.monotonic())
            r = wrk(url, body, connections, span, args.delay_ms)
            for key in totals:
                totals[key] += r[key]
            window = {"t_s": round(time.monotonic() - started, 1), "requests": r["requests"],
                      "errors": r["errors"], "rate": round(r["rps"], 1),
                      "fraction": round(r["rps"] / capacity, 3),
                      "p50_ms": r["p50_us"] / 1e3, "p99_ms": r["p99_us"] / 1e3,
                      "max_ms": r["max_us"] / 1e3, "rss_kib": rss_kib(server.proc.pid)}
            windows.append(window)
            print(window, flush=True)
        alive = server.proc.poll() is None
        base, last = windows[0]["rss_kib"], windows[-1]["rss_kib"]
        growth = (last - base) / base * 100
        rates = sorted(w["rate"] for w in windows)
        passed = totals["errors"] == 0 and growth < 5 and alive
        write_result(args.output, "bench/reliability/soak.py " + " ".join(sys.argv[1:]), {
            "model": args.model, "capacity_rps": round(capacity, 1),
            "capacity_p99_ms": cap["p99_us"] / 1e3, "target_rps": round(target, 1),
            "connections": connections, "delay_ms": args.delay_ms,
            "median_rate_rps": rates[len(rates) // 2],
            "median_fraction": round(rates[len(rates) // 2] / capacity, 3),
            "minutes": args.minutes, "totals": totals,
            "rss_first_window_kib": base, "rss_end_kib": last,
            "rss_max_kib": max(w["rss_kib"] for w in windows),
            "rss_growth_percent": round(growth, 2),
            "p99_ms_worst_window": max(w["p99_ms"] for w in windows),
            "p99_ms_median_window": sorted(w["p99_ms"] for w in windows)[len(windows) // 2],
            "server_alive": alive, "passed": passed, "windows": windows,
            "criteria": "0 errors (non-2xx or socket), RSS growth < 5 % from the first window "
                        "to the end"})
        return 0 if passed else 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
