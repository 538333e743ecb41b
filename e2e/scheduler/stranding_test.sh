#!/usr/bin/env bash
# Issue 14's stranding bug as a user met it: two queues of weights 1 and 3 are flooded with 60
# one-GPU gangs each while every node is cordoned (a maintenance window; the weight-1 queue's
# flood first), then the nodes are uncordoned. With the default configuration (proportion,
# overcommit) the queues must settle at 1/4 and 3/4 of the cluster's GPUs (16 and 48 of 64) with
# no GPU idle while either queue has pending work; before the fix they settled at 16 and 45, 3
# GPUs idle for good.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-strand)
suffix=$RANDOM
q1=strand1-$suffix q3=strand3-$suffix
make_queue "$q1" 1
make_queue "$q3" 3
total=0
for n in $(kubectl get nodes -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}'); do
  total=$((total + n))
done
used=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' |
  awk 'NR == FNR {have[$1] = 1; next} ($1 in have) {s += $2} END {print s + 0}' - <(gpus_per_node))
e2e_log "cluster GPUs: $total, in use by others: $used"
if ((used != 0 || total % 4 != 0)); then
  fail "needs a cluster with no GPU in use and a GPU total divisible by 4 (total $total, used $used)"
  exit 1
fi
want1=$((total / 4)) want3=$((total * 3 / 4))
jobs=$((total * 15 / 16)) # 60 of 64: each queue alone would want almost the whole cluster

start_scheduler
cordon_all_but 0
{ for ((i = 0; i < jobs; i++)); do gang_yaml "$ns" "a-$i" 1 1 "$q1"; done; } | kubectl -n "$ns" apply -f - >/dev/null
wait_for "weight-1 queue's flood admitted while cordoned" 60 bash -c \
  "[[ \$(kubectl -n $ns get podgroups -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Inqueue) -ge $want1 ]]"
{ for ((i = 0; i < jobs; i++)); do gang_yaml "$ns" "b-$i" 1 1 "$q3"; done; } | kubectl -n "$ns" apply -f - >/dev/null
sleep 4 # a few cycles with everything cordoned
expect_eq "nothing bound while cordoned" "$(bound_count "$ns")" 0
uncordon_all
wait_for "every GPU in use after uncordon ($total)" 90 bound_is "$ns" "$total"
sleep 4 # and it stays: no further placement, no eviction
expect_eq "weight-1 queue's GPUs" "$(bound_with_prefix "$ns" a-)" "$want1"
expect_eq "weight-3 queue's GPUs" "$(bound_with_prefix "$ns" b-)" "$want3"
expect_eq "GPUs in use" "$(bound_count "$ns")" "$total"
expect_no_oversubscription
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
