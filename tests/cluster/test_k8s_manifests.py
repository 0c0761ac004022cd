"""deploy/k8s: every overlay renders with `kubectl kustomize`, and the rendered objects agree
with the real inferd: probe paths and ports, env names (against `inferd --help`), the
metrics the HPA and the Prometheus Adapter rules use (against a real /metrics), selectors,
GPU and MIG resources. The cpu overlay's container environment, model configs and init
script then start a real inferd; the gpu and mig ones must at least parse. And a ConfigMap
edit, made the way the kubelet makes it, reloads a model in watch mode."""

from __future__ import annotations

import json
import os
import re
import signal
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests
import yaml

from fleet import Replica, free_port, wait_ready
from inferd_harness import DEMO_MODELS, INFERD_BINARY, REPO_ROOT, clean_env

K8S = REPO_ROOT / "deploy" / "k8s"
OVERLAYS = ["cpu", "gpu", "mig"]
ASSEMBLE = REPO_ROOT / "deploy" / "docker" / "assemble-repository"
HEALTH_PATHS = {"/v2/health/live", "/v2/health/ready"}


def _kustomize(path: Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl not found (the machine image has kubectl 1.32 with kustomize)")
    out = subprocess.run([kubectl, "kustomize", str(path)], check=True, capture_output=True,
                         text=True).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def _one(objects, kind, name=None) -> dict:
    found = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, f"{kind} {name or ''}: {len(found)} rendered"
    return found[0]


@pytest.fixture(scope="module")
def inferd_env_names() -> set[str]:
    help_text = subprocess.run([str(INFERD_BINARY), "--help"], check=True, capture_output=True,
                               text=True).stdout
    names = set(re.findall(r"\(Env:([A-Z_]+)\)", help_text))
    assert {"INFERD_MODEL_REPOSITORY", "INFERD_DRAIN_SECONDS", "BATCH_SIZE"} <= names, help_text
    return names


@pytest.fixture(scope="module")
def metric_names(tmp_path_factory) -> set[str]:
    """Metric families a real inferd exports, once a request has gone through."""
    tmp = tmp_path_factory.mktemp("metrics")
    repo = tmp / "repo"
    shutil.copytree(DEMO_MODELS / "mlp_scorer", repo / "mlp_scorer")
    replica = Replica("metrics", repo, tmp, []).start()
    try:
        sample = (DEMO_MODELS / "mlp_scorer" / "sample.json").read_text()
        body = {k: v for k, v in json.loads(sample).items() if k != "expected_outputs"}
        assert requests.post(replica.url + "/v2/models/mlp_scorer/infer", json=body,
                             timeout=30).status_code == 200
        text = requests.get(replica.url + "/metrics", timeout=30).text
    finally:
        replica.stop()
    return set(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{| )", text, re.M))


def _container(deployment: dict, name: str = "inferd") -> dict:
    [c] = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    return c


def _env(container: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", [])}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_objects_that_match_inferd(overlay, inferd_env_names, metric_names):
    objects = _kustomize(K8S / "overlays" / overlay)
    kinds = sorted({o["kind"] for o in objects})
    assert kinds == sorted({"ConfigMap", "Deployment", "HorizontalPodAutoscaler",
                            "PersistentVolumeClaim", "PodDisruptionBudget", "Service",
                            "ServiceMonitor"}), kinds
    deployment = _one(objects, "Deployment", "inferd")
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    container = _container(deployment)
    env = _env(container)

    # Every variable is one inferd reads, and the ports are the ones it is told to use.
    assert set(env) <= inferd_env_names, set(env) - inferd_env_names
    for init in pod["spec"].get("initContainers", []):
        assert init["command"][0] == "/opt/inferd/bin/assemble-repository"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": int(env["INFERD_HTTP_PORT"]), "grpc": int(env["INFERD_GRPC_PORT"])}
    assert env["INFERD_MODEL_CONTROL"] == "watch"
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert env["INFERD_MODEL_REPOSITORY"] in mounts

    # Probes: started and ready on /v2/health/ready, alive on /v2/health/live, on the HTTP port.
    probes = {k: container[k]["httpGet"] for k in ("startupProbe", "readinessProbe", "livenessProbe")}
    for probe in probes.values():
        assert probe["path"] in HEALTH_PATHS and probe["port"] in ("http", ports["http"])
    assert probes["readinessProbe"]["path"] == "/v2/health/ready"
    assert probes["startupProbe"]["path"] == "/v2/health/ready"
    assert probes["livenessProbe"]["path"] == "/v2/health/live"
    grace = pod["spec"]["terminationGracePeriodSeconds"]
    assert grace > int(env["INFERD_DRAIN_SECONDS"]) + int(env["INFERD_SHUTDOWN_TIMEOUT"])
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0

    # The Service, the PDB and the ServiceMonitor select these pods and name real ports.
    service = _one(objects, "Service", "inferd")
    assert service["spec"]["selector"].items() <= labels.items()
    assert {p["targetPort"] for p in service["spec"]["ports"]} == set(ports)
    pdb = _one(objects, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    monitor = _one(objects, "ServiceMonitor")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert [e["path"] for e in monitor["spec"]["endpoints"]] == ["/metrics"]
    assert {e["port"] for e in monitor["spec"]["endpoints"]} <= {p["name"] for p in service["spec"]["ports"]}

    # The HPA scales this Deployment on metrics the adapter rules define from series inferd
    # really exports.
    hpa = _one(objects, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                              "name": "inferd"}
    rules = yaml.safe_load(_one(objects, "ConfigMap", "inferd-prometheus-adapter-rules")
                           ["data"]["config.yaml"])["rules"]
    adapter_metrics = {r["name"]["as"] for r in rules}
    for rule in rules:
        series = re.match(r"'?([a-z_]+)\{", rule["seriesQuery"]).group(1)
        assert series in metric_names, (series, sorted(metric_names))
        for used in re.findall(r"\b(inferd_[a-z_]+)\{", rule["metricsQuery"]):
            assert used in metric_names, used
    custom = [m["pods"]["metric"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Pods"]
    assert custom and set(custom) <= adapter_metrics, (custom, adapter_metrics)

    # Devices: none on cpu; one GPU on gpu; a MIG slice (and no whole GPU) on mig, and model
    # configs on cuda:0 for both.
    limits = container["resources"]["limits"]
    configs = _one(objects, "ConfigMap", "inferd-model-configs")["data"]
    devices = {i["device"] for text in configs.values()
               for i in yaml.safe_load(text).get("instances", [])}
    budget_devices = {part.split("=")[0] for part in env["INFERD_MEMORY_BUDGET"].split(",")}
    if overlay == "cpu":
        assert not any(k.startswith("nvidia.com/") for k in limits)
        assert devices == {"cpu"} and budget_devices == {"cpu"}
    elif overlay == "gpu":
        assert limits["nvidia.com/gpu"] == 1
        assert devices == {"cuda:0"} and "cuda:0" in budget_devices
    else:
        mig = [k for k in limits if k.startswith("nvidia.com/mig-")]
        assert mig == ["nvidia.com/mig-1g.10gb"] and "nvidia.com/gpu" not in limits
        assert limits[mig[0]] == 1
        assert devices == {"cuda:0"} and "cuda:0" in budget_devices


def test_kserve_serving_runtime_matches_inferd(inferd_env_names):
    [runtime] = _kustomize(K8S / "kserve")
    assert runtime["kind"] == "ServingRuntime"
    assert {f["name"] for f in runtime["spec"]["supportedModelFormats"]} == {"pytorch", "onnx"}
    [container] = runtime["spec"]["containers"]
    env = _env(container)
    assert set(env) <= inferd_env_names
    assert env["INFERD_MODEL_REPOSITORY"] == "/mnt/models"  # where KServe puts storageUri
    assert [p["containerPort"] for p in container["ports"]] == [int(env["INFERD_HTTP_PORT"])]
    assert container["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert container["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"


def _configmap_volume(root: Path, files: dict[str, str], generation: int) -> None:
    """The layout the kubelet writes for a ConfigMap volume: the files in a timestamped folder,
    `..data` linking to it, and each key linking through `..data`. An update writes a new
    folder and swaps `..data` atomically (rename)."""
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"..gen_{generation}"
    folder.mkdir()
    for key, text in files.items():
        (folder / key).write_text(text)
    tmp = root / "..data_tmp"
    tmp.symlink_to(folder.name)
    os.replace(tmp, root / "..data")
    for key in files:
        if not (root / key).is_symlink():
            (root / key).symlink_to(f"..data/{key}")


def _start_pod_like(tmp_path, overlay: str):
    """inferd with the overlay's container env, its model configs in a kubelet-style ConfigMap
    volume and its init container's script; the demo models as the weights volume.
    Returns (process, url, ConfigMap folder, configs, log path, gRPC address)."""
    objects = _kustomize(K8S / "overlays" / overlay)
    env = _env(_container(_one(objects, "Deployment", "inferd")))
    configs = _one(objects, "ConfigMap", "inferd-model-configs")["data"]
    weights = tmp_path / "weights"
    for model in (k.removesuffix(".yaml") for k in configs):
        shutil.copytree(DEMO_MODELS / model, weights / model)
    configmap = tmp_path / "configmap"
    _configmap_volume(configmap, configs, 1)
    repo = tmp_path / "models"
    repo.mkdir()
    subprocess.run([str(ASSEMBLE), str(weights), str(configmap), str(repo)], check=True)
    http_port, grpc_port = free_port(), free_port()
    env.update({"INFERD_MODEL_REPOSITORY": str(repo), "INFERD_HOST": "127.0.0.1",
                "INFERD_HTTP_PORT": str(http_port), "INFERD_GRPC_PORT": str(grpc_port),
                "INFERD_WATCH_INTERVAL_MS": "200", "INFERD_LOG_FORMAT": "plain"})
    log = tmp_path / f"inferd-{overlay}.log"
    proc = subprocess.Popen([str(INFERD_BINARY)], env=clean_env(env), stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT, cwd=REPO_ROOT)
    return proc, f"http://127.0.0.1:{http_port}", configmap, configs, log, f"127.0.0.1:{grpc_port}"


def _max_batch_size(grpc_address: str, model: str) -> int:
    import grpc
    from tools.grpc_stubs import pb, pb_grpc
    with grpc.insecure_channel(grpc_address) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        return stub.ModelConfig(pb.ModelConfigRequest(name=model), timeout=10).config.max_batch_size


def _stop(proc):
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)


def test_cpu_pod_environment_serves_and_a_configmap_edit_reloads_the_model(tmp_path):
    proc, url, configmap, configs, log, grpc_address = _start_pod_like(tmp_path, "cpu")
    try:
        wait_ready(url, proc, log=log)
        for key in configs:
            model = key.removesuffix(".yaml")
            assert (_max_batch_size(grpc_address, model) ==
                    yaml.safe_load(configs[key])["max_batch_size"])
            sample = json.loads((DEMO_MODELS / model / "sample.json").read_text())
            body = {k: v for k, v in sample.items() if k != "expected_outputs"}
            resp = requests.post(f"{url}/v2/models/{model}/infer", json=body, timeout=30)
            assert resp.status_code == 200, resp.text
        # Edit mlp_scorer's config the way `kubectl apply` of a changed ConfigMap reaches the pod.
        edited = dict(configs)
        edited["mlp_scorer.yaml"] = configs["mlp_scorer.yaml"].replace("max_batch_size: 32",
                                                                       "max_batch_size: 8")
        assert edited["mlp_scorer.yaml"] != configs["mlp_scorer.yaml"]
        _configmap_volume(configmap, edited, 2)
        deadline = time.monotonic() + 30
        while _max_batch_size(grpc_address, "mlp_scorer") != 8:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
    finally:
        _stop(proc)


@pytest.mark.parametrize("overlay", ["gpu", "mig"])
def test_gpu_pod_environment_parses_and_reports_the_missing_device(tmp_path, overlay):
    proc, url, _, configs, log, _ = _start_pod_like(tmp_path, overlay)
    try:
        wait_ready(url, proc, log=log)
        index = requests.post(f"{url}/v2/repository/index", timeout=30).json()
        assert {row["name"] for row in index} == {k.removesuffix(".yaml") for k in configs}
        # Without a GPU the models cannot load, and say why; on a GPU node they serve.
        for row in index:
            if row["state"] != "READY":
                assert "cuda" in row.get("reason", "").lower(), row
    finally:
        _stop(proc)
