# Shared by the scripts/k8s-cluster steps: where things live, the versions, and the bounded
# wait every step uses. Sourced, never run.
#
# Two directories, kept apart on purpose:
#   $K8S_CACHE  what is slow to make and safe to keep (Go caches, built binaries); survives `down`
#   $K8S_DIR    the running cluster's state (PKI, etcd data, logs, PIDs); `down` removes it
K8S_VERSION=1.32.4
GO_VERSION=go1.26.8
K8S_CACHE=${INFERD_K8S_CACHE:-$HOME/.cache/inferd-k8s}
K8S_DIR=${INFERD_K8S_DIR:-/tmp/inferd-k8s}
K8S_BIN=$K8S_CACHE/bin/v$K8S_VERSION-$GO_VERSION
# containerd's state and socket must be on a tmpfs-like path outside $K8S_DIR: the socket path
# is limited to ~100 bytes and `down` checks it separately for mounts left behind.
K8S_RUN=/run/inferd-k8s
CONTAINERD_SOCK=$K8S_RUN/containerd.sock
# Everything listens on 127.0.0.1 (see the ports in scripts/k8s-cluster's header).
APISERVER_PORT=16443
ETCD_CLIENT_PORT=12379
ETCD_PEER_PORT=12380
KCM_PORT=20257
SCHEDULER_PORT=20259
KUBELET_PORT=20250
KUBELET_HEALTHZ_PORT=20248
NODE_NAME=$(hostname)
# The Endpoints API and the kubelet both refuse loopback addresses, so the API server
# advertises (but does not listen on) the host's own address, and the node reports it.
NODE_IP=$(ip -4 route get 1.1.1.1 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "src") print $(i + 1)}')
KUBECONFIG_ADMIN=$K8S_DIR/pki/admin.kubeconfig

say() { printf '\033[1m[k8s-cluster %s]\033[0m %s\n' "$(date -u +%T)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# wait_for <seconds> <what> <command...>: poll once a second; on timeout name what did not
# happen and where its log is, so a failed bring-up says why without digging.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@" > /dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      say "TIMEOUT after ${limit}s waiting for: $what"
      say "  (the command was: $*; logs are in $K8S_DIR/logs/)"
      return 1
    fi
    sleep 1
  done
}

kctl() { "$K8S_BIN/kubectl" --kubeconfig="$KUBECONFIG_ADMIN" "$@"; }
