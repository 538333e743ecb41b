#!/usr/bin/env bash
# The task-topology plugin as a user sees it, with vc-controller-manager (vcjobs into pods),
# vc-webhook-manager and vc-scheduler, on four dedicated 4-GPU KWOK nodes:
#   - configuration nodeorder + task-topology (weight 10, as Volcano's user guide): a vcjob
#     annotated volcano.sh/task-topology-affinity: "ps,worker" (1 ps + 3 workers, 1 GPU each)
#     lands on one node, while the same vcjob without the annotation spreads over several;
#   - under node sampling (the scheduler's default: a task's predicate pass stops after a rotating
#     sample of the feasible nodes once there are more than 100): on a pool of 250 more 4-GPU
#     nodes, where two successive samples are disjoint, an affine vcjob still lands on one node
#     (the plugin's preferred nodes are checked besides the sample);
#   - the configuration file is edited to binpack + task-topology (the running scheduler reloads
#     it): a vcjob with volcano.sh/task-topology-anti-affinity: "worker" (4 workers) gets one
#     node per worker, while the same vcjob without it is packed onto one node;
#   - the task order: on one free GPU a vcjob (minAvailable 1) with
#     volcano.sh/task-topology-task-order: "worker,ps" runs its worker, not its ps;
#   - the webhook refuses a vcjob whose annotation names a task it does not have, and says which
#     annotation and which rule; a PodGroup created directly with such an annotation (no webhook
#     for it) says so in its TaskTopology condition and a Warning event.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=../webhook/lib.sh
source "$BASALT_REPO_ROOT/e2e/webhook/lib.sh"
# shellcheck source=../controllers/lib.sh
source "$BASALT_REPO_ROOT/e2e/controllers/lib.sh"

topo_cleanup() {
  local rc=$?
  webhook_stop
  [[ -n ${wide:-} ]] && kubectl delete nodes -l "basalt.dev/pool=$wide" --wait=false >/dev/null 2>&1
  [[ -n $CM_PID ]] && { cm_stop KILL || true; }
  set +e # so that the next line only hands rc on to sched_cleanup
  kubectl -n "$ns" delete vcjob --all --wait=false >/dev/null 2>&1
  (exit "$rc")
  sched_cleanup
}
trap topo_cleanup EXIT

apply_crds
ns=$(new_namespace sched-tasktopo)
pool=tasktopo-$RANDOM
for i in 0 1 2 3; do add_fake_node "$pool-$i" 4 "basalt.dev/pool=$pool"; done
conf=$(mktemp)
write_conf() { # SCORING_PLUGIN
  write_sched_conf "$conf" "enqueue, allocate, backfill" priority gang conformance -- overcommit drf \
    predicates proportion "$1" task-topology task-topology.weight=10
}
write_conf nodeorder
start_scheduler --scheduler-conf="$conf"
cm_start
webhook_start

# vcjob NAME MIN_AVAILABLE PS WORKERS ANNOTATIONS [TASK_MIN_AVAILABLE]: tasks ps and worker of
# 1-GPU pods on the pool (each task's minAvailable defaults to its replicas).
vcjob() {
  local task tasks="" task_min=""
  [[ -n ${6:-} ]] && task_min="
    minAvailable: $6"
  for task in "ps $3" "worker $4"; do
    local name=${task% *} replicas=${task#* }
    ((replicas > 0)) || continue
    tasks+="
  - name: $name
    replicas: $replicas$task_min
    template:
      spec:
        nodeSelector: {basalt.dev/pool: ${job_pool:-$pool}}
        containers:
        - name: main
          image: busybox
          resources:
            requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \"1\"}
            limits: {nvidia.com/gpu: \"1\"}"
  done
  cat <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: $1
  annotations: {$5}
spec:
  schedulerName: volcano
  queue: default
  minAvailable: $2
  tasks:$tasks
YAML
}
submit() { # NAME MIN PS WORKERS ANNOTATIONS
  local out
  if out=$(vcjob "$@" | kubectl -n "$ns" apply -f - 2>&1); then
    e2e_log "vcjob $1 created"
  else
    fail "vcjob $1 refused: $out"
  fi
}
nodes_of() { # JOB: the distinct nodes of its pods, space-separated
  kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" \
    -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep . | sort -u | paste -sd' '
}
node_count() { local n; n=$(nodes_of "$1"); wc -w <<<"$n" | tr -d ' '; }
node_of_pod() { kubectl -n "$ns" get pod "$1" -o jsonpath='{.spec.nodeName}'; }
delete_jobs() {
  kubectl -n "$ns" delete vcjob "$@" --wait=false >/dev/null 2>&1
  kubectl -n "$ns" delete pods -l "volcano.sh/job-name in ($(IFS=,; echo "$*"))" \
    --grace-period=0 --force --wait=true --timeout=60s >/dev/null 2>&1 || true
  gone() { [[ $(kubectl -n "$ns" get pods --no-headers 2>/dev/null | grep -c .) == 0 ]]; }
  wait_for "pods of $* gone" 60 gone
}

# ---- affinity: ps and workers together -----------------------------------------------------
submit plain 4 1 3 ""
wait_for "vcjob plain (1 ps + 3 workers, no annotation) bound" 60 bound_is "$ns" 4 plain
plain_nodes=$(node_count plain)
e2e_log "plain: $(nodes_of plain)"
if ((plain_nodes > 1)); then
  pass "without task topology, nodeorder spreads the 4 pods over $plain_nodes nodes"
else
  fail "without task topology the pods share one node ($(nodes_of plain)): the comparison shows nothing"
fi
delete_jobs plain

submit tf 4 1 3 'volcano.sh/task-topology-affinity: "ps,worker"'
wait_for "vcjob tf (affinity ps,worker) bound" 60 bound_is "$ns" 4 tf
e2e_log "tf: $(nodes_of tf)"
expect_eq "with affinity ps,worker, the ps and its 3 workers share one node" "$(node_count tf)" "1"
expect_eq "the PodGroup carries the annotation" \
  "$(kubectl -n "$ns" get podgroup -l volcano.sh/job-name=tf -o jsonpath='{.items[0].metadata.annotations.volcano\.sh/task-topology-affinity}')" \
  "ps,worker"
delete_jobs tf

# ---- anti-affinity: workers apart (binpack would pack them) ---------------------------------
reloads_before=$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '/config_reloads_total\{result="success"\}/ {print $2}')
write_conf binpack
reloaded() {
  local now
  now=$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '/config_reloads_total\{result="success"\}/ {print $2}')
  [[ ${now%.*} -gt ${reloads_before%.*} ]]
}
wait_for "the binpack configuration is loaded" 10 reloaded
submit packed 4 0 4 ""
wait_for "vcjob packed (4 workers, no annotation) bound" 60 bound_is "$ns" 4 packed
expect_eq "without task topology, binpack packs the 4 workers onto one node" "$(node_count packed)" "1"
delete_jobs packed

submit apart 4 0 4 'volcano.sh/task-topology-anti-affinity: "worker"'
wait_for "vcjob apart (anti-affinity worker) bound" 60 bound_is "$ns" 4 apart
e2e_log "apart: $(nodes_of apart)"
expect_eq "with anti-affinity worker, each worker has a node of its own" "$(node_count apart)" "4"
delete_jobs apart

# ---- task order: who gets the only free GPU ----------------------------------------------------
# A job of 15 pods leaves one GPU free; a job that needs one of its two pods gets it for the
# task its order names first (both orders, so a lucky tie-break cannot pass).
submit filler 15 0 15 ""
wait_for "vcjob filler (15 GPUs) bound" 60 bound_is "$ns" 15 filler
bound_pod() { # JOB: the names of its pods that have a node
  kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" \
    -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | sed -n 's/=.\+$//p' | paste -sd' '
}
for order in "worker,ps worker" "ps,worker ps"; do
  job=order-${order%%,*}
  submit "$job" 1 1 1 "volcano.sh/task-topology-task-order: \"${order% *}\"" 0
  wait_for "vcjob $job: one pod bound" 60 bound_is "$ns" 1 "$job"
  sleep 2 # a few more cycles: the other pod stays Pending (no GPU left)
  expect_eq "with task order ${order% *} the ${order#* } takes the last GPU" "$(bound_pod "$job")" \
    "$job-${order#* }-0"
  kubectl -n "$ns" delete vcjob "$job" --wait=false >/dev/null 2>&1
  kubectl -n "$ns" delete pods -l "volcano.sh/job-name=$job" --grace-period=0 --force --wait=true \
    --timeout=60s >/dev/null 2>&1 || true
  wait_for "pods of $job gone" 60 bound_is "$ns" 0 "$job"
done
delete_jobs filler

# ---- a malformed annotation ------------------------------------------------------------------
if out=$(vcjob bad 4 1 3 'volcano.sh/task-topology-affinity: "ps,wroker"' | kubectl -n "$ns" apply -f - 2>&1); then
  fail "a vcjob naming an unknown task was admitted"
else
  expect_contains "the webhook refuses it naming the annotation and the rule" "$out" \
    'metadata.annotations[volcano.sh/task-topology-affinity]: task "wroker" is not a task of the job (its tasks: ps, worker)'
fi

# A PodGroup and pod created directly (no webhook checks a PodGroup's task names); the pod
# names its task as the job controller does (label and annotation volcano.sh/task-spec).
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: direct
  annotations: {volcano.sh/task-topology-affinity: "ps,wroker"}
spec: {minMember: 1, queue: default}
---
apiVersion: v1
kind: Pod
metadata:
  name: direct-ps-0
  annotations: {scheduling.k8s.io/group-name: direct, volcano.sh/task-spec: ps}
  labels: {volcano.sh/job-name: direct, volcano.sh/task-spec: ps}
spec:
  schedulerName: volcano
  nodeSelector: {basalt.dev/pool: $pool}
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}
      limits: {nvidia.com/gpu: "1"}
YAML
explained() {
  [[ $(pg_condition_message "$ns" direct TaskTopology) == *'task "wroker" is not a task of the job'* ]]
}
wait_for "the PodGroup's TaskTopology condition explains the annotation" 30 explained
expect_eq "its message" "$(pg_condition_message "$ns" direct TaskTopology)" \
  'volcano.sh/task-topology-affinity: task "wroker" is not a task of the job (its tasks: ps); the job is scheduled without its task topology'
wait_for "and the pod is still scheduled" 30 bound_is "$ns" 1 direct
has_event() {
  [[ -n $(kubectl -n "$ns" get events --field-selector involvedObject.name=direct,reason=InvalidTaskTopology -o name 2>/dev/null) ]]
}
wait_for "a Warning event InvalidTaskTopology on the PodGroup" 30 has_event

# ---- affinity under node sampling ------------------------------------------------------------
kubectl -n "$ns" delete pod direct-ps-0 --grace-period=0 --force --wait=true --timeout=60s >/dev/null 2>&1 || true
kubectl -n "$ns" delete podgroup direct --wait=false >/dev/null 2>&1 || true
# 250 nodes of 4 GPUs, all feasible for the job: with 262 nodes in the cluster a pass looks for
# 123 feasible ones from where the previous pass stopped, so the first two tasks placed see
# disjoint samples; without the preferred nodes the second cannot join the first.
wide=tasktopo-wide-$RANDOM
for i in $(seq -w 0 249); do
  cat <<YAML
---
apiVersion: v1
kind: Node
metadata:
  name: $wide-$i
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $wide-$i, basalt.dev/pool: $wide}
status:
  allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
YAML
done | kubectl apply -f - >/dev/null
wide_ready() { [[ $(kubectl get nodes -l "basalt.dev/pool=$wide" --no-headers 2>/dev/null | grep -c ' Ready') == 250 ]]; }
wait_for "250 wide-pool nodes Ready" 120 wide_ready
job_pool=$wide
for j in 0 1 2; do submit "wide-$j" 4 1 3 'volcano.sh/task-topology-affinity: "ps,worker"'; done
for j in 0 1 2; do
  wait_for "vcjob wide-$j (affinity, 262 nodes, default sampling) bound" 90 bound_is "$ns" 4 "wide-$j"
  e2e_log "wide-$j: $(nodes_of "wide-$j")"
  expect_eq "under default node sampling wide-$j's ps and 3 workers share one node" \
    "$(node_count "wide-$j")" "1"
done
job_pool=""
delete_jobs wide-0 wide-1 wide-2
kubectl delete nodes -l "basalt.dev/pool=$wide" --wait=false >/dev/null 2>&1
wide_gone() { [[ $(kubectl get nodes -l "basalt.dev/pool=$wide" --no-headers 2>/dev/null | grep -c .) == 0 ]]; }
wait_for "the wide-pool nodes deleted" 120 wide_gone
sleep 2 # the scheduler's cache sees the deletions
wide=""

rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
