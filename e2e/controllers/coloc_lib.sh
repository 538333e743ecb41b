# shellcheck shell=bash
# The co-location suites' cluster (controllers/colocation, controllers/preempt_steady): KWOK
# nodes of 4 GPUs in a pool only the suite's pods select, the PriorityClasses online-critical
# (1000000) and offline-batch (100), vc-controller-manager and a vc-scheduler running reclaim and
# preempt (schedule period 500 ms). Source after lib.sh; the caller sets ns, pool and
# COLOC_MAX_RETRY (the offline Jobs' maxRetry), then calls coloc_start NODE_SUFFIX...

# The pods first, so no later test sees them on nodes that are gone; then the nodes.
cleanup_nodes() {
  kubectl -n "$ns" delete vcjobs --all --wait=false >/dev/null 2>&1 || true
  kubectl -n "$ns" delete pods --all --grace-period=0 --force --wait=true --timeout=60s >/dev/null 2>&1 || true
  local o
  for o in "${CLUSTER_OBJECTS[@]}"; do kubectl delete "$o" --ignore-not-found --wait=false >/dev/null 2>&1 || true; done
}

# coloc_start NODE_SUFFIX...: creates the nodes $pool-<suffix>, starts the components, and
# removes the nodes and the config again on exit.
coloc_start() {
  CLUSTER_OBJECTS=()
  local n
  for n in "$@"; do
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
  kubectl apply -f "$(dirname "${BASH_SOURCE[0]}")/../../examples/priorityclasses.yaml" >/dev/null

  conf=$BASALT_TEST_CLUSTER_DIR/$pool.conf
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
}

# job NAME CLASS REPLICAS MIN_AVAILABLE: an elastic Job of one-GPU pods in the pool that restarts
# when a pod is evicted (PodEvicted -> RestartJob).
job() {
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
  maxRetry: $COLOC_MAX_RETRY
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
