#!/usr/bin/env bash
# Issue 12's measurement: on 100 KWOK nodes (8 GPUs each) full of offline work, the time from an
# online-critical job's creation to all of its pods Running, and the pods evicted against the
# minimum needed, with the `preempt` action and with `gangpreempt`.
#
#   bench/preempt/run.sh [--build-dir _output/build] [--state-dir _output/bench-preempt]
#                        [--reuse] [--timeout 60] [--scenarios "elastic rigid"]
#
# Starts its own cluster (e2e/cluster/up.sh --nodes 100 --node-gpus 8) unless --reuse, and a
# vc-scheduler per run (schedule period 1s, Volcano's default). Pods and PodGroups are created
# with kubectl as a user would, without a job controller, so an evicted pod is not recreated and
# the evicted count is exact. Scenarios (each with preempt, then gangpreempt):
#   elastic  25 offline jobs of 32 x 1 GPU, minMember 8 (offline-batch); online: 16 x 2 GPUs,
#            minMember 16. Minimum: 32 one-GPU pods (2 on each of 16 nodes).
#   rigid    100 offline gangs of 8 x 1 GPU, minMember 8; online: 16 x 1 GPU, minMember 16.
#            Minimum: 16 pods (2 whole gangs); neither action breaks a gang: both take whole
#            gangs (an online job still pending at the end is reported "not running after
#            <timeout> s").
# Prints one line per run: action, scenario, seconds to Running, pods evicted, minimum. The
# cluster is left running for another pass (--reuse); stop it with
# e2e/cluster/down.sh --state-dir <state dir>.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$REPO/_output/build STATE_DIR=$REPO/_output/bench-preempt REUSE=0 TIMEOUT=60
SCENARIOS="elastic rigid"
while (($#)); do
  case $1 in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --state-dir) STATE_DIR=$2; shift 2 ;;
    --reuse) REUSE=1; shift ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --scenarios) SCENARIOS=$2; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
SCHED=$BUILD_DIR/scheduler/vc-scheduler
[[ -x $SCHED ]] || { echo "vc-scheduler not built: $SCHED" >&2; exit 1; }
if ((REUSE)); then
  "$REPO/e2e/cluster/up.sh" --state-dir "$STATE_DIR" --nodes 100 --node-gpus 8 --reuse >/dev/null
else
  "$REPO/e2e/cluster/up.sh" --state-dir "$STATE_DIR" --nodes 100 --node-gpus 8 --replace >/dev/null
fi
export KUBECONFIG=$STATE_DIR/kubeconfig
SCHED_PID=""
cleanup() {
  if [[ -n $SCHED_PID ]]; then kill -TERM "$SCHED_PID" 2>/dev/null && wait "$SCHED_PID" 2>/dev/null || true; fi
  rm -f "$STATE_DIR/pids/vc-scheduler-bench-preempt.pid" "$STATE_DIR/pids/vc-scheduler-bench-preempt.cmd"
}
trap cleanup EXIT

kubectl apply --server-side --force-conflicts -f "$REPO/crds" >/dev/null
for _ in $(seq 30); do
  kubectl wait --for=condition=Established crd/queues.scheduling.volcano.sh \
    crd/podgroups.scheduling.volcano.sh >/dev/null 2>&1 && break
  sleep 1
done
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: online-critical}
value: 1000000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: offline-batch}
value: 100
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: bench-preempt}
spec: {weight: 1, reclaimable: true}
YAML
echo "cluster: $(kubectl get nodes --no-headers | wc -l) nodes"

conf=$STATE_DIR/bench-preempt-conf.yaml
write_conf() { # ACTION: the Helm chart's preemption configuration with ACTION
  local preemptable=""
  [[ $1 == preempt ]] && preemptable="    enablePreemptable: false"
  cat >"$conf" <<YAML
actions: "enqueue, allocate, backfill, $1"
tiers:
- plugins:
  - name: priority
  - name: gang
$preemptable
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
$preemptable
  - name: predicates
  - name: proportion
  - name: nodeorder
YAML
}
start_scheduler() {
  "$SCHED" --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 \
    --health-addr=127.0.0.1:0 --schedule-period=1s --scheduler-conf="$conf" \
    >"$STATE_DIR/logs/vc-scheduler-bench-preempt.log" 2>&1 &
  SCHED_PID=$!
  echo "$SCHED_PID" >"$STATE_DIR/pids/vc-scheduler-bench-preempt.pid"
  echo "$SCHED" >"$STATE_DIR/pids/vc-scheduler-bench-preempt.cmd"
  until grep -q "Caches synced" "$STATE_DIR/logs/vc-scheduler-bench-preempt.log"; do sleep 0.2; done
}
stop_scheduler() {
  kill -TERM "$SCHED_PID" 2>/dev/null || true
  wait "$SCHED_PID" 2>/dev/null || true
  SCHED_PID=""
}

# job NAME PODS GPUS MIN CLASS: a PodGroup and its pods.
job() {
  local i
  cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $1, labels: {volcano.sh/job-name: $1}}
spec: {minMember: $4, queue: bench-preempt, priorityClassName: $5}
YAML
  for ((i = 0; i < $2; i++)); do
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1-$i
  annotations: {scheduling.k8s.io/group-name: $1}
  labels: {volcano.sh/job-name: $1}
spec:
  schedulerName: volcano
  priorityClassName: $5
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "$3"}
      limits: {nvidia.com/gpu: "$3"}
YAML
  done
}
running() { # NS PREFIX
  kubectl -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase}{"\n"}{end}' |
    awk -v p="$2" 'index($1, p) == 1 && $2 == "Running"' | wc -l
}

run() { # ACTION SCENARIO
  local action=$1 scenario=$2 ns="bench-preempt-$1-$2" online_pods online_gpus minimum offline
  write_conf "$action"
  kubectl create namespace "$ns" >/dev/null
  start_scheduler
  case $scenario in
    elastic)
      offline=800
      { for ((j = 0; j < 25; j++)); do job "off-$j" 32 1 8 offline-batch; done; } | kubectl -n "$ns" create -f - >/dev/null
      online_pods=16 online_gpus=2 minimum=32 ;;
    rigid)
      offline=800
      { for ((j = 0; j < 100; j++)); do job "off-$j" 8 1 8 offline-batch; done; } | kubectl -n "$ns" create -f - >/dev/null
      online_pods=16 online_gpus=1 minimum=16 ;;
  esac
  local deadline=$((SECONDS + 300))
  until (($(running "$ns" off-) >= offline)); do
    ((SECONDS < deadline)) || { echo "offline work not running after 300 s" >&2; exit 1; }
    sleep 1
  done
  local t0 t1 secs
  t0=$(date +%s.%N)
  job online "$online_pods" "$online_gpus" "$online_pods" online-critical | kubectl -n "$ns" create -f - >/dev/null
  deadline=$((SECONDS + TIMEOUT))
  secs="not running after $TIMEOUT s"
  while ((SECONDS < deadline)); do
    if (($(running "$ns" online-) >= online_pods)); then
      t1=$(date +%s.%N)
      secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
      break
    fi
    sleep 0.2
  done
  sleep 3  # evictions that would come late
  local evicted
  evicted=$(kubectl -n "$ns" get events --field-selector reason=Evicted,involvedObject.kind=Pod -o name | wc -l)
  printf '%-12s %-8s online Running: %-22s evicted: %4d  minimum: %4d\n' "$action" "$scenario" "$secs" "$evicted" "$minimum"
  stop_scheduler
  kubectl delete namespace "$ns" --wait=true --timeout=300s >/dev/null 2>&1 || true
}

for scenario in $SCENARIOS; do
  for action in preempt gangpreempt; do run "$action" "$scenario"; done
done
