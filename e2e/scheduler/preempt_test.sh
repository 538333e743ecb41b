#!/usr/bin/env bash
# Preemption as a user sees it (docs/scheduler.md, Preemption and reclaim), on two KWOK nodes of
# 4 GPUs each that only this test's pods select, with PriorityClasses online-critical (1000000)
# and offline-batch (100) from the article:
#   1. offline elastic gangs (minMember 1) fill the 8 GPUs; an online gang of 3 x 1 GPU in the
#      same queue runs after exactly 3 offline pods are evicted; the Evicted events name the
#      online job, its queue and priority; the victims got DisruptionTarget; no online pod is a
#      victim and nothing is evicted twice.
#   2. nothing is evicted from pods with volcano.sh/preemptable "false", from a gang at its
#      minAvailable spread over both nodes, by a job of another queue (preempt stays in its
#      queue), or for a gang that would not fit even with every possible victim gone.
# The configuration names an action (shuffle) and a plugin (sla) Basalt lacks: they are
# skipped, logged and counted, and preempt runs.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=preempt_lib.sh
source "$(dirname "$0")/preempt_lib.sh"

apply_crds
ns=$(new_namespace sched-preempt)
suffix=$RANDOM
q=pq-$suffix qo=po-$suffix pool=preempt-$suffix
make_queue "$q" 1
make_queue "$qo" 1
preempt_pool_setup

conf=$(mktemp)
cat >"$conf" <<'YAML'
actions: "enqueue, allocate, backfill, shuffle, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
YAML
start_scheduler --scheduler-conf="$conf" --schedule-period=500ms

skipped=$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '$1 ~ /^basalt_scheduler_config_skipped_names/ {printf "%s %d\n", $1, $2}')
expect_contains "skipped-names metric" "$skipped" 'kind="plugin"} 1'
expect_contains "skipped-names metric" "$skipped" 'kind="action"} 1'
wait_for "the scheduler logs the skipped plugin sla" 10 grep -q 'name="sla"' "$SCHED_LOG"

terminating() { # pods being deleted
  kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' | awk 'NF == 2 {print $1}'
}
release() { # removes the test's finalizer from every pod
  local p
  for p in $(kubectl -n "$ns" get pods -o name); do
    kubectl -n "$ns" patch "$p" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  done
}
reset() { # deletes every pod and PodGroup of the namespace
  release
  kubectl -n "$ns" delete pods --all --grace-period=0 --force --wait=true >/dev/null 2>&1 || true
  kubectl -n "$ns" delete podgroups --all --wait=true >/dev/null 2>&1 || true
  kubectl -n "$ns" delete events --all >/dev/null 2>&1 || true
}
# expect_no_eviction WHAT SECONDS PENDING_PREFIX
expect_no_eviction() {
  sleep "$2"
  expect_eq "$1: Evicted events" "$(evicted_events | grep -c . || true)" 0
  expect_eq "$1: preemptor pods bound" "$(bound "$3")" 0
}

# ---- 1. the article's scenario -----------------------------------------------------------
# The offline pods carry a finalizer, so an evicted pod stays Terminating until the test
# releases it: the DisruptionTarget condition, the preemptor's nominatedNodeName and the absence
# of further evictions while it waits can be seen.
hold=basalt.dev/e2e-hold
{ pg off-a 1 "$q" offline-batch; pods off-a 4 offline-batch "" "$hold"; pg off-b 1 "$q" offline-batch
  pods off-b 4 offline-batch "" "$hold"; } | apply
wait_for "offline jobs hold all 8 GPUs" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c $pool) -eq 8 ]]"
t0=$(date +%s.%N)
{ pg online 3 "$q" online-critical; pods online 3 online-critical; } | apply
three_evicted() { [[ $(terminating | grep -c .) -ge 3 ]]; }
wait_for "3 offline pods evicted" 30 three_evicted
t1=$(date +%s.%N)
e2e_log "victims chosen and deleted $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s after the online job's creation"
nominated() {
  [[ $(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.status.nominatedNodeName}{"\n"}{end}' | awk 'index($1, "online-") == 1 && NF == 2' | wc -l) -eq 3 ]]
}
wait_for "the online pods carry status.nominatedNodeName while they wait" 20 nominated
sleep 3
victims=$(terminating)
expect_eq "pods evicted while the online gang waits" "$(grep -c . <<<"$victims")" 3
expect_eq "victims are offline pods" "$(grep -c '^off-' <<<"$victims")" 3
expect_eq "online pods bound before the victims are gone" "$(bound online-)" 0
dt=$(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="DisruptionTarget")].reason}{"\n"}{end}' | awk 'NF == 2')
expect_eq "victims with DisruptionTarget PreemptionByScheduler" "$(grep -c ' PreemptionByScheduler$' <<<"$dt")" 3
release
wait_for "the online gang runs" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"online-\") == 1 && NF == 2' | wc -l) -eq 3 ]]"
wait_for "the victims are gone" 30 bash -c "[[ \$(kubectl -n $ns get pods -o name | grep -c '^pod/off-') -eq 5 ]]"
sleep 3
expect_eq "offline pods left" "$(pods_left off-)" 5
events=$(evicted_events)
expect_eq "Evicted events on pods" "$(grep -c '^Pod off-' <<<"$events" || true)" 3
expect_eq "Evicted events on PodGroups" "$(grep -c '^PodGroup off-' <<<"$events" || true)" 3
expect_contains "Evicted event message" "$events" "making room for job $ns/online (queue $q, priority 1000000)"
expect_eq "Evicted events naming an online pod" "$(grep -c '^Pod online-' <<<"$events" || true)" 0
expect_eq "online pods bound" "$(bound online-)" 3
expect_no_oversubscription
reset

# 1b. the same without a finalizer: time from the online job's creation to its pods bound.
{ pg off-a 1 "$q" offline-batch; pods off-a 8 offline-batch; } | apply
wait_for "offline pods hold all 8 GPUs" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c $pool) -eq 8 ]]"
t0=$(date +%s.%N)
{ pg online 3 "$q" online-critical; pods online 3 online-critical; } | apply
wait_for "the online gang runs" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"online-\") == 1 && NF == 2' | wc -l) -eq 3 ]]"
t1=$(date +%s.%N)
e2e_log "online gang bound $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s after creation"
sleep 2
expect_eq "offline pods left (3 evicted)" "$(pods_left off-)" 5
reset

# ---- 2. no victims ------------------------------------------------------------------------
# 2a. preemptable "false" pods.
{ pg pin 1 "$q" offline-batch; pods pin 8 offline-batch 'volcano.sh/preemptable: "false"'; } | apply
wait_for "pinned pods hold all 8 GPUs" 60 bash -c "[[ \$(kubectl -n $ns get pods -o name | wc -l) -eq 8 && \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c $pool) -eq 8 ]]"
{ pg online 1 "$q" online-critical; pods online 1 online-critical; } | apply
expect_no_eviction "preemptable false" 6 online-
reset

# 2b. a gang at its minAvailable over both nodes (no node holds all of it).
{ pg gang8 8 "$q" offline-batch; pods gang8 8 offline-batch; } | apply
wait_for "the 8-pod gang holds all 8 GPUs" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c $pool) -eq 8 ]]"
{ pg online 1 "$q" online-critical; pods online 1 online-critical; } | apply
expect_no_eviction "gang at minAvailable" 6 online-
kubectl -n "$ns" delete pods -l volcano.sh/job-name=online --grace-period=0 --force >/dev/null 2>&1
kubectl -n "$ns" delete podgroup online >/dev/null

# 2c. preempt stays in its queue: an online job of another queue takes nothing.
{ pg online 1 "$qo" online-critical; pods online 1 online-critical; } | apply
expect_no_eviction "other queue" 6 online-
reset

# 2d. a gang that would not fit even with every possible victim gone: 4 of the 8 pods are not
# preemptable, the online gang needs 5.
{ pg soft 1 "$q" offline-batch; pods soft 4 offline-batch; pg hard 1 "$q" offline-batch
  pods hard 4 offline-batch 'volcano.sh/preemptable: "false"'; } | apply
wait_for "offline pods hold all 8 GPUs" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c $pool) -eq 8 ]]"
{ pg online 5 "$q" online-critical; pods online 5 online-critical; } | apply
expect_no_eviction "gang that cannot fit" 6 online-
expect_eq "offline pods left" "$(pods_left soft-)" 4
reset

rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
