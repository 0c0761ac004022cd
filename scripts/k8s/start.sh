# Starts the cluster's processes, each after the one it needs is healthy: a private
# containerd, etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet.
# Sourced by scripts/k8s-cluster after common.sh. Each PID goes to $K8S_DIR/pids/<name>.pid,
# which is all `down` uses to stop them; each log to $K8S_DIR/logs/<name>.log.

# Another server on one of our ports would answer our health checks and fool every wait.
check_ports_free() {
  local port busy=()
  for port in "$ETCD_CLIENT_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT" "$KCM_PORT" \
    "$SCHEDULER_PORT" "$KUBELET_PORT" "$KUBELET_HEALTHZ_PORT"; do
    ss -Hltn "sport = :$port" | grep -q . && busy+=("$port")
  done
  ((${#busy[@]} == 0)) || die "ports already in use on this machine: ${busy[*]} (ss -ltnp shows by whom)"
}

start_bg() { # <name> <command...>: stdin/stdout/stderr detached, so a caller's pipe never hangs
  local name=$1
  shift
  nohup "$@" < /dev/null > "$K8S_DIR/logs/$name.log" 2>&1 &
  echo $! > "$K8S_DIR/pids/$name.pid"
  say "started $name (pid $!)"
}

# containerd: its own instance (root, state, socket under $K8S_DIR and $K8S_RUN), so Docker's
# containerd and /etc/containerd stay untouched. Made from `containerd config default` with:
#   restrict_oom_score_adj = true  root lacks CAP_SYS_RESOURCE here, so runc cannot give the
#       sandbox oom_score_adj=-998 ("can't get final child's PID from pipe: EOF")
#   a loopback-only CNI network  the runtime reports NetworkReady (the node turns Ready), yet
#       no pod network exists: only hostNetwork pods can start, and nothing leaves loopback.
start_containerd() {
  mkdir -p "$K8S_DIR/containerd/root" "$K8S_DIR/containerd/opt" "$K8S_RUN/state" "$K8S_DIR/cni"
  containerd config default > "$K8S_DIR/containerd/default.toml"
  python3 - "$K8S_DIR" "$K8S_RUN" << 'EOF'
import re, sys
d, run = sys.argv[1], sys.argv[2]
s = open(f"{d}/containerd/default.toml").read()
for pattern, value in [
        (r'^root = .*$', f'root = "{d}/containerd/root"'),
        (r'^state = .*$', f'state = "{run}/state"'),
        (r'(\[grpc\]\n(?:.*\n)*?\s*address = )".*"', rf'\1"{run}/containerd.sock"'),
        (r'sandbox_image = ".*"', 'sandbox_image = "docker.io/inferd-k8s/pause:1"'),
        (r'SystemdCgroup = .*', 'SystemdCgroup = false'),
        (r'bin_dir = "/opt/cni/bin"', 'bin_dir = "/usr/lib/cni"'),
        (r'conf_dir = "/etc/cni/net.d"', f'conf_dir = "{d}/cni"'),
        (r'path = "/opt/containerd"', f'path = "{d}/containerd/opt"'),
        (r'restrict_oom_score_adj = false', 'restrict_oom_score_adj = true')]:
    s, n = re.subn(pattern, value, s, count=1, flags=re.M)
    assert n == 1, f"containerd's default config changed: {pattern} not found"
open(f"{d}/containerd/config.toml", "w").write(s)
EOF
  cat > "$K8S_DIR/cni/10-loopback-only.conflist" << 'EOF'
{"cniVersion": "0.4.0", "name": "loopback-only", "plugins": [{"type": "loopback"}]}
EOF
  start_bg containerd containerd --config "$K8S_DIR/containerd/config.toml"
  wait_for 30 "containerd's socket $CONTAINERD_SOCK" \
    ctr --address "$CONTAINERD_SOCK" version
  ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$K8S_BIN/pause.tar" > /dev/null
}

start_etcd() {
  mkdir -p "$K8S_DIR/etcd" && chmod 700 "$K8S_DIR/etcd"
  local client=http://127.0.0.1:$ETCD_CLIENT_PORT peer=http://127.0.0.1:$ETCD_PEER_PORT
  start_bg etcd etcd --name inferd-k8s --data-dir "$K8S_DIR/etcd" \
    --listen-client-urls "$client" --advertise-client-urls "$client" \
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
    --initial-cluster "inferd-k8s=$peer"
  wait_for 30 "etcd healthy on $client" curl -sf --max-time 2 "$client/health"
}

start_apiserver() {
  local p=$K8S_DIR/pki
  # Bound to 127.0.0.1, advertising $NODE_IP: the kubernetes Service's Endpoints cannot hold
  # a loopback address. The kubelet is reached by its Hostname, which resolves to 127.0.0.1.
  start_bg kube-apiserver "$K8S_BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" --advertise-address="$NODE_IP" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
    --client-ca-file="$p/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --kubelet-client-certificate="$p/admin.crt" --kubelet-client-key="$p/admin.key" \
    --kubelet-preferred-address-types=Hostname,InternalIP \
    --requestheader-client-ca-file="$p/ca.crt" --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$p/front-proxy-client.crt" \
    --proxy-client-key-file="$p/front-proxy-client.key"
  wait_for 120 "kube-apiserver /readyz on 127.0.0.1:$APISERVER_PORT" kctl get --raw /readyz
}

start_controller_manager() {
  local kc=$K8S_DIR/pki/kcm.kubeconfig
  start_bg kube-controller-manager "$K8S_BIN/kube-controller-manager" --kubeconfig="$kc" \
    --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$K8S_DIR/pki/sa.key" --root-ca-file="$K8S_DIR/pki/ca.crt" \
    --cluster-signing-cert-file="$K8S_DIR/pki/ca.crt" --cluster-signing-key-file="$K8S_DIR/pki/ca.key"
  wait_for 60 "kube-controller-manager /healthz" \
    curl -sfk --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz"
}

start_scheduler() {
  local kc=$K8S_DIR/pki/scheduler.kubeconfig
  start_bg kube-scheduler "$K8S_BIN/kube-scheduler" --kubeconfig="$kc" \
    --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false
  wait_for 60 "kube-scheduler /healthz" \
    curl -sfk --max-time 2 "https://127.0.0.1:$SCHEDULER_PORT/healthz"
}

# The sysctls the kubelet rewrites on start (it "tunes" the host for itself); `down` puts
# them back from this file.
KUBELET_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

start_kubelet() {
  local s
  [ -f "$K8S_DIR/sysctl.saved" ] || for s in "${KUBELET_SYSCTLS[@]}"; do
    echo "$s=$(sysctl -n "$s")"
  done > "$K8S_DIR/sysctl.saved"
  mkdir -p "$K8S_DIR/kubelet"
  # cgroupfs: containerd 1.6 lacks the RuntimeConfig RPC that would tell the kubelet; PID 1
  # is not systemd here. Eviction thresholds are low: the disk is shared and mostly full of
  # other people's data, and an evicted test pod would say nothing about our manifests.
  # syncFrequency 5 s (default 1 min): the kubelet rewrites a ConfigMap volume only when it next
  # syncs the pod, so with the default a ConfigMap edit reached the pod after 2-90 s (1 min
  # plus jitter); at 5 s it is there within ~10 s. Watch (the default, written out because
  # the test relies on it) keeps the kubelet's copy of the ConfigMap current between syncs.
  cat > "$K8S_DIR/kubelet-config.yaml" << EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
imageServiceEndpoint: unix://$CONTAINERD_SOCK
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $K8S_DIR/pki/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
failSwapOn: false
evictionHard: {memory.available: "200Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
syncFrequency: 5s
configMapAndSecretChangeDetectionStrategy: Watch
EOF
  start_bg kubelet "$K8S_BIN/kubelet" --config="$K8S_DIR/kubelet-config.yaml" \
    --kubeconfig="$K8S_DIR/pki/kubelet.kubeconfig" --root-dir="$K8S_DIR/kubelet" \
    --hostname-override="$NODE_NAME"
  wait_for 60 "kubelet /healthz" curl -sf --max-time 2 "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz"
  wait_for 90 "node $NODE_NAME Ready" kctl wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
}
