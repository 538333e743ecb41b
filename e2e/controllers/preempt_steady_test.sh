#!/usr/bin/env bash
# Preemption in steady state (issue 12: "no preemption loop"): a pool of 4 KWOK nodes x 4 GPUs
# is kept full by elastic offline-batch Jobs (4 replicas, minAvailable 2, PodEvicted ->
# RestartJob) that together want 1.5x the pool, while online-critical Jobs of 1..4 GPUs arrive
# one per round and leave two rounds later, and every third round the oldest offline Job is
# replaced by a new one. With vc-controller-manager and a vc-scheduler running reclaim and
# preempt, for PREEMPT_STEADY_SECONDS (default 300: the issue's five minutes), and at least 5
# rounds:
#   - each online Job is bound within 60 s of its creation, on a pool that was full;
#   - it costs at most as many evictions as it has pods (Evicted events naming it);
#   - no pod is evicted twice (no Evicted event with a count above 1, no victim named twice) and
#     no online pod is ever a victim;
#   - after each round the offline Jobs fill the pool again (no GPU left idle while they want
#     more), and none of them fails.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coloc_lib.sh"

DURATION=${PREEMPT_STEADY_SECONDS:-300}
POOL_GPUS=16
install_crds
ns=$(new_namespace ctrl-steady)
suffix=$RANDOM
pool=steady-$suffix
COLOC_MAX_RETRY=100
coloc_start a b c d
# Pods of the namespace bound to a node and not terminating (each holds 1 GPU), optionally of
# one job.
bound() {
  local sel=()
  [[ -n ${1:-} ]] && sel=(-l "volcano.sh/job-name=$1")
  kubectl -n "$ns" get pods "${sel[@]}" \
    -o jsonpath='{range .items[*]}{.spec.nodeName} {.metadata.deletionTimestamp}{"\n"}{end}' |
    awk 'NF == 1' | wc -l
}
# Evicted events of pods: "<victim uid> <count> <message>".
evicted_pod_events() {
  kubectl -n "$ns" get events --field-selector reason=Evicted,involvedObject.kind=Pod \
    -o jsonpath='{range .items[*]}{.involvedObject.uid} {.count} {.message}{"\n"}{end}'
}
# Full: every GPU of the pool held by a live pod, and no offline Job failed or aborted.
pool_full() {
  [[ $(bound) == "$POOL_GPUS" ]] || return 1
  ! kubectl -n "$ns" get vcjobs -o jsonpath='{range .items[*]}{.status.state.phase}{"\n"}{end}' |
    grep -qvxE 'Running|Pending|Restarting|Completing|Completed|'
}

offline=() next_offline=0
new_offline() {
  local name=train-$next_offline
  next_offline=$((next_offline + 1))
  job "$name" offline-batch 4 2 | kubectl apply -f - >/dev/null
  offline+=("$name")
}
# 6 x 4 replicas = 24 GPUs wanted on a pool of 16.
for _ in 1 2 3 4 5 6; do new_offline; done
wait_for "offline jobs fill the pool ($POOL_GPUS GPUs)" 120 pool_full

declare -A want # online job -> its pods (the evictions it may cost)
online=()
t_start=$SECONDS
for ((r = 1; r <= 5 || SECONDS - t_start < DURATION; r++)); do
  k=$(((r - 1) % 4 + 1))
  name=serve-$r
  wait_for "round $r: the pool is full before $name arrives" 120 pool_full
  t0=$SECONDS
  job "$name" online-critical "$k" "$k" | kubectl apply -f - >/dev/null
  want[$name]=$k
  online+=("$name")
  serve_bound() { [[ $(bound "$1") == "$2" ]]; }
  wait_for "round $r: $name ($k GPUs) bound" 60 serve_bound "$name" "$k" &&
    e2e_log "round $r: $name bound $((SECONDS - t0)) s after creation"
  # The online job of two rounds ago leaves; every third round the oldest offline job is
  # replaced by a new one.
  if ((${#online[@]} > 2)); then
    kubectl -n "$ns" delete vcjob "${online[0]}" --wait=false >/dev/null
    online=("${online[@]:1}")
  fi
  if ((r % 3 == 0)); then
    kubectl -n "$ns" delete vcjob "${offline[0]}" --wait=false >/dev/null
    offline=("${offline[@]:1}")
    new_offline
  fi
done
wait_for "the offline jobs fill the pool again after the last round" 120 pool_full
e2e_log "$((r - 1)) rounds in $((SECONDS - t_start)) s"

events=$(evicted_pod_events)
# At most one eviction per pod of the online job: fewer when the room freed by an offline job
# restarting (its other pods deleted by RestartJob) is still terminating as the online job
# arrives, and is taken without evicting anything (a victim counts as freed from its eviction).
total=0
over=()
for name in "${!want[@]}"; do
  got=$(grep -c "making room for job $ns/$name " <<<"$events" || true)
  ((got <= want[$name])) || over+=("$name: $got evictions for ${want[$name]} pods")
  total=$((total + got))
done
expect_eq "online jobs that cost more evictions than their pods" "${over[*]}" ""
expect_eq "Evicted pod events in all (the online jobs' evictions)" \
  "$(grep -c 'making room for job' <<<"$events" || true)" "$total"
e2e_log "$total evictions for the online jobs' $(IFS=+; echo "$((${want[*]}))") pods"
expect_eq "Evicted events counted more than once (a pod evicted again)" \
  "$(awk '$2 > 1' <<<"$events" | wc -l)" 0
expect_eq "victims named twice" "$(awk '{print $1}' <<<"$events" | sort | uniq -d | wc -l)" 0
online_victims=$(kubectl -n "$ns" get events --field-selector reason=Evicted,involvedObject.kind=Pod \
  -o jsonpath='{range .items[*]}{.involvedObject.name}{"\n"}{end}' | grep -c '^serve-' || true)
expect_eq "online pods evicted" "$online_victims" 0
expect_eq "offline jobs failed or aborted" \
  "$(kubectl -n "$ns" get vcjobs -o jsonpath='{range .items[*]}{.status.state.phase}{"\n"}{end}' | grep -cE 'Failed|Aborted' || true)" 0
if scheduler_stop; then pass "vc-scheduler stopped"; fi
