"""Fault injection, as CI runs it: bench/reliability/faults.py against the real inferd. A
backend error mid-batch, a truncated and a deleted model file during reloads, and kill -9
during a load then a restart; a bystander model must answer every request meanwhile and the
repository state must recover (the script's own checks; the figures are in
bench/results/reliability.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_script(tmp_path: Path, script: str, *args: str) -> dict:
    env = dict(os.environ, INFERD_RELIABILITY_RESULTS=str(tmp_path))
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "reliability" / script), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    name = args[args.index("--output") + 1]
    path = tmp_path / f"{name}.json"
    assert path.exists(), f"{script} wrote no result (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(path.read_text())
    result["_rc"] = proc.returncode
    return result


def test_faults_leave_other_models_serving_and_state_recovers(tmp_path):
    result = run_script(tmp_path, "faults.py", "--output", "faults-ci")
    assert result["server_alive"], result
    assert result["bystander"]["failed"] == 0, result["bystander"]
    assert result["bystander"]["ok"] > 0
    error = result["backend_error"]
    assert error["poisoned_status"] == 500, error
    assert "injected fault" in error["poisoned_error"], error
    # Regression: a poisoned request failed every request batched with it.
    assert error["batchmates_statuses"] == [200] * 7, error
    assert error["after_all_200"], error
    files = result["broken_files"]
    assert files["truncated_load"]["status"] != 200, files
    assert not files["truncated_v2_ready"] and files["truncated_v1_ready"], files
    assert files["truncated_v1_answers"], files
    assert files["deleted_served"] == ["1"] and files["deleted_v1_answers"], files
    assert files["restored_load"]["status"] == 200 and files["restored_served"] == ["2"], files
    kill = result["kill_during_load"]
    assert all(state == "READY" for state in kill["index_after_restart"].values()), kill
    assert all(code == 200 for code in kill["answers_after_restart"].values()), kill
    assert result["passed"] and result["_rc"] == 0, result
