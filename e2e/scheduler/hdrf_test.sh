#!/usr/bin/env bash
# Hierarchical DRF (drf with enableHierarchy) as a user sees it. The scheduler runs with
# `drf: enableHierarchy: true` (no proportion: the two are refused together). The queue tree is
# built with kubectl through spec.parent and spec.weight:
#
#   (root) -> org-a (weight 1) -> a1 (weight 1), a2 (weight 3)
#          -> org-b (weight 3) -> b1 (weight 1), b2 (weight 2)
#
# on 4 schedulable nodes (the others cordoned), 8 GPUs each in the default pool: 32 GPUs.
#  1. Every leaf is flooded with one-GPU gangs before the scheduler starts: the GPUs split 8/24
#     between org-a and org-b, 2/6 inside org-a and 8/16 inside org-b (each within one GPU),
#     and the Queues' status.allocated says so.
#  2. Work-conserving: the jobs of a1, a2 and b1 are deleted; b2 alone takes all 32 GPUs.
#  3. org-a comes back (reclaim is in the actions): b2's pods are evicted until org-a holds its
#     weighted 8 again (2/6 between a1 and a2) and b2 keeps 24.
#  4. A misconfiguration is refused: the configuration file is rewritten with proportion next
#     to drf enableHierarchy; the scheduler logs the refusal with its reason, counts a failed
#     reload and keeps scheduling with hdrf. Restarted with that file, it says it uses the
#     built-in default instead.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-hdrf)
suffix=$RANDOM
orga=org-a-$suffix orgb=org-b-$suffix
a1=a1-$suffix a2=a2-$suffix b1=b1-$suffix b2=b2-$suffix
queue_yaml() { # NAME WEIGHT [PARENT]
  cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec:
  weight: $2
  reclaimable: true
$([[ -n ${3:-} ]] && echo "  parent: $3")
YAML
}
if out=$({
  queue_yaml "$orga" 1
  queue_yaml "$orgb" 3
  queue_yaml "$a1" 1 "$orga"
  queue_yaml "$a2" 3 "$orga"
  queue_yaml "$b1" 1 "$orgb"
  queue_yaml "$b2" 2 "$orgb"
} | kubectl apply -f - 2>&1); then
  pass "queue tree created with kubectl (org-a, org-b; a1, a2 under org-a; b1, b2 under org-b)"
else
  fail "creating the queue tree: $out"
  exit 1
fi
CLUSTER_OBJECTS+=("queue/$a1" "queue/$a2" "queue/$b1" "queue/$b2" "queue/$orga" "queue/$orgb")

cordon_all_but 4
e2e_log "schedulable nodes: ${KEPT_NODES[*]}"
total=0
for n in "${KEPT_NODES[@]}"; do
  total=$((total + $(kubectl get node "$n" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')))
done
used=$(printf '%s\n' "${KEPT_NODES[@]}" |
  awk 'NR == FNR {have[$1] = 1; next} ($1 in have) {s += $2} END {print s + 0}' - <(gpus_per_node))
e2e_log "schedulable GPUs: $total, in use by others: $used"
if ((total != 32 || used != 0)); then
  fail "needs 4 idle schedulable nodes of 8 GPUs (the default pool): $total GPUs, $used in use"
  exit 1
fi

conf=$(mktemp)
hdrf_conf() {
  cat <<'YAML'
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: drf
    enableHierarchy: true
  - name: predicates
  - name: nodeorder
YAML
}
hdrf_conf >"$conf"

running() { bound_with_prefix "$ns" "$1-"; } # LEAF: its running pods
# expect_near WHAT ACTUAL WANT: within one GPU.
expect_near() {
  if (($2 >= $3 - 1 && $2 <= $3 + 1)); then
    pass "$1: $2 (want $3 +-1)"
  else
    fail "$1: $2, want $3 +-1"
  fi
}
flood() { # LEAF_PREFIX QUEUE FROM TO
  local i
  for ((i = $3; i < $4; i++)); do gang_yaml "$ns" "$1-$i" 1 1 "$2"; done
}
all_running() { (($(bound_count "$ns") >= total)); }
counts() { echo "$(running a1) $(running a2) $(running b1) $(running b2)"; }
# wait_settled WHAT: waits (up to 90 s) until the running pods of every leaf stay the same for
# 9 s, i.e. reclaim's corrections are done and no eviction loop runs.
wait_settled() {
  local last now same=0 i
  last=$(counts)
  for ((i = 0; i < 30; i++)); do
    sleep 3
    now=$(counts)
    if [[ $now == "$last" ]]; then
      same=$((same + 1))
      if ((same >= 3)); then
        pass "$1: settled at a1 a2 b1 b2 = $now (unchanged for 9 s)"
        return 0
      fi
    else
      same=0
      last=$now
    fi
  done
  fail "$1: still moving after 90 s (last $last, now $now)"
}
show() { e2e_log "running: a1 $(running a1) a2 $(running a2) b1 $(running b1) b2 $(running b2)"; }

# 1. The flood arrives before the scheduler starts, so no leaf gets a head start. Every leaf
# asks for more than its weighted share (a1 2, a2 6, b1 8, b2 16).
{
  flood a1 "$a1" 0 8
  flood a2 "$a2" 0 12
  flood b1 "$b1" 0 14
  flood b2 "$b2" 0 36
} | kubectl -n "$ns" apply -f - >/dev/null
start_scheduler --scheduler-conf="$conf"
wait_for "all $total GPUs in use" 90 all_running
wait_settled "after the flood"
show
ra1=$(running a1) ra2=$(running a2) rb1=$(running b1) rb2=$(running b2)
expect_near "org-a's GPUs (weight 1 of 4)" $((ra1 + ra2)) 8
expect_near "org-b's GPUs (weight 3 of 4)" $((rb1 + rb2)) 24
expect_near "a1's GPUs (weight 1 of org-a's 4)" "$ra1" 2
expect_near "a2's GPUs (weight 3 of org-a's 4)" "$ra2" 6
expect_near "b1's GPUs (weight 1 of org-b's 3)" "$rb1" 8
expect_near "b2's GPUs (weight 2 of org-b's 3)" "$rb2" 16
expect_eq "GPUs in use" $((ra1 + ra2 + rb1 + rb2)) "$total"
for q in a1:"$a1":"$ra1" a2:"$a2":"$ra2" b1:"$b1":"$rb1" b2:"$b2":"$rb2"; do
  IFS=: read -r leaf name want <<<"$q"
  wait_for "queue $leaf status.allocated = $want GPUs" 20 bash -c \
    "[[ \$(kubectl get queue $name -o jsonpath='{.status.allocated.nvidia\\.com/gpu}') == $want ]]"
done
pos=$(kubectl -n "$ns" get podgroups -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="QueuePosition")].message}{"\n"}{end}' | grep -c . || true)
expect_eq "waiting PodGroups with a QueuePosition condition" "$pos" $((8 + 12 + 14 + 36 - total))

# 2. Work-conserving: b2 alone gets everything.
for kind in pods podgroups; do
  kubectl -n "$ns" get "$kind" -o name | grep -E '/(a1|a2|b1)-' |
    xargs -r kubectl -n "$ns" delete --wait=false >/dev/null
done
b2_all() { (($(running b2) >= total)); }
wait_for "b2, alone with pending work, takes all $total GPUs" 90 b2_all
sleep 2
show
expect_eq "b2's GPUs when no other queue has work" "$(running b2)" "$total"
wait_for "queue b2 status.allocated = $total GPUs" 20 bash -c \
  "[[ \$(kubectl get queue $b2 -o jsonpath='{.status.allocated.nvidia\\.com/gpu}') == $total ]]"

# 3. org-a comes back: reclaim returns its weighted share.
{
  flood a1 "$a1" 100 108
  flood a2 "$a2" 100 112
} | kubectl -n "$ns" apply -f - >/dev/null
org_a_back() { (($(running a1) + $(running a2) >= 7)); }
wait_for "org-a reclaims its share from b2" 120 org_a_back
wait_settled "after reclaim"
show
ra1=$(running a1) ra2=$(running a2) rb2=$(running b2)
expect_near "org-a's GPUs after reclaim" $((ra1 + ra2)) 8
expect_near "a1's GPUs after reclaim" "$ra1" 2
expect_near "a2's GPUs after reclaim" "$ra2" 6
expect_near "b2's GPUs after reclaim" "$rb2" 24
events=$(kubectl -n "$ns" get events --field-selector reason=Evicted -o jsonpath='{range .items[*]}{.message}{"\n"}{end}')
expect_contains "Evicted events" "$events" "Evicted by reclaim: making room for job $ns/a"
expect_no_oversubscription

# 4. A refused combination: hot reload keeps hdrf in force, a restart uses the default.
failed_reloads() {
  curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" |
    awk '$1 == "basalt_scheduler_config_reloads_total{result=\"failure\"}" {print $2}'
}
before=$(failed_reloads)
sed 's/  - name: nodeorder/  - name: proportion\n  - name: nodeorder/' "$conf" >"$conf.new"
mv "$conf.new" "$conf"
refusal="drf with enableHierarchy cannot be used together with proportion"
wait_for "the scheduler refuses the reloaded configuration" 20 grep -q "$refusal" "$SCHED_LOG"
expect_contains "scheduler log" "$(grep "$refusal" "$SCHED_LOG" | tail -1)" \
  "Invalid scheduler configuration; keeping the previous one"
expect_eq "failed reloads counted" "$(failed_reloads)" "$((${before%.*} + 1))"
if curl -sf "http://127.0.0.1:$SCHED_PORT/readyz" >/dev/null; then
  pass "the scheduler keeps running after the refused reload"
else
  fail "the scheduler is not ready after the refused reload"
fi
# It keeps scheduling with hdrf: one of a2's pods ends; the GPU goes back to a2 (org-a drops
# below its weighted share), not to b2.
victim=$(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
  awk 'index($1, "a2-") == 1 && NF == 2 {print $1; exit}')
kubectl -n "$ns" delete pod "$victim" --grace-period=0 --force >/dev/null 2>&1
kubectl -n "$ns" delete podgroup "${victim%-0}" --wait=false >/dev/null
a2_back() { (($(running a2) == ra2)); }
wait_for "a2 takes the freed GPU back (hdrf still in force)" 30 a2_back
expect_eq "b2's GPUs after the freed GPU" "$(running b2)" "$rb2"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
start_scheduler --scheduler-conf="$conf"
expect_contains "scheduler log at start with the refused configuration" \
  "$(grep "Cannot load the scheduler configuration; using the built-in default" "$SCHED_LOG" | tail -1)" \
  "$refusal"
expect_no_oversubscription
rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
