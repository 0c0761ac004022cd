"""Fixtures for the cluster tests: several real inferd processes behind Debian's real nginx
(tests/cluster/fleet.py), and the CPU container image, built once per session by
deploy/docker/build-image for tests/cluster/test_container.py and test_k8s_real.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tools.grpc_stubs

from docker_image import CPU_IMAGE, docker  # noqa: E402
from fleet import results_path  # noqa: E402
from inferd_harness import DEMO_MODELS, INFERD_BINARY, REPO_ROOT, TorchReference  # noqa: E402


def pytest_configure(config):
    """A run that keeps its figures in bench/results/ (INFERD_CLUSTER_RESULTS, tests/cluster/
    fleet.py's results_path) measures a committed tree into a new folder: bench/README.md,
    "Kept runs"."""
    folder = os.environ.get("INFERD_CLUSTER_RESULTS")
    if not folder:
        return
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    import result_file

    path = Path(folder).resolve()
    if not result_file.kept(path):
        return
    changed = result_file.changed_files()
    if changed:
        raise pytest.UsageError(f"INFERD_CLUSTER_RESULTS={folder}: the tree has uncommitted "
                                f"changes to tracked files ({', '.join(changed)}); a kept run "
                                "measures a committed tree")
    if path.exists():
        raise pytest.UsageError(f"INFERD_CLUSTER_RESULTS={folder} exists: a kept run is never "
                                "overwritten; name a new folder (<date>-<name>)")


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



@pytest.fixture(scope="session")
def cpu_image():
    """The CPU image as a user builds it (deploy/docker/build-image cpu, after scripts/setup),
    once per session: the container test runs it, the real-Kubernetes test imports it into the
    cluster's containerd under its own tag."""
    if docker("info", check=False, timeout=60).returncode != 0:
        pytest.fail("dockerd is not reachable: scripts/setup installs docker.io and starts it")
    old = docker("image", "inspect", "-f", "{{.Id}}", CPU_IMAGE, check=False).stdout.strip()
    began = time.monotonic()
    build = subprocess.run([str(REPO_ROOT / "deploy" / "docker" / "build-image"), "cpu",
                            CPU_IMAGE], capture_output=True, text=True, timeout=1800,
                           env={**os.environ, "INFERD_IMAGE_SKIP_SETUP": "1"})
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    seconds = time.monotonic() - began
    new = docker("image", "inspect", "-f", "{{.Id}}", CPU_IMAGE).stdout.strip()
    if old and old != new:
        docker("rmi", old, check=False)  # the previous build of this tag, now dangling
    size = int(docker("image", "inspect", "-f", "{{.Size}}", CPU_IMAGE).stdout)
    line = (f"image {CPU_IMAGE}: {size / 2**20:.0f} MiB, built in {seconds:.0f} s "
            f"(base image included when it was missing)")
    print("\n" + line)
    if out := results_path("container.txt"):
        plain = re.sub(r"\x1b\[[0-9;]*m", "", build.stdout)  # build-image's bold
        out.write_text(line + "\n" + "\n".join(
            l for l in plain.splitlines() if "[build-image]" in l) + "\n")
    return CPU_IMAGE
