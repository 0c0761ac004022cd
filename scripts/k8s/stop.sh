# Tears the cluster down completely: workloads, processes (by the PIDs `up` recorded), the
# containerd shims of our socket, mounts, the kubelet's cgroups and sysctls, and $K8S_DIR.
# Sourced by scripts/k8s-cluster after common.sh. Each step tolerates its part being gone
# already, so `down` is safe to run twice or after a half-finished `up`.

stop_pid() { # <name>: SIGTERM the recorded PID, wait up to 20 s, then SIGKILL
  local f=$K8S_DIR/pids/$1.pid pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  # Only the process we started: the PID must still run the binary its name says.
  if kill -0 "$pid" 2> /dev/null && grep -qa "$1" "/proc/$pid/cmdline"; then
    kill "$pid"
    local i
    for i in $(seq 20); do kill -0 "$pid" 2> /dev/null || break; sleep 1; done
    if kill -0 "$pid" 2> /dev/null; then
      say "$1 (pid $pid) ignored SIGTERM for 20 s: SIGKILL"
      kill -9 "$pid"
    fi
    say "stopped $1 (pid $pid)"
  fi
  rm -f "$f"
}

# Pods first, while the kubelet still runs: it stops their containers and unmounts their
# volumes (service-account token tmpfs, ConfigMap and emptyDir) itself. The controllers are
# stopped before, so no ReplicaSet replaces a deleted pod.
delete_workloads() {
  [ -f "$K8S_DIR/pids/kube-apiserver.pid" ] && kctl get --raw /readyz > /dev/null 2>&1 || return 0
  stop_pid kube-controller-manager
  stop_pid kube-scheduler
  kctl delete pods --all --all-namespaces --grace-period=5 --timeout=60s > /dev/null 2>&1 ||
    say "pods not all deleted within 60 s; their containers are killed below"
}

# Shims outlive containerd by design. Ours are the ones whose command line names our socket.
kill_our_shims() {
  local cmdline pid
  for cmdline in /proc/[0-9]*/cmdline; do
    pid=${cmdline#/proc/}
    pid=${pid%/cmdline}
    tr '\0' ' ' < "$cmdline" 2> /dev/null | grep -q "containerd-shim.* -address $CONTAINERD_SOCK" &&
      kill -9 "$pid" 2> /dev/null && say "killed containerd shim (pid $pid)"
  done
  return 0
}

kill_containers() {
  [ -S "$CONTAINERD_SOCK" ] || return 0
  local c=(ctr --address "$CONTAINERD_SOCK" -n k8s.io) t
  for t in $("${c[@]}" tasks ls -q 2> /dev/null); do "${c[@]}" tasks kill -s SIGKILL "$t" 2> /dev/null; done
  sleep 1
  for t in $("${c[@]}" tasks ls -q 2> /dev/null); do "${c[@]}" tasks delete -f "$t" > /dev/null 2>&1; done
}

# Mounts below our directories (kubelet's tmpfs volumes, sandbox shm, overlay root file
# systems), deepest first; a lazy unmount if something still holds one.
unmount_ours() {
  local m
  for m in $(awk -v a="$K8S_DIR/" -v b="$K8S_RUN/" 'index($2, a) == 1 || index($2, b) == 1 || $2 == substr(a, 1, length(a) - 1) {print $2}' /proc/mounts | sort -r); do
    umount "$m" 2> /dev/null || umount -l "$m"
  done
}

# The kubelet makes a kubepods cgroup in every cgroup v1 hierarchy (and the unified one);
# rmdir removes only empty ones, deepest first.
remove_kubepods_cgroups() {
  local c
  for c in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2> /dev/null
  done
  return 0
}

restore_sysctls() {
  [ -f "$K8S_DIR/sysctl.saved" ] || return 0
  local k v
  while IFS='=' read -r k v; do sysctl -qw "$k=$v"; done < "$K8S_DIR/sysctl.saved"
}

# What `down` could not remove: printed, and a non-zero exit, so nothing leaks silently.
leftovers() {
  local left=()
  grep -q -e " $K8S_DIR" -e " $K8S_RUN" /proc/mounts && left+=("mounts: $(grep -c -e " $K8S_DIR" -e " $K8S_RUN" /proc/mounts)")
  compgen -G "/sys/fs/cgroup/*/kubepods" > /dev/null && left+=("kubepods cgroups")
  [ -e "$K8S_DIR" ] && left+=("$K8S_DIR")
  [ -e "$K8S_RUN" ] && left+=("$K8S_RUN")
  ((${#left[@]} == 0)) || { say "left behind: ${left[*]}"; return 1; }
}

stop_all() {
  if [ ! -d "$K8S_DIR" ] && [ ! -d "$K8S_RUN" ]; then
    say "nothing to stop ($K8S_DIR does not exist)"
    return 0
  fi
  delete_workloads
  local n
  for n in kubelet kube-scheduler kube-controller-manager kube-apiserver; do stop_pid "$n"; done
  kill_containers
  kill_our_shims
  stop_pid containerd
  stop_pid etcd
  unmount_ours
  remove_kubepods_cgroups
  restore_sysctls
  [ -n "$(awk -v a="$K8S_DIR" 'index($2, a) == 1' /proc/mounts)" ] || rm -rf "$K8S_DIR"
  [ -n "$(awk -v a="$K8S_RUN" 'index($2, a) == 1' /proc/mounts)" ] || rm -rf "$K8S_RUN"
  leftovers && say "down: nothing left behind"
}
