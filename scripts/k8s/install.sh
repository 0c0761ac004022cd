# Installs what the single-node cluster needs and builds the Kubernetes binaries it runs.
# Sourced by scripts/k8s-cluster (after common.sh). Every step is skipped when already done,
# so a second `up` spends seconds here.

# Debian 12 packages, pinned to the versions this harness was run with; apt only installs
# what is missing (--no-upgrade: never upgrade a shared machine's openssl and friends behind
# its back). etcd 3.4 is older than 1.32 recommends; it works (watch progress requests off).
K8S_APT_PACKAGES=(
  etcd-server=3.4.23-4+b4
  containerd=1.6.20~ds1-1+deb12u3
  runc=1.1.5+ds1-1+deb12u1
  containernetworking-plugins=1.1.1+ds1-3+b5
  openssl
  iproute2
)

install_packages() {
  local missing=() p
  for p in "${K8S_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "${p%%=*}" 2> /dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return
  say "apt: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  local apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
    --no-upgrade)
  "${apt[@]}" "${missing[@]}" && return
  # A Debian point release drops superseded versions from the mirror: take the current ones,
  # loudly, rather than fail a run for a pin.
  say "apt: the pinned versions are not all available; installing the current ones instead"
  "${apt[@]}" "${missing[@]%%=*}"
}

# The Go toolchain: the machine's go if it is $GO_VERSION; otherwise any go >= 1.21 fetches
# $GO_VERSION itself as the golang.org/toolchain module from the Go module proxy
# (GOTOOLCHAIN), which is the only place a toolchain can come from here.
setup_go() {
  command -v go > /dev/null || [ -x /usr/local/go/bin/go ] ||
    die "no Go toolchain: install any Go >= 1.21 (it fetches $GO_VERSION from the Go module proxy)"
  GO=$(command -v go || echo /usr/local/go/bin/go)
  export GOCACHE=$K8S_CACHE/gocache GOMODCACHE=$K8S_CACHE/gomodcache
  export GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
  if [ "$("$GO" env GOVERSION)" = "$GO_VERSION" ]; then
    export GOTOOLCHAIN=local
  else
    export GOTOOLCHAIN=$GO_VERSION
  fi
  [ "$("$GO" env GOVERSION)" = "$GO_VERSION" ] || die "could not get $GO_VERSION"
}

# A scratch module that requires k8s.io/kubernetes and replaces each of its ./staging modules
# by the published v0.<minor>.<patch> one: k8s.io/kubernetes cannot be built from the module
# proxy otherwise (its go.mod points the staging modules at local directories).
write_build_module() {
  local src=$K8S_CACHE/src
  [ -f "$src/go.sum" ] && grep -q "k8s.io/kubernetes v$K8S_VERSION" "$src/go.mod" && return
  say "go: downloading k8s.io/kubernetes v$K8S_VERSION and resolving its modules"
  mkdir -p "$src"
  (cd / && "$GO" mod download "k8s.io/kubernetes@v$K8S_VERSION")
  local upstream_mod="$GOMODCACHE/k8s.io/kubernetes@v$K8S_VERSION/go.mod"
  {
    printf 'module inferd-k8s-build\n\ngo 1.23.0\n\ngodebug default=go1.23\n\n'
    printf 'require k8s.io/kubernetes v%s\n\nreplace (\n' "$K8S_VERSION"
    grep -oP '^\tk8s.io/\S+(?= => \./staging)' "$upstream_mod" |
      while read -r m; do printf '\t%s => %s v0.%s\n' "$m" "$m" "${K8S_VERSION#1.}"; done
    printf ')\n'
  } > "$src/go.mod"
  # go mod tidy needs the packages imported somewhere to fill go.sum.
  cat > "$src/tools.go" << 'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
EOF
  (cd "$src" && "$GO" mod tidy)
}

# One binary; niced and at most 2 packages at a time (the machine is shared with C++ builds).
# The -X flags make the binaries report v$K8S_VERSION instead of v0.0.0-master.
build_binary() {
  local name=$1 ldflags="-s -w" p minor
  [ -x "$K8S_BIN/$name" ] && return
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldflags+=" -X $p.gitTreeState=clean"
  done
  say "go: building $name"
  local start=$SECONDS
  mkdir -p "$K8S_BIN"
  (cd "$K8S_CACHE/src" && nice -n 15 "$GO" build -p 2 -trimpath -ldflags "$ldflags" \
    -o "$K8S_BIN/$name.tmp" "k8s.io/kubernetes/cmd/$name")
  mv "$K8S_BIN/$name.tmp" "$K8S_BIN/$name"
  say "go: built $name in $((SECONDS - start))s"
}

# The sandbox ("pause") container's program: waits for a signal and reaps children. Built
# here because no image registry can be reached; imported into containerd as an image.
build_pause() {
  [ -x "$K8S_BIN/pause" ] && return
  local src=$K8S_CACHE/pause-src
  mkdir -p "$src"
  cp "$(dirname "${BASH_SOURCE[0]}")/pause.go" "$src/main.go"
  printf 'module pause\n\ngo 1.23\n' > "$src/go.mod"
  (cd "$src" && nice -n 15 "$GO" build -p 2 -trimpath -ldflags '-s -w' -o "$K8S_BIN/pause" .)
}

# pause.tar: the pause binary as a one-layer image in `docker save` form, ready for
# `ctr images import`. Docker only packs it (and forgets it again); the tarball is cached.
pack_pause_image() {
  [ -f "$K8S_BIN/pause.tar" ] && return
  local docker=docker root
  [ -x /usr/bin/docker ] && docker=/usr/bin/docker
  $docker info > /dev/null 2>&1 || die "dockerd is not reachable (scripts/setup starts it)"
  root=$(mktemp -d)
  cp "$K8S_BIN/pause" "$root/pause"
  tar -C "$root" -c . | $docker import -c 'ENTRYPOINT ["/pause"]' - inferd-k8s/pause:1 > /dev/null
  $docker save inferd-k8s/pause:1 -o "$K8S_BIN/pause.tar.tmp"
  $docker rmi inferd-k8s/pause:1 > /dev/null
  rm -rf "$root"
  mv "$K8S_BIN/pause.tar.tmp" "$K8S_BIN/pause.tar"
}

install_all() {
  local start=$SECONDS
  install_packages
  setup_go
  write_build_module
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
    build_binary "$b"
  done
  build_pause
  pack_pause_image
  say "install: done in $((SECONDS - start))s"
}
