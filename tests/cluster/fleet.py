"""A fleet on one machine for the cluster tests: inferd replica processes on loopback ports
and Debian's nginx in front of them, configured by deploy/nginx/render-pool."""

from __future__ import annotations

import bisect
import re
import shutil
import signal
import socket
import subprocess
import time
import zlib
from pathlib import Path

import requests

from inferd_harness import INFERD_BINARY, REPO_ROOT, clean_env
from inferd_harness import free_port as _os_free_port

RENDER_POOL = REPO_ROOT / "deploy" / "nginx" / "render-pool"
READY_TIMEOUT_S = 60.0
_given_ports: set[int] = set()


def free_port() -> int:
    """A free loopback port not handed out before in this process: a fleet's replicas and
    nginx bind theirs later, and two of them must never get the same one."""
    while True:
        port = _os_free_port()
        if port not in _given_ports:
            _given_ports.add(port)
            return port


def results_path(name: str) -> Path | None:
    """Where a test keeps its figures when INFERD_CLUSTER_RESULTS names a folder (the runs
    bench/results/ quotes), else None."""
    import os
    folder = os.environ.get("INFERD_CLUSTER_RESULTS")
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder) / name


def wait_ready(url: str, proc: subprocess.Popen | None, timeout_s: float = READY_TIMEOUT_S,
               log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode} before it was ready\n"
                               f"{log.read_text(errors='replace')[-4000:] if log else ''}")
        try:
            if requests.get(url + "/v2/health/ready", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} not ready within {timeout_s} s")


class Replica:
    """One inferd process on fixed loopback ports (kept across restarts, as a balancer's
    configuration names them)."""

    def __init__(self, name: str, repository: Path, log_dir: Path, args: list[str]):
        self.name = name
        self.repository = repository
        self.log_path = log_dir / f"{name}.log"
        self.args = args
        self.http_port = free_port()
        self.grpc_port = free_port()
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def http_address(self) -> str:
        return f"127.0.0.1:{self.http_port}"

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def start(self, wait: bool = True) -> "Replica":
        self.starts += 1
        cmd = [str(INFERD_BINARY), "--model-repository", str(self.repository),
               "--host", "127.0.0.1", "--http-port", str(self.http_port),
               "--grpc-port", str(self.grpc_port), "--http-threads", "1", *self.args]
        with open(self.log_path, "ab") as log:
            log.write(f"--- start {self.starts}: {' '.join(cmd)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=clean_env(),
                                         cwd=REPO_ROOT)
        if wait:
            wait_ready(self.url, self.proc, log=self.log_path)
        return self

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self, timeout_s: float = 60.0) -> int:
        """SIGTERM and wait: the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout_s)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # no drain period at teardown
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def get(self, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", 60)
        return requests.get(self.url + path, **kwargs)


class NginxPool:
    """Debian's nginx, in the foreground, with a configuration rendered for `replicas`."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.conf = workdir / "nginx.conf"
        self.http_port = 0
        self.grpc_port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def render(self, replicas: list[Replica], balance: str, *extra: str) -> None:
        user = ["--user", "root"] if _is_root() else []
        subprocess.run([str(RENDER_POOL), "--http", ",".join(r.http_address for r in replicas),
                        "--grpc", ",".join(r.grpc_address for r in replicas),
                        "--balance", balance, "--prefix", str(self.workdir),
                        "--listen", f"127.0.0.1:{self.http_port}",
                        "--listen-grpc", f"127.0.0.1:{self.grpc_port}",
                        "--workers", "1", "--access-log", "--upstream-header",
                        "--out", str(self.conf), *user, *extra], check=True)

    def start(self, replicas: list[Replica], balance: str = "least_conn", *extra: str):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        for attempt in range(3):
            self.http_port, self.grpc_port = free_port(), free_port()
            self.render(replicas, balance, *extra)
            self.proc = subprocess.Popen([nginx, "-c", str(self.conf), "-g", "daemon off;"],
                                         stdout=subprocess.DEVNULL,
                                         stderr=open(self.workdir / "stderr.log", "ab"))
            try:
                wait_ready(self.url, self.proc, log=self.workdir / "error.log")
                return self
            except RuntimeError:
                self.stop()
                if attempt == 2:
                    raise
        return self

    def reload(self, replicas: list[Replica], balance: str, *extra: str) -> None:
        """New configuration, same ports: old workers finish their requests (SIGHUP)."""
        self.render(replicas, balance, *extra)
        old_workers = _children(self.proc.pid)
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while set(_children(self.proc.pid)) & set(old_workers):
            assert time.monotonic() < deadline, "nginx's old workers did not exit"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def error_log(self) -> str:
        try:
            return (self.workdir / "error.log").read_text(errors="replace")
        except OSError:
            return ""


def _is_root() -> bool:
    import os
    return os.geteuid() == 0


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


# --- nginx's consistent hashing (ngx_http_upstream_hash_module.c), to predict where
# `hash $key consistent` sends a key, so that a test can choose keys that spread evenly.

def _chash_points(servers: list[str]) -> tuple[list[int], list[str]]:
    points = []
    for server in servers:
        host, _, port = server.rpartition(":")
        base = host.encode() + b"\0" + port.encode()
        prev = 0
        for _ in range(160):  # 160 points per unit of weight
            h = zlib.crc32(base + prev.to_bytes(4, "little"))
            points.append((h, server))
            prev = h
    points.sort(key=lambda p: p[0])
    unique = []
    for h, server in points:
        if not unique or unique[-1][0] != h:
            unique.append((h, server))
    return [h for h, _ in unique], [s for _, s in unique]


def chash_owner(servers: list[str], key: str) -> str:
    """The server nginx's consistent hash picks for `key` when every server is up."""
    hashes, owners = _chash_points(servers)
    i = bisect.bisect_left(hashes, zlib.crc32(key.encode()))
    return owners[i % len(hashes)]


def listening_port(log: str, scheme: str) -> int:
    match = re.findall(rf"listening on {scheme}://[^:]+:(\d+)", log)
    return int(match[-1])


def port_is_closed(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return False
    except OSError:
        return True
