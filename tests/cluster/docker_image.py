"""The docker client the container tests use, and the tag of the CPU image they build
(conftest.cpu_image)."""

from __future__ import annotations

import hashlib
import os
import subprocess

from inferd_harness import REPO_ROOT

DOCKER = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker"
# One tag per checkout, so that two worktrees (or CI jobs) on one docker host do not collide.
IMAGE_SUFFIX = hashlib.sha256(str(REPO_ROOT).encode()).hexdigest()[:10]
CPU_IMAGE = f"inferd:test-{IMAGE_SUFFIX}"


def docker(*args, check=True, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run([DOCKER, *args], capture_output=True, text=True, check=check,
                          timeout=timeout)
