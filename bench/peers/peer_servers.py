"""The servers of bench/peers: inferd (two configs) and the peers, each started from its own
virtual environment under build/peers/<peer>/ (bench/peers/setup makes them).

Every server serves the same demo model file (build/demo-models/<model>/1/model.pt, frozen
TorchScript), one instance / replica / worker, with the peer's own dynamic batching:

  * inferd          — the demo config.yaml as is (the defaults: dynamic batching with no
                      queue delay, intra-op threads chosen at load);
  * inferd-autotune — `dynamic_batching: {auto_tune: true, latency_slo_ms: 100}` and
                      `parameters: {intra_op_threads: 1}` (bench/batching_servers.py's
                      autotune-1t variant);
  * triton          — tritonserver 2.51 from PyPI nvidia-pytriton, Python backend running
                      apps/triton_model.py, `dynamic_batching` in config.pbtxt;
  * ray             — Ray Serve, apps/ray_app.py, `@serve.batch`;
  * litserve        — LitServe, apps/litserve_app.py, `max_batch_size`/`batch_timeout`;
  * torchserve      — TorchServe 0.12 (Java frontend), apps/torchserve_handler.py,
                      `batchSize`/`maxBatchDelay`;
  * bentoml         — BentoML 1.4.40, apps/bentoml_app.py started with `bentoml serve`,
                      `@bentoml.api(batchable=True, max_batch_size, max_latency_ms)`
                      (its adaptive batching), one worker;
  * kserve          — KServe 0.21.0's Python model server, apps/kserve_app.py (a
                      `kserve.Model` under `kserve.ModelServer`), no batching: KServe
                      batches in its agent sidecar under Kubernetes, not in this server.

inferd and Triton speak KServe v2 (HTTP and gRPC) natively, and so does KServe's model
server over HTTP. Ray Serve, LitServe, TorchServe and BentoML have no KServe v2 front: the
apps give them a route that takes the same KServe v2 JSON body (TorchServe on its own
`/predictions/<model>` path), so wrk sends the same bytes to all (BentoML answers with a
JSON array of the output tensors, FRONTS). perf_analyzer, which needs the model metadata
and Triton's model config endpoint, drives only inferd and Triton (KSERVE_NATIVE).

A server runs in its own session; its CPU time is the sum over every process in that
session and their descendants in sessions of their own (Ray's raylet, GCS and replica
actors, TorchServe's JVM and Python worker, Triton's Python-backend stub, BentoML's
supervisor and worker), read from /proc.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import requests

PEERS_DIR = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.dirname(PEERS_DIR)
REPO_ROOT = os.path.dirname(BENCH_DIR)
APPS_DIR = os.path.join(PEERS_DIR, "apps")
sys.path.insert(0, BENCH_DIR)

import batching_servers  # noqa: E402
import bodies  # noqa: E402
import servers  # noqa: E402

HOST = "127.0.0.1"
ALL = ("inferd", "inferd-autotune", "triton", "ray", "litserve", "torchserve", "bentoml",
       "kserve")
KSERVE_NATIVE = ("inferd", "inferd-autotune", "triton")

FRONTS = {
    "inferd": "KServe v2, its own (HTTP JSON and binary, gRPC)",
    "inferd-autotune": "KServe v2, its own (HTTP JSON and binary, gRPC)",
    "triton": "KServe v2, its own (HTTP JSON and binary, gRPC)",
    "ray": "given a KServe v2 JSON route: POST /v2/models/M/infer (apps/ray_app.py, "
           "Starlette request in the deployment); no metadata/config endpoints, no gRPC",
    "litserve": "given a KServe v2 JSON route: POST /v2/models/M/infer (apps/litserve_app.py "
                "`api_path`); no metadata/config endpoints, no gRPC",
    "torchserve": "its own inference API, POST /predictions/M, with the KServe v2 JSON body "
                  "parsed by the handler (apps/torchserve_handler.py); no KServe v2 paths",
    "bentoml": "given a KServe v2 JSON route: POST /v2/models/M/infer is the batchable API "
               "(apps/bentoml_app.py), its parameter the request's `inputs` list; it answers "
               "that API's return value, a JSON array of the output tensors, not KServe's "
               "{\"outputs\": [...]} object (a batchable API answers its slice of a list); "
               "no metadata/config endpoints, no gRPC",
    "kserve": "KServe v2 over HTTP, its own (POST /v2/models/M/infer, model metadata); not "
              "Triton's model config endpoint that perf_analyzer reads first, so wrk only; its "
              "gRPC front off here; listens on 0.0.0.0 (ModelServer has no host option)",
}

# BentoML's max_latency_ms is not a queue delay like the others' 1 ms: its dispatcher learns
# how long to wait from the batches it has timed, and answers 503 to a request that would
# wait longer than max_latency_ms. 1000 is the value of BentoML's own adaptive-batching
# example. The learned wait follows the waits it has logged (a batch that queued behind the
# one running counts), decaying 5 % per refresh; with the default, 60000, one trial here
# (load ~5) answered lone mlp_scorer requests in ~150 ms after a run at 64 clients.
BENTOML_MAX_LATENCY_MS = 1000


@dataclass
class Peer:
    """One server under test: how to start it, where to send requests, how to stop it."""

    name: str
    model: str
    command: List[str]
    log_path: str
    infer_url: str  # POST target of the KServe v2 JSON body (wrk and the check)
    http: Optional[str] = None  # host:port for perf_analyzer -i http (KServe v2 servers)
    grpc: Optional[str] = None  # host:port for perf_analyzer -i grpc
    stats_url: Optional[str] = None  # Triton-shaped GET /v2/models/M/stats
    env: Dict[str, str] = field(default_factory=dict)
    cwd: Optional[str] = None
    config: str = ""  # the batching config as the peer reads it, for the report
    process: Optional[subprocess.Popen] = field(default=None, repr=False)
    # inferd: the harness that starts it on port 0; the URLs above are set once it listens.
    inferd: Optional[servers.InferdServer] = field(default=None, repr=False)

    @property
    def front(self) -> str:
        return FRONTS[self.name]

    def log_tail(self, lines: int = 25) -> str:
        return servers.log_tail(self.log_path, lines)


def venv(peer: str) -> str:
    return os.path.join(REPO_ROOT, "build", "peers", peer)


def venv_python(peer: str) -> str:
    return os.path.join(venv(peer), "bin", "python")


def installed(peer: str) -> Optional[str]:
    """None when bench/peers/setup installed the peer, else why it is missing."""
    if peer.startswith("inferd"):
        return None
    stamp = os.path.join(venv(peer), ".pins")
    if os.path.exists(stamp):
        return None
    skipped = os.path.join(venv(peer), ".skipped")
    if os.path.exists(skipped):
        with open(skipped) as f:
            return f.read().strip()
    return f"not installed: run bench/peers/setup (no {stamp})"


@dataclass
class ModelSpec:
    """What the servers need to know about a demo model, read from its sample.json."""

    name: str
    model_file: str
    input_name: str
    datatype: str
    dims: List[int]  # without the batch dimension
    output_name: str
    output_dims: List[int]
    max_batch: int
    delay_us: int


def model_spec(repository: str, model: str, max_batch: int, delay_us: int) -> ModelSpec:
    with open(os.path.join(repository, model, "sample.json")) as f:
        sample = json.load(f)
    tensor, out = sample["inputs"][0], sample["expected_outputs"][0]
    return ModelSpec(model, bodies.model_file(repository, model), tensor["name"],
                     tensor.get("datatype", "FP32"), list(tensor["shape"][1:]), out["name"],
                     list(out["shape"][1:]), max_batch, delay_us)


# --- inferd --------------------------------------------------------------------------------

def make_inferd(name: str, spec: ModelSpec, args, work_dir: str) -> Peer:
    with open(os.path.join(args.repository, spec.name, "config.yaml")) as f:
        demo = f.read()
    variant = "plain" if name == "inferd" else "autotune-1t"
    text = batching_servers.config_text(demo, variant, spec.max_batch, spec.delay_us,
                                        args.slo_ms, 0)
    repo = batching_servers.make_repository(work_dir, args.repository, spec.name, name, text)
    server = servers.new_inferd(spec.name, args.inferd_binary, repo,
                                os.path.join(work_dir, f"{name}-{spec.name}.log"))
    return Peer(name, spec.name, server.command, server.log_path, infer_url="", config=text,
                inferd=server.inferd)


def point_at_inferd(peer: Peer, port: int, grpc: int) -> None:
    """The URLs of an inferd peer, once its harness has read the bound ports back."""
    base = f"http://{HOST}:{port}"
    peer.infer_url = f"{base}/v2/models/{peer.model}/infer"
    peer.http, peer.grpc = f"{HOST}:{port}", f"{HOST}:{grpc}"
    peer.stats_url = f"{base}/v2/models/{peer.model}/stats"


# --- Triton --------------------------------------------------------------------------------

_TRITON_TYPES = {"FP32": "TYPE_FP32", "FP64": "TYPE_FP64", "INT64": "TYPE_INT64",
                 "INT32": "TYPE_INT32"}


def triton_config(spec: ModelSpec) -> str:
    dims = ", ".join(str(d) for d in spec.dims)
    out_dims = ", ".join(str(d) for d in spec.output_dims)
    return (f'name: "{spec.name}"\nbackend: "python"\nmax_batch_size: {spec.max_batch}\n'
            f'input [ {{ name: "{spec.input_name}" data_type: {_TRITON_TYPES[spec.datatype]} '
            f'dims: [ {dims} ] }} ]\n'
            f'output [ {{ name: "{spec.output_name}" data_type: TYPE_FP32 '
            f'dims: [ {out_dims} ] }} ]\n'
            'instance_group [ { count: 1 kind: KIND_CPU } ]\n'
            f'dynamic_batching {{ max_queue_delay_microseconds: {spec.delay_us} }}\n')


def make_triton(spec: ModelSpec, args, work_dir: str) -> Peer:
    repo = os.path.join(work_dir, "triton-repo")
    version_dir = os.path.join(repo, spec.name, "1")
    shutil.rmtree(os.path.join(repo, spec.name), ignore_errors=True)
    os.makedirs(version_dir)
    shutil.copy(os.path.join(APPS_DIR, "triton_model.py"), os.path.join(version_dir, "model.py"))
    os.symlink(spec.model_file, os.path.join(version_dir, "model.pt"))
    text = triton_config(spec)
    with open(os.path.join(repo, spec.name, "config.pbtxt"), "w") as f:
        f.write(text)
    dist = os.path.join(venv("triton"), "tritonserver")
    with open(os.path.join(dist, "libs_path")) as f:
        libs = f.read().strip()
    port, grpc = servers.free_port(), servers.free_port()
    command = [os.path.join(dist, "bin", "tritonserver"), "--model-repository", repo,
               "--backend-directory", os.path.join(dist, "backends"),
               "--http-address", HOST, "--http-port", str(port),
               "--grpc-address", HOST, "--grpc-port", str(grpc),
               "--allow-metrics", "false", "--log-verbose", "0"]
    # As pytriton starts it: its libraries on the loader path, and the venv's bin first on
    # PATH so the Python-backend stub's embedded interpreter finds the venv (torch, numpy).
    env = {"LD_LIBRARY_PATH": libs,
           "PATH": os.path.join(venv("triton"), "bin") + ":" + os.environ.get("PATH", "")}
    base = f"http://{HOST}:{port}"
    return Peer("triton", spec.name, command, os.path.join(work_dir, f"triton-{spec.name}.log"),
                f"{base}/v2/models/{spec.name}/infer", http=f"{HOST}:{port}",
                grpc=f"{HOST}:{grpc}", stats_url=f"{base}/v2/models/{spec.name}/stats",
                env=env, config=text)


# --- Ray Serve, LitServe and KServe ----------------------------------------------------------------

def make_python_app(name: str, spec: ModelSpec, work_dir: str) -> Peer:
    port = servers.free_port()
    script = os.path.join(APPS_DIR, f"{name}_app.py")
    command = [venv_python(name), script, "--model-file", spec.model_file, "--model", spec.name,
               "--output", spec.output_name, "--port", str(port),
               "--max-batch", str(spec.max_batch), "--wait-ms", f"{spec.delay_us / 1e3:g}"]
    env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DEDUP_LOGS": "0"} if name == "ray" else {}
    config = (f"@serve.batch(max_batch_size={spec.max_batch}, batch_wait_timeout_s="
              f"{spec.delay_us / 1e6:g}), num_replicas=1, max_ongoing_requests=1000 (Ray's default "
              "of 5 per replica would cap a batch at 5)" if name == "ray" else
              "kserve.ModelServer(workers=1, enable_grpc=False), the rest its defaults; no "
              "batching (KServe batches in its agent sidecar under Kubernetes, not in the model "
              "server)" if name == "kserve" else
              f"LitAPI(max_batch_size={spec.max_batch}, batch_timeout={spec.delay_us / 1e6:g}), "
              "workers_per_device=1")
    return Peer(name, spec.name, command, os.path.join(work_dir, f"{name}-{spec.name}.log"),
                f"http://{HOST}:{port}/v2/models/{spec.name}/infer", env=env, cwd=work_dir,
                config=config)


# --- TorchServe ----------------------------------------------------------------------------

def make_torchserve(spec: ModelSpec, work_dir: str) -> Peer:
    base_dir = os.path.join(work_dir, f"torchserve-{spec.name}")
    store = os.path.join(base_dir, "store")
    shutil.rmtree(base_dir, ignore_errors=True)
    os.makedirs(store)
    peer_json = os.path.join(base_dir, "peer.json")
    with open(peer_json, "w") as f:
        json.dump({"output": spec.output_name}, f)
    archiver = os.path.join(venv("torchserve"), "bin", "torch-model-archiver")
    subprocess.run([archiver, "--model-name", spec.name, "--version", "1.0",
                    "--serialized-file", spec.model_file,
                    "--handler", os.path.join(APPS_DIR, "torchserve_handler.py"),
                    "--extra-files", f"{os.path.join(APPS_DIR, 'kserve_json.py')},{peer_json}",
                    "--export-path", store, "--archive-format", "no-archive", "-f"],
                   check=True, capture_output=True, timeout=300)
    port, management, metrics = servers.free_port(), servers.free_port(), servers.free_port()
    models = {spec.name: {"1.0": {"defaultVersion": True, "marName": spec.name,
                                  "minWorkers": 1, "maxWorkers": 1,
                                  "batchSize": spec.max_batch,
                                  "maxBatchDelay": max(1, round(spec.delay_us / 1e3)),
                                  "responseTimeout": 120}}}
    text = "\n".join([
        f"inference_address=http://{HOST}:{port}",
        f"management_address=http://{HOST}:{management}",
        f"metrics_address=http://{HOST}:{metrics}",
        f"model_store={store}", f"load_models={spec.name}",
        f"models={json.dumps(models)}",
        "disable_token_authorization=true", "install_py_dep_per_model=false",
        "default_workers_per_model=1", "job_queue_size=1000",
        "enable_metrics_api=false", "vmargs=-Xmx1g -XX:+UseG1GC", ""])
    config = os.path.join(base_dir, "config.properties")
    with open(config, "w") as f:
        f.write(text)
    command = [os.path.join(venv("torchserve"), "bin", "torchserve"), "--start", "--foreground",
               "--ncs", "--model-store", store, "--ts-config", config, "--disable-token-auth"]
    env = {"PATH": os.path.join(venv("torchserve"), "bin") + ":" + os.environ.get("PATH", ""),
           "LOG_LOCATION": os.path.join(base_dir, "logs"),
           "METRICS_LOCATION": os.path.join(base_dir, "logs")}
    return Peer("torchserve", spec.name, command,
                os.path.join(work_dir, f"torchserve-{spec.name}.log"),
                f"http://{HOST}:{port}/predictions/{spec.name}", env=env, cwd=base_dir,
                config=text)


def make(name: str, spec: ModelSpec, args, work_dir: str) -> Peer:
    if name.startswith("inferd"):
        return make_inferd(name, spec, args, work_dir)
    if name == "triton":
        return make_triton(spec, args, work_dir)
    if name in ("ray", "litserve", "kserve"):
        return make_python_app(name, spec, work_dir)
    if name == "torchserve":
        return make_torchserve(spec, work_dir)
    if name == "bentoml":
        return make_bentoml(spec, work_dir)
    raise ValueError(f"unknown peer {name!r} (known: {', '.join(ALL)})")


# --- BentoML ------------------------------------------------------------------------------

def make_bentoml(spec: ModelSpec, work_dir: str) -> Peer:
    port = servers.free_port()
    command = [os.path.join(venv("bentoml"), "bin", "bentoml"), "serve", "bentoml_app:Model",
               "--host", HOST, "--port", str(port), "--working-dir", APPS_DIR]
    env = {"PEER_MODEL_FILE": spec.model_file, "PEER_MODEL": spec.name,
           "PEER_OUTPUT": spec.output_name, "PEER_MAX_BATCH": str(spec.max_batch),
           "PEER_MAX_LATENCY_MS": str(BENTOML_MAX_LATENCY_MS),
           # No usage tracking (it would call out), and its home under the run's directory.
           "BENTOML_DO_NOT_TRACK": "true", "BENTOML_HOME": os.path.join(work_dir, "bentoml")}
    config = (f"@bentoml.service(workers=1), @bentoml.api(batchable=True, batch_dim=0, "
              f"max_batch_size={spec.max_batch}, max_latency_ms={BENTOML_MAX_LATENCY_MS}): "
              "adaptive batching, the wait learned from timed batches and capped by "
              "max_latency_ms (a request past it gets 503); one thread for the synchronous API "
              "(BentoML's default)")
    return Peer("bentoml", spec.name, command, os.path.join(work_dir, f"bentoml-{spec.name}.log"),
                f"http://{HOST}:{port}/v2/models/{spec.name}/infer", env=env, cwd=work_dir,
                config=config)


# --- running -------------------------------------------------------------------------------

def start(peer: Peer) -> None:
    if peer.inferd is not None:
        peer.process = peer.inferd.spawn().proc
        peer.inferd.wait_ports()
        point_at_inferd(peer, peer.inferd.port, peer.inferd.grpc_port)
        return
    env = dict(os.environ, **peer.env)
    with open(peer.log_path, "ab") as log:
        peer.process = subprocess.Popen(peer.command, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        env=env, cwd=peer.cwd)


def post(peer: Peer, payload: bytes, timeout: float = 60) -> dict:
    """One POST of the KServe v2 JSON body: status, parsed answer and latency."""
    started = time.perf_counter()
    answer = requests.post(peer.infer_url, data=payload, timeout=timeout,
                           headers={"Content-Type": "application/json"})
    ms = (time.perf_counter() - started) * 1e3
    try:
        body = answer.json()
    except ValueError:
        body = {"raw": answer.text[:300]}
    return {"status": answer.status_code, "body": body, "ms": ms}


def wait_ready(peer: Peer, payload: bytes, timeout_s: float) -> float:
    """Polls until the body gets a 200 (every server: the one check that means "serving").

    inferd's model-state check comes first so a config it rejects fails in a second.
    Returns the seconds it took.
    """
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if peer.process.poll() is not None:
            raise RuntimeError(f"{peer.name} exited with {peer.process.returncode} before it was "
                               f"ready; log {peer.log_path}:\n{peer.log_tail()}")
        if peer.name.startswith("inferd"):
            state = batching_servers.model_state(peer.infer_url.split("/v2/")[0], peer.model)
            if state.get("state") == "UNAVAILABLE":
                raise RuntimeError(f"UNAVAILABLE: {state.get('reason', '(no reason)')}")
        try:
            if post(peer, payload, timeout=30)["status"] == 200:
                return time.monotonic() - started
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{peer.name} not ready after {timeout_s:.0f}s; log {peer.log_path}:\n"
                       f"{peer.log_tail()}")


def session_pids(sid: int) -> List[int]:
    """Every process of the server started as session `sid`: those in that session, and
    their descendants in sessions of their own (BentoML's process manager starts its worker
    with setsid), with whatever else runs in those sessions."""
    procs = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        procs[int(entry)] = (int(fields[1]), int(fields[3]))  # ppid, session
    members = {pid for pid, (_, session) in procs.items() if session == sid}
    while True:
        more = {pid for pid, (ppid, session) in procs.items()
                if pid not in members and (ppid in members or session in members)}
        if not more:
            return sorted(members)
        members |= more


def cpu_seconds(peer: Peer) -> float:
    """User + system CPU of every process of the server (session_pids), reaped children
    included (a child's time moves into its parent's cutime/cstime when it exits)."""
    if peer.process is None:
        return 0.0
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in session_pids(peer.process.pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / tick
        except (OSError, IndexError, ValueError):
            continue
    return total


def idle_rate(peer: Peer, seconds: float = 2.0) -> float:
    """Cores the server uses with no request in flight (LitServe's and Ray's loops poll)."""
    before = cpu_seconds(peer)
    time.sleep(seconds)
    return (cpu_seconds(peer) - before) / seconds


def drain(peer: Peer, idle_cores: float = 0.0, timeout_s: float = 15, step_s: float = 0.25) -> float:
    """Waits until the server is back to its idle CPU rate (plus 10% of a core): wrk stops
    counting at the end of a run, but a server may still be computing what it abandoned."""
    started = time.monotonic()
    last = cpu_seconds(peer)
    while time.monotonic() - started < timeout_s:
        time.sleep(step_s)
        now = cpu_seconds(peer)
        if now - last < (idle_cores + 0.1) * step_s:
            break
        last = now
    return time.monotonic() - started


def read_inference_count(peer: Peer) -> Optional[int]:
    if not peer.stats_url:
        return None
    try:
        answer = requests.get(peer.stats_url, timeout=5)
        entries = answer.json().get("model_stats", []) if answer.status_code == 200 else None
    except (requests.RequestException, ValueError, AttributeError):
        return None
    if not isinstance(entries, list):
        return None
    return sum(int(e.get("inference_count", 0)) for e in entries if isinstance(e, dict))


def stop(peer: Peer, grace_s: float = 15) -> Optional[int]:
    """SIGTERM to the server's process group, then SIGKILL to every process left of it
    (Ray's daemons and TorchServe's JVM may sit in other groups of that session, BentoML's
    worker in a session of its own)."""
    proc = peer.process
    if proc is None:
        return None
    sid = proc.pid
    known = set(session_pids(sid))  # a worker outliving its parent leaves the tree
    if proc.poll() is None:
        try:
            os.killpg(sid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    def left() -> List[int]:
        return sorted((known & set(int(e) for e in os.listdir("/proc") if e.isdigit()))
                      | set(session_pids(sid)))

    deadline = time.monotonic() + grace_s
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=grace_s)
    return proc.returncode
