"""The CPU image, built by deploy/docker/build-image as a user builds it (after scripts/setup),
run as a container on the host network: it serves the demo models with correct answers,
runs as its non-root user, turns healthy by its own HEALTHCHECK, and on `docker stop` drains
and exits 0 within the grace period. Prints the image size and the build time."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
import requests

from docker_image import IMAGE_SUFFIX, docker
from fleet import free_port, results_path, wait_ready
from lifecycle_helpers import assert_sample_output, sample_request

DRAIN_S = 2
CONTAINER = f"inferd-test-{IMAGE_SUFFIX}"


def _docker(*args, check=True, timeout=900) -> subprocess.CompletedProcess:
    return docker(*args, check=check, timeout=timeout)


@pytest.fixture(scope="module")
def image(cpu_image):
    return cpu_image


def test_cpu_image_serves_the_demo_models_and_stops_cleanly(image):
    http_port, grpc_port = free_port(), free_port()
    _docker("rm", "-fv", CONTAINER, check=False)
    _docker("run", "-d", "--name", CONTAINER, "--network", "host",
            "-e", "INFERD_HOST=127.0.0.1", "-e", f"INFERD_HTTP_PORT={http_port}",
            "-e", f"INFERD_GRPC_PORT={grpc_port}", "-e", f"INFERD_DRAIN_SECONDS={DRAIN_S}",
            "--health-interval", "1s", "--health-start-period", "60s", image)
    try:
        url = f"http://127.0.0.1:{http_port}"
        wait_ready(url, None, timeout_s=120)
        for model in ("mlp_scorer", "digits"):
            resp = requests.post(f"{url}/v2/models/{model}/infer", json=sample_request(model),
                                 timeout=30)
            assert_sample_output(resp, model)
        inspect = json.loads(_docker("inspect", CONTAINER).stdout)[0]
        assert inspect["Config"]["User"] == "10001:10001"
        deadline = time.monotonic() + 30
        while inspect["State"].get("Health", {}).get("Status") != "healthy":
            assert time.monotonic() < deadline, inspect["State"]
            time.sleep(0.5)
            inspect = json.loads(_docker("inspect", CONTAINER).stdout)[0]
        # JSON logs in the container (INFERD_LOG_FORMAT=json), one object per line.
        logs = _docker("logs", CONTAINER)
        first = next(line for line in (logs.stdout + logs.stderr).splitlines()
                     if line.startswith("{"))
        assert json.loads(first)["msg"]

        began = time.monotonic()
        _docker("stop", "-t", "20", CONTAINER)
        took = time.monotonic() - began
        state = json.loads(_docker("inspect", CONTAINER).stdout)[0]["State"]
        logs = _docker("logs", CONTAINER)
        assert state["ExitCode"] == 0 and not state["OOMKilled"], (state, logs.stdout[-3000:])
        assert DRAIN_S - 0.5 <= took < DRAIN_S + 10, f"docker stop took {took:.1f} s"
        assert "drain period over" in logs.stdout + logs.stderr
        line = f"docker stop: exit 0 after {took:.1f} s (drain {DRAIN_S} s)"
        print(line)
        if out := results_path("container.txt"):
            with open(out, "a") as f:
                f.write(line + "\n")
    finally:
        _docker("rm", "-fv", CONTAINER, check=False)
