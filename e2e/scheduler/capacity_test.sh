#!/usr/bin/env bash
# Team quotas with the capacity plugin and enableHierarchy, as a user sets them up with kubectl:
# org-a (deserved and capability 32 GPUs) -> team-1, team-2 (deserved 16 each; team-1 also has a
# guarantee of 8). team-1 floods: it borrows idle GPUs up to its parent's cap (32 of 64), and its
# pending PodGroups say which ancestor holds them back. team-2's jobs arrive: reclaim evicts
# team-1's borrowed pods (Evicted events) until both teams hold 16; team-1 never goes below its
# guarantee. A job submitted to org-a itself (not a leaf) stays Pending with a message. Queue
# status shows capacity's deserved and guarantee (and DESERVED-GPU). Queue priority: GPUs freed
# in a full cluster go to the higher-priority of two waiting queues first.
# Until the queue controller creates the `root` queue, org-a has no parent (the scheduler treats
# it as a child of an implicit root whose capability is the cluster).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-capacity)
suffix=$RANDOM
org=org-a-$suffix t1=team-1-$suffix t2=team-2-$suffix
queue_yaml() { # NAME PARENT DESERVED [CAPABILITY] [GUARANTEE]
  cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec:
  reclaimable: true
$([[ -n $2 ]] && echo "  parent: $2")
  deserved: {nvidia.com/gpu: "$3"}
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

conf=$(mktemp)
cat >"$conf" <<'YAML'
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
  - name: nodeorder
YAML
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
rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
