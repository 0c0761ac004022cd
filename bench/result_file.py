#!/usr/bin/env python3
"""Provenance for the result files the shell benchmarks write (bench/results/*.md + .json).

Every figure in bench/results/ is written by the script that measured it, together with the
command line, the date, the commit of the scripts and of the binary measured, and the load
average before and after (the machine is shared, so a figure means little without it).

    python3 bench/result_file.py load                  # prints `uptime`'s load average
    python3 bench/result_file.py meta BINARY CMD LOAD_BEFORE LOAD_AFTER > meta.json

and, from a script's embedded Python: `import result_file; result_file.header(meta)`.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1]

SHARED_MACHINE = ("Measured on a 2-core machine shared with three other engineers' builds and "
                  "tests: compare figures inside one file only, and prefer the per-request counts "
                  "(instructions, system calls) to rates where a file has both.")


def load() -> str:
    """The 1, 5 and 15 minute load averages, as `uptime` prints them."""
    out = subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout
    return out.rsplit("load average:", 1)[-1].strip()


def _git(directory: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(directory), *args], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return ""


def commit_of(directory: Path) -> str:
    """`abc1234` or `abc1234 (+ uncommitted changes)`; empty outside a git tree."""
    head = _git(directory, "rev-parse", "--short", "HEAD")
    if not head:
        return ""
    dirty = _git(directory, "status", "--porcelain", "--untracked-files=no")
    return head + (" (+ uncommitted changes)" if dirty else "")


def binary_info(path: str) -> dict:
    """Where a measured binary lives, the commit of the tree it sits in, when it was built."""
    p = Path(path).resolve()
    digest = hashlib.sha256(p.read_bytes()).hexdigest()[:12]
    built = datetime.datetime.fromtimestamp(p.stat().st_mtime, datetime.timezone.utc)
    return {"path": str(p), "sha256_12": digest, "tree_commit": commit_of(p.parent),
            "built_utc": built.strftime("%Y-%m-%d %H:%M")}


def meta(binaries: List[str], command: str, load_before: str, load_after: str) -> dict:
    now = datetime.datetime.now(datetime.timezone.utc)
    return {"command": command, "date_utc": now.strftime("%Y-%m-%d %H:%M"),
            "scripts_commit": commit_of(ROOT), "binaries": [binary_info(b) for b in binaries],
            "load_before": load_before, "load_after": load_after,
            "cpus": os.cpu_count()}


def header(m: dict) -> List[str]:
    """The Markdown lines under a result file's title that say how it was made."""
    lines = [f"- command: `{m['command']}`",
             f"- written by that command on {m['date_utc']} UTC; scripts at commit "
             f"{m['scripts_commit'] or '?'}"]
    for b in m["binaries"]:
        lines.append(f"- binary: `{b['path']}` (sha256 {b['sha256_12']}, built {b['built_utc']} UTC"
                     + (f", in a tree at {b['tree_commit']}" if b["tree_commit"] else "") + ")")
    lines.append(f"- load average (`uptime`, 1/5/15 min) before: {m['load_before']}; "
                 f"after: {m['load_after']} ({m['cpus']} CPUs)")
    lines.append(f"- {SHARED_MACHINE}")
    return lines


def new_stem(out_dir: Path, name: str) -> Path:
    """out_dir/<today>-<name>, or -2, -3, ... when a run of today already has that name: a
    result file is never overwritten."""
    out_dir.mkdir(parents=True, exist_ok=True)
    today = datetime.date.today().isoformat()
    stem, n = out_dir / f"{today}-{name}", 1
    while stem.with_suffix(".md").exists() or stem.with_suffix(".json").exists():
        n += 1
        stem = out_dir / f"{today}-{name}-{n}"
    return stem


def write_new(out_dir: Path, name: str, report: dict, markdown: str) -> Path:
    """Writes a run's JSON and Markdown under new_stem(out_dir, name); returns the stem."""
    stem = new_stem(out_dir, name)
    stem.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown)
    return stem


def main(argv: List[str]) -> int:
    if argv[:1] == ["load"]:
        print(load())
        return 0
    if argv[:1] == ["meta"] and len(argv) == 5:
        binaries = [b for b in argv[1].split(":") if b]
        print(json.dumps(meta(binaries, argv[2], argv[3], argv[4])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
