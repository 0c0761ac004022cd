"""What the reliability runs share: the real inferd (tests/integration/inferd_harness.py),
an asyncio HTTP/1.1 load generator on keep-alive connections to 127.0.0.1, and a sampler of
the server's resident memory.

The generator is open loop: request k of a run is due at start + k / rate, spread over the
connections; its latency counts from when it was due, not from when a connection was free to
send it, so a server that falls behind shows it (no coordinated omission). `closed_loop`
measures capacity: every connection sends its next request as soon as the last is answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from inferd_harness import DEMO_MODELS, InferdServer, make_repository  # noqa: E402,F401
sys.path.insert(0, str(ROOT / "bench"))
import result_file  # noqa: E402

# Where write_result puts its JSON; the CI tests point it at a temp folder.
KEPT = ROOT / "bench" / "results" / "reliability"
RESULTS = Path(os.environ.get("INFERD_RELIABILITY_RESULTS", KEPT))
_LOAD_AT_START: list = []


def require_clean_tree() -> None:
    """Each script calls this before measuring: a run kept in bench/results/reliability/
    refuses a tree with uncommitted changes (result_file.require_clean_tree); the load
    average now is recorded as the run's start."""
    result_file.require_clean_tree(RESULTS)
    _LOAD_AT_START[:] = [round(x, 2) for x in os.getloadavg()]


def infer_request(model: str, body: bytes, host: str = "127.0.0.1") -> bytes:
    return (f"POST /v2/models/{model}/infer HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def sample_body(model: str) -> bytes:
    """The demo's own sample.json for `model`, without its expected outputs."""
    sample = json.loads((DEMO_MODELS / model / "sample.json").read_text())
    return json.dumps({"inputs": sample["inputs"]}).encode()


@dataclass
class Outcome:
    due: float          # when the request was due (monotonic s)
    latency_s: float    # due -> last byte of the reply
    status: int         # HTTP status; 0: connection error or no reply
    service_s: float = 0.0  # sent -> last byte of the reply (what the server took)


@dataclass
class RunResult:
    outcomes: list[Outcome] = field(default_factory=list)
    wall_s: float = 0.0

    def statuses(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for o in self.outcomes:
            counts[o.status] = counts.get(o.status, 0) + 1
        return dict(sorted(counts.items()))

    def throughput(self) -> float:
        return len(self.outcomes) / self.wall_s if self.wall_s else 0.0


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))
    return ordered[index]


def latency_summary(outcomes: list[Outcome], service: bool = False) -> dict:
    ms = [(o.service_s if service else o.latency_s) * 1e3 for o in outcomes]
    if not ms:
        return {"count": 0}
    return {"count": len(ms), "p50_ms": round(percentile(ms, 50), 3),
            "p99_ms": round(percentile(ms, 99), 3), "max_ms": round(max(ms), 3),
            "mean_ms": round(statistics.fmean(ms), 3)}


async def _read_reply(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    return status


async def _connection(port: int, request: bytes, schedule, out: list[Outcome], stop_at: float,
                      timeout_s: float):
    reader = writer = None
    for due in schedule:
        now = time.monotonic()
        if due >= stop_at:
            break
        if due > now:
            await asyncio.sleep(due - now)
        sent = time.monotonic()
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            status = await asyncio.wait_for(_read_reply(reader), timeout_s)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError,
                asyncio.LimitOverrunError):
            status = 0
            if writer is not None:
                writer.close()
            reader = writer = None
        done = time.monotonic()
        out.append(Outcome(due, done - due, status, done - sent))
    if writer is not None:
        writer.close()


async def _open_loop(port, request, rate, duration_s, connections, timeout_s):
    start = time.monotonic() + 0.05
    stop_at = start + duration_s
    interval = connections / rate

    def schedule(i):
        k = 0
        while True:
            yield start + (i / rate) + k * interval
            k += 1

    out: list[Outcome] = []
    await asyncio.gather(*(_connection(port, request, schedule(i), out, stop_at, timeout_s)
                           for i in range(connections)))
    return out, time.monotonic() - start


def open_loop(port: int, request: bytes, rate: float, duration_s: float, connections: int = 32,
              timeout_s: float = 10.0) -> RunResult:
    """`rate` requests/s for `duration_s` over `connections` keep-alive connections."""
    out, wall = asyncio.run(_open_loop(port, request, rate, duration_s, connections, timeout_s))
    return RunResult(out, wall)


async def _closed_loop(port, request, duration_s, connections, timeout_s):
    start = time.monotonic()
    stop_at = start + duration_s

    def schedule():
        while True:
            yield time.monotonic()

    out: list[Outcome] = []
    await asyncio.gather(*(_connection(port, request, schedule(), out, stop_at, timeout_s)
                           for _ in range(connections)))
    return out, time.monotonic() - start


def closed_loop(port: int, request: bytes, duration_s: float, connections: int,
                timeout_s: float = 10.0) -> RunResult:
    out, wall = asyncio.run(_closed_loop(port, request, duration_s, connections, timeout_s))
    return RunResult(out, wall)


def measure_capacity(port: int, request: bytes, duration_s: float = 10.0,
                     connections: int = 16) -> float:
    """Requests/s this client reaches against the server with every connection busy: the
    capacity of the server and its load generator together on this machine, now."""
    result = closed_loop(port, request, duration_s, connections)
    ok = sum(1 for o in result.outcomes if o.status == 200)
    return ok / result.wall_s


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def machine_note() -> dict:
    """What else ran: the load average and the machine, for the report."""
    load1, load5, _ = os.getloadavg()
    return {"cpus": os.cpu_count(), "loadavg_1m_at_end": round(load1, 2),
            "loadavg_5m_at_end": round(load5, 2), "loadavg_at_start": _LOAD_AT_START or None,
            "platform": platform.platform(), **result_file.machine(),
            "git": result_file.commit_of(ROOT),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def write_result(name: str, command: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {"name": name, "command": command, "machine": machine_note(), **data}
    # A kept run is never overwritten: in bench/results/reliability/ each run is a new
    # <date>-<name>[-N].json (the undated <name>.json is the first run); elsewhere (the CI
    # tests' temp folder) <name>.json.
    if RESULTS == KEPT:
        path = result_file.new_stem(RESULTS, name).with_suffix(".json")
    else:
        path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(json.dumps(data, indent=2))
    return path


def binary_infer_request(model: str, host: str = "127.0.0.1") -> bytes:
    """The demo's sample for `model` as a binary tensor extension request (raw FP32 after the
    JSON header), the protocol an image client uses."""
    import struct

    sample = json.loads((DEMO_MODELS / model / "sample.json").read_text())
    head_inputs, raw = [], b""
    for t in sample["inputs"]:
        if t["datatype"] != "FP32":
            raise ValueError("binary_infer_request handles FP32 inputs only")
        flat = _flatten(t["data"])
        data = struct.pack(f"<{len(flat)}f", *flat)
        head_inputs.append({"name": t["name"], "datatype": "FP32", "shape": t["shape"],
                            "parameters": {"binary_data_size": len(data)}})
        raw += data
    head = json.dumps({"inputs": head_inputs}).encode()
    body = head + raw
    return (f"POST /v2/models/{model}/infer HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/octet-stream\r\nInference-Header-Content-Length: "
            f"{len(head)}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def _flatten(data) -> list:
    if isinstance(data, list):
        out = []
        for item in data:
            out.extend(_flatten(item))
        return out
    return [data]
