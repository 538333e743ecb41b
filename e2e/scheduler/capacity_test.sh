#!/usr/bin/env bash
# Team quotas with the capacity plugin and enableHierarchy, as a user sets them up with kubectl:
# org-a (deserved and capability 32 GPUs) -> team-1, team-2 (deserved 16 each; team-1 also has a
# guarantee of 8). team-1 floods: it borrows idle GPUs up to its parent's cap (32 of 64), and its
# pending PodGroups say which ancestor holds them back. team-2's jobs arrive: reclaim evicts
# team-1's borrowed pods (Evicted events) until both teams hold 16; team-1 never goes below its
# guarantee. A job submitted to org-a itself (not a leaf) stays Pending with a message. Queue
# status shows capacity's deserved and guarantee (and DESERVED-GPU). Queue priority: GPUs freed
# in a full cluster go to the higher-priority of two waiting queues first.
# ancestorReclaimLevel (Volcano's user-guide scenarios): in a lab of 8 GPUs split into two
# departments, a team's job reclaims from its sibling team; with level 1 a cousin team whose
# department is within its deserved share keeps its pods (the job's PodGroup says so), with level 0
# the cousin is reclaimed, and with level 1 it is once its department is over its deserved share.
# Until the queue controller creates the `root` queue, org-a has no parent (the scheduler treats
# it as a child of an implicit root whose capability is the cluster).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-capacity)
suffix=$RANDOM
org=org-a-$suffix t1=team-1-$suffix t2=team-2-$suffix
queue_yaml() { # NAME PARENT DESERVED [CAPABILITY] [GUARANTEE] (empty DESERVED: none)
  cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec:
  reclaimable: true
$([[ -n $2 ]] && echo "  parent: $2")
$([[ -n $3 ]] && echo "  deserved: {nvidia.com/gpu: \"$3\"}")
$([[ -n ${4:-} ]] && echo "  capability: {nvidia.com/gpu: \"$4\"}")
$([[ -n ${5:-} ]] && echo "  guarantee: {resource: {nvidia.com/gpu: \"$5\"}}")
YAML
}
if out=$({ queue_yaml "$org" "" 32 32; queue_yaml "$t1" "$org" 16 "" 8; queue_yaml "$t2" "$org" 16; } |
  kubectl apply -f - 2>&1); then
  pass "queues created with kubectl (org-a, team-1 and team-2 with parent org-a)"
else
  fail "creating the queue tree: $out"
  exit 1
fi
CLUSTER_OBJECTS+=("queue/$t1" "queue/$t2" "queue/$org")

total=0
for n in $(kubectl get nodes -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}'); do
  total=$((total + n))
done
used=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' |
  awk 'NR == FNR {have[$1] = 1; next} ($1 in have) {s += $2} END {print s + 0}' - <(gpus_per_node))
e2e_log "cluster GPUs: $total, in use by others: $used"
if ((total - used < 40)); then
  fail "needs at least 40 idle GPUs (total $total, used $used)"
  exit 1
fi

# Volcano's user-guide configuration for hierarchical queues, with ancestorReclaimLevel LEVEL if
# given.
capacity_conf() { # FILE [LEVEL]
  cat >"$1" <<YAML
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity
    enableHierarchy: true
$([[ -n ${2:-} ]] && printf '    arguments:\n      ancestorReclaimLevel: %s\n' "$2")
  - name: nodeorder
YAML
}
conf=$(mktemp)
capacity_conf "$conf"
start_scheduler --scheduler-conf="$conf"
bound_at_least() { (($(bound_with_prefix "$ns" "$1") >= $2)); } # PREFIX N
bound_at_most() { (($(bound_with_prefix "$ns" "$1") <= $2)); }

# team-1 borrows up to the parent's cap.
{ for i in $(seq 0 39); do gang_yaml "$ns" "t1-$i" 1 1 "$t1"; done; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "team-1 holds 32 GPUs (org-a's capability)" 60 bound_at_least t1- 32
sleep 3
expect_eq "team-1 GPUs (capped by org-a)" "$(bound_with_prefix "$ns" t1-)" 32
msgs=$(kubectl -n "$ns" get podgroups -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Unschedulable")].message}{"\n"}{end}')
expect_contains "team-1's pending PodGroup condition" "$msgs" \
  "queue $t1: deserved nvidia.com/gpu 16 reached (allocated 32), borrowing blocked by parent $org capability 32"

# Queue status shows what capacity computed: deserved (spec.deserved clipped to the real
# capability) and the guarantee, and `kubectl get queue` shows it as DESERVED-GPU.
qstatus() { kubectl get queue "$1" -o jsonpath="{.status.$2.nvidia\.com/gpu}"; } # QUEUE FIELD
qstatus_is() { [[ $(qstatus "$1" "$2") == "$3" ]]; }
wait_for "team-1 status.deserved 16 GPUs" 20 qstatus_is "$t1" deserved 16
wait_for "team-1 status.guarantee 8 GPUs" 20 qstatus_is "$t1" guarantee 8
wait_for "team-2 status.deserved 16 GPUs" 20 qstatus_is "$t2" deserved 16
expect_eq "team-2 status.guarantee (none)" "$(qstatus "$t2" guarantee)" ""
tbl=$(kubectl get queue "$t1")
col=$(head -n 1 <<<"$tbl" | awk '{print index($0, "DESERVED-GPU")}')
expect_eq "team-1's DESERVED-GPU in kubectl get queue" \
  "$( ((col > 0)) && sed -n 2p <<<"$tbl" | cut -c"$col"- | awk '{print $1}')" 16

# A job in a non-leaf queue.
gang_yaml "$ns" "org-job" 1 1 "$org" | kubectl -n "$ns" apply -f - >/dev/null
wait_for "org-a job explained" 20 bash -c \
  "kubectl -n $ns get podgroup org-job -o jsonpath='{.status.conditions[*].message}' | grep -q 'is not a leaf queue'"
expect_contains "non-leaf queue job condition" "$(pg_condition_message "$ns" org-job Unschedulable)" \
  "queue $org is not a leaf queue (children: $t1, $t2): submit jobs to a leaf queue"
expect_eq "non-leaf queue job phase" "$(pg_phase "$ns" org-job)" Pending

# team-2 comes back: reclaim gives it its deserved 16.
{ for i in $(seq 0 19); do gang_yaml "$ns" "t2-$i" 1 1 "$t2"; done; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "team-2 holds its deserved 16 GPUs" 90 bound_at_least t2- 16
wait_for "team-1 down to 16 GPUs" 30 bound_at_most t1- 16
sleep 3
expect_eq "team-2 GPUs" "$(bound_with_prefix "$ns" t2-)" 16
expect_eq "team-1 GPUs (at deserved, above its guarantee of 8)" "$(bound_with_prefix "$ns" t1-)" 16
events=$(kubectl -n "$ns" get events --field-selector reason=Evicted -o jsonpath='{range .items[*]}{.involvedObject.kind} {.message}{"\n"}{end}')
expect_contains "Evicted events" "$events" "Evicted by reclaim: making room for job $ns/t2-"
expect_contains "Evicted events" "$events" "(queue $t2, priority "
msgs=$(kubectl -n "$ns" get podgroups -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Unschedulable")].message}{"\n"}{end}')
expect_contains "team-1's pending PodGroup condition after reclaim" "$msgs" \
  "queue $t1: deserved nvidia.com/gpu 16 reached (allocated 16), borrowing blocked by parent $org capability 32"

# The guarantee: team-1's deserved drops to 0 and team-2's rises to 24 with more work; team-2
# reclaims from team-1, which keeps its guarantee of 8.
kubectl patch queue "$t1" --type merge -p '{"spec":{"deserved":{"nvidia.com/gpu":"0"}}}' >/dev/null
kubectl patch queue "$t2" --type merge -p '{"spec":{"deserved":{"nvidia.com/gpu":"24"}}}' >/dev/null
{ for i in $(seq 20 31); do gang_yaml "$ns" "t2-$i" 1 1 "$t2"; done; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "team-2 reclaims up to 24 GPUs" 90 bound_at_least t2- 24
wait_for "team-1 status.deserved follows the spec change to its guarantee (8)" 20 \
  qstatus_is "$t1" deserved 8
wait_for "team-2 status.deserved follows the spec change (24)" 20 qstatus_is "$t2" deserved 24
sleep 4
expect_eq "team-1 GPUs (its guarantee of 8 is never reclaimed)" "$(bound_with_prefix "$ns" t1-)" 8
expect_eq "team-2 GPUs" "$(bound_with_prefix "$ns" t2-)" 24

# Queue priority: with the cluster full, a priority-10 and a priority-1 queue (neither with a
# deserved share) both wait for GPUs; the GPUs freed go to the priority-10 queue first. Every
# other tie-break favours the priority-1 queue: it is the older queue and its jobs come first.
hi=hi-$suffix lo=lo-$suffix blk=blk-$suffix
priority_queues() { # NAME:PRIORITY...
  local q
  for q in "$@"; do
    cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: ${q%%:*}}
spec: {reclaimable: true, priority: ${q##*:}}
YAML
  done | kubectl apply -f - >/dev/null
}
priority_queues "$lo:1" "$blk:0"
sleep 1 # creation timestamps have one-second resolution
priority_queues "$hi:10"
CLUSTER_OBJECTS+=("queue/$hi" "queue/$lo" "queue/$blk")
in_ns=$(kubectl get pods -n "$ns" -o jsonpath='{range .items[?(@.spec.nodeName)]}{.spec.containers[0].resources.limits.nvidia\.com/gpu}{"\n"}{end}' |
  awk '{s += $1} END {print s + 0}')
idle=$((total - used - in_ns))
e2e_log "idle GPUs before the blocker: $idle"
((idle >= 12)) || fail "the queue priority case needs at least 12 idle GPUs, have $idle"
{ for i in $(seq 0 $((idle - 1))); do gang_yaml "$ns" "blk-$i" 1 1 "$blk"; done; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "the blocker queue takes the $idle idle GPUs" 60 bound_at_least blk- "$idle"
{ for i in $(seq 0 7); do gang_yaml "$ns" "lo-$i" 1 1 "$lo"; done; } | kubectl -n "$ns" apply -f - >/dev/null
sleep 1
{ for i in $(seq 0 7); do gang_yaml "$ns" "hi-$i" 1 1 "$hi"; done; } | kubectl -n "$ns" apply -f - >/dev/null
sleep 3
expect_eq "nothing free: hi and lo wait" "$(bound_with_prefix "$ns" hi-)/$(bound_with_prefix "$ns" lo-)" 0/0
free_blockers() { # FROM TO: deletes blk-FROM..blk-TO
  local i
  for i in $(seq "$1" "$2"); do
    kubectl -n "$ns" delete pod "blk-$i-0" --wait=false >/dev/null
    kubectl -n "$ns" delete podgroup "blk-$i" --wait=false >/dev/null
  done
}
free_blockers 0 7
wait_for "the 8 freed GPUs go to the priority-10 queue" 60 bound_at_least hi- 8
sleep 3
expect_eq "priority-10 queue GPUs / priority-1 queue GPUs after 8 are freed" \
  "$(bound_with_prefix "$ns" hi-)/$(bound_with_prefix "$ns" lo-)" 8/0
free_blockers 8 11
wait_for "with the priority-10 queue served, the next GPUs go to the priority-1 queue" 60 \
  bound_at_least lo- 4
expect_no_oversubscription
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi

# ancestorReclaimLevel. The GPUs of the cases above are given back first.
kubectl -n "$ns" delete podgroups,pods --all --wait=true --timeout=60s >/dev/null
ns=$(new_namespace sched-capacity-level)
lab=lab-$suffix da=dept-a-$suffix db=dept-b-$suffix a1=team-a1-$suffix a2=team-a2-$suffix
b1=team-b1-$suffix
# root -> lab (capability 8) -> dept-a (deserved 4) -> team-a1, team-a2 (2 each)
#                            -> dept-b (deserved 5) -> team-b1 (1)
if out=$({ queue_yaml "$lab" "" "" 8; queue_yaml "$da" "$lab" 4; queue_yaml "$db" "$lab" 5
  queue_yaml "$a1" "$da" 2; queue_yaml "$a2" "$da" 2; queue_yaml "$b1" "$db" 1; } |
  kubectl apply -f - 2>&1); then
  pass "queue tree lab -> dept-a (team-a1, team-a2), dept-b (team-b1) created with kubectl"
else
  fail "creating the lab queue tree: $out"
  exit 1
fi
CLUSTER_OBJECTS+=("queue/$a1" "queue/$a2" "queue/$b1" "queue/$da" "queue/$db" "queue/$lab")
capacity_conf "$conf" 1
start_scheduler --scheduler-conf="$conf"
jobs_in() { # QUEUE PREFIX FROM TO
  local i
  for i in $(seq "$3" "$4"); do gang_yaml "$ns" "$2$i" 1 1 "$1"; done | kubectl -n "$ns" apply -f - >/dev/null
}
held() { echo "$(bound_with_prefix "$ns" a1-)/$(bound_with_prefix "$ns" a2-)/$(bound_with_prefix "$ns" b1-)"; }
held_is() { [[ $(held) == "$1" ]]; }
jobs_in "$a2" a2- 0 2
jobs_in "$b1" b1- 0 4
wait_for "the lab is full: team-a2 holds 3 GPUs (deserved 2), team-b1 5 (deserved 1)" 60 held_is 0/3/5
# team-a1 (deserved 2) wants 2. Its sibling gives back the 1 GPU it holds above its deserved
# share; team-b1 is over its own deserved share too, but its department dept-b holds 5 of its 5.
jobs_in "$a1" a1- 0 1
wait_for "team-a1 reclaims 1 GPU from its sibling team-a2" 60 held_is 1/2/5
sleep 5
expect_eq "team-a1/team-a2/team-b1 GPUs with ancestorReclaimLevel 1" "$(held)" 1/2/5
evicted() { # the pods evicted by reclaim, one name a line
  kubectl -n "$ns" get events --field-selector reason=Evicted -o jsonpath='{range .items[*]}{.involvedObject.kind} {.involvedObject.name}{"\n"}{end}' |
    awk '$1 == "Pod" {print $2}' | sort -u
}
expect_eq "pods evicted (the sibling's only)" "$(evicted | sed 's/-[0-9]*-0$//' | sort -u | tr '\n' ' ')" "a2 "
waiting=a1-0
[[ -n $(kubectl -n "$ns" get pod a1-0-0 -o jsonpath='{.spec.nodeName}') ]] && waiting=a1-1
expect_eq "the team-a1 job left waiting: pod phase" \
  "$(kubectl -n "$ns" get pod "$waiting-0" -o jsonpath='{.status.phase}')" Pending
expect_contains "the waiting team-a1 job's PodGroup condition" \
  "$(pg_condition_message "$ns" "$waiting" Unschedulable)" \
  "reclaim: queue $b1's pods are kept (ancestorReclaimLevel 1): its parent $db is within its deserved nvidia.com/gpu 5 (allocated 5)"

# Level 0 (no argument): only the team's own deserved share counts, and the cousin is reclaimed.
stop_scheduler || fail "SIGTERM: non-zero exit"
capacity_conf "$conf"
start_scheduler --scheduler-conf="$conf"
wait_for "without ancestorReclaimLevel, team-a1's waiting job reclaims from its cousin team-b1" 60 \
  held_is 2/2/4
expect_contains "the cousin's pod evicted" "$(evicted)" b1-
msgs=$(kubectl -n "$ns" get events --field-selector reason=Evicted -o jsonpath='{range .items[*]}{.involvedObject.name} {.message}{"\n"}{end}')
expect_contains "the cousin's Evicted event" "$(grep '^b1-' <<<"$msgs")" \
  "Evicted by reclaim: making room for job $ns/$waiting (queue $a1, priority "

# Level 1 again: a cousin is reclaimed once its department is over its deserved share (scenario
# 1). team-a1 may now have 3 (dept-a 5); dept-b holds 4 of its 5, then of 3.
stop_scheduler || fail "SIGTERM: non-zero exit"
capacity_conf "$conf" 1
start_scheduler --scheduler-conf="$conf"
kubectl patch queue "$da" --type merge -p '{"spec":{"deserved":{"nvidia.com/gpu":"5"}}}' >/dev/null
kubectl patch queue "$a1" --type merge -p '{"spec":{"deserved":{"nvidia.com/gpu":"3"}}}' >/dev/null
jobs_in "$a1" a1- 2 2
sleep 6
expect_eq "team-a1's third job waits while dept-b holds 4 of its deserved 5" "$(held)" 2/2/4
kubectl patch queue "$db" --type merge -p '{"spec":{"deserved":{"nvidia.com/gpu":"3"}}}' >/dev/null
wait_for "with dept-b over its deserved 3, team-a1 reclaims from team-b1 at level 1" 60 held_is 3/2/3
sleep 3
expect_eq "team-a1/team-a2/team-b1 GPUs" "$(held)" 3/2/3

# A leaf queue's capability counts the task's own request: with capability 5, two 2-GPU jobs
# run and a third waits at 4 of 5 although the cluster has idle GPUs.
capped=capped-$suffix
queue_yaml "$capped" "" "" 5 | kubectl apply -f - >/dev/null
CLUSTER_OBJECTS+=("queue/$capped")
for i in 0 1; do gang_yaml "$ns" "cap-$i" 1 2 "$capped"; done | kubectl -n "$ns" apply -f - >/dev/null
wait_for "two 2-GPU jobs run in the queue of capability 5" 60 bound_at_least cap- 2
gang_yaml "$ns" cap-2 1 2 "$capped" | kubectl -n "$ns" apply -f - >/dev/null
wait_for "the third 2-GPU job is explained" 30 bash -c \
  "kubectl -n $ns get podgroup cap-2 -o jsonpath='{.status.conditions[*].message}' | grep -q 'capability nvidia.com/gpu 5 reached'"
expect_contains "the third job's condition" "$(pg_condition_message "$ns" cap-2 Unschedulable)" \
  "queue $capped: capability nvidia.com/gpu 5 reached (allocated 4, requested 2)"
expect_eq "jobs running in the queue of capability 5" "$(bound_with_prefix "$ns" cap-)" 2
expect_no_oversubscription
rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
