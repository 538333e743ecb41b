#!/usr/bin/env bash
# The article's co-location story end to end (issue 12), with vc-controller-manager and a
# vc-scheduler running preempt: two KWOK nodes of 4 GPUs that only this test's pods select,
# PriorityClasses online-critical (1000000) and offline-batch (100).
#   - two elastic offline-batch Jobs (4 replicas, minAvailable 2, PodEvicted -> RestartJob)
#     fill the 8 GPUs;
#   - an online-critical Job of 2 x 1 GPU in the same queue runs; exactly 2 offline pods are
#     evicted (Evicted events name the online job); no online pod is ever a victim;
#   - the offline Jobs that lost pods restart (retryCount 1) and run again on what is left;
#   - when the online Job is deleted, the offline Jobs grow back to all 8 GPUs;
#   - no pod was evicted for the online job beyond those 2.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coloc_lib.sh"

install_crds
ns=$(new_namespace ctrl-coloc)
suffix=$RANDOM
pool=coloc-$suffix
COLOC_MAX_RETRY=5
coloc_start a b
bound_of() { # JOB: pods of the job bound to a node and not terminating
  kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" \
    -o jsonpath='{range .items[*]}{.spec.nodeName} {.metadata.deletionTimestamp}{"\n"}{end}' |
    awk 'NF == 1' | wc -l
}
offline_bound() { echo $(($(bound_of train-a) + $(bound_of train-b))); }
evicted_pod_events() {
  kubectl -n "$ns" get events --field-selector reason=Evicted,involvedObject.kind=Pod \
    -o jsonpath='{range .items[*]}{.involvedObject.name} {.message}{"\n"}{end}'
}

{ job train-a offline-batch 4 2; job train-b offline-batch 4 2; } | kubectl apply -f - >/dev/null
wait_for "offline jobs hold all 8 GPUs" 90 bash -c "[[ \$(( \$(kubectl -n $ns get pods -l volcano.sh/job-name=train-a -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) + \$(kubectl -n $ns get pods -l volcano.sh/job-name=train-b -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) )) -eq 8 ]]"
wait_for "train-a Running" 30 job_phase_is "$ns" train-a Running
wait_for "train-b Running" 30 job_phase_is "$ns" train-b Running

t0=$(date +%s.%N)
job serve online-critical 2 2 | kubectl apply -f - >/dev/null
serve_running() { [[ $(bound_of serve) == 2 ]]; }
wait_for "the online job's 2 pods are bound" 90 serve_running
t1=$(date +%s.%N)
e2e_log "online job bound $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s after creation"
wait_for "serve Running" 30 job_phase_is "$ns" serve Running
events=$(evicted_pod_events)
expect_eq "pods evicted for the online job" "$(grep -c 'making room for job' <<<"$events" || true)" 2
expect_contains "Evicted message" "$events" "making room for job $ns/serve (queue default, priority 1000000)"
expect_eq "online pods evicted" "$(grep -c '^serve-' <<<"$events" || true)" 0

# The offline jobs that lost pods restart (PodEvicted -> RestartJob) and run again.
restarted=""
for j in train-a train-b; do
  grep -q "^$j-" <<<"$events" && restarted="$restarted $j"
done
e2e_log "restarted:$restarted"
for j in $restarted; do
  retried() { [[ $(job_field "$ns" "$1" .status.retryCount) -ge 1 ]]; }
  wait_for "$j restarted (retryCount >= 1)" 60 retried "$j"
  wait_for "$j Running again" 90 job_phase_is "$ns" "$j" Running
done
wait_for "the offline jobs use the 6 GPUs left" 90 bash -c "[[ \$(( \$(kubectl -n $ns get pods -l volcano.sh/job-name=train-a -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) + \$(kubectl -n $ns get pods -l volcano.sh/job-name=train-b -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) )) -ge 6 ]]"
expect_eq "online pods still bound" "$(bound_of serve)" 2
expect_eq "no online pod ever evicted" "$(evicted_pod_events | grep -c '^serve-' || true)" 0

# The online job ends: the offline jobs grow back.
kubectl -n "$ns" delete vcjob serve --wait=false >/dev/null
grown() { [[ $(offline_bound) == 8 ]]; }
wait_for "offline jobs grow back to 8 GPUs" 120 grown
expect_eq "Evicted pod events in all (no loop)" "$(evicted_pod_events | grep -c 'making room for job' || true)" 2
if scheduler_stop; then pass "vc-scheduler stopped"; fi
