#!/usr/bin/env bash
# vc-scheduler's /metrics as a Prometheus scrape sees it (Volcano's dashboards and alerts read
# these names):
#   - every series docs/metrics.md lists for vc-scheduler is exported (the page is the list);
#   - a placed gang shows up in volcano_schedule_attempts_total{result="scheduled"}, the job
#     latency histogram and its queue's allocated GPUs (milli-units, as Volcano);
#   - a gang that cannot be placed (a node selector no node matches) shows up in
#     volcano_unschedule_job_count / volcano_unschedule_task_count{job_id} and its retry
#     counter grows; once it is deleted its per-job series go away;
#   - the queue's weight, capability (capacity series), deserved share and overused flag;
#   - a placed job's start/last scheduling time and drf's job share (volcano_job_share).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

DOC=$BASALT_REPO_ROOT/docs/metrics.md
apply_crds
ns=$(new_namespace sched-metrics)
q="metrics-$E2E_RUN_ID"
q=${q:0:60}
kubectl apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $q}
spec:
  weight: 3
  reclaimable: true
  capability: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "16"}
YAML
CLUSTER_OBJECTS+=("queue/$q")
start_scheduler

scrape() { curl -sf "http://127.0.0.1:$SCHED_PORT/metrics"; }
# value NAME LABELS: the value of the series NAME{LABELS} ("" if absent); LABELS as printed,
# e.g. 'queue_name="x",resource="nvidia.com/gpu"'.
value() {
  local want=$1
  [[ -n ${2:-} ]] && want="$1{$2}"
  scrape | awk -v s="$want" '$1 == s {print $2}'
}
value_is() { [[ $(value "$1" "${2:-}") == "$3" ]]; }
value_at_least() { local v; v=$(value "$1" "${2:-}"); [[ -n $v ]] && awk -v v="$v" -v m="$3" 'BEGIN{exit !(v >= m)}'; }

# 1. A gang of 2 x 1 GPU that fits, and one that never can.
make_gang "$ns" fits 2 1 "$q"
make_gang "$ns" stuck 3 1 "$q" "" "basalt.dev/metrics-test=nowhere"
wait_for "gang fits bound" 30 bound_is "$ns" 2 fits
wait_for "PodGroup fits Running" 15 pg_phase_is "$ns" fits Running
wait_for "volcano_unschedule_task_count{job_id=\"stuck\"} is 3" 30 \
  value_is volcano_unschedule_task_count 'job_id="stuck"' 3
expect_eq "stuck pods bound" "$(bound_count "$ns" stuck)" "0"

# 2. Every documented vc-scheduler series is exported.
text=$(scrape)
mapfile -t documented < <(awk '/^## vc-scheduler/{on=1; next} /^## /{on=0} on && /^\| `/ {
  n = $2; gsub(/`/, "", n); print n }' "$DOC")
((${#documented[@]} >= 30)) || fail "docs/metrics.md lists only ${#documented[@]} vc-scheduler series"
missing=()
for name in "${documented[@]}"; do
  # A histogram is exported as NAME_bucket/_sum/_count; every family has a TYPE line.
  grep -q "^# TYPE $name " <<<"$text" || missing+=("$name")
done
expect_eq "documented series missing from /metrics" "${missing[*]}" ""
e2e_log "all ${#documented[@]} documented vc-scheduler series exported"

# The shipped dashboard and alert rules read only series that exist.
mapfile -t used < <(grep -ohE '\b(volcano|basalt)_[a-z0-9_]+' "$BASALT_REPO_ROOT/manifests/monitoring/grafana-dashboard.json" \
  "$BASALT_REPO_ROOT/manifests/monitoring/prometheus-rules.yaml" | sort -u)
((${#used[@]} >= 15)) || fail "manifests/monitoring reads only ${#used[@]} series"
unknown=()
for name in "${used[@]}"; do
  # NAME itself, or a histogram's NAME_bucket/_sum/_count.
  grep -q "^# TYPE $name " <<<"$text" || grep -q "^# TYPE ${name%_*} histogram" <<<"$text" ||
    unknown+=("$name")
done
expect_eq "series the dashboard and rules read but vc-scheduler does not export" "${unknown[*]}" ""
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["panels"], "no panels"' \
  "$BASALT_REPO_ROOT/manifests/monitoring/grafana-dashboard.json" || fail "grafana-dashboard.json does not parse"
expect_eq "PrometheusRule kind" "$(yq -r .kind "$BASALT_REPO_ROOT/manifests/monitoring/prometheus-rules.yaml")" "PrometheusRule"

# 3. Values a user would read on a dashboard.
wait_for "schedule_attempts_total{result=scheduled} >= 2" 10 \
  value_at_least volcano_schedule_attempts_total 'result="scheduled"' 2
wait_for "unschedulable attempts counted" 10 \
  value_at_least volcano_schedule_attempts_total 'result="unschedulable"' 3
expect_eq "GPUs allocated in the queue (milli-units)" \
  "$(value volcano_queue_allocated_scalar_resources "queue_name=\"$q\",resource=\"nvidia.com/gpu\"")" "2000"
expect_eq "GPUs requested in the queue (allocated + pending, milli-units)" \
  "$(value volcano_queue_request_scalar_resources "queue_name=\"$q\",resource=\"nvidia.com/gpu\"")" "5000"
expect_eq "queue capability GPUs" \
  "$(value volcano_queue_capacity_scalar_resources "queue_name=\"$q\",resource=\"nvidia.com/gpu\"")" "16000"
expect_eq "queue weight" "$(value volcano_queue_weight "queue_name=\"$q\"")" "3"
expect_eq "queue overused" "$(value volcano_queue_overused "queue_name=\"$q\"")" "0"
deserved=$(value volcano_queue_deserved_scalar_resources "queue_name=\"$q\",resource=\"nvidia.com/gpu\"")
e2e_log "deserved GPUs of $q (milli): $deserved"
[[ -n $deserved ]] && awk -v d="$deserved" 'BEGIN{exit !(d >= 2000)}' ||
  fail "deserved GPUs of $q ($deserved) below what it holds (2000)"
expect_eq "bind latency observed (volcano_task_operation_latency_milliseconds, bind success)" \
  "$( (($(value volcano_task_operation_latency_milliseconds_count 'operation="bind",result="success"') >= 2)) && echo yes)" "yes"
expect_eq "job latency observed" "$( (($(value volcano_e2e_job_scheduling_latency_milliseconds_count) >= 1)) && echo yes)" "yes"
expect_contains "per-job scheduling duration of fits" \
  "$(scrape | grep '^volcano_e2e_job_scheduling_duration{')" "job_name=\"fits\",job_namespace=\"$ns\",queue=\"$q\""
# Its start time is the PodGroup's creationTimestamp; the last time is the cycle that placed it.
jl="job_name=\"fits\",job_namespace=\"$ns\",queue=\"$q\""
created=$(date -d "$(kubectl -n "$ns" get podgroup fits -o jsonpath='{.metadata.creationTimestamp}')" +%s)
start=$(value volcano_e2e_job_scheduling_start_time "$jl")
last=$(value volcano_e2e_job_scheduling_last_time "$jl")
e2e_log "fits: created $created, start_time $start, last_time $last"
awk -v s="$start" -v c="$created" 'BEGIN{exit !(s != "" && s >= c && s < c + 1)}' ||
  fail "volcano_e2e_job_scheduling_start_time of fits ($start) is not its creationTimestamp ($created)"
awk -v s="$start" -v l="$last" -v n="$(date +%s)" 'BEGIN{exit !(l != "" && l >= s && l <= n + 1)}' ||
  fail "volcano_e2e_job_scheduling_last_time of fits ($last) not between its start ($start) and now"
# drf's share of fits: 2 of the cluster's GPUs (its dominant resource) over the cluster's total.
gpus=$(kubectl get nodes -o json | jq '[.items[].status.allocatable["nvidia.com/gpu"] // "0" | tonumber] | add')
share=$(value volcano_job_share "job_id=\"fits\",job_ns=\"$ns\"")
e2e_log "fits: volcano_job_share $share (cluster GPUs $gpus)"
awk -v s="$share" -v g="$gpus" 'BEGIN{exit !(s != "" && g > 0 && s >= 2 / g - 1e-9 && s <= 1)}' ||
  fail "volcano_job_share of fits ($share) below 2/$gpus GPUs or above 1"
expect_eq "stuck gang's share (nothing allocated)" "$(value volcano_job_share "job_id=\"stuck\",job_ns=\"$ns\"")" "0"
r1=$(value volcano_job_retry_counts 'job_id="stuck"')
# With nothing changing in the cluster the scheduler runs a cycle only every 30 s (its idle
# limit), so the next cycle that retries the stuck gang may be that far away.
wait_for "retry counter of stuck grows" 40 value_at_least volcano_job_retry_counts 'job_id="stuck"' $((${r1%.*} + 1))
for a in enqueue allocate backfill; do
  expect_eq "action $a timed" "$( (($(value volcano_action_scheduling_latency_milliseconds_count "action=\"$a\"") >= 1)) && echo yes)" "yes"
done
expect_eq "plugin gang OnSessionOpen timed" \
  "$( (($(value volcano_plugin_scheduling_latency_milliseconds_count 'OnSession="OnSessionOpen",plugin="gang"') >= 1)) && echo yes)" "yes"

# 4. The stuck gang deleted: its per-job series go; the queue's request drops.
kubectl -n "$ns" delete pods -l volcano.sh/job-name=stuck --grace-period=0 --force >/dev/null 2>&1
kubectl -n "$ns" delete podgroup stuck >/dev/null
wait_for "volcano_unschedule_task_count{job_id=stuck} gone" 30 \
  bash -c "! curl -sf http://127.0.0.1:$SCHED_PORT/metrics | grep -q '^volcano_unschedule_task_count{job_id=\"stuck\"}'"
wait_for "volcano_job_share{job_id=stuck} gone" 30 \
  bash -c "! curl -sf http://127.0.0.1:$SCHED_PORT/metrics | grep -q '^volcano_job_share{job_id=\"stuck\"'"
wait_for "volcano_job_retry_counts{job_id=stuck} gone" 30 \
  bash -c "! curl -sf http://127.0.0.1:$SCHED_PORT/metrics | grep -q '^volcano_job_retry_counts{job_id=\"stuck\"}'"
wait_for "queue request back to 2 GPUs" 30 \
  value_is volcano_queue_request_scalar_resources "queue_name=\"$q\",resource=\"nvidia.com/gpu\"" 2000

# 5. The queue deleted (after its jobs): its series go.
kubectl -n "$ns" delete pods --all --grace-period=0 --force >/dev/null 2>&1
kubectl -n "$ns" delete podgroups --all >/dev/null
kubectl delete queue "$q" >/dev/null
wait_for "series of queue $q gone" 30 \
  bash -c "! curl -sf http://127.0.0.1:$SCHED_PORT/metrics | grep -q 'queue_name=\"$q\"'"

stop_scheduler || fail "vc-scheduler did not exit cleanly on SIGTERM"
