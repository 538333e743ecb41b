#!/usr/bin/env bash
# Starts a local Kubernetes control plane on loopback for Basalt: etcd, kube-apiserver (TLS,
# RBAC, admin client-certificate kubeconfig), kube-controller-manager, KWOK (fake nodes and
# pod lifecycles) and, on request, kube-scheduler. Binaries are built from pinned Go modules
# by build.sh and cached.
#
# Usage: e2e/cluster/up.sh [flags]
#   --state-dir DIR          state, logs and kubeconfig (default: <repo>/_output/local)
#   --nodes N                fake nodes in the default pool (default 8)
#   --node-cpu Q             CPU per node (default 32)
#   --node-memory Q          memory per node (default 256Gi)
#   --node-gpus N            nvidia.com/gpu per node (default 8; 0 = none)
#   --node-pods N            max pods per node (default 110)
#   --gpu-product NAME       nvidia.com/gpu.product label (default NVIDIA-A100-SXM4-80GB)
#   --racks N                spread nodes over N racks: topology.basalt.dev/rack=rack-<i> (default 2)
#   --pool SPEC              an extra node pool, repeatable:
#                            name=a10,nodes=4,cpu=16,memory=64Gi,gpus=2,gpu-product=NVIDIA-A10,pods=110,racks=1
#                            vgpus=N registers N GPUs per node for vGPU sharing as Volcano's vGPU
#                            device plugin does (annotation volcano.sh/node-vgpu-register and
#                            the handshake; capacity volcano.sh/vgpu-number, -memory, -cores),
#                            each vgpu-memory MiB (default 16384) split into vgpu-split vGPUs
#                            (default 10)
#                            gpu-memory=23028 (MiB) and gpu-family=ampere add GPU feature discovery's
#                            nvidia.com/gpu.memory and nvidia.com/gpu.family labels
#   --with-kube-scheduler    also build and start kube-scheduler
#   --apiserver-port P       fixed kube-apiserver port (default: a free port)
#   --apiserver-arg ARG      an extra kube-apiserver flag, repeatable (e.g. --feature-gates=X=true)
#   --controller-manager-arg ARG
#                            an extra kube-controller-manager flag, repeatable
#   --replace                stop a cluster already running in the state dir and start fresh
#   --reuse                  if a healthy cluster already runs in the state dir, keep it (exit 0)
#   --timeout SECONDS        readiness timeout per component (default 120)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NODES=8 NODE_CPU=32 NODE_MEMORY=256Gi NODE_GPUS=8 NODE_PODS=110
GPU_PRODUCT=NVIDIA-A100-SXM4-80GB RACKS=2
POOLS=() WITH_SCHEDULER=0 APISERVER_PORT="" REPLACE=0 REUSE=0 TIMEOUT=120
KAS_EXTRA=() KCM_EXTRA=()

need_arg() { [[ $# -ge 2 && -n $2 ]] || die "flag $1 needs a value (see --help)"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --state-dir) need_arg "$@"; STATE_DIR=$2; shift 2 ;;
    --nodes) need_arg "$@"; NODES=$2; shift 2 ;;
    --node-cpu) need_arg "$@"; NODE_CPU=$2; shift 2 ;;
    --node-memory) need_arg "$@"; NODE_MEMORY=$2; shift 2 ;;
    --node-gpus) need_arg "$@"; NODE_GPUS=$2; shift 2 ;;
    --node-pods) need_arg "$@"; NODE_PODS=$2; shift 2 ;;
    --gpu-product) need_arg "$@"; GPU_PRODUCT=$2; shift 2 ;;
    --racks) need_arg "$@"; RACKS=$2; shift 2 ;;
    --pool) need_arg "$@"; POOLS+=("$2"); shift 2 ;;
    --with-kube-scheduler) WITH_SCHEDULER=1; shift ;;
    --apiserver-port) need_arg "$@"; APISERVER_PORT=$2; shift 2 ;;
    --apiserver-arg) need_arg "$@"; KAS_EXTRA+=("$2"); shift 2 ;;
    --controller-manager-arg) need_arg "$@"; KCM_EXTRA+=("$2"); shift 2 ;;
    --replace) REPLACE=1; shift ;;
    --reuse) REUSE=1; shift ;;
    --timeout) need_arg "$@"; TIMEOUT=$2; shift 2 ;;
    -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown flag '$1' (see e2e/cluster/up.sh --help)" ;;
  esac
done
for v in NODES NODE_GPUS NODE_PODS RACKS TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "--$(echo "$v" | tr 'A-Z_' 'a-z-') must be a non-negative integer, got '${!v}'"
done
((RACKS >= 1)) || die "--racks must be at least 1"
[[ -z $APISERVER_PORT || $APISERVER_PORT =~ ^[0-9]+$ ]] || die "--apiserver-port must be a port number, got '$APISERVER_PORT'"

# Validate extra pools before anything starts: name=..,nodes=..,cpu=..,memory=..,gpus=..,pods=..,gpu-product=..,racks=..,
# gpu-memory=..,gpu-family=..
POOL_ROWS=()
for spec in "${POOLS[@]}"; do
  p_name="" p_nodes=4 p_cpu=$NODE_CPU p_mem=$NODE_MEMORY p_gpus=0 p_pods=$NODE_PODS p_prod=$GPU_PRODUCT p_racks=1
  p_vgpus=0 p_vmem=16384 p_vsplit=10 p_gmem=- p_fam=-
  IFS=',' read -ra kvs <<<"$spec"
  for kv in "${kvs[@]}"; do
    case ${kv%%=*} in
      name) p_name=${kv#*=} ;; nodes) p_nodes=${kv#*=} ;; cpu) p_cpu=${kv#*=} ;;
      memory) p_mem=${kv#*=} ;; gpus) p_gpus=${kv#*=} ;; pods) p_pods=${kv#*=} ;;
      gpu-product) p_prod=${kv#*=} ;; racks) p_racks=${kv#*=} ;;
      vgpus) p_vgpus=${kv#*=} ;; vgpu-memory) p_vmem=${kv#*=} ;; vgpu-split) p_vsplit=${kv#*=} ;;
      gpu-memory) p_gmem=${kv#*=} ;; gpu-family) p_fam=${kv#*=} ;;
      *) die "--pool '$spec': unknown key '${kv%%=*}' (known: name nodes cpu memory gpus pods gpu-product racks vgpus vgpu-memory vgpu-split gpu-memory gpu-family)" ;;
    esac
  done
  [[ $p_name =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "--pool '$spec': name= must be a DNS label, got '$p_name'"
  [[ $p_name != gpu ]] || die "--pool '$spec': the name 'gpu' is taken by the default pool"
  [[ $p_nodes =~ ^[0-9]+$ && $p_gpus =~ ^[0-9]+$ && $p_pods =~ ^[0-9]+$ && $p_racks =~ ^[1-9][0-9]*$ ]] ||
    die "--pool '$spec': nodes, gpus and pods must be integers and racks >= 1"
  [[ $p_vgpus =~ ^[0-9]+$ && $p_vmem =~ ^[1-9][0-9]*$ && $p_vsplit =~ ^[1-9][0-9]*$ ]] ||
    die "--pool '$spec': vgpus must be an integer, vgpu-memory and vgpu-split positive integers"
  [[ $p_gmem == - || $p_gmem =~ ^[1-9][0-9]*$ ]] || die "--pool '$spec': gpu-memory= is MiB per GPU (an integer), got '$p_gmem'"
  [[ $p_fam == - || $p_fam =~ ^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$ ]] || die "--pool '$spec': gpu-family= must be a label value, got '$p_fam'"
  POOL_ROWS+=("$p_name $p_nodes $p_cpu $p_mem $p_gpus $p_pods $p_prod $p_racks $p_vgpus $p_vmem $p_vsplit $p_gmem $p_fam")
done

mkdir -p "$STATE_DIR"
STATE_DIR=$(cd "$STATE_DIR" && pwd)
PKI=$STATE_DIR/pki LOGS=$STATE_DIR/logs PIDS=$STATE_DIR/pids
KUBECONFIG_OUT=$STATE_DIR/kubeconfig
export KUBECONFIG=$KUBECONFIG_OUT

cluster_healthy() {
  [[ -f $KUBECONFIG_OUT && -d $PIDS ]] || return 1
  local f
  for f in "$PIDS"/*.pid; do
    [[ -f $f ]] || return 1
    kill -0 "$(cat "$f")" 2>/dev/null || return 1
  done
  kubectl get --raw /readyz >/dev/null 2>&1
}

if compgen -G "$PIDS/*.pid" >/dev/null; then
  if ((REUSE)) && cluster_healthy; then
    log "reusing the running cluster in $STATE_DIR"
    echo "export KUBECONFIG=$KUBECONFIG_OUT"
    exit 0
  fi
  if ((REPLACE || REUSE)); then
    "$CLUSTER_DIR/down.sh" --state-dir "$STATE_DIR" --quiet
  else
    die "a cluster is already running in $STATE_DIR (pids in $PIDS); stop it with e2e/cluster/down.sh --state-dir $STATE_DIR, or pass --replace or --reuse"
  fi
fi

# ---- binaries ---------------------------------------------------------------------------
build_flags=()
((WITH_SCHEDULER)) && build_flags+=(--with-kube-scheduler)
"$CLUSTER_DIR/build.sh" "${build_flags[@]}"
ETCD_BIN=$(find_bin etcd "$ETCD_VERSION" etcd) || die "etcd binary missing after build"
KWOK_BIN=$(find_bin kwok "$KWOK_VERSION" kwok) || die "kwok binary missing after build"
KAS_BIN=$(find_bin kubernetes "$KUBERNETES_VERSION" kube-apiserver) || die "kube-apiserver binary missing after build"
KCM_BIN=$(find_bin kubernetes "$KUBERNETES_VERSION" kube-controller-manager) || die "kube-controller-manager binary missing after build"
if ((WITH_SCHEDULER)); then
  KS_BIN=$(find_bin kubernetes "$KUBERNETES_VERSION" kube-scheduler) || die "kube-scheduler binary missing after build"
fi
command -v kubectl >/dev/null || die "kubectl not found on PATH (Debian: apt-get install kubectl, or put a kubectl >= 1.32 on PATH)"
command -v openssl >/dev/null || die "openssl not found (run hack/install-deps.sh)"

# ---- state, ports ------------------------------------------------------------------------
rm -rf "$STATE_DIR/etcd-data" "$PKI" "$LOGS" "$PIDS"
mkdir -p "$PKI" "$LOGS" "$PIDS"

STARTED_OK=0
cleanup_on_failure() {
  local rc=$?
  if ((STARTED_OK == 0)); then
    log "start-up failed; stopping what was started"
    "$CLUSTER_DIR/down.sh" --state-dir "$STATE_DIR" --quiet || true
  fi
  exit "$rc"
}
trap cleanup_on_failure EXIT

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Ports below the kernel's ephemeral range: a port picked inside it can be taken by any outbound
# connection (the API server's to etcd, a kubectl) between the pick and the bind (seen: kwok
# "bind: address already in use").
EPHEMERAL_LOW=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
if ((EPHEMERAL_LOW > 22000)); then PORT_LOW=20000 PORT_SPAN=$((EPHEMERAL_LOW - 20000)); else PORT_LOW=20000 PORT_SPAN=30000; fi
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((PORT_LOW + RANDOM % PORT_SPAN))
    if ! port_in_use "$p" && ! grep -qx "$p" "$STATE_DIR/.ports" 2>/dev/null; then
      echo "$p" >>"$STATE_DIR/.ports"
      echo "$p"
      return 0
    fi
  done
  die "no free TCP port found on 127.0.0.1"
}
: >"$STATE_DIR/.ports"
if [[ -n $APISERVER_PORT ]]; then
  port_in_use "$APISERVER_PORT" && die "--apiserver-port $APISERVER_PORT: 127.0.0.1:$APISERVER_PORT is already in use (another cluster? see 'ss -ltnp | grep :$APISERVER_PORT'); choose another port or omit the flag"
  KAS_PORT=$APISERVER_PORT
  echo "$KAS_PORT" >>"$STATE_DIR/.ports"
else
  KAS_PORT=$(free_port)
fi
ETCD_PORT=$(free_port) ETCD_PEER_PORT=$(free_port) KWOK_PORT=$(free_port)
KS_PORT=$(free_port)

# ---- PKI ---------------------------------------------------------------------------------
log "generating certificates"
(
  cd "$PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
    -subj "/CN=basalt-local-ca" >/dev/null 2>&1
  cat >server.ext <<EXT
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EXT
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" >/dev/null 2>&1
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt \
    -days 3650 -extfile server.ext >/dev/null 2>&1
  cat >client.ext <<EXT
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
EXT
  mkclient() { # name subject
    openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" >/dev/null 2>&1
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" \
      -days 3650 -extfile client.ext >/dev/null 2>&1
  }
  mkclient admin "/O=system:masters/CN=admin"
  mkclient kube-controller-manager "/CN=system:kube-controller-manager"
  mkclient kube-scheduler "/CN=system:kube-scheduler"
  mkclient kwok "/O=system:masters/CN=kwok-controller"
  openssl genrsa -out sa.key 2048 >/dev/null 2>&1
  openssl rsa -in sa.key -pubout -out sa.pub >/dev/null 2>&1
  rm -f ./*.csr ./*.ext
) || die "certificate generation with openssl failed"

write_kubeconfig() { # file user
  local f=$1 user=$2
  cat >"$f" <<KC
apiVersion: v1
kind: Config
clusters:
- name: basalt-local
  cluster:
    server: https://127.0.0.1:$KAS_PORT
    certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 "$PKI/$user.crt")
    client-key-data: $(base64 -w0 "$PKI/$user.key")
contexts:
- name: basalt-local
  context:
    cluster: basalt-local
    user: $user
current-context: basalt-local
KC
  chmod 600 "$f"
}

# ---- process helpers ---------------------------------------------------------------------
# start NAME BINARY ARGS... : runs detached (own session), logs to $LOGS/NAME.log, pid file.
start() {
  local name=$1; shift
  setsid "$@" </dev/null >"$LOGS/$name.log" 2>&1 &
  echo $! >"$PIDS/$name.pid"
  echo "$1" >"$PIDS/$name.cmd"
}

# wait_until NAME DESCRIPTION CMD... : polls CMD until success, the process dies or timeout.
wait_until() {
  local name=$1 what=$2; shift 2
  local deadline=$((SECONDS + TIMEOUT)) pid
  pid=$(cat "$PIDS/$name.pid")
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "---- last lines of $LOGS/$name.log ----" >&2
      tail -n 25 "$LOGS/$name.log" >&2
      die "$name exited while waiting for $what (full log: $LOGS/$name.log)"
    fi
    if ((SECONDS >= deadline)); then
      echo "---- last lines of $LOGS/$name.log ----" >&2
      tail -n 25 "$LOGS/$name.log" >&2
      die "$name: timed out after ${TIMEOUT}s waiting for $what (full log: $LOGS/$name.log)"
    fi
    sleep 0.2
  done
}

T0=$SECONDS

# ---- etcd --------------------------------------------------------------------------------
log "starting etcd $ETCD_VERSION on 127.0.0.1:$ETCD_PORT"
start etcd "$ETCD_BIN" --name=basalt --data-dir="$STATE_DIR/etcd-data" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="basalt=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level=warn \
  --quota-backend-bytes=8589934592
echo "http://127.0.0.1:$ETCD_PORT" >"$STATE_DIR/etcd-url"
wait_until etcd "GET /health" curl -fsS "http://127.0.0.1:$ETCD_PORT/health"

# ---- kube-apiserver ----------------------------------------------------------------------
# --watch-cache-sizes=podtemplates#0: watches of PodTemplates (which nothing here uses) are
# served by etcd directly, so a test can force 410 Gone at once by compacting etcd; every
# other resource keeps the watch cache, as in a production cluster.
log "starting kube-apiserver $KUBERNETES_VERSION on https://127.0.0.1:$KAS_PORT"
start kube-apiserver "$KAS_BIN" \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$KAS_PORT" \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --client-ca-file="$PKI/ca.crt" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --api-audiences=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range=10.96.0.0/16 \
  --authorization-mode=RBAC \
  --endpoint-reconciler-type=none \
  --allow-privileged=true \
  --profiling=false \
  --watch-cache-sizes=podtemplates#0 \
  --cert-dir="$STATE_DIR/apiserver-certs" ${KAS_EXTRA[@]+"${KAS_EXTRA[@]}"}
write_kubeconfig "$KUBECONFIG_OUT" admin
write_kubeconfig "$STATE_DIR/kube-controller-manager.kubeconfig" kube-controller-manager
write_kubeconfig "$STATE_DIR/kube-scheduler.kubeconfig" kube-scheduler
write_kubeconfig "$STATE_DIR/kwok.kubeconfig" kwok
wait_until kube-apiserver "/readyz" kubectl get --raw /readyz
wait_until kube-apiserver "the default namespace" kubectl get namespace default

# ---- kube-controller-manager -------------------------------------------------------------
log "starting kube-controller-manager"
start kube-controller-manager "$KCM_BIN" \
  --kubeconfig="$STATE_DIR/kube-controller-manager.kubeconfig" \
  --authentication-kubeconfig="$STATE_DIR/kube-controller-manager.kubeconfig" \
  --authorization-kubeconfig="$STATE_DIR/kube-controller-manager.kubeconfig" \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 \
  --controllers='*' \
  --use-service-account-credentials=true \
  --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
  --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
  --service-cluster-ip-range=10.96.0.0/16 \
  --concurrent-gc-syncs=10 --kube-api-qps=200 --kube-api-burst=400 ${KCM_EXTRA[@]+"${KCM_EXTRA[@]}"}
wait_until kube-controller-manager "the default service account" kubectl -n default get serviceaccount default

# ---- kube-scheduler (optional) -------------------------------------------------------------
if ((WITH_SCHEDULER)); then
  log "starting kube-scheduler"
  start kube-scheduler "$KS_BIN" --kubeconfig="$STATE_DIR/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="$STATE_DIR/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="$STATE_DIR/kube-scheduler.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port="$KS_PORT"
  wait_until kube-scheduler "/healthz" curl -fsSk "https://127.0.0.1:$KS_PORT/healthz"
fi

# ---- KWOK --------------------------------------------------------------------------------
log "starting kwok $KWOK_VERSION"
start kwok "$KWOK_BIN" --kubeconfig="$STATE_DIR/kwok.kubeconfig" \
  --config="$CLUSTER_DIR/kwok-stages.yaml" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --cidr=10.128.0.0/12 --node-ip=10.127.0.1 --node-lease-duration-seconds=40 \
  --server-address="127.0.0.1:$KWOK_PORT" --v=WARN
wait_until kwok "/healthz" curl -fsS "http://127.0.0.1:$KWOK_PORT/healthz"

# ---- fake nodes --------------------------------------------------------------------------
# vgpu_register NODE GPUS MEMORY SPLIT PRODUCT: the volcano.sh/node-vgpu-register value the
# vGPU device plugin writes: "<uuid>,<vGPUs>,<memory MiB>,<type>,<healthy>,<mode>:" per GPU.
vgpu_register() {
  local i out=""
  for ((i = 0; i < $2; i++)); do out+="GPU-$1-$i,$4,$3,NVIDIA-$5,true,hami-core:"; done
  echo "$out"
}

# node_yaml NAME POOL CPU MEMORY GPUS PODS PRODUCT RACK [VGPUS VGPU_MEMORY VGPU_SPLIT
#           [GPU_MEMORY_MIB|- [GPU_FAMILY|-]]]
node_yaml() {
  local vgpus=${9:-0} vmem=${10:-16384} vsplit=${11:-10}
  cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
$( ((vgpus > 0)) && echo "    volcano.sh/node-vgpu-register: \"$(vgpu_register "$1" "$vgpus" "$vmem" "$vsplit" "$7")\"" &&
  echo "    volcano.sh/node-vgpu-handshake: \"Reported $(date -u '+%Y-%m-%d %H:%M:%S')\"")
  labels:
    kubernetes.io/hostname: $1
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    basalt.dev/pool: $2
    topology.basalt.dev/rack: $8
$( (($5 > 0)) && echo "    nvidia.com/gpu.product: $7" && echo "    nvidia.com/gpu.count: \"$5\"")
$( (($5 > 0)) && [[ ${12:--} != - ]] && echo "    nvidia.com/gpu.memory: \"${12}\"")
$( (($5 > 0)) && [[ ${13:--} != - ]] && echo "    nvidia.com/gpu.family: ${13}")
status:
  capacity: &res
    cpu: "$3"
    memory: $4
    pods: "$6"
    ephemeral-storage: 1Ti
$( (($5 > 0)) && echo "    nvidia.com/gpu: \"$5\"")
$( ((vgpus > 0)) && echo "    volcano.sh/vgpu-number: \"$((vgpus * vsplit))\"" &&
  echo "    volcano.sh/vgpu-memory: \"$((vgpus * vmem))\"" &&
  echo "    volcano.sh/vgpu-cores: \"$((vgpus * 100))\"")
  allocatable: *res
NODE
}

nodes_file=$STATE_DIR/nodes.yaml
: >"$nodes_file"
total_nodes=0
add_pool() { # name count cpu memory gpus pods product racks [vgpus vgpu-memory vgpu-split [gpu-memory gpu-family]]
  local i
  for ((i = 0; i < $2; i++)); do
    node_yaml "$1-node-$i" "$1" "$3" "$4" "$5" "$6" "$7" "rack-$((i % $8))" "${9:-0}" "${10:-16384}" \
      "${11:-10}" "${12:--}" "${13:--}" >>"$nodes_file"
    total_nodes=$((total_nodes + 1))
  done
}
add_pool gpu "$NODES" "$NODE_CPU" "$NODE_MEMORY" "$NODE_GPUS" "$NODE_PODS" "$GPU_PRODUCT" "$RACKS"
for row in "${POOL_ROWS[@]}"; do
  # shellcheck disable=SC2086
  add_pool $row
done

if ((total_nodes > 0)); then
  log "creating $total_nodes fake nodes"
  kubectl apply -f "$nodes_file" >"$LOGS/nodes-apply.log" 2>&1 || {
    tail -n 20 "$LOGS/nodes-apply.log" >&2
    die "creating fake nodes failed (see $LOGS/nodes-apply.log)"
  }
  all_ready() {
    local n
    n=$(kubectl get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.taints[*].key}{"\n"}{end}' |
      grep -c '^True $' || true)
    ((n == total_nodes))
  }
  wait_until kwok "$total_nodes nodes Ready and untainted" all_ready
fi

cat >"$STATE_DIR/cluster.env" <<ENV
KUBECONFIG=$KUBECONFIG_OUT
APISERVER_URL=https://127.0.0.1:$KAS_PORT
ETCD_URL=http://127.0.0.1:$ETCD_PORT
KWOK_URL=http://127.0.0.1:$KWOK_PORT
KUBERNETES_VERSION=$KUBERNETES_VERSION
ENV
STARTED_OK=1
log "cluster ready in $((SECONDS - T0))s: $total_nodes nodes, kube-apiserver https://127.0.0.1:$KAS_PORT"
echo "export KUBECONFIG=$KUBECONFIG_OUT"
