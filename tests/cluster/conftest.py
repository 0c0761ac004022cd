"""Fixtures for the cluster tests: several real inferd processes behind Debian's real nginx
(tests/cluster/fleet.py), and the CPU container image (tests/cluster/test_container.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tools.grpc_stubs

from inferd_harness import DEMO_MODELS, INFERD_BINARY, TorchReference  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _built():
    if not INFERD_BINARY.is_file():
        pytest.fail(f"inferd binary not found at {INFERD_BINARY}: run scripts/setup")
    if not (DEMO_MODELS / "mlp_scorer" / "config.yaml").is_file():
        pytest.fail(f"demo models not found at {DEMO_MODELS}: run scripts/setup")


@pytest.fixture
def fleet(tmp_path):
    """Replicas and nginx pools made by a test; all stopped at its end (logs kept in
    tmp_path and appended to a failing test's report)."""
    made = {"replicas": [], "pools": []}
    yield made
    for pool in made["pools"]:
        pool.stop()
    for replica in made["replicas"]:
        replica.stop()


@pytest.fixture(scope="session")
def torch_ref():
    return TorchReference()


@pytest.fixture(scope="session")
def nginx_binary():
    path = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists()
                                      else None)
    if path is None:
        pytest.fail("nginx not installed: scripts/setup installs Debian's nginx")
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed or "fleet" not in item.funcargs:
        return
    made = item.funcargs["fleet"]
    for replica in made["replicas"]:
        report.sections.append((f"{replica.name} log", replica.log()[-6000:]))
    for pool in made["pools"]:
        report.sections.append(("nginx error.log", pool.error_log()[-6000:]))

