"""inferd-perf's results: a table on the terminal, CSV, JSON and a latency-vs-throughput PNG."""

from __future__ import annotations

import csv
import json
from pathlib import Path

COLUMNS = ["protocol", "model", "mode", "level", "throughput_rps", "p50_us", "p90_us", "p95_us",
           "p99_us", "avg_us", "requests", "errors", "stable", "windows", "server_queue_us",
           "server_compute_input_us", "server_compute_infer_us", "server_compute_output_us",
           "server_total_us", "server_avg_batch"]


def print_row(row: dict) -> None:
    server = ""
    if "server_queue_us" in row:
        server = (f"  server: queue {row['server_queue_us']:.0f} us, infer "
                  f"{row['server_compute_infer_us']:.0f} us, batch {row.get('server_avg_batch', 0):.1f}")
    unit = "clients" if row["mode"] == "concurrency" else "req/s offered"
    print(f"{row['protocol']:>11} {row['model']}: {row['level']:g} {unit}: "
          f"{row['throughput_rps']:.0f} req/s, p50 {row['p50_us']:.0f} us, p90 {row['p90_us']:.0f}, "
          f"p95 {row['p95_us']:.0f}, p99 {row['p99_us']:.0f} us, errors {row['errors']}"
          f"{'' if row['stable'] else ' (not stable)'}{server}", flush=True)


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def write_json(rows: list[dict], meta: dict, path: Path) -> None:
    path.write_text(json.dumps({"meta": meta, "results": rows}, indent=2) + "\n")


def write_plot(rows: list[dict], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    series: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        series.setdefault((row["protocol"], row["model"]), []).append(row)
    for (protocol, model), points in series.items():
        points.sort(key=lambda r: r["throughput_rps"])
        x = [p["throughput_rps"] for p in points]
        ax.plot(x, [p["p50_us"] / 1e3 for p in points], "o-", label=f"{model} {protocol} p50")
        ax.plot(x, [p["p99_us"] / 1e3 for p in points], "x--", label=f"{model} {protocol} p99")
    ax.set_xlabel("throughput (req/s)")
    ax.set_ylabel("latency (ms)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
