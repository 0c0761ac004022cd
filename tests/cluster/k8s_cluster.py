"""The real single-node Kubernetes of scripts/k8s-cluster, driven from pytest: bring it up,
run its kubectl, import an image, tear it down. Every call is bounded by a timeout."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from inferd_harness import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "k8s-cluster"


class KubeError(AssertionError):
    pass


def cluster_script(*args: str, timeout_s: float) -> subprocess.CompletedProcess:
    """scripts/k8s-cluster ARGS; its output is returned, never left on a pipe a background
    process still holds (the script detaches the cluster's processes from it)."""
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout_s, stdin=subprocess.DEVNULL)


def is_up() -> bool:
    status = cluster_script("status", timeout_s=30)
    return status.returncode == 0 and "kubelet: running" in status.stdout


class Kubectl:
    """The cluster's own kubectl (v1.32.4, built with it) with the admin kubeconfig."""

    def run(self, *args: str, input: str | None = None, check: bool = True,
            timeout_s: float = 120) -> subprocess.CompletedProcess:
        result = subprocess.run([str(SCRIPT), "kubectl", *args], input=input,
                                capture_output=True, text=True, timeout=timeout_s)
        if check and result.returncode != 0:
            raise KubeError(f"kubectl {' '.join(args)} -> rc {result.returncode}\n"
                            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    def json(self, *args: str) -> dict:
        return json.loads(self.run(*args, "-o", "json").stdout)

    def apply_server_side(self, manifest: str, namespace: str | None = None,
                          check: bool = True) -> subprocess.CompletedProcess:
        ns = ["-n", namespace] if namespace else []
        return self.run("apply", "--server-side", "--field-manager=inferd-test", *ns, "-f", "-",
                        input=manifest, check=check)

    def delete_namespace(self, name: str, timeout_s: int = 120) -> None:
        self.run("delete", "namespace", name, "--ignore-not-found", "--wait=true",
                 f"--timeout={timeout_s}s", timeout_s=timeout_s + 30)

    def wait_until(self, predicate, timeout_s: float, what: str):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(1)
        raise KubeError(f"timed out after {timeout_s} s waiting for {what}")


def kustomize(path: Path) -> str:
    """The overlay as the cluster's kubectl renders it (the same kustomize as `apply -k`)."""
    return Kubectl().run("kustomize", str(path)).stdout


def diagnostics(state_dir: str, log_lines: int = 40) -> str:
    """What a failed test needs to say why: nodes, pods, recent events, the PDB and HPA, and
    the tail of each component's log. Every call bounded; one that fails is named, not hidden."""
    out = []
    kube = Kubectl()
    for args in (("get", "nodes", "-o", "wide"), ("get", "pods", "-A", "-o", "wide"),
                 ("get", "pdb,hpa", "-A"),
                 ("get", "events", "-A", "--sort-by=.lastTimestamp")):
        try:
            r = kube.run(*args, check=False, timeout_s=30)
            out.append(f"$ kubectl {' '.join(args)}\n{r.stdout[-4000:]}{r.stderr[-1000:]}")
        except subprocess.TimeoutExpired:
            out.append(f"$ kubectl {' '.join(args)}: timed out after 30 s")
    logs = Path(state_dir) / "logs"
    for log in sorted(logs.glob("*.log")) if logs.is_dir() else []:
        tail = log.read_text(errors="replace").splitlines()[-log_lines:]
        out.append(f"--- {log} (last {log_lines} lines)\n" + "\n".join(tail))
    return "\n\n".join(out)
