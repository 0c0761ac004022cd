#!/usr/bin/env python3
"""Writes a new bench/results/<date>-reliability[-N].md (never over an earlier one;
bench/results/reliability.md is the first) from the JSON files the reliability scripts wrote
in bench/results/reliability/ (each holds its command, its measurements and its verdict), so
no figure is typed by hand. Each section is the newest run of its script (<name>.json, then
<date>-<name>[-N].json); the earlier runs are listed under it.

  .venv/bin/python bench/reliability/report.py            # writes the file
  .venv/bin/python bench/reliability/report.py --print    # prints it, writes nothing
  .venv/bin/python bench/reliability/report.py --prefix 2026-12-05- --print  # <prefix><name>.json
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from loadlib import RESULTS, result_file


def load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def newest(name: str) -> tuple[str, list[str]]:
    """The newest run of a script's result (its file name in RESULTS) and the earlier ones."""
    runs = result_file.runs_of(name, "json", RESULTS)
    return (runs[-1], runs[:-1]) if runs else (f"{name}.json", [])


def verdict(data: dict) -> str:
    return "**PASS**" if data.get("passed") else "**FAIL**"


def header(data: dict, title: str) -> None:
    m = data["machine"]
    print(f"## {title}: {verdict(data)}\n")
    print(f"Command: `.venv/bin/python {data['command']}` — {m['date']}, code `{m['git']}`, "
          f"{m['cpus']} cores, load average {m['loadavg_1m_at_end']} / {m['loadavg_5m_at_end']} "
          "at the end (the load generator and inferd themselves included).\n")
    if "cpu_model" in m:
        print(f"Machine: {result_file.describe_machine(m)}; load average at the start "
              f"{m.get('loadavg_at_start')}.\n")


def soak(d: dict) -> None:
    header(d, "Soak")
    print(f"- Model `{d['model']}` (KServe JSON, wrk on keep-alive connections). Capacity "
          f"measured in the same run (wrk, 32 connections, closed loop): **{d['capacity_rps']} "
          f"req/s** (p99 {d['capacity_p99_ms']} ms). Soak: {d['connections']} connections "
          f"pausing {d['delay_ms']} ms between requests, median **{d['median_rate_rps']} req/s "
          f"= {d['median_fraction'] * 100:.0f} % of capacity**, for {d['minutes']} min.")
    t = d["totals"]
    print(f"- Requests: {t['requests']:,}; errors: **{t['errors']}** (non-2xx {t['non2xx']}, "
          f"socket {t['socket_errors']}).")
    print(f"- Resident memory: {d['rss_first_window_kib'] / 1024:.1f} MiB after the first "
          f"window, {d['rss_end_kib'] / 1024:.1f} MiB at the end (max "
          f"{d['rss_max_kib'] / 1024:.1f}): growth **{d['rss_growth_percent']} %**.")
    print(f"- p99 per window: median {d['p99_ms_median_window']} ms, worst "
          f"{d['p99_ms_worst_window']} ms.")
    if not 0.5 <= d["median_fraction"] <= 0.9:
        print(f"- **Rate missed**: the soak ran at {d['median_fraction'] * 100:.0f} % of the "
              "capacity measured before it, not ~70 %: on the shared machine the capacity "
              "measurement and the soak windows saw different amounts of CPU (see req/s per "
              "window). The errors and memory verdict stands; the load level is not ~70 %.")
    print(f"- Criteria: {d['criteria']}.\n")
    print("| t (s) | requests | errors | req/s | of capacity | p50 ms | p99 ms | max ms | RSS MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in d["windows"]:
        print(f"| {w['t_s']} | {w['requests']} | {w['errors']} | {w['rate']} | "
              f"{w['fraction'] * 100:.0f} % | {w['p50_ms']} | {w['p99_ms']} | {w['max_ms']} | "
              f"{w['rss_kib'] / 1024:.1f} |")
    print()


def overload(d: dict) -> None:
    header(d, "Overload (3x capacity, bounded queue)")
    print(f"- Model {d['model']}, `queue: {{max_queue_size: {d['max_queue_size']}}}`, "
          f"`latency_slo_ms: {d['slo_ms']}`. Capacity in this run: **{d['capacity_rps']} "
          f"req/s** (closed loop, 2 connections; latency {d['capacity_latency']}).")
    for name in ("overload", "recovery"):
        p = d[name]
        print(f"- {name.capitalize()}: offered {p['offered_rps']} req/s; statuses "
              f"{p['statuses']}; admitted p50/p99 {p['admitted'].get('p50_ms')} / "
              f"**{p['admitted'].get('p99_ms')} ms** (SLO {d['slo_ms']}: "
              f"{'within' if p['admitted_p99_within_slo'] else 'MISSED'}); rejections "
              f"answered in p50/p99/max {p['rejected_service'].get('p50_ms')} / "
              f"**{p['rejected_service'].get('p99_ms')}** / "
              f"{p['rejected_service'].get('max_ms')} ms from send "
              f"({'within' if p['rejections_p99_within_5ms'] else 'MISSED'} 5 ms); "
              f"other errors {p['other_errors']}.")
    print(f"- Server alive after: {d['server_alive']}; recovered: {d['recovered']}.")
    print(f"- Criteria: {d['criteria']}.\n")


def faults(d: dict) -> None:
    header(d, "Fault injection")
    b = d["backend_error"]
    print(f"- Backend error mid-batch ({'pass' if b['passed'] else 'FAIL'}): the poisoned "
          f"request got {b['poisoned_status']} (`{b['poisoned_error'][:120]}`); its 7 "
          f"batch-mates got {b['batchmates_statuses']}; the next 20 requests: "
          f"{b['after_statuses']}.")
    f = d["broken_files"]
    print(f"- Truncated model file, new version 2 ({'pass' if f['passed'] else 'FAIL'} for "
          f"the whole file step): load answered {f['truncated_load']['status']} "
          f"(`{f['truncated_load']['body'][:160]}`); metadata versions after: "
          f"{f['truncated_served']}; version 2 ready: {f['truncated_v2_ready']}; version 1 "
          f"ready: {f['truncated_v1_ready']}, answers: {f['truncated_v1_answers']}.")
    print(f"- Deleted model file during a config-change reload: load answered "
          f"{f['deleted_load']['status']} (`{f['deleted_load']['body'][:160]}`); served "
          f"after: {f['deleted_served']}; version 1 answers: {f['deleted_v1_answers']}.")
    print(f"- Files restored: load {f['restored_load']['status']}, served "
          f"{f['restored_served']}, answers: {f['restored_answers']}.")
    k = d["kill_during_load"]
    print(f"- kill -9 during a load ({'pass' if k['passed'] else 'FAIL'}): state when killed "
          f"{k['state_when_killed']}, exit code {k['killed_exit_code']}; restarted and ready "
          f"in {k['restart_ready_s']} s; index after restart {k['index_after_restart']}; "
          f"answers {k['answers_after_restart']}.")
    by = d["bystander"]
    print(f"- Bystander model (mlp_scorer) during all of it: {by['ok']} answers 200, "
          f"**{by['failed']} failed** {by['failures'] or ''}.\n")


def slow(d: dict) -> None:
    b, s = d["baseline"], d["with_slow_connections"]
    if b["good"].get("p99_ms", 0) > 1000:
        d = dict(d, passed=False)
    header(d, f"{d['slow_connections']} slow connections")
    if b["good"].get("p99_ms", 0) > 1000:
        print("- **Not a valid measurement**: even without slow connections the good clients "
              f"could not keep {d['good_rate_rps']} req/s (baseline p99 "
              f"{b['good']['p99_ms']} ms: the load generator fell behind on the shared "
              "machine), so the comparison below says nothing about starvation. Only 'no "
              "error, no crash' holds.")
    print(f"- Good clients: {d['good_rate_rps']} req/s open loop on 64 connections for "
          f"{d['seconds']} s, plus one fresh connection per 100 ms (GET /v2/health/live).")
    print(f"- Alone: p50/p99 {b['good'].get('p50_ms')} / **{b['good'].get('p99_ms')} ms**, "
          f"errors {b['good_errors']}; fresh connection p99 "
          f"{b['fresh_connection_get'].get('p99_ms')} ms.")
    print(f"- With {d['slow_connections']} slowloris connections (half trickle a request head "
          f"1 byte/s, half a body 16 bytes/s): p50/p99 {s['good'].get('p50_ms')} / "
          f"**{s['good'].get('p99_ms')} ms**, errors **{s['good_errors']}**; fresh connection "
          f"p99 {s['fresh_connection_get'].get('p99_ms')} ms, failures {s['fresh_failures']}.")
    if d["slow_closed_by_server"] == 0:
        print(f"- **Open finding**: the server closed none of the {d['slow_connections']} slow "
              f"connections within {d['seconds']} s, including those that never finish their "
              "request head (idle timeout longer than the run; issue 13's 'a slow client "
              "cannot hold a connection open without sending a header').")
    print(f"- Slow connections refused at connect: {d['slow_refused_at_connect']}; closed by "
          f"the server: {d['slow_closed_by_server']} (median after "
          f"{d['slow_closed_after_s_p50']} s); still open at the end: "
          f"{d['slow_still_open_at_end']}.")
    print(f"- Criteria: {d['criteria']}.\n")


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix", default=None,
                        help="read <prefix><name>.json instead of each script's newest run")
    parser.add_argument("--print", action="store_true",
                        help="print the report instead of writing a new result file")
    args = parser.parse_args()
    if not args.print:
        result_file.require_clean_tree(result_file.RESULTS)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        report(args.prefix)
    if args.print:
        sys.stdout.write(text.getvalue())
        return
    stem = result_file.new_stem(result_file.RESULTS, "reliability")
    stem.with_suffix(".md").write_text(text.getvalue())
    print(f"wrote {stem}.md")


def report(prefix: str | None) -> None:
    print("# Reliability figures\n")
    print("Each section was written by `bench/reliability/report.py` from the JSON its script "
          "left in `bench/results/reliability/` (the command is in each section). All load is "
          "on 127.0.0.1 and bounded in time. Capacities are measured in the same run as the "
          "figure that uses them; each section gives the machine's load when it ended.\n")
    for name, fn in (("soak", soak), ("overload", overload), ("faults", faults),
                     ("slow_clients", slow)):
        earlier: list[str] = []
        if prefix is None:
            file, earlier = newest(name)
            data = load(file[:-len(".json")])
        else:
            data = load(prefix + name)
        if data is None:
            print(f"## {name}: not run\n")
        else:
            fn(data)
        if earlier:
            print("Earlier runs (bench/results/reliability/): "
                  + ", ".join(f"`{e}`" for e in earlier) + ".\n")


if __name__ == "__main__":
    main()
