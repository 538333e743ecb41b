#!/usr/bin/env bash
# The article's co-location story end to end (issue 12), with vc-controller-manager and a
# vc-scheduler running preempt: two KWOK nodes of 4 GPUs that only this test's pods select,
# PriorityClasses online-critical (1000000) and offline-batch (100).
#   - two elastic offline-batch Jobs (4 replicas, minAvailable 2, PodEvicted -> RestartJob)
#     fill the 8 GPUs;
#   - an online-critical Job of 2 x 1 GPU in the same queue runs; exactly 2 offline pods are
#     evicted (Evicted events name the online job); no online pod is ever a victim;
#   - the offline Jobs that lost pods restart (retryCount 1) and run again on what is left;
#   - when the online Job is deleted, the offline Jobs grow back to all 8 GPUs;
#   - no pod was evicted for the online job beyond those 2.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
ns=$(new_namespace ctrl-coloc)
suffix=$RANDOM
pool=coloc-$suffix
CLUSTER_OBJECTS=()
for n in a b; do
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $pool-$n
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $pool-$n, basalt.dev/pool: $pool}
status:
  allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
YAML
  CLUSTER_OBJECTS+=("node/$pool-$n")
done
cleanup_nodes() { # the pods first, so no later test sees them on nodes that are gone
  kubectl -n "$ns" delete vcjobs --all --wait=false >/dev/null 2>&1 || true
  kubectl -n "$ns" delete pods --all --grace-period=0 --force --wait=true --timeout=60s >/dev/null 2>&1 || true
  local o
  for o in "${CLUSTER_OBJECTS[@]}"; do kubectl delete "$o" --ignore-not-found --wait=false >/dev/null 2>&1 || true; done
}
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: online-critical}
value: 1000000
description: online core service, must not be preempted
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: offline-batch}
value: 100
description: offline batch work, may be preempted
YAML

conf=$BASALT_TEST_CLUSTER_DIR/coloc-$suffix.conf
cat >"$conf" <<'YAML'
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
YAML
cm_start
"$SCHED_BIN" --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 \
  --health-addr=127.0.0.1:0 --schedule-period=500ms --scheduler-conf="$conf" -v=2 \
  >>"$BASALT_TEST_CLUSTER_DIR/logs/vc-scheduler-e2e-$E2E_NAME.log" 2>&1 &
SCHED_PID=$!
echo "$SCHED_PID" >"$BASALT_TEST_CLUSTER_DIR/pids/vc-scheduler-e2e-$E2E_NAME.pid"
echo "$SCHED_BIN" >"$BASALT_TEST_CLUSTER_DIR/pids/vc-scheduler-e2e-$E2E_NAME.cmd"
trap 'cleanup_nodes; rm -f "$conf"; controllers_on_exit' EXIT
wait_for "queue default exists" 30 kubectl get queue default

job() { # NAME CLASS REPLICAS MIN_AVAILABLE
  cat <<YAML
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  schedulerName: volcano
  queue: default
  priorityClassName: $2
  minAvailable: $4
  maxRetry: 5
  policies: [{event: PodEvicted, action: RestartJob}]
  tasks:
  - name: main
    replicas: $3
    template:
      spec:
        priorityClassName: $2
        restartPolicy: Never
        nodeSelector: {basalt.dev/pool: $pool}
        containers:
        - name: main
          image: busybox
          resources:
            requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}
            limits: {nvidia.com/gpu: "1"}
YAML
}
bound_of() { # JOB: pods of the job bound to a node and not terminating
  kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" \
    -o jsonpath='{range .items[*]}{.spec.nodeName} {.metadata.deletionTimestamp}{"\n"}{end}' |
    awk 'NF == 1' | wc -l
}
offline_bound() { echo $(($(bound_of train-a) + $(bound_of train-b))); }
evicted_pod_events() {
  kubectl -n "$ns" get events --field-selector reason=Evicted,involvedObject.kind=Pod \
    -o jsonpath='{range .items[*]}{.involvedObject.name} {.message}{"\n"}{end}'
}

{ job train-a offline-batch 4 2; job train-b offline-batch 4 2; } | kubectl apply -f - >/dev/null
wait_for "offline jobs hold all 8 GPUs" 90 bash -c "[[ \$(( \$(kubectl -n $ns get pods -l volcano.sh/job-name=train-a -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) + \$(kubectl -n $ns get pods -l volcano.sh/job-name=train-b -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) )) -eq 8 ]]"
wait_for "train-a Running" 30 job_phase_is "$ns" train-a Running
wait_for "train-b Running" 30 job_phase_is "$ns" train-b Running

t0=$(date +%s.%N)
job serve online-critical 2 2 | kubectl apply -f - >/dev/null
serve_running() { [[ $(bound_of serve) == 2 ]]; }
wait_for "the online job's 2 pods are bound" 90 serve_running
t1=$(date +%s.%N)
e2e_log "online job bound $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s after creation"
wait_for "serve Running" 30 job_phase_is "$ns" serve Running
events=$(evicted_pod_events)
expect_eq "pods evicted for the online job" "$(grep -c 'making room for job' <<<"$events" || true)" 2
expect_contains "Evicted message" "$events" "making room for job $ns/serve (queue default, priority 1000000)"
expect_eq "online pods evicted" "$(grep -c '^serve-' <<<"$events" || true)" 0

# The offline jobs that lost pods restart (PodEvicted -> RestartJob) and run again.
restarted=""
for j in train-a train-b; do
  grep -q "^$j-" <<<"$events" && restarted="$restarted $j"
done
e2e_log "restarted:$restarted"
for j in $restarted; do
  retried() { [[ $(job_field "$ns" "$1" .status.retryCount) -ge 1 ]]; }
  wait_for "$j restarted (retryCount >= 1)" 60 retried "$j"
  wait_for "$j Running again" 90 job_phase_is "$ns" "$j" Running
done
wait_for "the offline jobs use the 6 GPUs left" 90 bash -c "[[ \$(( \$(kubectl -n $ns get pods -l volcano.sh/job-name=train-a -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) + \$(kubectl -n $ns get pods -l volcano.sh/job-name=train-b -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) )) -ge 6 ]]"
expect_eq "online pods still bound" "$(bound_of serve)" 2
expect_eq "no online pod ever evicted" "$(evicted_pod_events | grep -c '^serve-' || true)" 0

# The online job ends: the offline jobs grow back.
kubectl -n "$ns" delete vcjob serve --wait=false >/dev/null
grown() { [[ $(offline_bound) == 8 ]]; }
wait_for "offline jobs grow back to 8 GPUs" 120 grown
expect_eq "Evicted pod events in all (no loop)" "$(evicted_pod_events | grep -c 'making room for job' || true)" 2
if scheduler_stop; then pass "vc-scheduler stopped"; fi
