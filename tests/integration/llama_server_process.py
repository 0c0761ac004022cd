"""llama.cpp's own server, built from the pinned llama.cpp source by bench/llm/build-llama-tools,
started beside inferd so a test can compare answers on the same GGUF file. Tests that use it
are skipped (visibly, with the reason) where it is not built: CI does not build it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
LLAMA_SERVER = Path(os.environ.get("INFERD_LLAMA_SERVER",
                                   ROOT / "build-llama-tools" / "bin" / "llama-server"))

needs_llama_server = pytest.mark.skipif(
    not LLAMA_SERVER.is_file(),
    reason=f"{LLAMA_SERVER} is not built (bench/llm/build-llama-tools)")


@contextlib.contextmanager
def llama_server(args: list[str], log_path: Path, start_timeout_s: float = 120):
    """Runs `llama-server ARGS` on a free loopback port; yields its base URL once /health
    answers 200, and stops it after."""
    from inferd_harness import free_port

    port = free_port()
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [str(LLAMA_SERVER), *args, "--port", str(port), "--host", "127.0.0.1"],
            stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + start_timeout_s
            while True:
                try:
                    if requests.get(url + "/health", timeout=2).status_code == 200:
                        break
                except requests.ConnectionError:
                    pass
                assert process.poll() is None, log_path.read_text()[-2000:]
                assert time.monotonic() < deadline, "llama-server did not start"
                time.sleep(0.5)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)
