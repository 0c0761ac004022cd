#!/usr/bin/env python3
"""Writes a fuzzing report from libFuzzer's own output (the logs scripts/fuzz leaves in
build-fuzz/logs/), so no figure is typed by hand. Each campaign is a new dated file,
bench/results/<date>-fuzzing[-N].md; a kept result is never overwritten (bench/results/fuzzing.md
is the first campaign's), and the report is refused on a tree with uncommitted changes.

  scripts/fuzz 300 && .venv/bin/python bench/fuzzing_report.py --seconds 300 \\
      --command "scripts/fuzz 300"          # --print: to stdout, no file

Per target: executions, exec/s, coverage (libFuzzer's `cov`: edges, and `ft`: features) when
the seeds were loaded and at the end, corpus size, peak RSS, and whether it crashed (with the
sanitizer's summary line). The inputs that crashed a target before a fix are listed from
tests/fuzz/regressions/ (scripts/fuzz replays them on every run).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import time
from pathlib import Path

import result_file

ROOT = Path(__file__).resolve().parents[1]
STATUS = re.compile(r"^#(\d+)\s+(INITED|DONE|NEW|REDUCE|pulse|RELOAD)\s+cov: (\d+) ft: (\d+)"
                    r"(?: corp: (\d+)/(\S+))?.*?(?:exec/s: (\d+))?(?: rss: (\d+)Mb)?")
STAT = re.compile(r"^stat::(\w+):\s+(\d+)")


def parse(log: Path) -> dict:
    info: dict = {"target": log.stem, "crash": None}
    for line in log.read_text(errors="replace").splitlines():
        if m := STATUS.match(line):
            kind = m.group(2)
            row = {"cov": int(m.group(3)), "ft": int(m.group(4)), "corp": m.group(5),
                   "corp_bytes": m.group(6), "execs": int(m.group(1))}
            if kind == "INITED":
                info["inited"] = row
            info["last"] = row
            if kind == "DONE":
                info["done"] = row
        elif m := STAT.match(line):
            info[m.group(1)] = int(m.group(2))
        elif line.startswith("SUMMARY: ") and info["crash"] is None:
            info["crash"] = line[len("SUMMARY: "):].strip()
        elif "deadly signal" in line or "ERROR: libFuzzer" in line:
            info["crash"] = info["crash"] or line.strip("= ")
        elif line.startswith("artifact_prefix=") or "Test unit written to" in line:
            info["artifact"] = line.split()[-1]
    return info


def regressions() -> list[str]:
    folder = ROOT / "tests" / "fuzz" / "regressions"
    lines = []
    for target in sorted(p for p in folder.glob("*") if p.is_dir()):
        for case in sorted(target.iterdir()):
            lines.append(f"- `{target.name}/{case.name}` ({case.stat().st_size} bytes)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", default=str(ROOT / "build-fuzz" / "logs"))
    parser.add_argument("--seconds", type=int, required=True, help="per target, as run")
    parser.add_argument("--command", required=True, help="the command that made the logs")
    parser.add_argument("--print", action="store_true",
                        help="print the report instead of writing a new result file")
    args = parser.parse_args()
    if not args.print:
        result_file.require_clean_tree(result_file.RESULTS)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        report(args)
    if args.print:
        sys.stdout.write(text.getvalue())
        return
    stem = result_file.new_stem(result_file.RESULTS, "fuzzing")
    stem.with_suffix(".md").write_text(text.getvalue())
    print(f"wrote {stem}.md")


def report(args: argparse.Namespace) -> None:
    rows = [parse(p) for p in sorted(Path(args.logs).glob("*.log"))]
    load1, load5, load15 = os.getloadavg()
    rev = result_file.commit_of(ROOT)
    print("# Fuzzing: libFuzzer with ASan + UBSan\n")
    print(f"Command: `{args.command}` ({args.seconds} s per target, one target at a time), "
          f"then `.venv/bin/python bench/fuzzing_report.py --seconds {args.seconds} "
          f"--command \"{args.command}\"`.")
    print(f"Code: `{rev}`; written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on a "
          f"{os.cpu_count()}-core machine shared with other engineers' builds and tests "
          f"(load average at the end: {load1:.1f} / {load5:.1f} / {load15:.1f}), so exec/s are "
          "low and noisy; coverage and crashes are what matter.\n")
    print(f"Machine: {result_file.describe_machine()}.\n")
    print("`cov` is libFuzzer's count of covered code edges, `ft` its features (edges with hit "
          "counts and comparisons); *seeds* is after loading the committed corpus "
          "(tests/fuzz/corpus/) and the regressions, *end* after the run.\n")
    print("| target | executions | exec/s | cov seeds → end | ft seeds → end | corpus | "
          "new units | peak RSS MB | result |")
    print("|---|---:|---:|---|---|---:|---:|---:|---|")
    total = 0
    for r in rows:
        first, last = r.get("inited", {}), r.get("done", r.get("last", {}))
        execs = r.get("number_of_executed_units", last.get("execs", 0))
        total += execs
        result = f"CRASH: {r['crash']}" if r["crash"] else "no crash"
        print(f"| {r['target']} | {execs:,} | {r.get('average_exec_per_sec', '?')} | "
              f"{first.get('cov', '?')} → {last.get('cov', '?')} | "
              f"{first.get('ft', '?')} → {last.get('ft', '?')} | {last.get('corp', '?')} | "
              f"{r.get('new_units_added', '?')} | {r.get('peak_rss_mb', '?')} | {result} |")
    print(f"\nTotal executions: {total:,}. Crashes in this run: "
          f"{sum(1 for r in rows if r['crash'])}.\n")
    print("## Inputs that crashed a target before its fix (replayed by every run)\n")
    found = regressions()
    print("\n".join(found) if found else "None yet.")
    notes = ROOT / "tests" / "fuzz" / "regressions" / "README.md"
    if notes.exists():
        print("\n" + notes.read_text().split("\n", 1)[1].strip())


if __name__ == "__main__":
    main()
