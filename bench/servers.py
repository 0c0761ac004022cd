"""Starting, probing and stopping the servers under test (inferd and the Flask baseline).

Each server runs in its own session (process group) with its output in a log file, so a
benchmark can always stop what it started, even after Ctrl-C or an exception, and so a
server that dies can be explained from its log.
"""

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import List, Optional

import requests

HOST = "127.0.0.1"


def free_port() -> int:
    """Asks the kernel for an unused loopback port (tiny race until the server binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """One running server process and how to reach it."""

    kind: str  # "inferd" or "flask"
    model: str
    port: int
    command: List[str]
    log_path: str
    process: Optional[subprocess.Popen] = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def predict_url(self) -> str:
        """inferd's /predict picks the model from ?model=; Flask ignores the query."""
        return f"{self.base_url}/predict?model={self.model}"

    def log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path, "r", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"


def inferd_command(binary: str, repository: str, port: int) -> List[str]:
    return [binary, "--model-repository", repository, "--http-port", str(port),
            "--host", HOST, "--log-level", "warn"]


def flask_command(python: str, script: str, model_file: str, port: int) -> List[str]:
    return [python, script, "--model", model_file, "--port", str(port), "--host", HOST]


def start(server: Server) -> Server:
    """Launches the server in a new session with stdout/stderr going to its log file."""
    log = open(server.log_path, "ab")
    try:
        server.process = subprocess.Popen(server.command, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
    finally:
        log.close()
    return server


def stop(server: Server, grace_s: float = 10.0) -> Optional[int]:
    """Stops the server's process group: SIGTERM, then SIGKILL after a grace period.

    Returns the exit status (negative for a signal), or None if it was never started.
    """
    proc = server.process
    if proc is None:
        return None
    if proc.poll() is None:
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait(timeout=grace_s)
    return proc.returncode


def _signal_group(pid: int, sig: int) -> None:
    """Signals the group this benchmark created for the server (its pid is the group id)."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def _get_ok(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def _post_ok(url: str, body: bytes) -> bool:
    try:
        answer = requests.post(url, data=body, timeout=30,
                               headers={"Content-Type": "application/json"})
        return answer.status_code == 200
    except requests.RequestException:
        return False


def is_ready(server: Server, body: bytes) -> bool:
    """inferd: server and model readiness endpoints; Flask: a prediction succeeds."""
    if server.kind == "inferd":
        return (_get_ok(f"{server.base_url}/v2/health/ready")
                and _get_ok(f"{server.base_url}/v2/models/{server.model}/ready"))
    return _post_ok(server.predict_url, body)


def wait_ready(server: Server, body: bytes, timeout_s: float) -> None:
    """Polls readiness until it holds; raises with the log tail if the server dies or stalls."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process is not None and server.process.poll() is not None:
            raise RuntimeError(f"{server.kind} exited with {server.process.returncode} before "
                               f"it was ready; log {server.log_path}:\n{server.log_tail()}")
        if is_ready(server, body):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{server.kind} not ready after {timeout_s:.0f}s; log {server.log_path}:\n"
                       f"{server.log_tail()}")


def predict_once(server: Server, body: bytes) -> dict:
    """One POST /predict: status, parsed answer (if JSON) and latency, for the sanity check."""
    started = time.perf_counter()
    answer = requests.post(server.predict_url, data=body, timeout=60,
                           headers={"Content-Type": "application/json"})
    elapsed_ms = (time.perf_counter() - started) * 1e3
    try:
        payload = answer.json()
    except ValueError:
        payload = {"raw": answer.text[:500]}
    return {"status": answer.status_code, "body": payload, "ms": elapsed_ms}
