"""Starting, probing and stopping the servers under test (inferd and the Flask baseline),
and running the in-process engine limit (bench/engine_limit.py), the third "server".

Each server runs in its own session (process group) with its output in a log file, so a
benchmark can always stop what it started, even after Ctrl-C or an exception, and so a
server that dies can be explained from its log. The engine is not a server: each timed
run is one short-lived engine_limit.py process that prints its numbers and exits.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
from inferd_harness import InferdServer  # noqa: E402  (the one way inferd is started)

HOST = "127.0.0.1"


def free_port() -> int:
    """Asks the kernel for an unused loopback port (tiny race until the server binds it), for
    the servers that cannot report the port they bound (Flask, nginx, the peers); inferd binds
    port 0 and says which (InferdServer)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """One running server process and how to reach it."""

    kind: str  # "inferd" or "flask"
    model: str
    port: int  # inferd: 0 until start() has read the bound port back
    command: List[str]
    log_path: str
    process: Optional[subprocess.Popen] = field(default=None, repr=False)
    # kind "inferd": the harness that starts it (new_inferd).
    inferd: Optional[InferdServer] = field(default=None, repr=False)
    grpc_port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def predict_url(self) -> str:
        """inferd's /predict picks the model from ?model=; Flask ignores the query."""
        return f"{self.base_url}/predict?model={self.model}"

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)


def log_tail(path: str, lines: int = 20) -> str:
    """The end of a log file, to explain a failure in the error message itself."""
    try:
        with open(path, "r", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)"


def new_inferd(model: str, binary: str, repository: str, log_path: str, cls=None,
               **fields) -> "Server":
    """An inferd Server (or `cls`, a subclass, with its extra `fields`), not started, on port 0.

    No access log, as nginx_ceiling.py's nginx (`access_log off`): with it, inferd writes a
    JSON line per request from a background thread (about one more system call each).
    """
    process = InferdServer(Path(repository), Path(log_path),
                           ["--log-level", "warn", "--access-log", "false"],
                           binary=Path(binary), new_session=True)
    return (cls or Server)("inferd", model, 0, process.command(), log_path, inferd=process,
                           **fields)


def flask_command(python: str, script: str, model_file: str, port: int) -> List[str]:
    return [python, script, "--model", model_file, "--port", str(port), "--host", HOST]


def start(server: Server, listen_timeout_s: float = 60) -> Server:
    """Launches the server in a new session with stdout/stderr going to its log file; inferd
    is started by its harness, and start() returns once it listens (its ports are known)."""
    if server.inferd is not None:
        server.process = server.inferd.spawn().proc
        server.inferd.wait_ports(listen_timeout_s)
        server.port, server.grpc_port = server.inferd.port, server.inferd.grpc_port
        return server
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


def engine_command(python: str, script: str, model_dir: str, concurrency: int, seconds: int,
                   warmup_s: int, warmup_calls: int) -> List[str]:
    return [python, script, model_dir, "--concurrency", str(concurrency), "--duration",
            str(seconds), "--warmup", str(warmup_s), "--warmup-calls", str(warmup_calls)]


def linked_allocator(binary: str) -> str:
    """The malloc replacement (jemalloc, tcmalloc) `binary` links, or "" for glibc malloc.

    The engine limit preloads the same one: with glibc malloc, ResNet-18's forward pass in
    Python measured ~20% slower here, which would credit inferd with the allocator's gain.
    """
    try:
        done = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    for line in done.stdout.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name.startswith(("libjemalloc.so", "libtcmalloc")) and rest:
            return rest.split(" (")[0]
    return ""


def run_engine(command: List[str], preload: str, log_path: str, timeout_s: float) -> dict:
    """Runs engine_limit.py once and returns its JSON line, with wrk-style µs latencies added.

    The µs keys give every run in the report, wrk's or the engine's, the same fields; the
    engine's stderr goes to its log, and a failure raises with the log's tail.
    """
    env = dict(os.environ, LD_PRELOAD=preload) if preload else dict(os.environ)
    load_before = os.getloadavg()[0]
    with open(log_path, "ab") as log:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=log, env=env,
                              stdin=subprocess.DEVNULL, timeout=timeout_s)
    lines = done.stdout.decode(errors="replace").strip().splitlines()
    try:
        result = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    except ValueError:
        result = None
    if not isinstance(result, dict):
        raise RuntimeError(f"engine exited with {done.returncode} and no JSON line; log "
                           f"{log_path}:\n{log_tail(log_path)}")
    for key in ("p50", "p90", "p99", "mean", "max"):
        result[f"{key}_us"] = result[f"{key}_ms"] * 1e3
    return dict(result, loadavg_1m_before=load_before)
