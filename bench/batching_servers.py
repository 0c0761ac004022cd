"""The servers of bench/batching_bench.py: inferd's batching variants (their config.yaml,
readiness and GET /v2/models/M/stats), the Flask baseline and nginx, and their CPU use.

Each variant serves a temporary copy of the demo model (build/demo-models stays as
`scripts/setup` made it) whose config.yaml differs from the demo's only in the batching
keys, so the rows compare batching and nothing else:

  * plain    — the demo config as is: the signature and max_batch_size, no batching or
    thread settings, so what inferd chooses by default (dynamic batching with no queue
    delay, and the intra-op thread count its load-time probe picks);
  * nobatch  — the demo config with `dynamic_batching: {enabled: false}`;
  * batch    — `max_batch_size` B and `dynamic_batching: {max_queue_delay_us: D}`;
  * autotune — `max_batch_size` B and `dynamic_batching: {auto_tune: true, latency_slo_ms: S}`;
  * autotune-1t — autotune with `parameters: {intra_op_threads: 1}`: one LibTorch thread per
    forward pass, leaving the other cores to the I/O thread and the load generator.

The YAML is edited as text (no YAML parser in the venv; the demo configs are flat and
written by scripts/setup). A binary that does not know `dynamic_batching` loads the model
as UNAVAILABLE; `wait_ready` notices that from the repository index at once instead of
polling readiness until the timeout.
"""

import os
import shlex
import shutil
import time
from dataclasses import dataclass
from typing import Dict, List, Optional

import requests
import yaml

import bodies
import nginx_ceiling
import servers

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))

VARIANTS = ("plain", "nobatch", "batch", "autotune", "autotune-1t")


def config_text(demo: str, variant: str, max_batch: int, delay_us: int, slo_ms: float,
                instances: int) -> str:
    """The demo config.yaml rewritten for `variant` (instances: 0 keeps the demo's count)."""
    if variant == "plain":
        return demo
    config = yaml.safe_load(demo)
    if variant == "nobatch":
        config["dynamic_batching"] = {"enabled": False}
        return yaml.safe_dump(config, sort_keys=False, default_flow_style=None)
    config["max_batch_size"] = max_batch
    if variant == "batch":
        config["dynamic_batching"] = {"max_queue_delay_us": delay_us}
    elif variant in ("autotune", "autotune-1t"):
        config["dynamic_batching"] = {"auto_tune": True, "latency_slo_ms": slo_ms}
    else:
        raise ValueError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    if variant == "autotune-1t":
        config.setdefault("parameters", {})["intra_op_threads"] = 1
    if instances > 0:
        for group in config.setdefault("instances", [{}]):
            group["count"] = instances
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=None)


def make_repository(work_dir: str, source_repo: str, model: str, variant: str,
                    text: str) -> str:
    """A one-model repository <work_dir>/repo-<model>-<variant> with `text` as config.yaml."""
    repo = os.path.join(work_dir, f"repo-{model}-{variant}")
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(os.path.join(source_repo, model), os.path.join(repo, model))
    with open(os.path.join(repo, model, "config.yaml"), "w") as f:
        f.write(text)
    return repo


def model_state(base_url: str, model: str) -> Dict[str, str]:
    """The model's entry in POST /v2/repository/index ({} if unreachable or absent)."""
    try:
        answer = requests.post(f"{base_url}/v2/repository/index", timeout=2)
        entries = answer.json() if answer.status_code == 200 else []
    except (requests.RequestException, ValueError):
        return {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("name") == model:
            return entry
    return {}


def wait_ready(server, timeout_s: float) -> None:
    """Until GET /v2/models/M/ready is 200; raises at once if the model is UNAVAILABLE.

    A variant's load can take a while (auto_tune measures batch sizes before READY), hence
    a generous timeout; a config the binary rejects fails in a second.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"inferd exited with {server.process.returncode} before it was "
                               f"ready; log {server.log_path}:\n{server.log_tail()}")
        try:
            if requests.get(f"{server.base_url}/v2/models/{server.model}/ready",
                            timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        state = model_state(server.base_url, server.model)
        if state.get("state") == "UNAVAILABLE":
            raise RuntimeError(f"UNAVAILABLE: {state.get('reason', '(no reason given)')}")
        time.sleep(0.2)
    raise RuntimeError(f"not ready after {timeout_s:.0f}s; log {server.log_path}:\n"
                       f"{server.log_tail()}")


def stats_entries(base_url: str, model: str) -> Optional[List[dict]]:
    """GET /v2/models/M/stats's entries (Triton's shape: {"model_stats": [one per version]}),
    or None when the binary has no such endpoint (404) or the answer is not that shape."""
    try:
        answer = requests.get(f"{base_url}/v2/models/{model}/stats", timeout=5)
        payload = answer.json() if answer.status_code == 200 else None
    except (requests.RequestException, ValueError):
        return None
    entries = payload.get("model_stats", [payload]) if isinstance(payload, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else None


def read_stats(base_url: str, model: str) -> Optional[Dict[str, int]]:
    """inference_count (items) and execution_count (forward passes), summed over versions:
    their ratio is the average batch the server ran. None without the endpoint."""
    entries = stats_entries(base_url, model)
    try:
        return None if entries is None else {
            key: sum(int(e.get(key, 0)) for e in entries)
            for key in ("inference_count", "execution_count")}
    except (TypeError, ValueError):
        return None


def stats_delta(before: Optional[dict], after: Optional[dict]) -> Optional[Dict[str, int]]:
    if before is None or after is None:
        return None
    return {key: after[key] - before[key] for key in before}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) from /proc, in seconds.

    Kept for the servers sitting idle during another's run: one that burns CPU while idle
    (a polling batcher) would slow whoever is measured on these two cores.
    """
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def drain(pid: int, timeout_s: float = 60, step_s: float = 0.25) -> float:
    """Waits until the process is idle (under 4% of a core over `step_s`); returns the wait.

    wrk stops counting at the end of a run but a slow server (Flask on ResNet-18 at c=64:
    seconds per request) keeps computing the abandoned requests; without this wait that
    work would land in the next run, often another server's.
    """
    started = time.monotonic()
    last = cpu_seconds(pid)
    while time.monotonic() - started < timeout_s:
        time.sleep(step_s)
        now = cpu_seconds(pid)
        if now - last < 0.04 * step_s:
            break
        last = now
    return time.monotonic() - started


@dataclass
class Target(servers.Server):
    """A server under test; inferd variants say which in `variant` and label."""

    variant: str = ""

    @property
    def label(self) -> str:
        return f"inferd {self.variant}" if self.kind == "inferd" else self.kind

    @property
    def predict_url(self) -> str:
        if self.kind == "inferd":
            return f"{self.base_url}/predict?model={self.model}"
        return f"{self.base_url}/predict"


def make_targets(model: str, body_bytes: int, args, work_dir: str, rec: dict) -> List[Target]:
    """Every server for `model`, not started: the inferd variants, Flask, nginx."""
    targets = []
    with open(os.path.join(args.repository, model, "config.yaml")) as f:
        demo = f.read()
    for variant in args.variants:
        text = config_text(demo, variant, args.max_batch.get(model, 32),
                           args.queue_delay_us.get(model, 1000), args.slo_ms, args.instances)
        rec["configs"][f"{model}/{variant}"] = text
        repo = make_repository(work_dir, args.repository, model, variant, text)
        targets.append(servers.new_inferd(
            model, args.inferd_binary, repo,
            os.path.join(work_dir, f"inferd-{variant}-{model}.log"), cls=Target, variant=variant))
    if "flask" in args.baselines:
        port = servers.free_port()
        command = servers.flask_command(args.python, os.path.join(BENCH_DIR, "flask_baseline.py"),
                                        bodies.model_file(args.repository, model), port)
        targets.append(Target("flask", model, port, command,
                              os.path.join(work_dir, f"flask-{model}.log")))
    if "nginx" in args.baselines and model in args.nginx_models:
        binary = nginx_ceiling.find_binary()
        port = servers.free_port()
        conf, text = nginx_ceiling.write_config(work_dir, port, args.nginx_mode, body_bytes)
        rec["configs"][f"{model}/nginx"] = text
        targets.append(Target("nginx", model, port, nginx_ceiling.command(binary or "nginx", conf),
                              os.path.join(work_dir, f"nginx-{model}.log")))
    return targets


def start(t: Target, payload: bytes, body: dict, args, rec: dict) -> None:
    """Starts a server, waits until it serves the model and checks one answer."""
    rec["commands"].append(shlex.join(t.command))
    servers.start(t)
    if t.kind == "inferd":
        wait_ready(t, args.ready_timeout)
    else:
        servers.wait_ready(t, payload, args.ready_timeout)
    answer = servers.predict_once(t, payload)
    verdict = ("constant answer (the ceiling computes nothing)" if t.kind == "nginx"
               else bodies.check_answer(answer, body))
    rec["checks"].append({"server": t.label, "model": t.model, "status": answer["status"],
                          "ms": answer["ms"], "verdict": verdict})
    if t.kind == "inferd":  # the batching policy as loaded, with auto_tune's choice if any
        entries = stats_entries(t.base_url, t.model) or [{}]
        rec["batching"][f"{t.model}/{t.variant}"] = entries[0].get("batching")
