"""Helpers for the observability tests: the real Prometheus server and promtool (Debian's
`prometheus` package), and load against inferd."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import requests

from inferd_harness import REPO_ROOT, free_port, sample_request

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
DEPLOY_PROMETHEUS = REPO_ROOT / "deploy" / "prometheus"


def promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], input=stdin, capture_output=True, text=True,
                          timeout=120, cwd=REPO_ROOT)


def send_load(url: str, model: str, count: int, clients: int = 4,
              headers: dict | None = None) -> list[int]:
    """`count` KServe infer requests for `model` from `clients` threads; their statuses."""
    body = sample_request(model)
    statuses: list[int] = []
    lock = threading.Lock()
    per_client = [count // clients + (1 if i < count % clients else 0) for i in range(clients)]

    def client(n: int) -> None:
        with requests.Session() as session:
            for _ in range(n):
                r = session.post(f"{url}/v2/models/{model}/infer", json=body, headers=headers,
                                 timeout=60)
                with lock:
                    statuses.append(r.status_code)

    threads = [threading.Thread(target=client, args=(n,)) for n in per_client]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


class PrometheusServer:
    """A real Prometheus scraping `targets` every `interval`, with its own storage."""

    def __init__(self, workdir: Path, targets: list[str], interval: str = "1s"):
        self.workdir = workdir
        self.targets = targets
        self.interval = interval
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log_path = workdir / "prometheus.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "PrometheusServer":
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "prometheus.yml"
        targets = ", ".join(f"'{t}'" for t in self.targets)
        config.write_text(
            "global:\n"
            f"  scrape_interval: {self.interval}\n"
            f"  evaluation_interval: {self.interval}\n"
            "rule_files:\n"
            f"  - {DEPLOY_PROMETHEUS / 'alerts.yml'}\n"
            "scrape_configs:\n"
            "  - job_name: inferd\n"
            f"    static_configs:\n      - targets: [{targets}]\n")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}",
                 f"--storage.tsdb.path={self.workdir / 'data'}",
                 f"--web.listen-address=127.0.0.1:{self.port}"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited: {self.log_path.read_text()}")
            try:
                if requests.get(self.url + "/-/ready", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"prometheus not ready in 30 s: {self.log_path.read_text()}")

    def query(self, promql: str) -> list[dict]:
        r = requests.get(self.url + "/api/v1/query", params={"query": promql}, timeout=10)
        r.raise_for_status()
        body = r.json()
        assert body["status"] == "success", body
        return body["data"]["result"]

    def wait_for(self, promql: str, predicate, timeout: float = 30.0) -> list[dict]:
        """Polls `promql` until predicate(result) holds; returns the result."""
        deadline = time.monotonic() + timeout
        result: list[dict] = []
        while time.monotonic() < deadline:
            result = self.query(promql)
            if predicate(result):
                return result
            time.sleep(0.25)
        raise AssertionError(f"{promql}: last result {result} after {timeout} s\n"
                             f"prometheus log:\n{self.log_path.read_text()[-5000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
