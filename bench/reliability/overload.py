#!/usr/bin/env python3
"""Overload: 3x the measured capacity of a model with a bounded queue, then back to half.

  .venv/bin/python bench/reliability/overload.py

The model is the demo resnet18 (TorchScript) with its queue bounded (`queue:
{max_queue_size: 2}`) and `latency_slo_ms: 300`, served over the binary tensor extension.
Capacity is measured first (closed loop, in this run). Then `--factor` x capacity open loop
for `--seconds`: rejected requests (429/503, the bounded queue) must be answered within
5 ms of being sent, admitted ones (200) must keep their p99 within the SLO, and the server
must not crash. Then `--recovery-factor` x capacity: every request must succeed again
within the SLO. Writes bench/results/reliability/overload.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import loadlib  # noqa: E402
from loadlib import (InferdServer, binary_infer_request, closed_loop, latency_summary,
                     make_repository, open_loop, write_result)

CONFIG = """backend: torch
max_batch_size: 1
inputs:
  - {{name: image, datatype: FP32, dims: [3, 224, 224]}}
outputs:
  - {{name: logits, datatype: FP32, dims: [1000]}}
instances:
  - {{count: 1, device: cpu}}
dynamic_batching: {{max_queue_delay_us: 0, latency_slo_ms: {slo_ms}}}
queue: {{max_queue_size: {queue}}}
parameters: {{}}
"""


def phase(result, slo_ms: float) -> dict:
    ok = [o for o in result.outcomes if o.status == 200]
    rejected = [o for o in result.outcomes if o.status in (429, 503)]
    other = [o for o in result.outcomes if o.status not in (200, 429, 503)]
    summary = {"offered_rps": round(len(result.outcomes) / result.wall_s, 1),
               "statuses": result.statuses(),
               "admitted": latency_summary(ok),
               "rejected_service": latency_summary(rejected, service=True),
               "other_errors": len(other)}
    summary["admitted_p99_within_slo"] = bool(ok) and summary["admitted"]["p99_ms"] <= slo_ms
    summary["rejections_p99_within_5ms"] = (not rejected or
                                            summary["rejected_service"]["p99_ms"] <= 5.0)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--factor", type=float, default=3.0)
    parser.add_argument("--recovery-factor", type=float, default=0.5)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--slo-ms", type=float, default=300)
    parser.add_argument("--queue", type=int, default=2)
    parser.add_argument("--output", default="overload",
                        help="the result's name in bench/results/reliability (never overwritten)")
    args = parser.parse_args()
    loadlib.require_clean_tree()  # a kept run measures a committed tree

    tmp = Path(tempfile.mkdtemp(prefix="inferd-overload-"))
    repo = make_repository(tmp / "models", {"resnet18": "resnet18"})
    (repo / "resnet18" / "config.yaml").write_text(CONFIG.format(slo_ms=args.slo_ms,
                                                                 queue=args.queue))
    server = InferdServer(repo, tmp / "inferd.log").start()
    try:
        request = binary_infer_request("resnet18")
        closed_loop(server.port, request, 5, 1)  # warm-up
        cap_run = closed_loop(server.port, request, 10, 2)
        capacity = sum(1 for o in cap_run.outcomes if o.status == 200) / cap_run.wall_s
        capacity_latency = latency_summary([o for o in cap_run.outcomes if o.status == 200])
        print(f"capacity {capacity:.1f} req/s ({capacity_latency})", flush=True)
        over = phase(open_loop(server.port, request, args.factor * capacity, args.seconds,
                               connections=64), args.slo_ms)
        print("overload", over, flush=True)
        alive_after_overload = server.proc.poll() is None
        recovery = phase(open_loop(server.port, request, args.recovery_factor * capacity,
                                   args.seconds, connections=8), args.slo_ms)
        print("recovery", recovery, flush=True)
        alive = server.proc.poll() is None
        recovered = (recovery["statuses"].get(200, 0) == sum(recovery["statuses"].values())
                     and recovery["admitted_p99_within_slo"])
        passed = (alive and alive_after_overload and over["other_errors"] == 0
                  and over["admitted_p99_within_slo"] and over["rejections_p99_within_5ms"]
                  and recovered)
        write_result(args.output, "bench/reliability/overload.py " + " ".join(sys.argv[1:]), {
            "model": "resnet18 (binary tensor extension)", "slo_ms": args.slo_ms,
            "max_queue_size": args.queue, "capacity_rps": round(capacity, 1),
            "capacity_latency": capacity_latency, "factor": args.factor,
            "overload": over, "recovery": recovery, "recovered": recovered,
            "server_alive": alive, "passed": passed,
            "criteria": "rejections (429/503) p99 <= 5 ms from send; admitted p99 <= SLO; "
                        "no crash; at the recovery rate every request 200 within the SLO"})
        return 0 if passed else 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
