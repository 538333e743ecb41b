#!/usr/bin/env bash
# Gang-level preemption as a user sees it (docs/scheduler.md, gangpreempt and gangreclaim):
#   1. gangpreempt, on two KWOK nodes of 4 GPUs that only this test's pods select: two rigid
#      offline gangs (offline-batch, minMember 4) fill the 8 GPUs; an online-critical gang of
#      4 x 1 GPU in the same queue takes exactly one whole gang (4 pods evicted, the other gang
#      untouched), the Evicted events on the pods and their PodGroup name the online job, the
#      online pods carry nominatedNodeName while the victims terminate, and the online gang runs.
#   2. gangpreempt evicts nothing when even every possible victim cannot make room (half of
#      the pods are volcano.sh/preemptable "false" and the online gang needs 5 GPUs).
#   3. gangreclaim (the configuration file rewritten, hot reload): queue A fills every free GPU
#      of the cluster with 2-pod gangs, queue B (same weight) submits a 2-pod gang: one whole
#      gang of A is evicted and B's gang runs.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=preempt_lib.sh
source "$(dirname "$0")/preempt_lib.sh"

apply_crds
ns=$(new_namespace sched-gangpreempt)
suffix=$RANDOM
q=gq-$suffix qa=gra-$suffix qb=grb-$suffix pool=gangpreempt-$suffix
make_queue "$q" 1
preempt_pool_setup

conf=$(mktemp)
write_conf() { # ACTION
  # shellcheck disable=SC2086 # the default tiers are words
  write_sched_conf "$conf" "enqueue, allocate, backfill, $1" "@$1" maxDomains=8 allowWholeBundle=true \
    victimOrderPolicy=safe-first $SCHED_DEFAULT_TIERS
}
write_conf gangpreempt
start_scheduler --scheduler-conf="$conf" --schedule-period=500ms
if grep -q 'Skipping what the scheduler configuration names' "$SCHED_LOG" && grep -q 'name=gangpreempt' "$SCHED_LOG"; then
  fail "gangpreempt was skipped as unknown"
else
  pass "gangpreempt is a known action"
fi

terminating() {
  kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' | awk 'NF == 2 {print $1}'
}
release() {
  local p
  for p in $(kubectl -n "$ns" get pods -o name); do
    kubectl -n "$ns" patch "$p" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  done
}
reset() {
  release
  kubectl -n "$ns" delete pods --all --grace-period=0 --force --wait=true >/dev/null 2>&1 || true
  kubectl -n "$ns" delete podgroups --all --wait=true >/dev/null 2>&1 || true
  kubectl -n "$ns" delete events --all >/dev/null 2>&1 || true
}
pool_full() { [[ $(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c "$pool") -eq 8 ]]; }

# ---- 1. one whole victim gang --------------------------------------------------------------
# The offline pods carry a finalizer, so evicted pods stay Terminating until released: the
# victims and the online pods' nominatedNodeName can be seen while the online gang waits.
hold=basalt.dev/e2e-hold
{ pg off-a 4 "$q" offline-batch; pods off-a 4 offline-batch "" "$hold"
  pg off-b 4 "$q" offline-batch; pods off-b 4 offline-batch "" "$hold"; } | apply
wait_for "two offline gangs hold all 8 GPUs" 60 pool_full
t0=$(date +%s.%N)
{ pg online 4 "$q" online-critical; pods online 4 online-critical; } | apply
four_evicted() { [[ $(terminating | grep -c .) -ge 4 ]]; }
wait_for "4 offline pods evicted" 30 four_evicted
nominated() {
  [[ $(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.status.nominatedNodeName}{"\n"}{end}' | awk 'index($1, "online-") == 1 && NF == 2' | wc -l) -eq 4 ]]
}
wait_for "the online pods carry status.nominatedNodeName while they wait" 20 nominated
sleep 2
victims=$(terminating)
expect_eq "pods evicted (one whole gang, the minimum)" "$(grep -c . <<<"$victims")" 4
expect_eq "victim gangs" "$(sed 's/-[0-9]*$//' <<<"$victims" | sort -u | grep -c .)" 1
expect_eq "online pods bound before the victims are gone" "$(bound online-)" 0
release
wait_for "the online gang runs" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"online-\") == 1 && NF == 2' | wc -l) -eq 4 ]]"
t1=$(date +%s.%N)
e2e_log "online gang bound $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s after creation (victims held by a finalizer until released)"
sleep 2
expect_eq "offline pods left" "$(pods_left off-)" 4
survivor=$(kubectl -n "$ns" get pods -o name | sed -n 's|^pod/\(off-[ab]\)-[0-9]*$|\1|p' | sort -u)
expect_eq "the surviving gang is whole" "$(bound "$survivor-")" 4
events=$(evicted_events)
expect_eq "Evicted events on pods" "$(grep -c '^Pod off-' <<<"$events" || true)" 4
expect_eq "Evicted events on the victim PodGroup" "$(grep -c '^PodGroup off-' <<<"$events" || true)" 4
expect_contains "Evicted event message" "$events" "Evicted by gangpreempt: making room for job $ns/online (queue $q, priority 1000000)"
expect_eq "Evicted events naming an online pod" "$(grep -c '^Pod online-' <<<"$events" || true)" 0
expect_no_oversubscription
reset

# ---- 2. no eviction when even every victim cannot make room ---------------------------------
{ pg soft 4 "$q" offline-batch; pods soft 4 offline-batch; pg hard 4 "$q" offline-batch
  pods hard 4 offline-batch 'volcano.sh/preemptable: "false"'; } | apply
wait_for "offline gangs hold all 8 GPUs" 60 pool_full
{ pg online 5 "$q" online-critical; pods online 5 online-critical; } | apply
sleep 6
expect_eq "gang that cannot fit: Evicted events" "$(evicted_events | grep -c . || true)" 0
expect_eq "gang that cannot fit: online pods bound" "$(bound online-)" 0
expect_eq "gang that cannot fit: offline pods left" "$(pods_left soft-)" 4
reset

# ---- 3. gangreclaim ----------------------------------------------------------------------------
# The same scheduler, its configuration file rewritten (hot reload) to run gangreclaim instead.
make_queue "$qa" 1
make_queue "$qb" 1
loads=$(grep -c 'Loaded the scheduler configuration' "$SCHED_LOG")
write_conf gangreclaim
reloaded() { (($(grep -c 'Loaded the scheduler configuration' "$SCHED_LOG") > loads)); }
wait_for "the scheduler reloads its configuration (gangreclaim)" 15 reloaded
total=0
for n in $(kubectl get nodes -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}'); do
  total=$((total + n))
done
used=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' |
  awk 'NR == FNR {have[$1] = 1; next} ($1 in have) {s += $2} END {print s + 0}' - <(gpus_per_node))
free=$((total - used))
e2e_log "cluster GPUs: $total, free: $free"
# 2-pod gangs of 1 GPU each (one single-pod gang if the count is odd).
{ for ((i = 0; i < free / 2; i++)); do gang_yaml "$ns" "a-$i" 2 1 "$qa"; done
  if ((free % 2)); then gang_yaml "$ns" a-odd 1 1 "$qa"; fi; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "queue A uses every free GPU ($free)" 120 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -ge $free ]]"
gang_yaml "$ns" b-0 2 1 "$qb" | kubectl -n "$ns" apply -f - >/dev/null
wait_for "queue B's gang runs after gangreclaim" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"b-\") == 1 && NF == 2' | wc -l) -eq 2 ]]"
a_left() { kubectl -n "$ns" get pods -o name | grep -c '^pod/a-' || true; }
wait_for "exactly 2 of queue A's pods evicted" 20 bash -c "[[ \$(kubectl -n $ns get pods -o name | grep -c '^pod/a-') -eq $((free - 2)) ]]"
sleep 2
expect_eq "queue A pods left" "$(a_left)" "$((free - 2))"
events=$(evicted_events)
expect_contains "Evicted events" "$events" "Evicted by gangreclaim: making room for job $ns/b-0 (queue $qb, priority 0)"
expect_eq "victim gangs (one, whole)" "$(awk '$1 == "Pod" {sub(/-[0-9]+$/, "", $2); print $2}' <<<"$events" | sort -u | grep -c .)" 1
expect_no_oversubscription
rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
