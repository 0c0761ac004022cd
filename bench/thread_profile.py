"""Where a server process's time goes, per thread group, from the kernel's own per-thread
accounting: /proc/PID/task/TID/schedstat gives each thread's CPU time, its time runnable but
waiting for a core, and its timeslices (each a wake-up or a preemption), in nanoseconds, with
no sampling and no tracing overhead. Read before and after a measured stretch of requests;
`profile` divides the difference by the requests served.

Used by bench/http_gap.py and bench/grpc_ab.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, Tuple

# tid -> (thread name, cpu_ns, runqueue_wait_ns, timeslices)
Snapshot = Dict[str, Tuple[str, int, int, int]]


def inferd_thread_group(comm: str, model: str = "") -> str:
    """What an inferd thread does, from the name inferd (or the library that made it) gave it."""
    if comm.startswith("http-io"):
        return "HTTP I/O threads"
    if model and comm.startswith(model):
        return "execution thread (+ its intra-op team)"
    if comm.startswith("nginx"):
        return "nginx worker"
    if comm == "inferd":
        return "main + LibTorch intra-op team"
    if comm.startswith(("nexting_thread", "event_engine", "default-executo", "grpc", "timer_manager",
                        "resolver-execut")):
        return "gRPC library threads"
    return "other (log writer, completion pool)"


def snapshot(pid: int) -> Snapshot:
    """Every thread of `pid` now."""
    out: Snapshot = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            comm = (task / "comm").read_text().strip()
            cpu, wait, slices = (int(v) for v in (task / "schedstat").read_text().split())
        except (OSError, ValueError):
            continue  # a thread that ended between the listing and the read
        out[task.name] = (comm, cpu, wait, slices)
    return out


def profile(before: Snapshot, after: Snapshot, requests: int,
            group: Callable[[str], str]) -> dict:
    """{group: {cpu_us, wait_us, timeslices}} per request between two snapshots."""
    groups: dict = {}
    for tid, (comm, cpu, wait, slices) in after.items():
        c0, w0, s0 = before.get(tid, (comm, 0, 0, 0))[1:]
        g = groups.setdefault(group(comm), [0, 0, 0])
        g[0] += cpu - c0
        g[1] += wait - w0
        g[2] += slices - s0
    n = max(requests, 1)
    return {name: {"cpu_us": round(v[0] / n / 1e3, 3), "wait_us": round(v[1] / n / 1e3, 3),
                   "timeslices": round(v[2] / n, 4)} for name, v in sorted(groups.items())}
