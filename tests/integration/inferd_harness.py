"""Helpers for the black-box tests: start the real inferd binary, talk to it, and compute the
reference answers with PyTorch.

Paths can be overridden with INFERD_BINARY and INFERD_DEMO_MODELS (defaults: build/inferd and
build/demo-models under the repository root).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import requests
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
INFERD_BINARY = Path(os.environ.get("INFERD_BINARY", REPO_ROOT / "build" / "inferd"))
DEMO_MODELS = Path(os.environ.get("INFERD_DEMO_MODELS", REPO_ROOT / "build" / "demo-models"))

DEMO_MODEL_NAMES = ["digits", "mlp_scorer", "resnet18", "text_classifier"]

# What each demo model's config.yaml declares, as GET /v2/models/M must report it: the batch
# dimension shows as -1 because every demo model batches.
DEMO_METADATA = {
    "mlp_scorer": {
        "inputs": [{"name": "features", "datatype": "FP32", "shape": [-1, 256]}],
        "outputs": [{"name": "score", "datatype": "FP32", "shape": [-1, 1]}],
        "max_batch_size": 32,
    },
    "resnet18": {
        "inputs": [{"name": "image", "datatype": "FP32", "shape": [-1, 3, 224, 224]}],
        "outputs": [{"name": "logits", "datatype": "FP32", "shape": [-1, 1000]}],
        "max_batch_size": 8,
    },
    "text_classifier": {
        "inputs": [{"name": "token_ids", "datatype": "INT64", "shape": [-1, 128]}],
        "outputs": [{"name": "logits", "datatype": "FP32", "shape": [-1, 2]}],
        "max_batch_size": 16,
    },
    "digits": {
        "inputs": [{"name": "pixels", "datatype": "FP32", "shape": [-1, 64]}],
        "outputs": [{"name": "probabilities", "datatype": "FP32", "shape": [-1, 10]}],
        "max_batch_size": 64,
    },
}

ATOL = 1e-4
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
HTTP_TIMEOUT_S = 60.0


def free_port() -> int:
    """A port no one listens on now, for the tests of a port flag itself and for other servers
    (Prometheus); inferd itself is started with port 0 and --port-file."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_port_file(path: Path) -> dict | None:
    """The {"http": N, "grpc": M} that inferd --port-file wrote, or None until it has (inferd
    writes it under a temporary name and renames it, so a file that exists is complete)."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None


# Variables inferd reads besides INFERD_*: defaults for configs that leave fields out.
_SERVER_ENV = {"BATCH_SIZE", "MAX_WORKERS"}


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The test process's environment without any variable inferd reads (INFERD_*,
    BATCH_SIZE, MAX_WORKERS), plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("INFERD_") and k not in _SERVER_ENV}
    env.update(extra or {})
    return env


class InferdServer:
    """One inferd process, the way tests and benchmarks start inferd: on port 0, with the
    bound ports read back from --port-file (no race for a "free" port). The exceptions are
    tests/cluster/fleet.py's replicas, which keep fixed ports because nginx's config names
    them, and the tests of the port flags themselves.
    `start()` returns once GET /v2/health/ready answers 200; `spawn()` and `wait_ready()` are
    its two halves, for a caller that does something in between.

    `binary` defaults to INFERD_BINARY (read when the server starts); `new_session` puts the
    process in a session of its own (benchmarks: Ctrl-C in the terminal does not reach it,
    and stop() still does)."""

    def __init__(self, repository: Path | None, log_path: Path, args: list[str] | None = None,
                 env: dict[str, str] | None = None, port_flag: bool = True, name: str = "inferd",
                 tls_ca: Path | None = None, binary: Path | None = None,
                 new_session: bool = False):
        self.repository = repository
        self.log_path = Path(log_path)
        self.args = list(args or [])
        self.extra_env = dict(env or {})
        self.port_flag = port_flag
        self.name = name
        # With TLS (--tls-cert-file): the CA certificate that clients trust.
        self.tls_ca = tls_ca
        self.binary = Path(binary) if binary is not None else None
        self.new_session = new_session
        self.port: int | None = None
        self.grpc_port: int | None = None
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls_ca else 'http'}://127.0.0.1:{self.port}"

    @property
    def port_file(self) -> Path:
        return self.log_path.with_name(self.log_path.name + ".ports")

    def command(self) -> list[str]:
        cmd = [str(self.binary or INFERD_BINARY)]
        if self.repository is not None:
            cmd += ["--model-repository", str(self.repository)]
        if self.port_flag:
            # Port 0: the kernel picks free ports, and inferd writes them to the port file.
            cmd += ["--http-port", "0", "--host", "127.0.0.1", "--grpc-port", "0",
                    "--port-file", str(self.port_file)]
        return cmd + self.args

    def start(self) -> "InferdServer":
        self.spawn()
        self.wait_ready()
        return self

    def spawn(self) -> "InferdServer":
        """Starts the process and returns at once (the ports are known after wait_ready)."""
        binary = self.binary or INFERD_BINARY
        if not Path(binary).is_file():
            raise RuntimeError(f"inferd binary not found at {binary}; build it first")
        env = dict(self.extra_env)
        # inferd's SIGTERM drain period (5 s by default) would add its length to every
        # test's teardown; the drain tests set it themselves.
        env.setdefault("INFERD_DRAIN_SECONDS", "0")
        if not self.port_flag:  # the same through the environment
            env.setdefault("INFERD_HTTP_PORT", "0")
            env.setdefault("INFERD_GRPC_PORT", "0")
            env.setdefault("INFERD_HOST", "127.0.0.1")
            env.setdefault("INFERD_PORT_FILE", str(self.port_file))
        self.port_file.unlink(missing_ok=True)
        self.port = self.grpc_port = None  # a restarted server is on new ports
        with open(self.log_path, "ab") as log:
            log.write(f"--- start: {' '.join(self.command())}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=clean_env(env),
                                         cwd=REPO_ROOT, start_new_session=self.new_session)
        return self

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Until the port file names the ports and GET /v2/health/ready answers 200 (every
        model that loads at start has loaded); raises with the log if the process exits first
        or the time runs out (and stops it then)."""
        self._wait_for(lambda: self._read_port_file() and self._health_ready(), "ready",
                       timeout_s)

    def wait_ports(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Until the port file names the ports (inferd writes it once both listeners are bound,
        before its models have loaded): for callers that wait for readiness their own way."""
        self._wait_for(self._read_port_file, "listening", timeout_s)

    def _wait_for(self, done: Callable[[], bool], what: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"inferd exited with code {self.proc.returncode} before it "
                                   f"was {what}; its log:\n{self.log()}")
            if done():
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"inferd was not {what} within {timeout_s:.0f} s; its log:\n{self.log()}")

    def _health_ready(self) -> bool:
        try:
            return requests.get(self.url + "/v2/health/ready", timeout=2,
                                verify=str(self.tls_ca) if self.tls_ca else True
                                ).status_code == 200
        except requests.RequestException:
            return False

    def _read_port_file(self) -> bool:
        """True once the ports are known (read from the port file the first time it exists)."""
        if self.port is None:
            ports = read_port_file(self.port_file)
            if ports is not None:
                self.port, self.grpc_port = ports["http"], ports["grpc"]
        return self.port is not None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after STOP_TIMEOUT_S. Returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_TIMEOUT_S)
        return self.proc.returncode

    # --- HTTP helpers -------------------------------------------------------------------

    def get(self, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", HTTP_TIMEOUT_S)
        if self.tls_ca:
            kwargs.setdefault("verify", str(self.tls_ca))
        return requests.get(self.url + path, **kwargs)

    def post(self, path: str, body: Any = None, raw: str | bytes | None = None,
             session: requests.Session | None = None, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", HTTP_TIMEOUT_S)
        if self.tls_ca:
            kwargs.setdefault("verify", str(self.tls_ca))
        data = raw if raw is not None else json.dumps(body)
        sender = session if session is not None else requests
        headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
        return sender.post(self.url + path, data=data, headers=headers, **kwargs)


def wait_until(condition: Callable[[], Any], timeout_s: float, what: str | Callable[[], str],
               interval_s: float = 0.02) -> Any:
    """The first truthy value of `condition()`, polled every `interval_s`; fails the test
    naming `what` (a string, or a function that describes the state at the timeout) and the
    last value seen when none comes within `timeout_s`. Tests wait on the condition they
    need, never a fixed sleep that a slow machine can outrun."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            described = what() if callable(what) else what
            raise AssertionError(f"not within {timeout_s} s: {described} (last seen: {value!r})")
        time.sleep(interval_s)


def metric(server: "InferdServer", name: str, **labels: str) -> float:
    """The sum of GET /metrics' series `name` whose labels include `labels` (0 when there
    is none)."""
    total = 0.0
    for line in server.get("/metrics").text.splitlines():
        if not line.startswith(name) or line.startswith("#"):
            continue
        series, value = line.rsplit(" ", 1)
        series_name, _, label_text = series.partition("{")
        if series_name != name:
            continue
        found = dict(pair.split("=", 1) for pair in label_text.rstrip("}").split(",") if pair)
        if all(found.get(k) == f'"{v}"' for k, v in labels.items()):
            total += float(value)
    return total


def edit_config(model_dir: Path, change: Callable[[dict], Any]) -> dict:
    """Reads `model_dir`/config.yaml with PyYAML, lets `change` edit the mapping in place, and
    writes it back (block style, keys in their order). Returns the new config."""
    path = Path(model_dir) / "config.yaml"
    config = yaml.safe_load(path.read_text())
    change(config)
    path.write_text(yaml.safe_dump(config, sort_keys=False, default_flow_style=None))
    return config


def make_repository(root: Path, models: dict[str, str]) -> Path:
    """A model repository under `root` with copies of demo models: {new_name: demo_name}."""
    root.mkdir(parents=True, exist_ok=True)
    for new_name, demo_name in models.items():
        shutil.copytree(DEMO_MODELS / demo_name, root / new_name)
    return root


# --- demo model data ---------------------------------------------------------------------

def load_sample(model: str) -> dict:
    with open(DEMO_MODELS / model / "sample.json") as f:
        return json.load(f)


def sample_request(model: str) -> dict:
    """sample.json without expected_outputs: a valid KServe v2 infer request body."""
    sample = load_sample(model)
    return {k: v for k, v in sample.items() if k != "expected_outputs"}


def inputs_as_arrays(kserve_inputs: list[dict]) -> dict[str, np.ndarray]:
    arrays = {}
    for item in kserve_inputs:
        dtype = {"FP32": np.float32, "FP64": np.float64, "INT64": np.int64,
                 "INT32": np.int32}[item["datatype"]]
        arrays[item["name"]] = np.asarray(item["data"], dtype=dtype).reshape(item["shape"])
    return arrays


def output_array(response_json: dict, name: str) -> np.ndarray:
    for out in response_json["outputs"]:
        if out["name"] == name:
            return np.asarray(out["data"], dtype=np.float64).reshape(out["shape"])
    raise AssertionError(f"no output '{name}' in {list(o['name'] for o in response_json['outputs'])}")


class TorchReference:
    """Runs the demo models' model.pt in this process with PyTorch (the expected answers)."""

    def __init__(self):
        self._models = {}

    def _model(self, name: str):
        import torch
        if name not in self._models:
            with warnings.catch_warnings():  # "torch.jit.load is deprecated" (torch >= 2.10)
                warnings.simplefilter("ignore", DeprecationWarning)
                module = torch.jit.load(str(DEMO_MODELS / name / "1" / "model.pt"),
                                        map_location="cpu")
            module.eval()
            self._models[name] = module
        return self._models[name]

    def run(self, name: str, *arrays: np.ndarray) -> np.ndarray:
        """The model's (single) output for the given input arrays, as float64 numpy."""
        import torch
        with torch.inference_mode():
            out = self._model(name)(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays])
        if isinstance(out, (tuple, list)):
            assert len(out) == 1, f"{name} returned {len(out)} outputs"
            out = out[0]
        return out.detach().numpy().astype(np.float64)


def assert_close(got, want, atol: float = ATOL, what: str = "output") -> None:
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != expected {want.shape}"
    if got.size:
        worst = float(np.max(np.abs(got - want)))
        assert worst <= atol, f"{what}: max abs difference {worst:g} > {atol:g}"


def assert_error(resp: requests.Response, status: int, *fragments: str) -> str:
    """The response is `status` with a JSON {"error": non-empty string} mentioning every
    fragment (case-insensitive). Returns the message."""
    assert resp.status_code == status, (
        f"expected {status}, got {resp.status_code}: {resp.text[:500]}")
    assert resp.headers.get("Content-Type", "").startswith("application/json"), resp.headers
    body = resp.json()
    assert isinstance(body, dict), f"error body is not a JSON object: {resp.text[:500]}"
    message = body.get("error")
    assert isinstance(message, str) and message.strip(), f"no error message: {resp.text[:500]}"
    for fragment in fragments:
        assert fragment.lower() in message.lower(), (
            f"error message does not mention {fragment!r}: {message!r}")
    return message
