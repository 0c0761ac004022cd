"""Measurement windows until the results are stable, percentiles, and the server's own
queue/compute breakdown from its statistics endpoint (Triton's statistics extension)."""

from __future__ import annotations

import http.client
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from .loadgen import WindowSamples, run_share
from .senders import SenderFactory


def percentile(sorted_values: list[int], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


@dataclass
class Options:
    mode: str                 # "concurrency" (closed loop) or "rate" (open loop)
    window_s: float = 2.0
    warmup_s: float = 1.0
    stability_pct: float = 10.0
    stable_windows: int = 3
    max_windows: int = 10
    processes: int = 1
    open_loop_threads: int = 64
    poisson: bool = False
    seed: int = 0


class ServerStats:
    """Reads GET /v2/models/M/stats (inferd, Triton); None when the server has no such
    endpoint (the Flask baseline)."""

    def __init__(self, host: str, port: int, model: str):
        self.host, self.port, self.model = host, port, model

    def snapshot(self) -> dict | None:
        try:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
            conn.request("GET", f"/v2/models/{self.model}/stats")
            response = conn.getresponse()
            body = response.read()
            conn.close()
            if response.status != 200:
                return None
            stats = json.loads(body)["model_stats"][0]
            return {k: v for k, v in stats["inference_stats"].items()} | {
                "inference_count": stats.get("inference_count", 0),
                "execution_count": stats.get("execution_count", 0)}
        except (OSError, ValueError, KeyError, IndexError):
            return None

    @staticmethod
    def breakdown(before: dict | None, after: dict | None) -> dict:
        """Average µs per successful request in each phase between two snapshots."""
        if not before or not after:
            return {}
        count = after["success"]["count"] - before["success"]["count"]
        if count <= 0:
            return {}
        out = {}
        for phase in ("queue", "compute_input", "compute_infer", "compute_output", "success"):
            ns = after[phase]["ns"] - before[phase]["ns"]
            out[f"server_{'total' if phase == 'success' else phase}_us"] = ns / count / 1e3
        executions = after["execution_count"] - before["execution_count"]
        rows = after["inference_count"] - before["inference_count"]
        if executions > 0:
            out["server_avg_batch"] = rows / executions
        return out


class Runner:
    def __init__(self, factory: SenderFactory, options: Options, stats: ServerStats | None):
        self.factory, self.options, self.stats = factory, options, stats
        # spawn, not fork: a forked child of a process that has imported grpc is unsafe.
        self.pool = ProcessPoolExecutor(max_workers=options.processes,
                                        mp_context=multiprocessing.get_context("spawn"))

    def close(self):
        self.pool.shutdown()

    def _window(self, level: float, duration_s: float) -> WindowSamples:
        o = self.options
        shares = []
        for p in range(o.processes):
            share = level / o.processes
            if o.mode == "concurrency":  # spread the threads as evenly as possible
                share = int(level) // o.processes + (1 if p < int(level) % o.processes else 0)
                if share == 0:
                    continue
            shares.append(self.pool.submit(run_share, self.factory, o.mode, share, duration_s,
                                           max(1, o.open_loop_threads // o.processes), o.poisson,
                                           o.seed + p))
        merged = WindowSamples()
        for future in shares:
            part = future.result()
            merged.latencies_ns += part.latencies_ns
            merged.errors += part.errors
            merged.duration_s = max(merged.duration_s, part.duration_s)
        return merged

    def measure(self, level: float) -> dict:
        """Warm-up, then windows until `stable_windows` in a row agree on throughput and p50
        within stability_pct (or max_windows). Reports the last stable windows together."""
        o = self.options
        if o.warmup_s > 0:
            self._window(level, o.warmup_s)
        history: list[tuple[WindowSamples, float, float]] = []
        before = self.stats.snapshot() if self.stats else None
        snapshots = [before]
        stable = False
        for _ in range(o.max_windows):
            w = self._window(level, o.window_s)
            lat = sorted(w.latencies_ns)
            history.append((w, len(lat) / w.duration_s, percentile(lat, 50)))
            snapshots.append(self.stats.snapshot() if self.stats else None)
            if len(history) >= o.stable_windows:
                recent = history[-o.stable_windows:]
                stable = all(_within(x[1], [r[1] for r in recent], o.stability_pct) and
                             _within(x[2], [r[2] for r in recent], o.stability_pct)
                             for x in recent)
                if stable:
                    break
        used = history[-o.stable_windows:]
        latencies = sorted(v for w, _, _ in used for v in w.latencies_ns)
        duration = sum(w.duration_s for w, _, _ in used)
        row = {
            "mode": o.mode, "level": level, "stable": stable, "windows": len(history),
            "requests": len(latencies), "errors": sum(w.errors for w, _, _ in used),
            "throughput_rps": len(latencies) / duration if duration else 0.0,
            "avg_us": sum(latencies) / len(latencies) / 1e3 if latencies else float("nan"),
        }
        for p in (50, 90, 95, 99):
            row[f"p{p}_us"] = percentile(latencies, p) / 1e3
        row.update(ServerStats.breakdown(snapshots[-len(used) - 1], snapshots[-1]))
        return row


def _within(value: float, values: list[float], pct: float) -> bool:
    mean = sum(values) / len(values)
    return mean == 0 or abs(value - mean) / mean * 100.0 <= pct
