#!/usr/bin/env bash
# Queue capability as a user sees it: a queue with capability nvidia.com/gpu: 8 runs two 4-GPU
# gangs and holds the third, whose PodGroup says which queue and capability stop it; when one
# of the running gangs finishes (basalt.dev/run-for), the held gang runs; `kubectl describe
# queue` shows allocated next to capability; raising the capability with kubectl takes effect
# in the next cycle.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-queue)
q=qcap-$RANDOM
make_queue "$q" 1 8
start_scheduler

make_gang "$ns" a 4 1 "$q" 20s
make_gang "$ns" b 4 1 "$q"
wait_for "gangs a and b (8 GPUs) bound" 30 bound_is "$ns" 8
make_gang "$ns" c 4 1 "$q"
held_by_queue() {
  local m
  m=$(pg_condition_message "$ns" c Unschedulable)
  [[ $m == *"$q"* && $m == *capability* ]]
}
wait_for "gang c held with a message naming the queue and its capability" 20 held_by_queue
e2e_log "c: $(pg_condition_message "$ns" c Unschedulable)"
expect_eq "c pods bound while the queue is full" "$(bound_count "$ns" c)" "0"
expect_eq "c phase" "$(pg_phase "$ns" c)" "Pending"
wait_for "queue status.allocated nvidia.com/gpu = 8" 10 bash -c "[[ \$(kubectl get queue $q -o jsonpath='{.status.allocated.nvidia\\.com/gpu}') == 8 ]]"
describe=$(kubectl describe queue "$q")
expect_contains "kubectl describe queue" "$describe" "Allocated:"
expect_contains "kubectl describe queue" "$describe" "Capability:"
if grep -A4 "Allocated:" <<<"$describe" | grep -q "nvidia.com/gpu:  *8"; then
  pass "describe queue: allocated nvidia.com/gpu 8"
else
  fail "describe queue: $describe"
fi

# a finishes after 20 s: c runs.
wait_for "gang a Succeeded" 40 bash -c "[[ \$(kubectl -n $ns get pods -l volcano.sh/job-name=a -o jsonpath='{.items[*].status.phase}') == 'Succeeded Succeeded Succeeded Succeeded' ]]"
wait_for "gang c bound once a finished" 20 bound_is "$ns" 4 c
wait_for "PodGroup a Completed" 15 pg_phase_is "$ns" a Completed

# Raising the capability takes effect at the next cycle.
make_gang "$ns" d 4 1 "$q"
sleep 3
expect_eq "d pods bound at capability 8" "$(bound_count "$ns" d)" "0"
kubectl patch queue "$q" --type merge -p '{"spec":{"capability":{"nvidia.com/gpu":"12"}}}' >/dev/null
start=$SECONDS
wait_for "gang d bound after the capability was raised to 12" 10 bound_is "$ns" 4 d
e2e_log "d bound $((SECONDS - start))s after the capability change"
wait_for "queue status.allocated nvidia.com/gpu = 12" 10 bash -c "[[ \$(kubectl get queue $q -o jsonpath='{.status.allocated.nvidia\\.com/gpu}') == 12 ]]"
expect_no_oversubscription
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
