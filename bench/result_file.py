#!/usr/bin/env python3
"""Provenance for the result files the benchmarks write (bench/results/*.md + .json), and
the rules every writer keeps (bench/README.md, "Kept runs"):

- A run measures a committed tree: before measuring, a script that writes into bench/results/
  calls require_clean_tree(), which refuses (exit 2, naming the files) when tracked files have
  uncommitted changes. There is no override: to try a script out, point its output elsewhere
  (--out-dir /tmp/x, RESULT=/tmp/x); only bench/results/ is quoted by the docs.
- A result file is never overwritten: each run writes a new dated file (new_stem/write_new,
  <date>-<name>[-N]); tests/integration/test_results_kept.py fails on a commit that modifies,
  deletes or renames one.
- Every file names the machine (machine(): CPU model, cores available to the process, the
  cgroup's CPU quota, kernel) and the load average before and after, with the command, the
  date and the commits of the scripts and of the binary measured.
- Readers take the newest run of a kind (newest()) and list the earlier ones (runs_of()).

    python3 bench/result_file.py load                  # prints `uptime`'s load average
    python3 bench/result_file.py meta BINARY CMD LOAD_BEFORE LOAD_AFTER > meta.json
    python3 bench/result_file.py target NAME [RESULT]  # refuses a dirty tree; prints the stem
    python3 bench/result_file.py stem DIR NAME         # the same in DIR (checked if bench/results)
    python3 bench/result_file.py check-clean [PATH]    # exit 2 when PATH is under bench/results
                                                       # and the tree has uncommitted changes
    python3 bench/result_file.py machine               # what machine() records, as JSON
    python3 bench/result_file.py describe              # the same in words

and, from a script's embedded Python: `import result_file; result_file.header(meta)`.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"

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


def changed_files(directory: Path = ROOT) -> Optional[List[str]]:
    """Tracked files with uncommitted changes (staged or not), as `git status` names them;
    None outside a git tree. Untracked files (a new result file among them) do not count."""
    try:
        out = subprocess.run(["git", "-C", str(directory), "status", "--porcelain",
                              "--untracked-files=no"], capture_output=True, text=True, check=True)
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
    return [line[3:] for line in out.stdout.splitlines() if line.strip()]


def kept(path: Path) -> bool:
    """Whether `path` is under this repository's bench/results/ (a kept result)."""
    return _under(Path(path), RESULTS)


def _under(path: Path, folder: Path) -> bool:
    try:
        Path(os.path.abspath(path)).relative_to(os.path.abspath(folder))
        return True
    except ValueError:
        return False


# Set once this process has passed require_clean_tree: new_stem, called when a run writes
# (often long after it started), does not check again, so an edit made during a long run does
# not throw the run away; the header's commit (commit_of) then says "+ uncommitted changes".
_checked_clean = False


def require_clean_tree(target: Path = RESULTS) -> None:
    """Before measuring: exits 2, naming the changed files, when `target` (where the run will
    write) is under this repository's bench/results/ and tracked files have uncommitted
    changes, or when the repository is not a git tree (its commit could not be named). A
    target elsewhere (a try-out in /tmp) is not checked: nothing outside bench/results/ is
    quoted by the docs."""
    global _checked_clean
    if not _under(Path(target), RESULTS):
        return
    changed = changed_files(ROOT)
    if changed is None:
        refuse(f"refusing to write {target}: {ROOT} is not a git tree, so the run could not "
               f"name the commit it measured")
    _checked_clean = not changed
    if changed:
        refuse(f"refusing to measure into {target}: the tree has uncommitted changes to "
               f"tracked files: {', '.join(changed)}. Commit them (a kept run names the commit "
               f"it measured), or, to try the script out, point its output outside bench/results/ "
               f"where it takes one (--out-dir, --out, --result, RESULT=)")


def refuse(message: str) -> None:
    """Exit status 2 with `message` on stderr: the run was refused before measuring."""
    print(message, file=sys.stderr)
    sys.exit(2)


def _cgroup_cpu_quota() -> str:
    """The CPU limit of this process's cgroup, e.g. "1.5 CPUs (cpu.max 150000 100000)", or
    "none" (cgroup v2 cpu.max up the hierarchy, else v1 cpu.cfs_quota_us)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "unknown"
    limits = []
    for line in lines:
        hierarchy, controllers, path = line.split(":", 2)
        if hierarchy == "0" and controllers == "":
            here = Path("/sys/fs/cgroup") / path.lstrip("/")
            while True:
                f = here / "cpu.max"
                if f.exists():
                    quota, period = f.read_text().split()[:2]
                    if quota != "max":
                        limits.append((int(quota) / int(period), f"cpu.max {quota} {period}"))
                if here == Path("/sys/fs/cgroup") or here == here.parent:
                    break
                here = here.parent
        elif "cpu" in controllers.split(","):
            base = Path("/sys/fs/cgroup") / controllers
            if not base.exists():
                base = Path("/sys/fs/cgroup/cpu")
            here = base / path.lstrip("/")
            for d in (here, base):
                q, p = d / "cpu.cfs_quota_us", d / "cpu.cfs_period_us"
                if q.exists() and p.exists():
                    quota, period = int(q.read_text()), int(p.read_text())
                    if quota > 0:
                        limits.append((quota / period, f"cpu.cfs_quota_us {quota} / {period}"))
                    break
    if not limits:
        return "none"
    cpus, how = min(limits)
    return f"{cpus:g} CPUs ({how})"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict:
    """The machine a run measured on: CPU model, CPUs online, the cores this process may run
    on (sched_getaffinity), the cgroup's CPU quota, the kernel."""
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        available = os.cpu_count()
    return {"cpu_model": cpu_model(), "cpus_online": os.cpu_count(),
            "cores_available": available, "cgroup_cpu_quota": _cgroup_cpu_quota(),
            "kernel": platform.release()}


def describe_machine(m: Optional[dict] = None) -> str:
    """What machine() recorded, in words."""
    m = m or machine()
    return (f"{m['cpu_model']}; {m['cores_available']} of {m['cpus_online']} CPUs available "
            f"to the run; cgroup CPU quota: {m['cgroup_cpu_quota']}; Linux {m['kernel']}")


def machine_line(m: dict) -> str:
    """One Markdown list item naming what machine() recorded."""
    return f"- machine: {describe_machine(m)}"


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
            "cpus": os.cpu_count(), "machine": machine()}


def header(m: dict) -> List[str]:
    """The Markdown lines under a result file's title that say how it was made."""
    lines = [f"- command: `{m['command']}`",
             f"- written by that command on {m['date_utc']} UTC; scripts at commit "
             f"{m['scripts_commit'] or '?'}"]
    for b in m["binaries"]:
        lines.append(f"- binary: `{b['path']}` (sha256 {b['sha256_12']}, built {b['built_utc']} UTC"
                     + (f", in a tree at {b['tree_commit']}" if b["tree_commit"] else "") + ")")
    if m.get("machine"):
        lines.append(machine_line(m["machine"]))
    lines.append(f"- load average (`uptime`, 1/5/15 min) before: {m['load_before']}; "
                 f"after: {m['load_after']} ({m['cpus']} CPUs)")
    lines.append(f"- {SHARED_MACHINE}")
    return lines


def spread(values: List[float], digits: int = 3) -> dict:
    """The median of a measurement's rounds with its range and every round, rounded to
    `digits`: how every result file reports repeated figures. Rounds that gave no figure
    (NaN) are left out; with none left, every field is NaN."""
    values = [v for v in values if v == v]
    if not values:
        return {"median": float("nan"), "min": float("nan"), "max": float("nan"), "all": []}
    return {"median": round(statistics.median(values), digits),
            "min": round(min(values), digits), "max": round(max(values), digits),
            "all": [round(v, digits) for v in values]}


def new_stem(out_dir: Path, name: str) -> Path:
    """out_dir/<today (UTC)>-<name>, or -2, -3, ... when a file of that stem exists (any
    extension): a result file is never overwritten. Refuses a dirty tree when out_dir is
    bench/results/ (require_clean_tree), unless this process checked before measuring."""
    out_dir = Path(out_dir)
    if not _checked_clean:
        require_clean_tree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    stem, n = out_dir / f"{today}-{name}", 1
    while any(out_dir.glob(glob_escape(stem.name) + ".*")):
        n += 1
        stem = out_dir / f"{today}-{name}-{n}"
    return stem


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def refuse_existing(stem: Path) -> None:
    """For a result path a user named (RESULT=, --result): exits 2 when a file of that stem
    exists, and checks the tree as require_clean_tree does."""
    stem = Path(stem)
    require_clean_tree(stem)
    if stem.parent.exists() and any(stem.parent.glob(glob_escape(stem.name) + ".*")):
        refuse(f"refusing to overwrite {stem}.*: a kept result file is never overwritten; "
               f"name a new one")


_DATED = r"(\d{4}-\d{2}-\d{2})-"


def runs_of(kind: str, ext: str = "json", folder: Path = RESULTS) -> List[str]:
    """Every kept run of a kind, oldest first, as file names in `folder`: the undated first
    run (<kind>.<ext>) if there is one, then <date>-<kind>[-N].<ext> by date and N."""
    pattern = re.compile(_DATED + re.escape(kind) + r"(?:-(\d+))?\." + re.escape(ext) + "$")
    dated = []
    for path in folder.glob(f"*.{ext}"):
        m = pattern.match(path.name)
        if m:
            dated.append((m.group(1), int(m.group(2) or 1), path.name))
    first = [f"{kind}.{ext}"] if (folder / f"{kind}.{ext}").exists() else []
    return first + [name for _, _, name in sorted(dated)]


def newest(kind: str, ext: str = "json", folder: Path = RESULTS) -> str:
    """The newest kept run of a kind (a file name in `folder`); KeyError when there is none."""
    runs = runs_of(kind, ext, folder)
    if not runs:
        raise KeyError(f"no run of {kind!r} ({kind}.{ext} or <date>-{kind}[-N].{ext}) in {folder}")
    return runs[-1]


def earlier_runs_line(kind: str, link: str, ext: str = "md", folder: Path = RESULTS) -> str:
    """"Earlier runs: [a](link/a), ..." for every run of a kind but the newest ("" if none)."""
    runs = runs_of(kind, ext, folder)[:-1]
    if not runs:
        return ""
    return "Earlier runs: " + ", ".join(f"[{r}]({link}/{r})" for r in runs) + "."


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
    if argv[:1] == ["machine"]:
        print(json.dumps(machine()))
        return 0
    if argv[:1] == ["describe"]:
        print(describe_machine())
        return 0
    if argv[:1] == ["check-clean"] and len(argv) <= 2:
        require_clean_tree(Path(argv[1]) if len(argv) == 2 else RESULTS)
        return 0
    if argv[:1] == ["stem"] and len(argv) == 3:
        print(new_stem(Path(argv[1]), argv[2]))
        return 0
    if argv[:1] == ["target"] and len(argv) in (2, 3):
        if len(argv) == 3 and argv[2]:
            refuse_existing(Path(argv[2]))
            print(argv[2])
        else:
            print(new_stem(RESULTS, argv[1]))
        return 0
    if argv[:1] == ["meta"] and len(argv) == 5:
        binaries = [b for b in argv[1].split(":") if b]
        print(json.dumps(meta(binaries, argv[2], argv[3], argv[4])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
