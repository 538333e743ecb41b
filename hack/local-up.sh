#!/usr/bin/env bash
# Builds Basalt and brings up a local cluster with the whole suite running:
# etcd + kube-apiserver + kube-controller-manager + KWOK fake nodes (e2e/cluster/up.sh),
# Basalt's CRDs, and every Basalt component that exists as a local process.
# Flags are passed to e2e/cluster/up.sh (e.g. --nodes 16 --node-gpus 4, --with-kube-scheduler),
# except --scheduler-conf FILE (or --scheduler-conf=FILE): vc-scheduler runs with that
# configuration file (Volcano's volcano-scheduler.conf format; it is re-read when it changes),
# e.g. one with "actions: enqueue, allocate, backfill, reclaim, preempt".
# A healthy cluster that is already running is reused. Stop everything: hack/local-down.sh
# State, certificates and logs: _output/local (BASALT_LOCAL_DIR overrides it, for a second one).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
STATE_DIR=${BASALT_LOCAL_DIR:-$REPO_ROOT/_output/local}
export BASALT_STATE_DIR=$STATE_DIR

SCHEDULER_CONF=""
CLUSTER_ARGS=()
while (($#)); do
  case $1 in
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exec "$REPO_ROOT/e2e/cluster/up.sh" --help ;;
    --scheduler-conf) [[ $# -ge 2 ]] || { hlog "--scheduler-conf needs a file"; exit 2; }
      SCHEDULER_CONF=$2; shift 2 ;;
    --scheduler-conf=*) SCHEDULER_CONF=${1#*=}; shift ;;
    *) CLUSTER_ARGS+=("$1"); shift ;;
  esac
done
if [[ -n $SCHEDULER_CONF ]]; then
  [[ -r $SCHEDULER_CONF ]] || { hlog "cannot read the scheduler configuration $SCHEDULER_CONF"; exit 2; }
  SCHEDULER_CONF=$(cd "$(dirname "$SCHEDULER_CONF")" && pwd)/$(basename "$SCHEDULER_CONF")
fi
set -- "${CLUSTER_ARGS[@]}"
SCHEDULER_ARGS=()
[[ -n $SCHEDULER_CONF ]] && SCHEDULER_ARGS+=(--scheduler-conf="$SCHEDULER_CONF")

"$HACK_DIR/install-deps.sh"
mkdir -p "$REPO_ROOT/_output"
hlog "building Basalt into $BUILD_DIR"
build_basalt >"$REPO_ROOT/_output/build.log" 2>&1 || { tail -n 40 "$REPO_ROOT/_output/build.log" >&2; hlog "build failed (full log: _output/build.log)"; exit 1; }

ensure_kubectl
"$REPO_ROOT/e2e/cluster/up.sh" --state-dir "$STATE_DIR" --reuse "$@" >/dev/null
export KUBECONFIG=$STATE_DIR/kubeconfig

if compgen -G "$REPO_ROOT/crds/*.yaml" >/dev/null; then
  hlog "applying CRDs"
  kubectl apply --server-side --force-conflicts -f "$REPO_ROOT/crds/" >/dev/null
  kubectl wait --for condition=established --timeout=60s -f "$REPO_ROOT/crds/" >/dev/null
fi

# Basalt components run as local processes; down.sh stops them with the cluster.
start_component() { # name binary args...
  local name=$1 bin=$2; shift 2
  [[ -x $bin ]] || return 0
  local pidf=$STATE_DIR/pids/$name.pid
  if [[ -f $pidf ]] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
    hlog "restarting $name"
    kill -TERM "$(cat "$pidf")" 2>/dev/null || true
    sleep 1
  fi
  hlog "starting $name"
  setsid "$bin" "$@" </dev/null >"$STATE_DIR/logs/$name.log" 2>&1 &
  echo $! >"$pidf"
  echo "$bin" >"$STATE_DIR/pids/$name.cmd"
}
if [[ -x $BUILD_DIR/webhook/vc-webhook-manager && -x $REPO_ROOT/hack/webhook-register-local.sh ]]; then
  "$REPO_ROOT/hack/webhook-register-local.sh" "$STATE_DIR" "$BUILD_DIR/webhook/vc-webhook-manager"
fi
start_component vc-controller-manager "$BUILD_DIR/controllers/vc-controller-manager" \
  --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 --health-addr=127.0.0.1:0 -v=2
start_component vc-scheduler "$BUILD_DIR/scheduler/vc-scheduler" \
  --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 \
  --health-addr=127.0.0.1:0 --scheduler-name=volcano --schedule-period=1s -v=2 \
  "${SCHEDULER_ARGS[@]}"

# Ready for the lines below: the components create the default queue once they are connected
# (the webhook admits it), so a job applied right after this script finds its queue.
deadline=$((SECONDS + 90))
until kubectl get queue default >/dev/null 2>&1; do
  if ((SECONDS >= deadline)); then
    hlog "the default queue did not appear within 90s; the components' logs end with:"
    for f in "$STATE_DIR"/logs/vc-*.log; do
      [[ -f $f ]] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }
    done
    exit 1
  fi
  sleep 0.5
done
hlog "default queue present"

# kubectl was built by ensure_kubectl: say where it is.
KUBECTL_HINT=""
[[ $(command -v kubectl) == "${BASALT_CACHE_DIR:-$HOME/.cache/basalt}"/* ]] &&
  KUBECTL_HINT=$'\n'"export PATH=$(dirname "$(command -v kubectl)"):\$PATH"

cat <<MSG

Basalt is up. Logs: $STATE_DIR/logs/   Stop: hack/local-down.sh

export KUBECONFIG=$KUBECONFIG${KUBECTL_HINT:-}
kubectl get nodes -o custom-columns=NAME:.metadata.name,READY:.status.conditions[-1].status,GPUS:.status.allocatable.nvidia\\.com/gpu
kubectl apply -f $REPO_ROOT/examples/queue-ai-training.yaml -f $REPO_ROOT/examples/job-bert-pretrain.yaml
kubectl get vcjob,podgroup,queue
$BUILD_DIR/cli/vcctl job list    # vcctl: docs/vcctl.md
MSG
