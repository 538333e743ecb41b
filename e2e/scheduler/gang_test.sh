#!/usr/bin/env bash
# Gang scheduling as a user sees it with kubectl (vc-scheduler started by the test, Queues,
# PodGroups and pods created directly, no job controller):
#   - a 4-pod gang with 1 GPU per pod: all four bind, the PodGroup turns Running, each pod gets
#     a `Scheduled` event;
#   - pods bound by someone else (nodeName set, another scheduler) use node capacity that the
#     scheduler respects: with only 3 GPUs left, a 4-GPU gang binds no pod at all; its PodGroup
#     carries an Unschedulable condition naming nvidia.com/gpu and `kubectl describe pod`
#     shows a FailedScheduling event "0/N nodes are unavailable: ...";
#   - once a node with 8 GPUs joins, the whole gang binds; no node is ever oversubscribed;
#   - /metrics counts the binds; SIGTERM exits cleanly.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-gang)
start_scheduler

# 1. A gang that fits.
make_gang "$ns" g1 4 1 default
wait_for "all 4 pods of g1 bound" 30 bound_is "$ns" 4 g1
wait_for "PodGroup g1 Running" 15 pg_phase_is "$ns" g1 Running
expect_contains "events of g1-0" "$(kubectl -n "$ns" describe pod g1-0)" "Successfully assigned $ns/g1-0 to"
kubectl -n "$ns" delete pods -l volcano.sh/job-name=g1 --grace-period=0 --force >/dev/null 2>&1
kubectl -n "$ns" delete podgroup g1 >/dev/null

# 2. Fill the cluster with pods bound by someone else, leaving 1 GPU on each of 3 nodes.
mapfile -t nodes < <(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
declare -A used
while read -r n g; do used[$n]=$g; done < <(gpus_per_node)
free_left=3
{
  for n in "${nodes[@]}"; do
    alloc=$(kubectl get node "$n" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')
    take=$((alloc - ${used[$n]:-0}))
    if ((free_left > 0 && take > 0)); then take=$((take - 1)); free_left=$((free_left - 1)); fi
    ((take > 0)) && pod_yaml "filler-$n" "" "$take" "" "" "" "$n" default-scheduler
  done
} | kubectl -n "$ns" apply -f - >/dev/null
sleep 1
make_gang "$ns" g2 4 1 default
wait_for "PodGroup g2 has an Unschedulable condition naming nvidia.com/gpu" 20 \
  bash -c "kubectl -n $ns get podgroup g2 -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q nvidia.com/gpu"
expect_eq "g2 pods bound with 3 GPUs free" "$(bound_count "$ns" g2)" "0"
msg=$(pg_condition_message "$ns" g2 Unschedulable)
e2e_log "Unschedulable: $msg"
expect_contains "g2 Unschedulable condition" "$msg" "nodes are unavailable"
describe=$(kubectl -n "$ns" describe pods -l volcano.sh/job-name=g2)
expect_contains "kubectl describe pod (g2)" "$describe" "FailedScheduling"
expect_contains "kubectl describe pod (g2)" "$describe" "0/${#nodes[@]} nodes are unavailable: "
expect_contains "kubectl describe pod (g2)" "$describe" "Insufficient nvidia.com/gpu"
expect_contains "PodScheduled condition of the g2 pods" \
  "$(kubectl -n "$ns" get pods -l volcano.sh/job-name=g2 -o jsonpath='{.items[*].status.conditions[?(@.type=="PodScheduled")].reason}')" \
  "Unschedulable"
expect_no_oversubscription

# 3. A node joins: the gang binds as a whole.
add_fake_node "sched-gang-extra-$RANDOM" 8
wait_for "all 4 pods of g2 bound after a node joined" 30 bound_is "$ns" 4 g2
wait_for "PodGroup g2 Running" 15 pg_phase_is "$ns" g2 Running
expect_no_oversubscription

bound=$(sched_metric basalt_scheduler_pods_bound_total)
if [[ ${bound%.*} -ge 8 ]]; then pass "pods_bound_total = $bound"; else fail "pods_bound_total = $bound, want >= 8"; fi
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
