"""Drives one measurement window of load and returns what each request took.

Closed loop: C threads, each sending its next request as soon as the previous one answers.
Open loop: requests are scheduled at a fixed rate (constant gaps or Poisson arrivals) and
sent by a pool of threads; a request's latency counts from its scheduled time, so time spent
waiting for a free sender is charged to the server (no coordinated omission).

Windows run in worker processes (one Python process cannot drive a fast server from many
threads); each process runs its share of the load and returns its samples."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field

from .senders import SenderFactory


@dataclass
class WindowSamples:
    latencies_ns: list[int] = field(default_factory=list)
    errors: int = 0
    duration_s: float = 0.0


def _closed_loop(factory: SenderFactory, threads: int, duration_s: float) -> WindowSamples:
    results = [WindowSamples() for _ in range(threads)]
    start_barrier = threading.Barrier(threads + 1)
    stop_at = [0.0]

    def worker(out: WindowSamples):
        send = factory.make()
        try:
            start_barrier.wait()
            while True:
                t0 = time.perf_counter_ns()
                if t0 >= stop_at[0]:
                    break
                ok = send()
                if ok:
                    out.latencies_ns.append(time.perf_counter_ns() - t0)
                else:
                    out.errors += 1
        finally:
            send.close()

    workers = [threading.Thread(target=worker, args=(r,), daemon=True) for r in results]
    for w in workers:
        w.start()
    begin = time.perf_counter_ns()
    stop_at[0] = begin + int(duration_s * 1e9)
    start_barrier.wait()
    for w in workers:
        w.join()
    merged = WindowSamples(duration_s=(time.perf_counter_ns() - begin) / 1e9)
    for r in results:
        merged.latencies_ns += r.latencies_ns
        merged.errors += r.errors
    return merged


def _open_loop(factory: SenderFactory, rate: float, duration_s: float, threads: int,
               poisson: bool, seed: int) -> WindowSamples:
    rng = random.Random(seed)
    schedule, t = [], 0.0
    while t < duration_s:
        schedule.append(int(t * 1e9))
        t += rng.expovariate(rate) if poisson else 1.0 / rate
    lock = threading.Lock()
    next_index = [0]
    results = [WindowSamples() for _ in range(threads)]
    begin = time.perf_counter_ns() + 50_000_000  # let the threads start first

    def worker(out: WindowSamples):
        send = factory.make()
        try:
            while True:
                with lock:
                    i = next_index[0]
                    next_index[0] += 1
                if i >= len(schedule):
                    break
                due = begin + schedule[i]
                delay = due - time.perf_counter_ns()
                if delay > 0:
                    time.sleep(delay / 1e9)
                ok = send()
                if ok:
                    out.latencies_ns.append(time.perf_counter_ns() - due)
                else:
                    out.errors += 1
        finally:
            send.close()

    workers = [threading.Thread(target=worker, args=(r,), daemon=True) for r in results]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    merged = WindowSamples(duration_s=max(duration_s, (time.perf_counter_ns() - begin) / 1e9))
    for r in results:
        merged.latencies_ns += r.latencies_ns
        merged.errors += r.errors
    return merged


def run_share(factory: SenderFactory, mode: str, level: float, duration_s: float,
              open_loop_threads: int, poisson: bool, seed: int) -> WindowSamples:
    """One process's share of a window (runs in a worker process)."""
    if mode == "concurrency":
        return _closed_loop(factory, max(1, int(level)), duration_s)
    return _open_loop(factory, level, duration_s, open_loop_threads, poisson, seed)
