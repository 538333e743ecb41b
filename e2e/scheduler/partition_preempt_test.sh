#!/usr/bin/env bash
# Partition-aware gang preemption as a user sees it (docs/scheduler.md, gangpreempt, "Topology
# and partitions"), on 2 spines (tier 2) x 2 switches (tier 1) x 2 KWOK nodes of 4 GPUs, described
# by HyperNodes, every GPU held by low-priority (offline-batch) gangs pinned one per node (2 pods
# x 2 GPUs, minMember 2):
#   1. a high-priority (online-critical) PodGroup, networkTopology hard tier 2, whose
#      subGroupPolicy cuts its 4 pods x 2 GPUs into 2 sub-groups of 2 that must each stay inside
#      one switch (hard tier 1): its pods bind, each sub-group's pods on the nodes of one switch,
#      all of them under one spine; exactly the victims it needs are evicted (2 whole gangs = 4
#      pods = its 8 GPUs, on the nodes it then runs on) and the other spine is untouched;
#   1b. the same with 4 GPUs a pod (each sub-group needs a whole switch): the 4 gangs of one spine
#      go (8 pods), the sub-groups take its two switches, one each, the other spine untouched;
#   2. a sub-group of 3 pods x 4 GPUs (12 GPUs, a switch has 8) fits no switch even with every
#      victim gone: nothing is evicted, nothing of it binds, and its PodGroup's Unschedulable
#      condition says why (gangpreempt, the sub-group, the tier, the best switch);
#   3. the per-task preempt action (configuration reloaded) for a job-level hard tier 1: victims
#      and pods inside one switch although two free nodes in two switches would hold the job;
#      3b. 12 GPUs in hard tier 1: nothing evicted, the PodGroup condition says why.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=preempt_lib.sh
source "$(dirname "$0")/preempt_lib.sh"

tag=pp$RANDOM
pool=ppre-$tag

pp_cleanup() {
  local rc=$?
  set +e # so that the next line only hands rc on to sched_cleanup
  delete_hypernodes_of "$tag"
  (exit "$rc")
  sched_cleanup
}
trap pp_cleanup EXIT

apply_crds
kubectl wait --for=condition=Established --timeout=60s crd/hypernodes.topology.volcano.sh >/dev/null
kubectl apply -f "$BASALT_REPO_ROOT/examples/priorityclasses.yaml" >/dev/null
ns=$(new_namespace sched-partition-preempt)
q=ppq-$tag
make_queue "$q" 1

# Nodes $tag-d<D>s<S>n<N>; switch HyperNodes $tag-d<D>s<S> (tier 1); spines $tag-d<D> (tier 2).
NODES=()
for d in 0 1; do
  spine_members=""
  for s in 0 1; do
    sw=$tag-d${d}s$s
    switch_members=""
    for n in 0 1; do
      node=$sw-n$n
      add_fake_node "$node" 4 "basalt.dev/pool=$pool"
      kubectl label node "$node" "basalt.dev/e2e-switch=$sw" "basalt.dev/e2e-spine=$tag-d$d" >/dev/null
      NODES+=("$node")
      switch_members+="
  - {type: Node, selector: {exactMatch: {name: $node}}}"
    done
    kubectl apply -f - >/dev/null <<YAML
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: $sw}
spec:
  tier: 1
  members:$switch_members
YAML
    spine_members+="
  - {type: HyperNode, selector: {exactMatch: {name: $sw}}}"
  done
  kubectl apply -f - >/dev/null <<YAML
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: $tag-d$d}
spec:
  tier: 2
  members:$spine_members
YAML
done

conf=$(sched_conf "enqueue, allocate, backfill, gangpreempt" network-topology-aware weight=10)
start_scheduler --scheduler-conf="$conf" --schedule-period=500ms

# pp_pods GROUP COUNT CLASS GPUS SELECTOR_KEY SELECTOR_VALUE [SUBGROUP...]: COUNT pods of GROUP;
# with SUBGROUPs (one per pod), pod i carries volcano.sh/task-spec: w and
# volcano.sh/partition-id: SUBGROUP[i] and is named GROUP-p<SUBGROUP[i]>-<i>.
pp_pods() {
  local group=$1 count=$2 class=$3 gpus=$4 key=$5 value=$6 i name labels
  shift 6
  for ((i = 0; i < count; i++)); do
    name=$group-$i labels=""
    if (($# > 0)); then
      name=$group-p${1}-$i
      labels="volcano.sh/task-spec: w, volcano.sh/partition-id: \"$1\""
      shift
    fi
    POD_LABELS=$labels POD_CLASS=$class POD_GRACE=0 pod_yaml "$name" "$group" "$gpus" "" "$key=$value"
  done
}
# partitioned_pg NAME MIN SUBGROUP_SIZE: an online-critical PodGroup, hard tier 2 for the job,
# its pods labelled volcano.sh/task-spec w cut by volcano.sh/partition-id into sub-groups of
# SUBGROUP_SIZE, each hard tier 1 (what the job controller writes for a partitionPolicy).
partitioned_pg() {
  pg "$1" "$2" "$q" online-critical
  cat <<YAML
  networkTopology: {mode: hard, highestTierAllowed: 2}
  subGroupPolicy:
  - name: w
    subGroupSize: $3
    labelSelector: {matchLabels: {volcano.sh/task-spec: w}}
    matchLabelKeys: [volcano.sh/partition-id]
    networkTopology: {mode: hard, highestTierAllowed: 1}
YAML
}
# fill: one offline gang per node (f-<node>: 2 pods x 2 GPUs, minMember 2), all 32 GPUs taken.
fill() {
  local node
  for node in "${NODES[@]}"; do
    pg "f-$node" 2 "$q" offline-batch
    pp_pods "f-$node" 2 offline-batch 2 kubernetes.io/hostname "$node"
  done | apply
  wait_for "16 filler pods bound (every GPU of the pool taken)" 90 bash -c \
    "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"f-\") == 1 && NF == 2' | wc -l) -eq 16 ]]"
}
reset() {
  kubectl -n "$ns" delete pods --all --grace-period=0 --force --wait=true >/dev/null 2>&1 || true
  kubectl -n "$ns" delete podgroups --all --wait=true >/dev/null 2>&1 || true
  kubectl -n "$ns" delete events --all >/dev/null 2>&1 || true
}
node_of_pod() { kubectl -n "$ns" get pod "$1" -o jsonpath='{.spec.nodeName}'; }
label_of_node() { # NODE KEY(escaped for jsonpath)
  kubectl get node "$1" -o jsonpath="{.metadata.labels.$2}"
}
# distinct LABEL_KEY POD...: the distinct values of a node label over the pods' nodes.
distinct() {
  local key=$1 p
  shift
  for p in "$@"; do label_of_node "$(node_of_pod "$p")" "$key"; echo; done | grep . | sort -u | paste -sd' '
}
filler_left() { # [NODE_PREFIX]: filler pods still there (on nodes whose name starts so)
  kubectl -n "$ns" get pods -o name | grep -c "^pod/f-${1:-}" || true
}

# preempt_case NAME GPUS WANT_EVICTED [WANT_SWITCHES]: the pool filled, a PodGroup NAME of 2
# sub-groups x 2 pods x GPUS GPUs arrives; checks what a user sees (see the header).
preempt_case() {
  local name=$1 gpus=$2 want_evicted=$3 want_switches=${4:-} p sw switches="" members
  fill
  { partitioned_pg "$name" 4 2; pp_pods "$name" 4 online-critical "$gpus" basalt.dev/pool "$pool" 0 0 1 1; } | apply
  wait_for "$name: its 4 pods bound" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"$name-\") == 1 && NF == 2' | wc -l) -eq 4 ]]"
  sleep 2
  local job_pods
  job_pods=$(kubectl -n "$ns" get pods -o name | sed -n "s|^pod/\($name-.*\)\$|\1|p" | sort)
  for p in 0 1; do
    mapfile -t members < <(grep "^$name-p$p-" <<<"$job_pods")
    sw=$(distinct 'basalt\.dev/e2e-switch' "${members[@]}")
    e2e_log "$name: sub-group w-$p (${members[*]}) on switch $sw"
    expect_eq "$name: sub-group w-$p: pods" "${#members[@]}" 2
    expect_eq "$name: sub-group w-$p inside one switch" "$(wc -w <<<"$sw" | tr -d ' ')" 1
    switches+="$sw "
  done
  switches=$(tr ' ' '\n' <<<"$switches" | grep . | sort -u | grep -c .)
  if [[ -n $want_switches ]]; then
    expect_eq "$name: switches the sub-groups use" "$switches" "$want_switches"
  else
    e2e_log "$name: the sub-groups use $switches switch(es)"
  fi
  local spine other events evicted victim_nodes job_nodes
  # shellcheck disable=SC2086 # pod names are words
  spine=$(distinct 'basalt\.dev/e2e-spine' $job_pods)
  expect_eq "$name: the whole job under one spine (its hard tier 2)" "$(wc -w <<<"$spine" | tr -d ' ')" 1
  events=$(evicted_events)
  evicted=$(awk '$1 == "Pod" {print $2}' <<<"$events" | sort -u)
  e2e_log "$name: evicted $(paste -sd' ' <<<"$evicted")"
  expect_eq "$name: pods evicted (whole filler gangs, as many GPUs as the job needs)" "$(grep -c . <<<"$evicted" || true)" "$want_evicted"
  expect_eq "$name: filler pods left" "$(filler_left)" "$((16 - want_evicted))"
  expect_eq "$name: every evicted pod is gone" "$(for p in $evicted; do kubectl -n "$ns" get pod "$p" -o name 2>/dev/null; done | grep -c . || true)" 0
  victim_nodes=$(sed -n 's/^f-\(.*\)-[0-9]*$/\1/p' <<<"$evicted" | sort -u | paste -sd' ')
  # shellcheck disable=SC2086
  job_nodes=$(for p in $job_pods; do node_of_pod "$p"; echo; done | grep . | sort -u | paste -sd' ')
  expect_eq "$name: the victims are on the nodes the job now runs on" "$victim_nodes" "$job_nodes"
  other=$tag-d$((1 - ${spine##*-d}))
  expect_eq "$name: the other spine ($other) is untouched: filler pods" "$(filler_left "$other")" 8
  expect_eq "$name: the other spine: Evicted events" "$(grep -c "^Pod f-$other" <<<"$events" || true)" 0
  expect_contains "$name: Evicted event message" "$events" "Evicted by gangpreempt: making room for job $ns/$name (queue $q, priority 1000000)"
  expect_no_oversubscription
  reset
}

# ---- 1. two sub-groups of 2 x 2 GPUs -------------------------------------------------------------
# 4 of the 16 filler pods go (2 gangs, 8 GPUs); one switch holds both sub-groups, so whether they
# share one is the scheduler's choice (logged, not asserted).
preempt_case online 2 4
# ---- 1b. two sub-groups of 2 x 4 GPUs: each needs a whole switch -------------------------------
# 8 filler pods go (the 4 gangs of one spine); the sub-groups take its two switches, one each.
preempt_case wide 4 8 2
# explained_message GROUP TEXT WHO: waits until GROUP's Unschedulable condition contains TEXT
# (WHO explains itself), lets a few more cycles pass, then sets $msg to the message and logs it.
# (Not a command substitution: the wait's pass or fail must count in this shell.)
explained() { [[ $(pg_condition_message "$ns" "$1" Unschedulable) == *"$2"* ]]; }
explained_message() {
  wait_for "$3 explains itself on the PodGroup" 30 explained "$1" "$2"
  sleep 3 # a few more cycles: still nothing evicted
  msg=$(pg_condition_message "$ns" "$1" Unschedulable)
  e2e_log "$1: $msg"
}
# expect_nothing_taken GROUP WHAT: no eviction, all 16 filler pods left, none of GROUP bound.
expect_nothing_taken() {
  expect_eq "$2: Evicted events" "$(evicted_events | grep -c . || true)" 0
  expect_eq "$2: filler pods left" "$(filler_left)" 16
  expect_eq "$2: its pods bound" "$(bound "$1-")" 0
}

# ---- 2. a sub-group no switch holds, even with every victim gone -----------------------------
fill
{ partitioned_pg big 3 3; pp_pods big 3 online-critical 4 basalt.dev/pool "$pool" 0 0 0; } | apply
explained_message big "gangpreempt: sub-group w-0" gangpreempt
# allocate's reason is the job's own constraint (no free room anywhere); gangpreempt's names the
# sub-group, its tier, the best switch and the spine it tried (the job's first domain).
expect_contains "the condition says allocate's reason" "$msg" "Origin reason is hard tier 2: no HyperNode of tier ≤ 2 has 12 free nvidia.com/gpu"
expect_contains "and gangpreempt's" "$msg" "; gangpreempt: sub-group w-0: no domain it allows could hold it even with victims evicted: hard tier 1: no HyperNode of tier ≤ 1 has 12 allocatable nvidia.com/gpu; best $tag-d"
expect_contains "naming what the best switch has, and the spine tried" "$msg" "has 8 (in $tag-d"
expect_nothing_taken big "impossible sub-group"
reset

# ---- 3. per-task preempt (not gangpreempt) for a job-level hard tier 1 -----------------------
# The configuration rewritten (hot reload) to run preempt; gang and drf leave victims to priority
# (the Helm chart's setting). One node of switch d0s0 and one of d0s1 are freed: a PodGroup of
# 2 pods x 4 GPUs could run on those two free nodes at once, but its hard tier 1 wants one switch,
# so preempt evicts the filler gang on the other node of one of those switches and the job runs
# there: 2 victims, both pods in one switch, the switch's free node used.
reloads() { curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '/config_reloads_total\{result="success"\}/ {print $2}'; }
reloads_before=$(reloads)
write_sched_conf "$conf" "enqueue, allocate, backfill, preempt" priority gang +enablePreemptable=false \
  conformance -- overcommit drf +enablePreemptable=false predicates proportion nodeorder \
  network-topology-aware weight=10
reloaded() { local now; now=$(reloads); [[ ${now%.*} -gt ${reloads_before%.*} ]]; }
wait_for "the preempt configuration is loaded" 15 reloaded
# hard_pg NAME PODS: an online-critical PodGroup with networkTopology hard tier 1, its pods 4 GPUs.
hard_pg() {
  pg "$1" "$2" "$q" online-critical
  echo "  networkTopology: {mode: hard, highestTierAllowed: 1}"
  pp_pods "$1" "$2" online-critical 4 basalt.dev/pool "$pool"
}
fill
kubectl -n "$ns" delete pods "f-$tag-d0s0-n0-0" "f-$tag-d0s0-n0-1" "f-$tag-d0s1-n0-0" "f-$tag-d0s1-n0-1" \
  --grace-period=0 --force --wait=true >/dev/null 2>&1
kubectl -n "$ns" delete podgroups "f-$tag-d0s0-n0" "f-$tag-d0s1-n0" --wait=true >/dev/null 2>&1
kubectl -n "$ns" delete events --all >/dev/null 2>&1 || true
hard_pg topo 2 | apply
wait_for "topo: its 2 pods bound" 60 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk 'index(\$1, \"topo-\") == 1 && NF == 2' | wc -l) -eq 2 ]]"
sleep 2
sw=$(distinct 'basalt\.dev/e2e-switch' topo-0 topo-1)
e2e_log "topo: pods on $(node_of_pod topo-0) $(node_of_pod topo-1), switch $sw"
expect_eq "preempt hard tier 1: both pods inside one switch" "$(wc -w <<<"$sw" | tr -d ' ')" 1
events=$(evicted_events)
evicted=$(awk '$1 == "Pod" {print $2}' <<<"$events" | sort -u)
e2e_log "topo: evicted $(paste -sd' ' <<<"$evicted")"
expect_eq "preempt hard tier 1: pods evicted (one filler gang)" "$(grep -c . <<<"$evicted" || true)" 2
expect_eq "preempt hard tier 1: the victims are in the job's switch" \
  "$(sed -n 's/^f-\(.*\)-n[0-9]*-[0-9]*$/\1/p' <<<"$evicted" | sort -u)" "$sw"
expect_contains "preempt hard tier 1: Evicted event message" "$events" "Evicted by preempt: making room for job $ns/topo"
expect_no_oversubscription
reset
# ---- 3b. per-task preempt, hard tier 1, 12 GPUs (a switch has 8): nothing evicted, explained -----
fill
kubectl -n "$ns" delete events --all >/dev/null 2>&1 || true
hard_pg huge 3 | apply
explained_message huge "preempt: hard tier 1" preempt
expect_contains "the condition names preempt, the tier and the best switch" "$msg" "preempt: hard tier 1: no HyperNode of tier ≤ 1 has 12 allocatable nvidia.com/gpu; best $tag-d"
expect_nothing_taken huge "preempt, impossible tier"
reset
rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
