#!/usr/bin/env bash
# Queue weights as a user sees them: two queues of weight 1 and 3, both flooded with 1-GPU
# gangs, on 16 schedulable GPUs (all nodes but two cordoned) settle at 4 and 12 running pods.
# Both queues ask for more than their weighted share of the cluster (64 GPUs in total: 16 and
# 48), so proportion's deserved shares are 16 and 48 and the allocation follows their ratio.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-fair)
suffix=$RANDOM
q1=w1-$suffix q3=w3-$suffix
make_queue "$q1" 1
make_queue "$q3" 3
cordon_all_but 2
e2e_log "schedulable nodes: ${KEPT_NODES[*]}"
total_gpus=0
for n in $(kubectl get nodes -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}'); do
  total_gpus=$((total_gpus + n))
done
n1=$((total_gpus / 4 + 4)) n3=$((total_gpus * 3 / 4 + 4))
e2e_log "cluster GPUs: $total_gpus; flooding $q1 with $n1 and $q3 with $n3 one-GPU gangs"

# Everything exists before the scheduler starts, so neither queue gets a head start.
{
  for ((i = 0; i < n1; i++)); do gang_yaml "$ns" "w1-$i" 1 1 "$q1"; done
  for ((i = 0; i < n3; i++)); do gang_yaml "$ns" "w3-$i" 1 1 "$q3"; done
} | kubectl -n "$ns" apply -f - >/dev/null
start_scheduler
wait_for "16 pods bound on the two schedulable nodes" 60 bash -c \
  "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -ge 16 ]]"
sleep 3 # a few more cycles: nothing may move
expect_eq "running pods of the weight-1 queue" "$(bound_with_prefix "$ns" w1-)" "4"
expect_eq "running pods of the weight-3 queue" "$(bound_with_prefix "$ns" w3-)" "12"
expect_eq "allocated GPUs of $q1" "$(kubectl get queue "$q1" -o jsonpath='{.status.allocated.nvidia\.com/gpu}')" "4"
expect_eq "allocated GPUs of $q3" "$(kubectl get queue "$q3" -o jsonpath='{.status.allocated.nvidia\.com/gpu}')" "12"
pending=$(sched_metric basalt_scheduler_pending_jobs)
if [[ ${pending%.*} -gt 0 ]]; then pass "pending_jobs metric = $pending"; else fail "pending_jobs metric = $pending"; fi
expect_no_oversubscription
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
