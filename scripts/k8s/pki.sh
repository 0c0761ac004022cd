# The cluster's certificates and kubeconfigs, made fresh by each `up` (valid 3 days) under
# $K8S_DIR/pki. Sourced by scripts/k8s-cluster after common.sh.
#
# One CA signs everything: the API server's serving certificate, a client certificate per
# component (its CN/O is the identity RBAC and the Node authorizer check), and the front-proxy
# client (without it kcm and the scheduler log "missing content for CA bundle" forever).

_cert() { # <name> <subject> <extfile>
  openssl genrsa -out "$1.key" 2048 2> /dev/null
  openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2> /dev/null
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 \
    -extfile "$3" -out "$1.crt" 2> /dev/null
}

_kubeconfig() { # <name>: a kubeconfig that authenticates with <name>.crt
  local kc=$K8S_DIR/pki/$1.kubeconfig k=$K8S_BIN/kubectl
  "$k" --kubeconfig="$kc" config set-cluster inferd-k8s --embed-certs \
    --server="https://127.0.0.1:$APISERVER_PORT" --certificate-authority="$K8S_DIR/pki/ca.crt" > /dev/null
  "$k" --kubeconfig="$kc" config set-credentials "$1" --embed-certs \
    --client-certificate="$K8S_DIR/pki/$1.crt" --client-key="$K8S_DIR/pki/$1.key" > /dev/null
  "$k" --kubeconfig="$kc" config set-context inferd-k8s --cluster=inferd-k8s --user="$1" > /dev/null
  "$k" --kubeconfig="$kc" config use-context inferd-k8s > /dev/null
}

make_pki() {
  mkdir -p "$K8S_DIR/pki"
  (
    cd "$K8S_DIR/pki"
    openssl genrsa -out ca.key 2048 2> /dev/null
    openssl req -x509 -new -nodes -key ca.key -subj "/CN=inferd-k8s-ca" -days 3 -out ca.crt 2> /dev/null
    local sans="DNS:localhost,DNS:$NODE_NAME,DNS:kubernetes,DNS:kubernetes.default"
    sans+=",DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    sans+=",IP:127.0.0.1,IP:10.96.0.1,IP:$NODE_IP"
    printf '%s\n' "subjectAltName=$sans" extendedKeyUsage=serverAuth \
      keyUsage=digitalSignature,keyEncipherment > server.ext
    printf '%s\n' extendedKeyUsage=clientAuth keyUsage=digitalSignature,keyEncipherment > client.ext
    _cert apiserver "/CN=kube-apiserver" server.ext
    _cert admin "/O=system:masters/CN=inferd-k8s-admin" client.ext
    _cert kcm "/CN=system:kube-controller-manager" client.ext
    _cert scheduler "/CN=system:kube-scheduler" client.ext
    _cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" client.ext
    _cert front-proxy-client "/CN=front-proxy-client" client.ext
    openssl genrsa -out sa.key 2048 2> /dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2> /dev/null
  )
  local n
  for n in admin kcm scheduler kubelet; do _kubeconfig "$n"; done
}
