"""Fixed-rate (open-loop) inference load through a balancer, with every answer checked.

Requests are scheduled at a constant rate whatever the server does, so a stalled replica
shows as latency instead of silently lowering the load; latency counts from the scheduled
time. Each request's outcome is kept: a failure is reported with its time, status and
reason, so each one can be explained. Used by tests/cluster and by deploy/swarm/run-bench:

  python tests/cluster/fleet_load.py --url 127.0.0.1:8080 --models mlp_scorer,digits \
      --rate 50 --duration 30 --json out.json
"""

from __future__ import annotations

import argparse
import http.client
import json
import queue
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Target:
    """One kind of request: a model, its KServe v2 body and the answer it must get."""
    model: str
    body: bytes
    output: str
    expected: np.ndarray
    atol: float = 1e-4

    @staticmethod
    def from_sample(model: str, sample_path: Path, name: str | None = None) -> "Target":
        sample = json.loads(Path(sample_path).read_text())
        want = sample["expected_outputs"][0]
        body = {k: v for k, v in sample.items() if k != "expected_outputs"}
        return Target(name or model, json.dumps(body).encode(), want["name"],
                      np.asarray(want["data"], dtype=np.float64).reshape(want["shape"]))

    def check(self, status: int, payload: bytes) -> str:
        """'' when the answer is right, else what is wrong with it."""
        if status != 200:
            return f"HTTP {status}: {payload[:200].decode(errors='replace')}"
        try:
            outputs = json.loads(payload)["outputs"]
            out = next(o for o in outputs if o["name"] == self.output)
            got = np.asarray(out["data"], dtype=np.float64).reshape(out["shape"])
        except (ValueError, KeyError, StopIteration) as e:
            return f"malformed answer ({e!r}): {payload[:200]!r}"
        if got.shape != self.expected.shape or not np.allclose(got, self.expected,
                                                               atol=self.atol):
            return "wrong answer"
        return ""


@dataclass
class Outcome:
    index: int
    model: str
    scheduled_s: float  # since the start of the load
    latency_ms: float
    status: int
    error: str  # '' for a correct answer
    upstream: str


@dataclass
class LoadResult:
    rate: float
    duration_s: float
    scheduled: int
    outcomes: list[Outcome] = field(default_factory=list)
    events: list[tuple[float, str]] = field(default_factory=list)

    @property
    def completed(self) -> int:
        return len(self.outcomes)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.error]

    def percentile(self, p: float) -> float:
        values = sorted(o.latency_ms for o in self.outcomes)
        if not values:
            return float("nan")
        return float(np.percentile(values, p))

    def retried(self) -> int:
        """Requests nginx sent to more than one replica (X-Inferd-Upstream lists them all)."""
        return sum(1 for o in self.outcomes if "," in o.upstream or " : " in o.upstream)

    def summary(self) -> dict:
        return {
            "rate_per_s": self.rate,
            "duration_s": round(self.duration_s, 1),
            "scheduled": self.scheduled,
            "completed": self.completed,
            "lost": self.scheduled - self.completed,
            "failed": len(self.failures),
            "retried_by_nginx": self.retried(),
            "p50_ms": round(self.percentile(50), 2),
            "p99_ms": round(self.percentile(99), 2),
            "max_ms": round(max((o.latency_ms for o in self.outcomes), default=float("nan")), 2),
        }

    def report(self) -> str:
        s = self.summary()
        lines = [f"load: {s['scheduled']} requests at {s['rate_per_s']:g}/s over "
                 f"{s['duration_s']} s: completed {s['completed']}, lost {s['lost']}, "
                 f"failed {s['failed']}, retried by nginx {s['retried_by_nginx']}; "
                 f"latency p50 {s['p50_ms']} ms, p99 {s['p99_ms']} ms, max {s['max_ms']} ms"]
        for t, what in self.events:
            lines.append(f"  event  t={t:6.2f} s  {what}")
        for o in self.failures[:50]:
            lines.append(f"  FAILED t={o.scheduled_s:6.2f} s  {o.model}  status {o.status}  "
                         f"upstream {o.upstream or '-'}  {o.error}")
        return "\n".join(lines)

    def windows(self, seconds: float = 5.0) -> list[dict]:
        """Per window of scheduled time: requests, failures, p50/p99 — where a slowdown was."""
        rows: dict[int, list[Outcome]] = {}
        for o in self.outcomes:
            rows.setdefault(int(o.scheduled_s // seconds), []).append(o)
        out = []
        for k in sorted(rows):
            lat = sorted(o.latency_ms for o in rows[k])
            out.append({"from_s": k * seconds, "requests": len(lat),
                        "failed": sum(1 for o in rows[k] if o.error),
                        "p50_ms": round(float(np.percentile(lat, 50)), 2),
                        "p99_ms": round(float(np.percentile(lat, 99)), 2)})
        return out

    def to_json(self) -> dict:
        return {"summary": self.summary(), "events": self.events, "windows": self.windows(),
                "failures": [asdict(o) for o in self.failures]}


class FleetLoad:
    """Runs the load in background threads; `note` records events (kills, restarts) on the
    same clock, so failures can be lined up with what caused them."""

    def __init__(self, host: str, port: int, targets: list[Target], rate: float,
                 workers: int = 32, timeout_s: float = 60.0, path: str = "/v2/models/{}/infer"):
        self.host, self.port = host, port
        self.targets = targets
        self.rate = rate
        self.workers = workers
        self.timeout_s = timeout_s
        self.path = path
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._outcomes: list[Outcome] = []
        self._events: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._scheduled = 0
        self._start = 0.0
        self._threads: list[threading.Thread] = []

    def now(self) -> float:
        return time.monotonic() - self._start

    def note(self, what: str) -> None:
        with self._lock:
            self._events.append((round(self.now(), 2), what))

    def start(self) -> "FleetLoad":
        self._start = time.monotonic()
        for _ in range(self.workers):
            t = threading.Thread(target=self._worker, daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._dispatch, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def stop(self) -> LoadResult:
        """Stops scheduling and waits for every scheduled request to end."""
        self._stop.set()
        self._threads[-1].join()
        for _ in range(self.workers):
            self._queue.put(None)
        for t in self._threads[:-1]:
            t.join(self.timeout_s + 10)
        with self._lock:
            return LoadResult(self.rate, self.now(), self._scheduled, list(self._outcomes),
                              list(self._events))

    def _dispatch(self) -> None:
        i = 0
        while not self._stop.is_set():
            due = self._start + i / self.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(min(delay, 0.05))
                continue
            self._queue.put((i, due))
            i += 1
        with self._lock:
            self._scheduled = i

    def _worker(self) -> None:
        conn = None
        while True:
            item = self._queue.get()
            if item is None:
                break
            i, due = item
            target = self.targets[i % len(self.targets)]
            status, payload, upstream, error = 0, b"", "", ""
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
                conn.request("POST", self.path.format(target.model), body=target.body,
                             headers={"Content-Type": "application/json",
                                      "X-Request-ID": f"fleet-{i}"})
                resp = conn.getresponse()
                status, payload = resp.status, resp.read()
                upstream = resp.getheader("X-Inferd-Upstream", "")
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
                error = target.check(status, payload)
            except (OSError, http.client.HTTPException) as e:
                error = f"client error: {e!r}"
                if conn is not None:
                    conn.close()
                conn = None
            done = time.monotonic()
            with self._lock:
                self._outcomes.append(Outcome(i, target.model, round(due - self._start, 3),
                                              (done - due) * 1000.0, status, error, upstream))
        if conn is not None:
            conn.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default="127.0.0.1:8080", help="host:port of the balancer")
    p.add_argument("--models", default="mlp_scorer,digits")
    p.add_argument("--samples", default=str(Path(__file__).resolve().parents[2] / "build" /
                                            "demo-models"),
                   help="folder with <model>/sample.json (the request and its answer)")
    p.add_argument("--rate", type=float, default=50.0)
    p.add_argument("--duration", type=float, default=30.0)
    p.add_argument("--workers", type=int, default=32)
    p.add_argument("--json", default="", help="write the summary and failures here")
    args = p.parse_args(argv)
    host, _, port = args.url.rpartition(":")
    targets = [Target.from_sample(m, Path(args.samples) / m / "sample.json")
               for m in args.models.split(",")]
    load = FleetLoad(host, int(port), targets, args.rate, workers=args.workers).start()
    time.sleep(args.duration)
    result = load.stop()
    print(result.report())
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json(), indent=2))
    return 0 if not result.failures and result.scheduled == result.completed else 1


if __name__ == "__main__":
    sys.exit(main())
