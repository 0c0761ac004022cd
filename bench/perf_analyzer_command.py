"""The perf_analyzer command line the benchmarks use (bench/peers, bench/grpc_ab.py and
bench/shared_memory_bench.py), so that every server and protocol meets the same client.

Asynchronous requests from at most 4 threads (`--async --max-threads 4`): perf_analyzer's
main thread summarises each measurement window's request records while the senders keep
adding to them. With one thread per concurrent request (its synchronous mode; and --async
alone, which still starts 64 workers each with a curl thread) a 2-core machine at 64 requests
runs ~130 threads, the load average reached 50 and the main thread got ~8 % of a core; against
inferd answering ~10k requests/s it fell further behind with every window and never finished
(runs killed after 176 s; gdb showed it in InferenceProfiler::ValidLatencyMeasurement while
the server kept counting requests). With 4 threads the same 64 requests stay in flight and a
run ends in seconds.
"""

from __future__ import annotations

from typing import List, Optional


def perf_analyzer_command(binary: str, model: str, protocol: str, url: str, concurrency: int,
                          interval_ms: int, trials: int, stability_pct: int,
                          input_data: Optional[str] = None, csv_path: Optional[str] = None,
                          shared_memory: Optional[str] = None) -> List[str]:
    """One fixed-concurrency run: `protocol` is "http" (binary tensors both ways) or "grpc";
    up to `trials` windows of `interval_ms`, stable when within `stability_pct` %;
    `shared_memory` is perf_analyzer's --shared-memory ("none", "system")."""
    command = [binary, "-m", model, "-u", url, "-i", protocol, "-b", "1",
               "--async", "--max-threads", "4",
               "--concurrency-range", f"{concurrency}:{concurrency}",
               "--measurement-interval", str(interval_ms), "--max-trials", str(trials),
               "-s", str(stability_pct)]
    if input_data:
        command += ["--input-data", input_data]
    if csv_path:
        command += ["-f", csv_path]
    if shared_memory:
        command += ["--shared-memory", shared_memory]
    if protocol == "http":
        command += ["--input-tensor-format", "binary", "--output-tensor-format", "binary"]
    return command
