#!/usr/bin/env python3
"""Slow connections: 500 clients that trickle their requests (slowloris) while good clients
keep sending; the good clients' latency must hold and none of their requests may fail.

  .venv/bin/python bench/reliability/slow_clients.py

Starts build/inferd on a copy of the demo mlp_scorer. Measures the good clients alone
(`--rate` req/s open loop on 64 keep-alive connections, plus fresh connections each sending
one GET /v2/health/live), then again while `--slow` connections are open: half send a
request head one byte per second and never finish it, half send a complete head announcing a
64 KiB body and then 16 bytes per second. Records how many slow connections the server
closed, and when. Writes bench/results/reliability/slow_clients.json; `--seconds` and
`--slow` make it short enough for CI.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import loadlib  # noqa: E402
from loadlib import (InferdServer, _open_loop, infer_request, latency_summary, make_repository,
                     percentile, sample_body, write_result)
from loadlib import Outcome, RunResult


async def slow_client(port: int, mode: str, stop_at: float, closed: list[float]) -> None:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        closed.append(-1.0)  # refused at connect
        return
    opened = time.monotonic()
    if mode == "head":
        chunks = [bytes([b]) for b in b"POST /v2/models/mlp_scorer/infer HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 4000]
    else:
        writer.write(b"POST /v2/models/mlp_scorer/infer HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 65536\r\n\r\n")
        chunks = [b"[" * 16] * 4096
    try:
        for chunk in chunks:
            if time.monotonic() >= stop_at:
                break
            writer.write(chunk)
            await writer.drain()
            try:
                data = await asyncio.wait_for(reader.read(1024), 1.0)
                if not data:  # the server closed it
                    closed.append(time.monotonic() - opened)
                    return
            except asyncio.TimeoutError:
                pass
    except (OSError, ConnectionError):
        closed.append(time.monotonic() - opened)
        return
    finally:
        writer.close()


async def fresh_connections(port: int, count: int, stop_at: float) -> list[Outcome]:
    """One new connection per 100 ms, each sending one GET: is the server still accepting?"""
    out = []
    for _ in range(count):
        if time.monotonic() >= stop_at:
            break
        start = time.monotonic()
        status = 0
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
            writer.write(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            status = int(head.split(b" ", 2)[1])
            writer.close()
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError):
            pass
        out.append(Outcome(start, time.monotonic() - start, status, time.monotonic() - start))
        await asyncio.sleep(0.1)
    return out


async def measure(port: int, request: bytes, rate: float, seconds: float, slow: int):
    stop_at = time.monotonic() + seconds + (3 if slow else 0)
    closed: list[float] = []
    slow_tasks = [asyncio.create_task(slow_client(port, "head" if i % 2 == 0 else "body",
                                                  stop_at, closed)) for i in range(slow)]
    if slow:
        await asyncio.sleep(3)  # let every slow connection open and start trickling
    fresh_task = asyncio.create_task(fresh_connections(port, int(seconds * 10), stop_at))
    good, wall = await _open_loop(port, request, rate, seconds, 64, 10.0)
    fresh = await fresh_task
    for task in slow_tasks:
        task.cancel()
    await asyncio.gather(*slow_tasks, return_exceptions=True)
    return RunResult(good, wall), fresh, closed


def summarize(result: RunResult, fresh: list[Outcome]) -> dict:
    return {"good_statuses": result.statuses(), "good": latency_summary(result.outcomes),
            "good_errors": sum(1 for o in result.outcomes if o.status != 200),
            "fresh_connection_get": latency_summary(fresh),
            "fresh_failures": sum(1 for o in fresh if o.status != 200)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--output", default="slow_clients")
    args = parser.parse_args()
    loadlib.require_clean_tree()  # a kept run measures a committed tree
    tmp = Path(tempfile.mkdtemp(prefix="inferd-slow-"))
    server = InferdServer(make_repository(tmp / "models", {"mlp_scorer": "mlp_scorer"}),
                          tmp / "inferd.log").start()
    try:
        request = infer_request("mlp_scorer", sample_body("mlp_scorer"))
        asyncio.run(measure(server.port, request, args.rate, 3, 0))  # warm-up
        base, base_fresh, _ = asyncio.run(measure(server.port, request, args.rate,
                                                  args.seconds, 0))
        under, under_fresh, closed = asyncio.run(measure(server.port, request, args.rate,
                                                         args.seconds, args.slow))
        alive = server.proc.poll() is None
    finally:
        server.stop()
    baseline, with_slow = summarize(base, base_fresh), summarize(under, under_fresh)
    closed_s = [c for c in closed if c >= 0]
    p99_base, p99_slow = baseline["good"]["p99_ms"], with_slow["good"]["p99_ms"]
    # Held: no good request fails, and the p99 stays within 2x the baseline (+1 ms for noise).
    held = (with_slow["good_errors"] == 0 and with_slow["fresh_failures"] == 0
            and p99_slow <= 2 * p99_base + 1.0)
    write_result(args.output, "bench/reliability/slow_clients.py " + " ".join(sys.argv[1:]), {
        "slow_connections": args.slow, "good_rate_rps": args.rate, "seconds": args.seconds,
        "baseline": baseline, "with_slow_connections": with_slow,
        "slow_refused_at_connect": sum(1 for c in closed if c < 0),
        "slow_closed_by_server": len(closed_s),
        "slow_closed_after_s_p50": round(percentile(closed_s, 50), 2) if closed_s else None,
        "slow_still_open_at_end": args.slow - len(closed),
        "server_alive": alive, "passed": held and alive,
        "criteria": "good clients: 0 errors, fresh connections answered, p99 <= 2 x baseline "
                    "+ 1 ms"})
    return 0 if held and alive else 1


if __name__ == "__main__":
    sys.exit(main())
