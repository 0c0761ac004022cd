"""deploy/k8s on a real Kubernetes v1.32.4 (scripts/k8s-cluster: a single node, everything on
127.0.0.1, host-network pods only). The API server accepts every overlay for real (server-side
apply, not a dry run); the test-local overlay (the cpu overlay plus what the loopback-only
cluster needs, deploy/k8s/overlays/test-local/README.md) rolls out through its real readiness
probe with the CPU image built by deploy/docker/build-image; the pod answers inference
correctly on 127.0.0.1, its logs come through the API server and its metrics are served; a
ConfigMap edit reloads a model in the running pod, a rolling update and `kubectl delete pod`
lose no request, with traffic flowing through each; the PDB refuses a drain while the pod
keeps serving; the HPA controller reads the HPA and asks for the metrics it names.

Runs only with INFERD_K8S=1, as root (scripts/test sets it as root with Go and dockerd): the
first run builds Kubernetes from the Go module proxy (~11 min on 2 cores; seconds once cached).
INFERD_K8S_KEEP=1 leaves the cluster up after. Timings go to
$INFERD_CLUSTER_RESULTS/k8s-real.txt when that is set."""

from __future__ import annotations

import os
import shutil
import threading
import time

import pytest
import requests
import yaml

from docker_image import docker
from fleet import results_path
from inferd_harness import DEMO_MODELS, REPO_ROOT
from k8s_cluster import Kubectl, cluster_script, diagnostics, is_up, kustomize
from lifecycle_helpers import assert_sample_output, sample_request

pytestmark = [
    pytest.mark.skipif(os.environ.get("INFERD_K8S") != "1",
                       reason="a real Kubernetes: set INFERD_K8S=1 to let scripts/k8s-cluster "
                              "bring one up (root, Go, dockerd; scripts/test sets it where "
                              "they are; the first run builds it, ~11 min)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="scripts/k8s-cluster needs root"),
]

K8S = REPO_ROOT / "deploy" / "k8s"
K8S_DIR = os.environ.get("INFERD_K8S_DIR", "/tmp/inferd-k8s")
IMAGE = "inferd:k8s-test"  # the tag deploy/k8s/overlays/test-local names
NAMESPACE = "inferd-test"
URL = "http://127.0.0.1:18080"  # test-local's INFERD_HOST and INFERD_HTTP_PORT
GRPC_ADDRESS = "127.0.0.1:18081"
MODELS = ("mlp_scorer", "digits")  # the models the base ConfigMap configures
ROLLOUT_TIMEOUT_S = 300


def _record(line: str) -> None:
    print("\n" + line)
    if out := results_path("k8s-real.txt"):
        with open(out, "a") as f:
            f.write(line + "\n")


@pytest.fixture(scope="module")
def kube(request):
    """The cluster, brought up unless it already runs; torn down after unless it already ran
    before (or INFERD_K8S_KEEP=1). When a test failed, the cluster's state and the tail of
    every component's log are printed before the teardown removes them."""
    already_up = is_up()
    if not already_up:
        began = time.monotonic()
        up = cluster_script("up", timeout_s=2400)
        if up.returncode != 0:
            logs = diagnostics(K8S_DIR)
            cluster_script("down", timeout_s=600)  # a half-started cluster leaves nothing either
            pytest.fail(f"scripts/k8s-cluster up failed:\n{up.stderr[-6000:]}\n\n{logs}")
        _record(f"scripts/k8s-cluster up: {time.monotonic() - began:.0f} s")
    failed_before = request.session.testsfailed
    yield Kubectl()
    if request.session.testsfailed > failed_before:
        print("\n=== the real cluster after a failed test ===\n" + diagnostics(K8S_DIR))
    if not already_up and os.environ.get("INFERD_K8S_KEEP") != "1":
        began = time.monotonic()
        down = cluster_script("down", timeout_s=600)
        assert down.returncode == 0, f"scripts/k8s-cluster down failed:\n{down.stderr[-4000:]}"
        clean = "nothing left behind" in down.stderr
        _record(f"scripts/k8s-cluster down: {time.monotonic() - began:.0f} s"
                + (", nothing left behind" if clean else ""))
        assert clean, down.stderr[-4000:]


@pytest.fixture(scope="module")
def image(kube, cpu_image):
    """The CPU image deploy/docker/build-image built for this session (conftest.cpu_image,
    shared with test_container.py: built once), tagged as test-local names it and imported
    into the cluster's containerd."""
    docker("tag", cpu_image, IMAGE, timeout=60)
    began = time.monotonic()
    load = cluster_script("load-image", IMAGE, timeout_s=600)
    assert load.returncode == 0, load.stderr[-4000:]
    _record(f"image {IMAGE} (= {cpu_image}, built once per session by build-image): "
            f"docker save | ctr import {time.monotonic() - began:.0f} s")
    return IMAGE


def _objects(overlay: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(kustomize(K8S / "overlays" / overlay)) if doc]


@pytest.mark.parametrize("overlay", ["cpu", "gpu", "mig"])
def test_overlay_is_accepted_by_the_api_server(kube, overlay):
    """Server-side apply, for real, of every object the overlay renders, into a namespace of
    its own (deleted after: the gpu pods cannot schedule here, the cpu ones have no pod
    network). The ServiceMonitor is refused only because its CRD is not installed here."""
    objects = _objects(overlay)
    monitors = [o for o in objects if o["apiVersion"].startswith("monitoring.coreos.com/")]
    rest = [o for o in objects if o not in monitors]
    ns = f"inferd-apply-{overlay}"
    kube.run("create", "namespace", ns)
    try:
        kube.apply_server_side(yaml.safe_dump_all(rest), ns)
        for obj in rest:
            live = kube.json("get", obj["kind"], obj["metadata"]["name"], "-n", ns,
                             "--show-managed-fields")
            assert live["metadata"]["uid"], obj["kind"]
            managers = {m["manager"] for m in live["metadata"].get("managedFields", [])}
            assert "inferd-test" in managers, (obj["kind"], managers)
        assert [m["kind"] for m in monitors] == ["ServiceMonitor"]
        refused = kube.apply_server_side(yaml.safe_dump_all(monitors), ns, check=False)
        assert refused.returncode != 0
        assert 'no matches for kind "ServiceMonitor"' in refused.stderr, refused.stderr

        # The validation is the server's own: a field the schema lacks is refused.
        deployment = next(o for o in rest if o["kind"] == "Deployment")
        deployment["spec"]["bogusField"] = 1
        bogus = kube.apply_server_side(yaml.safe_dump(deployment), ns, check=False)
        assert bogus.returncode != 0 and "bogusField" in bogus.stderr, bogus.stderr
    finally:
        kube.delete_namespace(ns, timeout_s=180)


def test_kserve_runtime_is_accepted_where_its_crd_is_installed(kube):
    resources = kube.run("api-resources", "--api-group=serving.kserve.io", "-o", "name").stdout
    if "servingruntimes" not in resources:
        pytest.skip("KServe's ServingRuntime CRD is not installed on this cluster")
    kube.run("create", "namespace", "inferd-apply-kserve")
    try:
        kube.apply_server_side(kustomize(K8S / "kserve"), "inferd-apply-kserve")
    finally:
        kube.delete_namespace("inferd-apply-kserve")


def _model_volume() -> str:
    """A small model repository (the two demo models the ConfigMap configures) in a folder
    the pod's non-root user can read, under the cluster's state directory (`down` removes it)."""
    root = os.path.join(K8S_DIR, "models")
    shutil.rmtree(root, ignore_errors=True)
    for model in MODELS:
        shutil.copytree(DEMO_MODELS / model, os.path.join(root, model))
    for dirpath, dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)
    return root


@pytest.fixture(scope="module")
def deployed(kube, image):
    """test-local applied and rolled out; its namespace and volume deleted after."""
    pv = {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "inferd-test-models"},
        "spec": {
            "capacity": {"storage": "20Gi"}, "accessModes": ["ReadOnlyMany"],
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
            # Bound to test-local's claim only, never to another overlay's inferd-models.
            "claimRef": {"namespace": NAMESPACE, "name": "inferd-models"},
            "hostPath": {"path": _model_volume(), "type": "Directory"},
        },
    }
    kube.apply_server_side(yaml.safe_dump(pv))
    kube.apply_server_side(kustomize(K8S / "overlays" / "test-local"))
    began = time.monotonic()
    kube.run("-n", NAMESPACE, "rollout", "status", "deployment/inferd",
             f"--timeout={ROLLOUT_TIMEOUT_S}s", timeout_s=ROLLOUT_TIMEOUT_S + 30)
    _record(f"test-local rollout to Ready (new namespace, image present): "
            f"{time.monotonic() - began:.0f} s")
    yield kube
    kube.delete_namespace(NAMESPACE, timeout_s=180)
    kube.run("delete", "pv", "inferd-test-models", "--ignore-not-found", "--timeout=60s")


def test_rollout_is_ready_through_the_readiness_probe(deployed):
    pods = deployed.json("-n", NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=inferd")
    assert len(pods["items"]) == 1
    pod = pods["items"][0]
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True", pod["status"]
    assert pod["spec"]["hostNetwork"] is True
    probe = pod["spec"]["containers"][0]["readinessProbe"]["httpGet"]
    assert (probe["host"], probe["path"], probe["port"]) == ("127.0.0.1", "/v2/health/ready", "http")
    # Readiness put the pod in the Service's Endpoints (at the node's address: host network).
    endpoints = deployed.json("-n", NAMESPACE, "get", "endpoints", "inferd")
    subset = endpoints["subsets"][0]
    assert [a["ip"] for a in subset["addresses"]] == [pod["status"]["podIP"]]
    assert {p["port"] for p in subset["ports"]} == {18080, 18081}


def test_pod_answers_inference_on_loopback(deployed):
    for model in MODELS:
        resp = requests.post(f"{URL}/v2/models/{model}/infer", json=sample_request(model),
                             timeout=30)
        assert_sample_output(resp, model)


def test_logs_come_through_the_api_server(deployed):
    init = deployed.run("-n", NAMESPACE, "logs", "deployment/inferd", "-c",
                        "assemble-repository").stdout
    assert "assemble-repository: 2 model(s)" in init, init
    logs = deployed.run("-n", NAMESPACE, "logs", "deployment/inferd", "-c", "inferd").stdout
    lines = [line for line in logs.splitlines() if line.startswith("{")]
    assert lines and all(yaml.safe_load(line).get("msg") for line in lines[:5]), logs[-2000:]


def test_metrics_are_served(deployed):
    requests.post(f"{URL}/v2/models/mlp_scorer/infer", json=sample_request("mlp_scorer"),
                  timeout=30)
    metrics = requests.get(f"{URL}/metrics", timeout=10)
    assert metrics.status_code == 200
    # The series the HPA's Pods metric reads (through Prometheus Adapter in production).
    assert "inferd_http_requests_in_flight" in metrics.text


class _ReadinessGatedClient:
    """Requests back to back to the pod, sent only while its readiness endpoint last said
    ready: what a load balancer does with the Endpoints that readiness decides. (This cluster
    has no kube-proxy, and a client that ignored readiness would keep sending into the
    listener while it closes at the end of the drain.) The health check runs every 0.5 s,
    slower than requests come, so requests do reach a pod that has started draining.
    Every request sent ends in exactly one of: ok (the right answer), failed (anything else)."""

    def __init__(self, limit_s: float = 240):
        self.ok, self.failed, self.latencies = 0, [], []
        self.ready = threading.Event()
        self.not_ready_s = 0.0
        self._stop = threading.Event()
        self._deadline = time.monotonic() + limit_s  # bounded even if stop() never comes
        self._threads = [threading.Thread(target=self._check), threading.Thread(target=self._send)]

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in self._threads)

    def _running(self) -> bool:
        return not self._stop.is_set() and time.monotonic() < self._deadline

    def _check(self):
        while self._running():
            began = time.monotonic()
            try:
                up = requests.get(f"{URL}/v2/health/ready", timeout=1).status_code == 200
            except requests.RequestException:
                up = False
            if up:
                self.ready.set()
            else:
                self.ready.clear()
            time.sleep(0.5)
            if not up:
                self.not_ready_s += time.monotonic() - began

    def _send(self):
        session, body = requests.Session(), sample_request("mlp_scorer")
        while self._running():
            if not self.ready.wait(timeout=0.05):
                continue
            began = time.monotonic()
            try:
                resp = session.post(f"{URL}/v2/models/mlp_scorer/infer", json=body, timeout=30)
                assert_sample_output(resp, "mlp_scorer")
                self.ok += 1
                self.latencies.append(time.monotonic() - began)
            except (requests.RequestException, AssertionError) as e:
                self.failed.append(f"{time.monotonic():.3f} {e!r}"[:300])
                session = requests.Session()


def _p99_ms(client: _ReadinessGatedClient) -> float:
    latencies = sorted(client.latencies)
    return 1000 * latencies[int(0.99 * (len(latencies) - 1))] if latencies else float("nan")


def _max_batch_size(model: str) -> int:
    import grpc
    from tools.grpc_stubs import pb, pb_grpc
    with grpc.insecure_channel(GRPC_ADDRESS) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        return stub.ModelConfig(pb.ModelConfigRequest(name=model), timeout=10).config.max_batch_size


def test_configmap_edit_reloads_the_model_with_requests_answered(deployed):
    """A server-side apply of the ConfigMap with mlp_scorer's max_batch_size changed reaches
    the running pod through the kubelet's ConfigMap volume (at its next pod sync: every 5 s in
    scripts/k8s-cluster's kubelet config, 1 min by default) and inferd's watch mode (5 s)
    reloads the model, with no restart and no request failing."""
    configmap = next(o for o in yaml.safe_load_all(kustomize(K8S / "overlays" / "test-local"))
                     if o and o["kind"] == "ConfigMap" and
                     o["metadata"]["name"] == "inferd-model-configs")
    before = yaml.safe_load(configmap["data"]["mlp_scorer.yaml"])["max_batch_size"]
    assert _max_batch_size("mlp_scorer") == before
    edited = configmap["data"]["mlp_scorer.yaml"].replace(f"max_batch_size: {before}",
                                                          "max_batch_size: 8")
    assert edited != configmap["data"]["mlp_scorer.yaml"]
    configmap["data"]["mlp_scorer.yaml"] = edited
    restarts = deployed.json("-n", NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=inferd")
    with _ReadinessGatedClient() as client:
        assert client.ready.wait(timeout=10)
        began = time.monotonic()
        deployed.apply_server_side(yaml.safe_dump(configmap))
        deployed.wait_until(lambda: _max_batch_size("mlp_scorer") == 8, 60,
                            "mlp_scorer reloaded with max_batch_size 8")
        reloaded = time.monotonic() - began
        # A fixed span on purpose: traffic keeps flowing for 2 s after the reload, and none
        # of it may fail (there is no event to wait for: the test is that nothing happens).
        time.sleep(2)
    after = deployed.json("-n", NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=inferd")
    assert [p["metadata"]["uid"] for p in after["items"]] == \
        [p["metadata"]["uid"] for p in restarts["items"]], "the pod was replaced"
    assert after["items"][0]["status"]["containerStatuses"][0]["restartCount"] == 0
    _record(f"ConfigMap edit -> model reloaded in the running pod after {reloaded:.1f} s; "
            f"{client.ok + len(client.failed)} requests sent meanwhile = {client.ok} answered "
            f"correctly + {len(client.failed)} failed; p99 {_p99_ms(client):.1f} ms")
    assert client.failed == [], client.failed[:5]


def test_rolling_update_to_a_new_image_tag_loses_no_request(deployed):
    """`kubectl set image` to another tag of the same image: the Deployment replaces its pod
    (test-local: maxSurge 0, one node and host ports), the old one drains on SIGTERM, and a
    readiness-following client loses nothing; the gap without a ready pod is reported."""
    new_tag = f"{IMAGE}-update"
    docker("tag", IMAGE, new_tag, timeout=60)
    try:
        load = cluster_script("load-image", new_tag, timeout_s=600)
        assert load.returncode == 0, load.stderr[-4000:]
        old = deployed.json("-n", NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=inferd")
        with _ReadinessGatedClient() as client:
            assert client.ready.wait(timeout=10)
            time.sleep(2)  # on purpose: 2 s of traffic before the update, to lose none of it
            began = time.monotonic()
            deployed.run("-n", NAMESPACE, "set", "image", "deployment/inferd",
                         f"inferd={new_tag}", f"assemble-repository={new_tag}")
            deployed.run("-n", NAMESPACE, "rollout", "status", "deployment/inferd",
                         f"--timeout={ROLLOUT_TIMEOUT_S}s", timeout_s=ROLLOUT_TIMEOUT_S + 30)
            rolled = time.monotonic() - began
            answered_before = client.ok
            deployed.wait_until(lambda: client.ok > answered_before + 10, 60,
                                "answers from the updated pod")
        new = deployed.json("-n", NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=inferd")
        assert [p["spec"]["containers"][0]["image"] for p in new["items"]] == [new_tag]
        assert new["items"][0]["metadata"]["uid"] != old["items"][0]["metadata"]["uid"]
        _record(f"rolling update to {new_tag} (surge 0, 1 replica): rollout status done after "
                f"{rolled:.1f} s; {client.ok + len(client.failed)} requests sent = {client.ok} "
                f"answered correctly + {len(client.failed)} failed; readiness false for "
                f"{client.not_ready_s:.1f} s (the drain included); p99 {_p99_ms(client):.1f} ms")
        assert client.failed == [], client.failed[:5]
    finally:
        docker("rmi", new_tag, check=False, timeout=60)


def test_delete_pod_with_traffic_flowing_loses_no_request(deployed):
    """`kubectl delete pod` with traffic flowing: SIGTERM turns the pod not-ready at once and
    it keeps serving through the drain (INFERD_DRAIN_SECONDS), so a readiness-following client
    loses nothing. With one replica (host ports, test-local/README.md) there is a gap with no
    ready pod until the replacement is up; the test reports it."""
    old = deployed.json("-n", NAMESPACE, "get", "pods", "-l",
                        "app.kubernetes.io/name=inferd")["items"][0]["metadata"]["name"]
    with _ReadinessGatedClient() as client:
        assert client.ready.wait(timeout=10), "the pod is not ready before the kill"
        time.sleep(2)  # on purpose: 2 s of traffic before the delete, to lose none of it
        began = time.monotonic()
        deployed.run("-n", NAMESPACE, "delete", "pod", old, "--wait=true", "--timeout=90s",
                     timeout_s=120)
        deleted = time.monotonic() - began
        deployed.run("-n", NAMESPACE, "rollout", "status", "deployment/inferd",
                     f"--timeout={ROLLOUT_TIMEOUT_S}s", timeout_s=ROLLOUT_TIMEOUT_S + 30)
        answered_before = client.ok
        deployed.wait_until(lambda: client.ok > answered_before + 10, 60, "answers from the new pod")
        replaced = time.monotonic() - began
    _record(f"kubectl delete pod with traffic (readiness-gated client, 1 replica): "
            f"{client.ok + len(client.failed)} requests sent = {client.ok} answered correctly + "
            f"{len(client.failed)} failed; old pod gone {deleted:.1f} s after the delete, new "
            f"pod answering after {replaced:.1f} s; readiness false for {client.not_ready_s:.1f} s "
            f"(the drain included); p99 {_p99_ms(client):.1f} ms")
    assert client.failed == [], client.failed[:5]


def _rendered(kind: str) -> dict:
    return next(o for o in yaml.safe_load_all(kustomize(K8S / "overlays" / "test-local"))
                if o and o["kind"] == kind)


def _pdb_status(kube: Kubectl) -> dict:
    return kube.json("-n", NAMESPACE, "get", "pdb", "inferd").get("status", {})


def test_pdb_blocks_a_drain_while_the_pod_keeps_serving(deployed):
    """`kubectl drain` of the only node is refused by the overlay's PDB (maxUnavailable 1)
    while the pod keeps answering. At 1 replica, maxUnavailable 1 allows evicting that one pod
    (the disruption controller says so: disruptionsAllowed 1); what the budget forbids is a
    second pod down. So the Deployment asks for 2 (the HPA's max raised to 2 meanwhile, or it
    would scale back): the second pod cannot be placed (one node, host port 18080), the one
    allowed disruption is used up, and the eviction of the serving pod is refused, as it
    would be for a drain during a rollout in production. Everything is put back after."""
    node = deployed.json("get", "nodes")["items"][0]["metadata"]["name"]
    assert _rendered("PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    deployed.wait_until(lambda: (lambda st: st.get("expectedPods") == 1 and
                                 st.get("disruptionsAllowed") == 1)(_pdb_status(deployed)),
                        60, "the PDB's status at 1 replica: 1 expected, 1 disruption allowed")
    serving = deployed.json("-n", NAMESPACE, "get", "pods", "-l",
                            "app.kubernetes.io/name=inferd")["items"]
    assert len(serving) == 1
    try:
        deployed.run("-n", NAMESPACE, "patch", "hpa", "inferd", "--type=merge",
                     "-p", '{"spec": {"maxReplicas": 2}}')
        deployed.run("-n", NAMESPACE, "scale", "deployment/inferd", "--replicas=2")
        deployed.wait_until(lambda: (lambda st: st.get("expectedPods") == 2 and
                                     st.get("currentHealthy") == 1 and
                                     st.get("disruptionsAllowed") == 0)(_pdb_status(deployed)),
                            60, "the PDB's status: 2 expected, 1 healthy, 0 disruptions allowed")
        with _ReadinessGatedClient() as client:
            assert client.ready.wait(timeout=10)
            time.sleep(1)
            began = time.monotonic()
            drain = deployed.run("drain", node, "--ignore-daemonsets", "--delete-emptydir-data",
                                 "--timeout=20s", check=False, timeout_s=90)
            refused_for = time.monotonic() - began
            time.sleep(1)
        output = drain.stdout + drain.stderr
        assert drain.returncode != 0, output
        assert "Cannot evict pod as it would violate the pod's disruption budget" in output, output
        assert "global timeout reached: 20s" in output, output
        after = deployed.json("-n", NAMESPACE, "get", "pod", serving[0]["metadata"]["name"])
        assert after["metadata"]["uid"] == serving[0]["metadata"]["uid"]
        assert "deletionTimestamp" not in after["metadata"]
        assert next(c for c in after["status"]["conditions"]
                    if c["type"] == "Ready")["status"] == "True"
        _record(f"kubectl drain {node} --timeout=20s refused by the PDB (maxUnavailable 1, 2 "
                f"wanted, 1 healthy) after {refused_for:.1f} s, rc {drain.returncode}; "
                f"{client.ok + len(client.failed)} requests sent meanwhile = {client.ok} "
                f"answered correctly + {len(client.failed)} failed; readiness false for "
                f"{client.not_ready_s:.1f} s; p99 {_p99_ms(client):.1f} ms")
        assert client.failed == [], client.failed[:5]
        assert client.not_ready_s == 0
    finally:
        deployed.run("uncordon", node)
        deployed.run("-n", NAMESPACE, "scale", "deployment/inferd", "--replicas=1")
        deployed.run("-n", NAMESPACE, "patch", "hpa", "inferd", "--type=merge",
                     "-p", '{"spec": {"maxReplicas": 1}}')
        deployed.run("-n", NAMESPACE, "rollout", "status", "deployment/inferd",
                     f"--timeout={ROLLOUT_TIMEOUT_S}s", timeout_s=ROLLOUT_TIMEOUT_S + 30)
    assert not deployed.json("get", "node", node)["spec"].get("unschedulable")
    deployed.wait_until(lambda: len(deployed.json("-n", NAMESPACE, "get", "pods", "-l",
                                                  "app.kubernetes.io/name=inferd")["items"]) == 1,
                        60, "the pending second pod removed")


def test_hpa_is_read_by_the_controller_manager(deployed):
    """The HPA is accepted and the controller manager's HPA controller works on it: it reads
    the Deployment's scale (AbleToScale True) and asks for the metrics docs/deployment.md names
    (CPU utilisation from the resource metrics API, inferd_requests_in_flight per pod from the
    custom metrics API). Neither API is served here (no metrics-server, no Prometheus Adapter),
    so ScalingActive is False and each failed read is an event naming its metric."""
    rendered = _rendered("HorizontalPodAutoscaler")
    docs = (REPO_ROOT / "docs" / "deployment.md").read_text()
    pods_metric = next(m["pods"]["metric"]["name"] for m in rendered["spec"]["metrics"]
                       if m["type"] == "Pods")
    assert pods_metric == "inferd_requests_in_flight" and f"`{pods_metric}`" in docs
    assert [m["resource"]["name"] for m in rendered["spec"]["metrics"]
            if m["type"] == "Resource"] == ["cpu"]

    def conditions():
        hpa = deployed.json("-n", NAMESPACE, "get", "hpa", "inferd")
        found = {c["type"]: c for c in hpa.get("status", {}).get("conditions", [])}
        return (hpa, found) if {"AbleToScale", "ScalingActive"} <= found.keys() else None

    began = time.monotonic()
    hpa, found = deployed.wait_until(conditions, 90, "the HPA controller's status conditions")
    assert hpa["spec"]["metrics"] == rendered["spec"]["metrics"]
    assert (found["AbleToScale"]["status"], found["AbleToScale"]["reason"]) == \
        ("True", "SucceededGetScale"), found
    assert found["ScalingActive"]["status"] == "False", found
    assert found["ScalingActive"]["reason"] in ("FailedGetResourceMetric",
                                                "FailedGetPodsMetric"), found

    def events():
        items = deployed.json("-n", NAMESPACE, "get", "events", "--field-selector",
                              "involvedObject.kind=HorizontalPodAutoscaler,"
                              "involvedObject.name=inferd")["items"]
        by_reason = {e["reason"]: e["message"] for e in items}
        return by_reason if {"FailedGetResourceMetric",
                             "FailedGetPodsMetric"} <= by_reason.keys() else None

    by_reason = deployed.wait_until(events, 90, "an event for each metric the HPA reads")
    assert "cpu" in by_reason["FailedGetResourceMetric"], by_reason
    assert "metrics.k8s.io" in by_reason["FailedGetResourceMetric"], by_reason
    assert pods_metric in by_reason["FailedGetPodsMetric"], by_reason
    assert "custom.metrics.k8s.io" in by_reason["FailedGetPodsMetric"], by_reason
    _record(f"HPA read by the controller manager after {time.monotonic() - began:.0f} s: "
            f"AbleToScale True, ScalingActive False ({found['ScalingActive']['reason']}); "
            f"events: cpu -> {by_reason['FailedGetResourceMetric'][:120]!r}; "
            f"{pods_metric} -> {by_reason['FailedGetPodsMetric'][:120]!r}")
