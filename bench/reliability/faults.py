#!/usr/bin/env python3
"""Fault injection: what a backend error, a broken model file and a kill -9 do to the models
around them.

  .venv/bin/python bench/reliability/faults.py

One server serves `bystander` (the demo mlp_scorer), `faulty` (a TorchScript model that
raises when an input exceeds 1000) and `victim` (the demo digits); a prober thread sends
requests to `bystander` the whole time and counts every answer that is not 200.
  1. Backend error mid-batch: 8 concurrent requests to `faulty` that its batcher merges
     (max_queue_delay 50 ms), one of them poisoned: it alone must fail (500), its
     batch-mates must be answered; then 20 good ones.
  2. Broken file during a reload: a new version 2 of `victim` whose model.pt is truncated
     (the load must fail, version 2 must not be ready, version 1 must answer), then a config change of `victim` while version 1's model.pt is deleted (the reload
     must read it again); version 1 must keep serving; then the files come back and a load
     serves version 2.
  3. kill -9 during a load: a second server (--model-control explicit) is killed while it
     loads resnet18 through the load API, and started again on the same repository: every
     model must be ready and answer.
Writes bench/results/reliability/faults.json; `--quick` runs shorter (the CI test).
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import loadlib  # noqa: E402
from loadlib import DEMO_MODELS, InferdServer, make_repository, sample_body, write_result

FAULTY_CONFIG = """backend: torch
max_batch_size: 8
inputs:
  - {name: x, datatype: FP32, dims: [4]}
outputs:
  - {name: y, datatype: FP32, dims: [4]}
dynamic_batching: {max_queue_delay_us: 50000}
parameters: {}
"""


def write_faulty_model(folder: Path) -> None:
    import torch

    class Faulty(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if bool((x > 1000).any()):
                raise RuntimeError("injected fault: an input above 1000")
            return x * 2

    (folder / "1").mkdir(parents=True)
    torch.jit.script(Faulty()).save(str(folder / "1" / "model.pt"))
    (folder / "config.yaml").write_text(FAULTY_CONFIG)


def post(port: int, path: str, body: bytes = b"", timeout: float = 60) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        return reply.status, reply.read().decode(errors="replace")
    finally:
        conn.close()


def get(port: int, path: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        reply = conn.getresponse()
        return reply.status, reply.read().decode(errors="replace")
    finally:
        conn.close()


class Prober(threading.Thread):
    """Sends `body` to `model` back to back on one keep-alive connection, counting answers."""

    def __init__(self, port: int, model: str, body: bytes):
        super().__init__(daemon=True)
        self.port, self.path, self.body = port, f"/v2/models/{model}/infer", body
        self.ok = 0
        self.failures: list[str] = []
        self.stop_event = threading.Event()

    def run(self):
        conn = None
        while not self.stop_event.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("POST", self.path, body=self.body,
                             headers={"Content-Type": "application/json"})
                reply = conn.getresponse()
                text = reply.read()
                if reply.status == 200:
                    self.ok += 1
                else:
                    self.failures.append(f"{reply.status} {text[:200]!r}")
            except (OSError, http.client.HTTPException) as e:
                self.failures.append(f"connection: {e}")
                conn = None
            time.sleep(0.01)

    def snapshot(self) -> tuple[int, int]:
        return self.ok, len(self.failures)


def infer_body(values: list[float]) -> bytes:
    return json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4],
                                   "data": values}]}).encode()


def backend_error(port: int) -> dict:
    bodies = [infer_body([1, 2, 3, 4])] * 7 + [infer_body([1, 2, 3, 5000])]
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda b: post(port, "/v2/models/faulty/infer", b), bodies))
    poisoned = replies[-1]
    good_in_batch = replies[:-1]
    after = [post(port, "/v2/models/faulty/infer", infer_body([1, 1, 1, 1]))[0]
             for _ in range(20)]
    return {"poisoned_status": poisoned[0], "poisoned_error": poisoned[1][:300],
            "batchmates_statuses": sorted(s for s, _ in good_in_batch),
            "after_statuses": sorted(set(after)), "after_all_200": all(s == 200 for s in after),
            "passed": poisoned[0] == 500 and all(s == 200 for s, _ in good_in_batch)
            and all(s == 200 for s in after)}


def served_versions(port: int, model: str) -> list[str]:
    status, text = get(port, f"/v2/models/{model}")
    return json.loads(text).get("versions", []) if status == 200 else []


def version_ready(port: int, model: str, version: int) -> bool:
    status, text = get(port, f"/v2/models/{model}/versions/{version}/ready")
    return status == 200 and json.loads(text).get("ready") is True


def victim_answers(port: int, body: bytes) -> bool:
    return post(port, "/v2/models/victim/infer", body)[0] == 200


def broken_files(port: int, repo: Path, digits_body: bytes) -> dict:
    victim = repo / "victim"
    good_file = victim / "1" / "model.pt"
    saved = good_file.read_bytes()
    out: dict = {}
    # (a) a new version whose file is truncated: the load fails, version 1 keeps serving.
    (victim / "2").mkdir()
    (victim / "2" / "model.pt").write_bytes(saved[: len(saved) // 2])
    out["truncated_load"] = post(port, "/v2/repository/models/victim/load")
    out["truncated_served"] = served_versions(port, "victim")
    out["truncated_v2_ready"] = version_ready(port, "victim", 2)
    out["truncated_v1_ready"] = version_ready(port, "victim", 1)
    out["truncated_v1_answers"] = victim_answers(port, digits_body)
    # (b) a config change forces a reload of version 1, whose file is now deleted.
    shutil.rmtree(victim / "2")
    good_file.unlink()
    config = (victim / "config.yaml").read_text()
    (victim / "config.yaml").write_text(config.replace("count: 1", "count: 2"))
    out["deleted_load"] = post(port, "/v2/repository/models/victim/load")
    out["deleted_served"] = served_versions(port, "victim")
    out["deleted_v1_answers"] = victim_answers(port, digits_body)
    # (c) the files come back (and a good version 2): the repository state recovers.
    good_file.write_bytes(saved)
    (victim / "2").mkdir()
    (victim / "2" / "model.pt").write_bytes(saved)
    out["restored_load"] = post(port, "/v2/repository/models/victim/load")
    out["restored_served"] = served_versions(port, "victim")
    out["restored_answers"] = victim_answers(port, digits_body)
    for key in ("truncated_load", "deleted_load", "restored_load"):
        status, text = out[key]
        out[key] = {"status": status, "body": text[:300]}
    out["passed"] = (out["truncated_load"]["status"] != 200 and not out["truncated_v2_ready"]
                     and out["truncated_v1_ready"] and out["truncated_v1_answers"]
                     and out["deleted_v1_answers"]
                     and out["deleted_served"] == ["1"]
                     and out["restored_load"]["status"] == 200
                     and out["restored_served"] == ["2"] and out["restored_answers"])
    return out


def kill_during_load(tmp: Path, log_dir: Path) -> dict:
    repo = make_repository(tmp / "kill-models", {"resnet18": "resnet18", "digits": "digits"})
    args = ["--model-control", "explicit", "--load-model", "digits"]
    first = InferdServer(repo, log_dir / "kill-first.log", args).start()
    loader = threading.Thread(target=lambda: _quiet_post(first.port,
                                                         "/v2/repository/models/resnet18/load"))
    loader.start()
    # Kill while the load runs: the index says LOADING (or the load has not been picked yet).
    state = ""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status, text = post(first.port, "/v2/repository/index")
        rows = [r for r in json.loads(text) if r.get("name") == "resnet18"] if status == 200 else []
        state = rows[0].get("state", "") if rows else ""
        if state == "LOADING":
            break
        time.sleep(0.005)
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(timeout=30)
    loader.join(timeout=30)
    started = time.monotonic()
    second = InferdServer(repo, log_dir / "kill-second.log",
                          ["--model-control", "explicit", "--load-model", "digits",
                           "--load-model", "resnet18"]).start()
    try:
        ready_s = time.monotonic() - started
        _, index_text = post(second.port, "/v2/repository/index")
        index = json.loads(index_text)
        answers = {m: post(second.port, f"/v2/models/{m}/infer", sample_body(m))[0]
                   for m in ("digits", "resnet18")}
    finally:
        second.stop()
    states = {r["name"]: r.get("state") for r in index}
    return {"state_when_killed": state, "killed_exit_code": first.proc.returncode,
            "restart_ready_s": round(ready_s, 2), "index_after_restart": states,
            "answers_after_restart": answers,
            "passed": state == "LOADING" and all(s == "READY" for s in states.values())
            and all(code == 200 for code in answers.values())}


def _quiet_post(port: int, path: str) -> None:
    try:
        post(port, path, timeout=30)
    except (OSError, http.client.HTTPException):
        pass  # the server was killed under it


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="(unused: every step is short)")
    parser.add_argument("--output", default="faults")
    args = parser.parse_args()
    loadlib.require_clean_tree()  # a kept run measures a committed tree
    tmp = Path(tempfile.mkdtemp(prefix="inferd-faults-"))
    repo = make_repository(tmp / "models", {"bystander": "mlp_scorer", "victim": "digits"})
    write_faulty_model(repo / "faulty")
    server = InferdServer(repo, tmp / "inferd.log", ["--model-control", "explicit",
                                                     "--load-model", "bystander",
                                                     "--load-model", "victim",
                                                     "--load-model", "faulty"]).start()
    prober = Prober(server.port, "bystander", sample_body("mlp_scorer"))
    prober.start()
    results: dict = {}
    try:
        results["backend_error"] = backend_error(server.port)
        results["backend_error"]["bystander_ok_failed"] = prober.snapshot()
        results["broken_files"] = broken_files(server.port, repo, sample_body("digits"))
        results["broken_files"]["bystander_ok_failed"] = prober.snapshot()
        results["kill_during_load"] = kill_during_load(tmp, tmp)
        results["kill_during_load"]["bystander_ok_failed"] = prober.snapshot()
    finally:
        prober.stop_event.set()
        prober.join(timeout=15)
        alive = server.proc.poll() is None
        server.stop()
    results["bystander"] = {"ok": prober.ok, "failed": len(prober.failures),
                            "failures": prober.failures[:10]}
    results["server_alive"] = alive
    results["passed"] = (alive and not prober.failures
                         and all(results[k]["passed"] for k in
                                 ("backend_error", "broken_files", "kill_during_load")))
    write_result(args.output, "bench/reliability/faults.py " + " ".join(sys.argv[1:]), results)
    return 0 if results["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
