#!/usr/bin/env bash
# High availability as the chart deploys it: two replicas of each component, each with its
# ServiceAccount's token and the chart's args (leader election on, a 4 s lease here). Under a
# stream of gang jobs, the leading vc-scheduler and vc-controller-manager and one webhook
# replica are killed (SIGKILL, no hand-over):
#   - while both replicas run, only the leader works (the standby has reconciled, scheduled and
#     bound nothing); the webhook has no leader: both replicas answer admissions;
#   - the standby takes the Lease over within the lease duration (plus one retry period);
#   - admissions never stop (the other webhook replica answers);
#   - nothing is lost: every job completes with exactly its pods, one per task index, none
#     retried, and no 403 anywhere.
# The webhook replicas sit behind a small TCP proxy standing in for their Service.
source "$(dirname "$0")/../lib/testlib.sh"
# shellcheck source=../lib/suite.sh
source "$(dirname "$0")/../lib/suite.sh"
trap 'rc=$?; suite_cleanup; (exit $rc); e2e_finish' EXIT

LEASE_SECONDS=4
LE=(--leader-elect-lease-duration=${LEASE_SECONDS}s --leader-elect-renew-deadline=3s --leader-elect-retry-period=500ms)
SCHED_LEASE=volcano
CM_LEASE=vc-controller-manager-gc-job-podgroup-queue
t_start=$SECONDS

suite_init
wns=$(new_namespace ha-work)
suite_start admission a
suite_start admission b
suite_wait_ready admission-a
suite_wait_ready admission-b
suite_proxy "${SUITE_PORT[admission-a]}" "${SUITE_PORT[admission-b]}"
for id in a b; do
  suite_start controllers "$id" "${LE[@]}"
  suite_start scheduler "$id" "${LE[@]}"
done
suite_register_webhooks "$SUITE_PROXY_PORT"

# leader C: the replica of component C whose log says it acquired the Lease.
leader() {
  local id
  for id in a b; do
    [[ -n ${SUITE_PID[$1-$id]:-} ]] && grep -q 'Acquired the Lease' "${SUITE_LOG[$1-$id]}" && { echo "$id"; return 0; }
  done
  return 1
}
other() { [[ $1 == a ]] && echo b || echo a; }
wait_for "one vc-scheduler leads" 20 leader scheduler
wait_for "one vc-controller-manager leads" 20 leader controllers
s_lead=$(leader scheduler) c_lead=$(leader controllers)
s_standby=$(other "$s_lead") c_standby=$(other "$c_lead")
s_holder=$(suite_holder "$SCHED_LEASE") c_holder=$(suite_holder "$CM_LEASE")
expect_contains "the scheduler Lease's holder is the replica that logged it" \
  "$(grep 'Acquired the Lease' "${SUITE_LOG[scheduler-$s_lead]}")" "$s_holder"
for c in scheduler controllers; do
  lead=$s_lead; [[ $c == controllers ]] && lead=$c_lead
  expect_eq "replicas of $c that ever acquired a Lease" \
    "$(grep -l 'Acquired the Lease' "${SUITE_LOG[$c-a]}" "${SUITE_LOG[$c-b]}" | wc -l | tr -d ' ')" "1"
done

# gang_job NAME PODS RUN_FOR: PODS pods of one task, all needed at once.
gang_job() {
  cat <<JOB
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $wns}
spec:
  schedulerName: volcano
  minAvailable: $2
  tasks:
  - name: w
    replicas: $2
    template:
      metadata: {annotations: {basalt.dev/run-for: $3}}
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox
          resources: {requests: {cpu: "1", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
JOB
}
declare -A PODS
submit() { # FIRST LAST: jobs ha-FIRST..ha-LAST, 2 to 4 pods
  local i out
  for ((i = $1; i <= $2; i++)); do
    PODS[ha-$i]=$((2 + i % 3))
    if ! out=$(gang_job "ha-$i" "${PODS[ha-$i]}" "$((3 + i % 4))s" | kubectl apply -f - 2>&1); then
      fail "job ha-$i refused: $out"
    fi
  done
}
running_jobs() { kubectl -n "$wns" get vcjob -o jsonpath='{range .items[*]}{.status.state.phase}{"\n"}{end}' | grep -c '^Running$' || true; }
some_running() { (($(running_jobs) >= $1)); }

submit 1 10
wait_for "jobs running under the first leaders" 40 some_running 3

# Only the leader works; both webhook replicas answer.
expect_eq "reconciles by the standby vc-controller-manager ($c_standby)" \
  "$(suite_metric_sum "controllers-$c_standby" basalt_controller_reconcile_total)" "0"
expect_eq "cycles and binds by the standby vc-scheduler ($s_standby)" \
  "$(suite_metric_sum "scheduler-$s_standby" basalt_scheduler_cycles_total)/$(suite_metric_sum "scheduler-$s_standby" basalt_scheduler_pods_bound_total)" "0/0"
if (($(suite_metric_sum "controllers-$c_lead" basalt_controller_reconcile_total) > 0)); then
  pass "the leading vc-controller-manager reconciles"
else fail "the leading vc-controller-manager reconciled nothing"; fi
for id in a b; do
  n=$(suite_metric_sum "admission-$id" basalt_webhook_admission_duration_seconds_count)
  ((n > 0)) && pass "webhook replica $id answered $n admissions" || fail "webhook replica $id answered none"
done
before_b=$(suite_metric_sum admission-b basalt_webhook_admission_duration_seconds_count)

# ---- SIGKILL the leaders and a webhook replica, under load ------------------------------
e2e_log "killing vc-scheduler $s_lead, vc-controller-manager $c_lead and webhook replica a"
t_kill=$SECONDS
kill_ms=$(date +%s%3N)
suite_kill "scheduler-$s_lead"
suite_kill "controllers-$c_lead"
suite_kill admission-a
submit 11 20 # admitted by replica b meanwhile

took_over() { local h; h=$(suite_holder "$1"); [[ -n $h && $h != "$2" ]]; }
limit=$((LEASE_SECONDS + 3))
wait_for "the standby vc-scheduler holds the Lease" "$limit" took_over "$SCHED_LEASE" "$s_holder"
s_ms=$(($(date +%s%3N) - kill_ms))
wait_for "the standby vc-controller-manager holds the Lease" "$limit" took_over "$CM_LEASE" "$c_holder"
c_ms=$(($(date +%s%3N) - kill_ms))
e2e_log "take-over after the kill: vc-scheduler ${s_ms} ms, vc-controller-manager ${c_ms} ms (lease ${LEASE_SECONDS}s, retry 500ms)"
if ((s_ms <= LEASE_SECONDS * 1000 + 1500 && c_ms <= LEASE_SECONDS * 1000 + 1500)); then
  pass "both took over within the lease duration plus the retry period and one round trip"
else fail "take-over too slow: scheduler ${s_ms} ms, controllers ${c_ms} ms"; fi
expect_contains "the new scheduler leader's Lease holder" "$(grep 'Acquired the Lease' "${SUITE_LOG[scheduler-$s_standby]}" || true)" \
  "$(suite_holder "$SCHED_LEASE")"
expect_eq "scheduler Lease transitions" "$(kubectl -n "$SUITE_NS" get lease "$SCHED_LEASE" -o jsonpath='{.spec.leaseTransitions}')" "1"
after_b=$(suite_metric_sum admission-b basalt_webhook_admission_duration_seconds_count)
((after_b > before_b)) && pass "webhook replica b answered the admissions after replica a died ($before_b -> $after_b)" ||
  fail "webhook replica b answered nothing after replica a died"

# ---- nothing lost -------------------------------------------------------------------------
all_completed() {
  [[ $(kubectl -n "$wns" get vcjob -o jsonpath='{range .items[*]}{.status.state.phase}{"\n"}{end}' | grep -c '^Completed$') == 20 ]]
}
wait_for "all 20 jobs Completed" 60 all_completed
jobs=$(kubectl -n "$wns" get vcjob -o json)
pods=$(kubectl -n "$wns" get pods -o json)
bad=""
for j in "${!PODS[@]}"; do
  n=${PODS[$j]}
  got=$(jq -r --arg j "$j" '.items[] | select(.metadata.name == $j) | "\(.status.succeeded // 0)/\(.status.failed // 0)/\(.status.retryCount // 0)"' <<<"$jobs")
  [[ $got == "$n/0/0" ]] || bad+=" $j: succeeded/failed/retries $got (want $n/0/0);"
  idx=$(jq -r --arg j "$j" '[.items[] | select(.metadata.labels["volcano.sh/job-name"] == $j) | .metadata.labels["volcano.sh/task-index"]] | sort | join(",")' <<<"$pods")
  want=$(seq -s, 0 $((n - 1)))
  [[ $idx == "$want" ]] || bad+=" $j: task indexes [$idx] (want [$want]);"
done
expect_eq "jobs with a pod too many, too few, a duplicate task index or a retry" "$bad" ""
expect_eq "403 answers in the components' logs" "$(suite_forbidden)" ""
e2e_log "ha: $((SECONDS - t_start)) s in all, $((SECONDS - t_kill)) s from the kill to the last job"
