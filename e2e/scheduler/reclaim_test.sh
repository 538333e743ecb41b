#!/usr/bin/env bash
# Reclaim as a user sees it: queue A (weight 1) fills every GPU of the cluster with 1-GPU gangs;
# queue B (weight 1) then submits 4 one-GPU gangs. With `reclaim` in the actions, the scheduler
# evicts 4 of A's pods (over A's deserved share), with `Evicted` events naming B's job and queue,
# and B's gangs run. Then the same with `reclaimable: false` on A: nothing is reclaimed.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-reclaim)
suffix=$RANDOM
qa=ra-$suffix qb=rb-$suffix
make_queue "$qa" 1
make_queue "$qb" 1
conf=$(sched_conf "enqueue, allocate, backfill, reclaim")
total=0
for n in $(kubectl get nodes -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}'); do
  total=$((total + n))
done
# Only pods on nodes that exist (a previous test's pods may outlive its deleted nodes).
used=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' |
  awk 'NR == FNR {have[$1] = 1; next} ($1 in have) {s += $2} END {print s + 0}' - <(gpus_per_node))
free=$((total - used))
e2e_log "cluster GPUs: $total, free: $free"
start_scheduler --scheduler-conf="$conf"
{ for ((i = 0; i < free; i++)); do gang_yaml "$ns" "a-$i" 1 1 "$qa"; done; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "queue A uses every free GPU ($free)" 120 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -ge $free ]]"
{ for i in 0 1 2 3; do gang_yaml "$ns" "b-$i" 1 1 "$qb"; done; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "queue B's 4 gangs run after reclaim" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"b-\") == 1 && NF == 2' | wc -l) -eq 4 ]]"
events=$(kubectl -n "$ns" get events --field-selector reason=Evicted -o jsonpath='{range .items[*]}{.involvedObject.kind} {.message}{"\n"}{end}')
expect_contains "Evicted events" "$events" "Pod Evicted by reclaim: making room for job $ns/b-"
expect_contains "Evicted events" "$events" "(queue $qb, priority "
expect_contains "Evicted events" "$events" "PodGroup Pod $ns/a-"
a_left() { kubectl -n "$ns" get pods -o name | grep -c '^pod/a-' || true; }
wait_for "exactly 4 of queue A's pods evicted" 20 bash -c "[[ \$(kubectl -n $ns get pods -o name | grep -c '^pod/a-') -eq $((free - 4)) ]]"
sleep 2
expect_eq "queue A pods left" "$(a_left)" "$((free - 4))"
expect_no_oversubscription

# reclaimable: false on A: B's gangs wait, nothing of A is evicted. B's gangs go; A's 4
# evicted gangs get their pods back (as their job controller would) and hold every GPU again.
kubectl -n "$ns" delete pods b-0-0 b-1-0 b-2-0 b-3-0 --grace-period=0 --force >/dev/null 2>&1 || true
kubectl -n "$ns" delete podgroups b-0 b-1 b-2 b-3 >/dev/null 2>&1 || true
b_gone() { ! kubectl -n "$ns" get pods -o name | grep -q '^pod/b-'; }
wait_for "queue B's pods gone" 30 b_gone
kubectl -n "$ns" delete events --all >/dev/null 2>&1 || true
kubectl patch queue "$qa" --type merge -p '{"spec":{"reclaimable":false}}' >/dev/null
have=$(kubectl -n "$ns" get pods -o name)
{ for ((i = 0; i < free; i++)); do
    grep -qx "pod/a-$i-0" <<<"$have" || pod_yaml "a-$i-0" "a-$i" 1
  done; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "queue A uses every free GPU again ($free)" 120 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -ge $free ]]"
{ for i in 0 1 2 3; do gang_yaml "$ns" "b-$i" 1 1 "$qb"; done; } | kubectl -n "$ns" apply -f - >/dev/null
sleep 8
expect_eq "reclaimable false: Evicted events" "$(kubectl -n "$ns" get events --field-selector reason=Evicted -o name | grep -c . || true)" 0
expect_eq "reclaimable false: queue A pods left" "$(a_left)" "$free"
expect_eq "reclaimable false: queue B pods bound" "$(bound_with_prefix "$ns" b-)" 0

# Volcano #4679: a gang of queue B (under its share) larger than overcommit's headroom (20 % of
# a cluster queue A filled) is admitted because reclaim can make room for it, and exactly its
# size is reclaimed from A.
kubectl patch queue "$qa" --type merge -p '{"spec":{"reclaimable":true}}' >/dev/null
kubectl -n "$ns" delete pods b-0-0 b-1-0 b-2-0 b-3-0 --grace-period=0 --force >/dev/null 2>&1 || true
kubectl -n "$ns" delete podgroups b-0 b-1 b-2 b-3 >/dev/null 2>&1 || true
wait_for "queue B's pods gone" 30 b_gone
big=$((free / 2))
if ((big * 5 > total)); then
  gang_yaml "$ns" big "$big" 1 "$qb" | kubectl -n "$ns" apply -f - >/dev/null
  wait_for "queue B's $big-pod gang (beyond the admission headroom) runs after reclaim" 90 \
    bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"big-\") == 1 && NF == 2' | wc -l) -eq $big ]]"
  wait_for "exactly $big of queue A's pods evicted for it" 30 bash -c "[[ \$(kubectl -n $ns get pods -o name | grep -c '^pod/a-') -eq $((free - big)) ]]"
  expect_eq "PodGroup big phase" "$(pg_phase "$ns" big)" "Running"
  expect_no_oversubscription
else
  e2e_log "skipped the #4679 check: $free free GPUs of $total leave no gang beyond the headroom"
fi
rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
