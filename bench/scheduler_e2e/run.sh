#!/usr/bin/env bash
# vc-scheduler end to end on a local KWOK cluster, next to the raw bind ceiling.
#
#   e2e/cluster/up.sh --state-dir _output/bench-sched --nodes 1000 --node-pods 110
#   bench/scheduler_e2e/run.sh --state-dir _output/bench-sched --build-dir _output/build [--gangs 500]
#
# 1. bind ceiling: pods created for a scheduler nobody runs are bound by sched_e2e_bench itself
#    with 16 concurrent POST pods/binding (vc-scheduler's --bind-workers default);
# 2. throughput: the same pods in a queue whose capability is 0 while vc-scheduler runs; one
#    PATCH opens the queue; time until every pod is bound;
# 3. latency: vc-scheduler running, gangs created at a steady rate; create->bound p50/p99.
# Each phase uses its own namespace, deleted afterwards. Figures only.
set -euo pipefail
STATE_DIR=_output/bench-sched BUILD_DIR=_output/build GANGS=500 GANG_SIZE=4 RATE=200 LAT_GANGS=250 PERIOD=1s PHASES="bind throughput latency"
while (($#)); do
  case $1 in
    --state-dir) STATE_DIR=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --gangs) GANGS=$2; shift 2 ;;
    --gang-size) GANG_SIZE=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --latency-gangs) LAT_GANGS=$2; shift 2 ;;
    --schedule-period) PERIOD=$2; shift 2 ;;
    --phases) PHASES=$2; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export KUBECONFIG=$STATE_DIR/kubeconfig
BENCH=$BUILD_DIR/bench/scheduler_e2e/sched_e2e_bench
SCHED=$BUILD_DIR/scheduler/vc-scheduler
SCHED_PID=""
cleanup() {
  [[ -n $SCHED_PID ]] && kill -TERM "$SCHED_PID" 2>/dev/null && wait "$SCHED_PID" 2>/dev/null
  rm -f "$STATE_DIR/pids/vc-scheduler-bench.pid" "$STATE_DIR/pids/vc-scheduler-bench.cmd"
}
trap cleanup EXIT
start_scheduler() {
  "$SCHED" --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 \
    --health-addr=127.0.0.1:0 --schedule-period="$PERIOD" >"$STATE_DIR/logs/vc-scheduler-bench.log" 2>&1 &
  SCHED_PID=$!
  echo "$SCHED_PID" >"$STATE_DIR/pids/vc-scheduler-bench.pid"
  echo "$SCHED" >"$STATE_DIR/pids/vc-scheduler-bench.cmd"
  until grep -q "Caches synced" "$STATE_DIR/logs/vc-scheduler-bench.log"; do sleep 0.2; done
}
wipe() { kubectl delete ns "$1" --wait=true --timeout=300s >/dev/null 2>&1 || true; }

kubectl apply --server-side --force-conflicts -f "$REPO/crds" >/dev/null
for _ in $(seq 30); do
  kubectl wait --for=condition=Established crd/queues.scheduling.volcano.sh \
    crd/podgroups.scheduling.volcano.sh >/dev/null 2>&1 && break
  sleep 1
done
nodes=$(kubectl get nodes --no-headers | wc -l)
echo "cluster: $nodes nodes; $GANGS gangs x $GANG_SIZE pods (1 GPU each)"

has() { [[ " $PHASES " == *" $1 "* ]]; }
if has bind; then
  echo "== bind ceiling (no scheduler, 16 concurrent binds)"
  "$BENCH" --mode=bind --namespace=bench-bind --gangs="$GANGS" --gang-size="$GANG_SIZE" --bind-workers=16
  wipe bench-bind
fi

start_scheduler
if has throughput; then
echo "== vc-scheduler throughput (queue opened with one PATCH, --schedule-period=$PERIOD)"
kubectl apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: bench}
spec: {weight: 1, capability: {nvidia.com/gpu: "0"}}
YAML
"$BENCH" --mode=throughput --namespace=bench-tp --queue=bench --gangs="$GANGS" --gang-size="$GANG_SIZE"
kubectl delete queue bench --wait=false >/dev/null 2>&1 || true
wipe bench-tp
metrics_port=$(grep -o 'port=[0-9]*' "$STATE_DIR/logs/vc-scheduler-bench.log" | head -1 | cut -d= -f2)
curl -s "127.0.0.1:$metrics_port/metrics" | grep -E '^basalt_scheduler_(cycle_duration_seconds_(sum|count)|bind_duration_seconds_(sum|count)|pods_bound_total|bind_failures_total)' || true
fi

if has latency; then
  echo "== vc-scheduler latency (steady creation at $RATE pods/s, --schedule-period=$PERIOD)"
  "$BENCH" --mode=latency --namespace=bench-lat --queue=default --gangs="$LAT_GANGS" --gang-size="$GANG_SIZE" --rate="$RATE"
  wipe bench-lat
fi
