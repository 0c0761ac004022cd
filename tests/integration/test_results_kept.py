"""Kept runs (issue 34; bench/README.md, "Kept runs"): a result file under bench/results/ is
never modified, deleted or renamed once committed, and a run refuses to measure on a tree
with uncommitted changes.

- test_no_commit_rewrites_a_result_file walks this repository's history from KEPT_SINCE to
  HEAD and names every commit that modified (M), deleted (D) or renamed (R) a result file.
- test_the_history_check_names_a_rewritten_file runs the same check on a throwaway
  repository whose second commit modifies a result file, so the failure path is exercised
  on every run.
- test_a_writer_refuses_a_dirty_tree runs a real writer (bench/fuzzing_report.py, the
  cheapest: it measures nothing) in a scratch repository: refused with exit status 2 naming
  the changed file while a tracked file is modified, then two runs on the clean tree write
  two dated files, the first left as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The commit from which no result file may be rewritten: a041c2f was main's head when the
# rule began (issue 34, "Kept runs"). Earlier commits overwrote files (peers.json three
# times); those stay in the history and are not checked.
KEPT_SINCE = "a041c2f"

RESULTS = "bench/results/"


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_AUTHOR_NAME="test", GIT_AUTHOR_EMAIL="test@example.com",
               GIT_COMMITTER_NAME="test", GIT_COMMITTER_EMAIL="test@example.com")
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=check, env=env)


def rewritten_results(repo: Path, since: str) -> list[str]:
    """Every "commit STATUS path" in since..HEAD (commits descending from `since`; a merge
    compared with its first parent) where STATUS is M, D or R for a path under bench/results/."""
    log = _git(repo, "log", "--ancestry-path", "--diff-merges=first-parent", "-M",
               "--name-status", "--format=%x00%h %s", f"{since}..HEAD", "--",
               RESULTS).stdout
    found = []
    for entry in log.split("\0")[1:]:
        header, *files = entry.strip("\n").split("\n")
        for line in files:
            if not line.strip():
                continue
            status, *paths = line.split("\t")
            if status[0] in "MDR":
                found.append(f"{header.split(' ', 1)[0]} {status[0]} {' -> '.join(paths)} "
                             f"(\"{header.split(' ', 1)[-1][:80]}\")")
    return found


def test_no_commit_rewrites_a_result_file():
    if not (ROOT / ".git").exists():
        pytest.skip(f"{ROOT} is not a git checkout: the history cannot be checked")
    if _git(ROOT, "rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("shallow clone: the history from KEPT_SINCE cannot be walked "
                    "(git fetch --unshallow)")
    if _git(ROOT, "merge-base", "--is-ancestor", KEPT_SINCE, "HEAD", check=False).returncode:
        pytest.skip(f"KEPT_SINCE {KEPT_SINCE} is not in this history: nothing to check")
    rewritten = rewritten_results(ROOT, KEPT_SINCE)
    assert not rewritten, (
        "a kept result file was modified, deleted or renamed (a new run is a new dated file: "
        "bench/result_file.py new_stem; a correction is a new file that names the one it "
        "corrects):\n" + "\n".join(rewritten))


def _scratch_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    return repo


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "--short", "HEAD").stdout.strip()


def test_the_history_check_names_a_rewritten_file(tmp_path):
    repo = _scratch_repo(tmp_path)
    results = repo / "bench" / "results"
    results.mkdir(parents=True)
    (results / "2026-12-01-run.json").write_text('{"qps": 100}\n')
    (results / "old.md").write_text("old\n")
    (results / "moved.md").write_text("moved\n")
    start = _commit(repo, "the first runs")
    (results / "2026-12-02-run.json").write_text('{"qps": 120}\n')
    _commit(repo, "a new run: fine")
    assert rewritten_results(repo, start) == []

    (results / "2026-12-01-run.json").write_text('{"qps": 130}\n')
    modified = _commit(repo, "rewrite a kept run")
    (results / "old.md").unlink()
    deleted = _commit(repo, "delete one")
    _git(repo, "mv", "bench/results/moved.md", "bench/results/renamed.md")
    renamed = _commit(repo, "rename one")
    found = rewritten_results(repo, start)
    assert len(found) == 3, found
    assert any(f.startswith(f"{modified} M bench/results/2026-12-01-run.json")
               for f in found), found
    assert any(f.startswith(f"{deleted} D bench/results/old.md") for f in found), found
    assert any(f.startswith(f"{renamed} R bench/results/moved.md -> bench/results/renamed.md")
               for f in found), found


def test_a_writer_refuses_a_dirty_tree(tmp_path):
    repo = _scratch_repo(tmp_path)
    (repo / "bench").mkdir()
    for name in ("result_file.py", "fuzzing_report.py"):
        shutil.copy(ROOT / "bench" / name, repo / "bench" / name)
    (repo / "README.md").write_text("a tracked file\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    _commit(repo, "scripts")

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(repo / "bench" / "fuzzing_report.py"),
                               "--seconds", "1", "--command", "none", "--logs", str(logs)],
                              capture_output=True, text=True, cwd=repo)

    (repo / "README.md").write_text("changed, not committed\n")
    refused = run()
    assert refused.returncode == 2, refused
    assert "uncommitted changes" in refused.stderr and "README.md" in refused.stderr, refused.stderr
    kept = repo / "bench" / "results"
    assert not kept.exists() or not any(kept.iterdir()), "a refused run wrote a file"

    _git(repo, "checkout", "README.md")
    (repo / "notes.txt").write_text("untracked: does not count\n")
    first, second = run(), run()
    assert first.returncode == 0 and second.returncode == 0, (first, second)
    written = sorted(p.name for p in (repo / "bench" / "results").iterdir())
    assert len(written) == 2, written
    assert written[0].endswith("-fuzzing-2.md") and written[1].endswith("-fuzzing.md"), written
    text = (repo / "bench" / "results" / written[1]).read_text()
    assert "Machine: " in text and "CPUs available to the run" in text, text
