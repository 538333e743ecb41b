# shellcheck shell=bash
# The whole suite as the Helm chart deploys it, run as local processes against the test cluster:
# each component with its own ServiceAccount's token (never the admin certificate) under the
# chart's RBAC, with the chart's own args (only addresses, ports and file paths are local).
# Source after e2e/lib/testlib.sh. Used by e2e/manifests/least_privilege_test.sh and
# e2e/leaderelection/ha_test.sh.
#
#   suite_init PREFIX      renders the chart for a fresh release namespace $SUITE_NS (cluster-
#                          scoped names get the suffix -$SUITE_NS), applies the CRDs and the
#                          chart's RBAC, and writes one kubeconfig per component with a token of
#                          its ServiceAccount ($SUITE_DIR/<component>.kubeconfig)
#   suite_start C ID [ARGS...]
#                          starts replica ID of component C (scheduler, controllers, admission)
#                          with the chart's args plus ARGS; sets SUITE_PID[C-ID],
#                          SUITE_HEALTH[C-ID] (health and metrics port), SUITE_LOG[C-ID];
#                          for admission also SUITE_PORT[C-ID] (HTTPS)
#   suite_wait_ready C-ID  waits for /readyz of a replica
#   suite_kill C-ID [SIG]  signals a replica (default KILL) and waits for it
#   suite_proxy PORT...    a TCP proxy on loopback over the given ports (what a Service does for
#                          the webhook's replicas: round robin; a refused connection goes to the
#                          next); sets SUITE_PROXY_PORT
#   suite_register_webhooks PORT
#                          applies the chart's webhook configurations, pointed at
#                          https://127.0.0.1:PORT and without caBundle (the webhook patches it
#                          in), waits for the caBundle and until the API server enforces them
#   suite_forbidden        prints every log line of every replica that shows a 403
#   suite_metric C-ID NAME the value of an unlabelled metric of a replica ("" if absent)
#   suite_metric_sum C-ID NAME  the sum of all series of a metric (0 if absent)
#   suite_holder LEASE     holderIdentity of a Lease in $SUITE_NS
# The workloads go into another namespace: the webhooks never see the release namespace.

: "${BASALT_BUILD_DIR:?BASALT_BUILD_DIR must be the CMake build directory}"
: "${BASALT_TEST_CLUSTER_DIR:?BASALT_TEST_CLUSTER_DIR must be the test cluster state dir}"
SUITE_CHART=$BASALT_REPO_ROOT/manifests/helm/basalt
SUITE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/basalt-suite-$E2E_NAME.XXXXXX")
SUITE_NS="" SUITE_SUFFIX="" SUITE_PROXY_PORT="" SUITE_PROXY_PID=""
declare -A SUITE_PID SUITE_HEALTH SUITE_LOG SUITE_PORT
mkdir -p "$BASALT_TEST_CLUSTER_DIR/pids" "$BASALT_TEST_CLUSTER_DIR/logs"

suite_bin() {
  case $1 in
    scheduler) echo "$BASALT_BUILD_DIR/scheduler/vc-scheduler" ;;
    controllers) echo "$BASALT_BUILD_DIR/controllers/vc-controller-manager" ;;
    admission) echo "$BASALT_BUILD_DIR/webhook/vc-webhook-manager" ;;
  esac
}
suite_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

suite_init() {
  # Keep PREFIX short: the webhook's certificate carries volcano-admission-service.<ns>.svc as
  # its common name, which X.509 limits to 64 characters.
  local c
  for c in scheduler controllers admission; do
    [[ -x $(suite_bin $c) ]] || { fail "not built: $(suite_bin $c)"; exit 1; }
  done
  "$BASALT_REPO_ROOT/e2e/cluster/build.sh" --with-helm >/dev/null
  local helm
  # shellcheck source=../cluster/lib.sh
  helm=$(source "$BASALT_REPO_ROOT/e2e/cluster/lib.sh" && find_bin helm "$HELM_VERSION" helm) ||
    { fail "no helm binary after e2e/cluster/build.sh --with-helm"; exit 1; }
  SUITE_NS=$(new_namespace "$1")
  SUITE_SUFFIX="-$SUITE_NS"
  "$helm" template basalt "$SUITE_CHART" -n "$SUITE_NS" --set clusterResourceSuffix="$SUITE_SUFFIX" \
    --kube-version "$(kubectl version -o json | jq -r .serverVersion.gitVersion)" \
    --output-dir "$SUITE_DIR/chart" >/dev/null
  SUITE_RENDERED=$SUITE_DIR/chart/basalt/templates
  kubectl apply --server-side --force-conflicts -f "$BASALT_REPO_ROOT/crds" >/dev/null
  kubectl wait --for condition=established --timeout=60s -f "$BASALT_REPO_ROOT/crds" >/dev/null
  kubectl apply -f "$SUITE_RENDERED/rbac.yaml" >/dev/null
  # The scheduler configuration the chart's ConfigMap carries.
  yq -r 'select(.kind == "ConfigMap") | .data["volcano-scheduler.conf"]' \
    "$SUITE_RENDERED/scheduler-config.yaml" >"$SUITE_DIR/volcano-scheduler.conf"

  local server ca sa token
  server=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  for c in scheduler controllers admission; do
    sa=volcano-$c
    token=$(kubectl -n "$SUITE_NS" create token "$sa" --duration=1h) ||
      { fail "kubectl create token $sa"; exit 1; }
    cat >"$SUITE_DIR/$c.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "$server", certificate-authority-data: "$ca"}
users:
- name: $sa
  user: {token: "$token"}
contexts:
- name: $sa
  context: {cluster: test, user: $sa}
current-context: $sa
KC
    chmod 600 "$SUITE_DIR/$c.kubeconfig"
  done
}

# suite_args C: the container args of component C's Deployment in the chart, without the ones
# naming in-pod ports and paths.
suite_args() {
  yq -r --arg n "volcano-$1" 'select(.kind == "Deployment" and .metadata.name == $n) | .spec.template.spec.containers[0].args[]' \
    "$SUITE_RENDERED/deployments.yaml" | grep -vE '^--(port|metrics-addr|health-addr|scheduler-conf)='
}

suite_start() {
  local c=$1 id=$2 key="$1-$2" bin health
  shift 2
  bin=$(suite_bin "$c")
  health=$(suite_free_port)
  local args
  mapfile -t args < <(suite_args "$c")
  args+=(--kubeconfig="$SUITE_DIR/$c.kubeconfig" --metrics-addr="127.0.0.1:$health"
    --health-addr="127.0.0.1:$health")
  case $c in
    scheduler) args+=(--scheduler-conf="$SUITE_DIR/volcano-scheduler.conf") ;;
    admission) args+=(--listen-address=127.0.0.1 --port=0) ;;
  esac
  SUITE_LOG[$key]=$SUITE_DIR/$key.log
  "$bin" "${args[@]}" "$@" </dev/null >>"${SUITE_LOG[$key]}" 2>&1 &
  SUITE_PID[$key]=$!
  SUITE_HEALTH[$key]=$health
  echo "${SUITE_PID[$key]}" >"$BASALT_TEST_CLUSTER_DIR/pids/suite-$E2E_NAME-$key.pid"
  echo "$bin" >"$BASALT_TEST_CLUSTER_DIR/pids/suite-$E2E_NAME-$key.cmd"
  if [[ $c == admission ]]; then
    local i port=""
    for ((i = 0; i < 300; i++)); do
      [[ -z $port ]] || break
      port=$({ grep -a -m1 'Serving admission webhook' "${SUITE_LOG[$key]}" || true; } | sed -nE 's/.* port=([0-9]+).*/\1/p')
      [[ -n $port ]] || sleep 0.1
    done
    [[ -n $port ]] || { fail "$key did not start serving"; tail -n 20 "${SUITE_LOG[$key]}" >&2; exit 1; }
    SUITE_PORT[$key]=$port
  fi
}

suite_ready() { curl -fsS "http://127.0.0.1:${SUITE_HEALTH[$1]}/readyz" >/dev/null 2>&1; }
suite_wait_ready() { wait_for "$1 ready (/readyz)" "${2:-30}" suite_ready "$1"; }

suite_kill() {
  local key=$1 pid=${SUITE_PID[$1]:-}
  [[ -n $pid ]] || return 0
  kill -"${2:-KILL}" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "SUITE_PID[$key]"
  rm -f "$BASALT_TEST_CLUSTER_DIR/pids/suite-$E2E_NAME-$key".{pid,cmd}
}

suite_metric() {
  curl -fsS "http://127.0.0.1:${SUITE_HEALTH[$1]}/metrics" 2>/dev/null | awk -v m="$2" '$1 == m {print $2}'
}

# suite_metric_sum C-ID NAME: the sum of every series of metric NAME (0 if absent).
suite_metric_sum() {
  curl -fsS "http://127.0.0.1:${SUITE_HEALTH[$1]}/metrics" 2>/dev/null |
    awk -v m="$2" '{ n = $1; sub(/\{.*/, "", n) } n == m { s += $NF } END { printf "%d\n", s }'
}

suite_holder() { kubectl -n "$SUITE_NS" get lease "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

suite_proxy() {
  SUITE_PROXY_PORT=$(suite_free_port)
  python3 - "$SUITE_PROXY_PORT" "$@" >"$SUITE_DIR/proxy.log" 2>&1 <<'PY' &
import asyncio, itertools, sys

listen, backends = int(sys.argv[1]), [int(p) for p in sys.argv[2:]]
turn = itertools.count()

async def pipe(r, w):
    try:
        while data := await r.read(65536):
            w.write(data)
            await w.drain()
    except OSError:
        pass
    finally:
        w.close()

async def serve(cr, cw):
    start = next(turn)
    for i in range(len(backends)):
        port = backends[(start + i) % len(backends)]
        try:
            br, bw = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            continue
        await asyncio.gather(pipe(cr, bw), pipe(br, cw))
        return
    cw.close()

async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()

asyncio.run(main())
PY
  SUITE_PROXY_PID=$!
  local i
  for ((i = 0; i < 100; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$SUITE_PROXY_PORT") 2>/dev/null && return 0
    sleep 0.1
  done
  fail "the TCP proxy did not start: $(cat "$SUITE_DIR/proxy.log")"
  exit 1
}

suite_config_names() { echo "volcano-admission-service-mutate$SUITE_SUFFIX volcano-admission-service-validate$SUITE_SUFFIX"; }

suite_register_webhooks() {
  local port=$1
  # Each clientConfig.service (one flow mapping per line) becomes a URL on loopback.
  sed -E "s#^( *)service: \{name: [^,]+, namespace: [^,]+, path: ([^,}]+), port: [0-9]+\}#\1url: https://127.0.0.1:$port\2#" \
    "$SUITE_RENDERED/webhooks.yaml" >"$SUITE_DIR/webhooks.yaml"
  if grep -q 'service:' "$SUITE_DIR/webhooks.yaml"; then
    fail "could not rewrite every clientConfig.service of the chart's webhooks.yaml"
    exit 1
  fi
  kubectl apply -f "$SUITE_DIR/webhooks.yaml" >/dev/null
  local n
  patched() {
    for n in $(suite_config_names); do
      for kind in mutatingwebhookconfiguration validatingwebhookconfiguration; do
        kubectl get "$kind" "$n" >/dev/null 2>&1 || continue
        [[ -z $(kubectl get "$kind" "$n" -o json | jq -r '.webhooks[] | select((.clientConfig.caBundle // "") == "") | .name') ]] || return 1
      done
    done
  }
  wait_for "vc-webhook-manager patched the caBundle of its webhook configurations" 30 patched
  probe() {
    kubectl create --dry-run=server -f - >"$SUITE_DIR/probe.out" 2>&1 <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: webhook-probe, namespace: default}
spec:
  queue: basalt-webhook-probe-no-such-queue
  tasks:
  - {name: t, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}
YAML
    grep -q 'denied the request.*unable to find job queue' "$SUITE_DIR/probe.out"
  }
  wait_for "the API server enforces the webhook configurations" 60 probe ||
    { e2e_log "last answer: $(cat "$SUITE_DIR/probe.out")"; exit 1; }
}

# Lines of a 403 answer in the replicas' logs (the client's message carries the API server's
# "... is forbidden: User ... cannot ..." and the code).
suite_forbidden() {
  local f
  for f in "$SUITE_DIR"/*-*.log; do
    [[ -f $f ]] || continue
    grep -aHiE 'forbidden|HTTP 403' "$f" || true
  done
}

suite_cleanup() {
  local key n
  for key in "${!SUITE_PID[@]}"; do suite_kill "$key"; done
  if [[ -n $SUITE_PROXY_PID ]]; then kill "$SUITE_PROXY_PID" 2>/dev/null || true; wait "$SUITE_PROXY_PID" 2>/dev/null || true; fi
  if [[ -n $SUITE_SUFFIX ]]; then
    for n in $(suite_config_names); do
      kubectl delete mutatingwebhookconfiguration "$n" --ignore-not-found >/dev/null 2>&1 || true
      kubectl delete validatingwebhookconfiguration "$n" --ignore-not-found >/dev/null 2>&1 || true
    done
    for n in scheduler controllers admission; do
      kubectl delete clusterrolebinding "basalt:$n$SUITE_SUFFIX" --ignore-not-found >/dev/null 2>&1 || true
      kubectl delete clusterrole "basalt:$n$SUITE_SUFFIX" --ignore-not-found >/dev/null 2>&1 || true
    done
  fi
  if ((E2E_FAILS > 0)); then
    for key in "${!SUITE_LOG[@]}"; do
      echo "---- last lines of $key ----" >&2
      tail -n 25 "${SUITE_LOG[$key]}" >&2 || true
    done
    # Kept for a look after a failure; CTest's output names the directory.
    cp -r "$SUITE_DIR" "$BASALT_TEST_CLUSTER_DIR/logs/suite-$E2E_NAME" 2>/dev/null || true
    echo "logs: $BASALT_TEST_CLUSTER_DIR/logs/suite-$E2E_NAME" >&2
  fi
  rm -rf "$SUITE_DIR"
}
