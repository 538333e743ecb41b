#!/usr/bin/env bash
# vc-controller-manager's /metrics as a user scrapes it:
#   - every series docs/metrics.md lists for vc-controller-manager is exported (the page is the
#     list);
#   - volcano_queue_pod_group_*_count{queue_name} follow a queue's PodGroups through Pending,
#     Inqueue and Completed;
#   - the job controller's Volcano series: a Job that completes and one that fails are counted
#     by job and queue, pod creation latency is observed per pod, the e2e creation gauge is set,
#     and a deleted Job's series go away;
#   - a deleted queue's series go away.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

DOC=$BASALT_REPO_ROOT/docs/metrics.md
q=cm-metrics-$RANDOM
on_exit() {
  local rc=$?
  set +e
  kubectl delete vcjob -n "$ns" --all --wait=false >/dev/null 2>&1
  kubectl delete podgroup -n "$ns" --all --wait=false >/dev/null 2>&1
  kubectl delete queue "$q" --ignore-not-found --wait=false >/dev/null 2>&1
  (exit "$rc")
  controllers_on_exit
}
install_crds
ns=$(new_namespace cm-metrics)
trap on_exit EXIT
cm_start --controllers=queue,podgroup,job

scrape() { curl -sf "http://127.0.0.1:$CM_METRICS_PORT/metrics"; }
value() { scrape | awk -v s="$1{queue_name=\"$q\"}" '$1 == s {print $2}'; }
value_is() { [[ $(value "$1") == "$2" ]]; }
series() { scrape | awk -v s="$1" '$1 == s {print $2}'; }
series_is() { [[ $(series "$1") == "$2" ]]; }

kubectl apply -f - >/dev/null <<Q
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $q}
spec: {weight: 1}
Q
pg() {
  kubectl apply -f - >/dev/null <<PG
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $1, namespace: $ns}
spec: {minMember: 1, queue: $q}
PG
}
pg a
pg b
wait_for "two Pending PodGroups counted" 20 value_is volcano_queue_pod_group_pending_count 2
admit_podgroup "$ns" a
wait_for "an admitted one moves to inqueue" 20 value_is volcano_queue_pod_group_inqueue_count 1
expect_eq "pending is then 1" "$(value volcano_queue_pod_group_pending_count)" 1
kubectl -n "$ns" patch podgroup b --subresource=status --type=merge -p '{"status":{"phase":"Completed"}}' >/dev/null
wait_for "a Completed one is counted as completed" 20 value_is volcano_queue_pod_group_completed_count 1
expect_eq "running and unknown are 0" \
  "$(value volcano_queue_pod_group_running_count) $(value volcano_queue_pod_group_unknown_count)" "0 0"

# The job controller's series: one Job completes, one fails (its pods exit 3, no policy).
job() { # name annotations
  kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: 2
    template:
      metadata:
        annotations: {$2}
      spec:
        restartPolicy: Never
        containers:
        - {name: main, image: busybox, resources: {requests: {cpu: 100m}}}
JOB
}
scheduler_start "$ns"
job finisher '"basalt.dev/run-for": "1s"'
job crasher '"basalt.dev/run-for": "1s", "basalt.dev/exit-code": "3"'
wait_for "finisher Completed" 60 job_phase_is "$ns" finisher Completed
wait_for "crasher Failed" 60 job_phase_is "$ns" crasher Failed
expect_eq "volcano_job_completed_phase_count of finisher" \
  "$(series "volcano_job_completed_phase_count{job_name=\"$ns/finisher\",queue_name=\"default\"}")" 1
expect_eq "volcano_job_failed_phase_count of crasher" \
  "$(series "volcano_job_failed_phase_count{job_name=\"$ns/crasher\",queue_name=\"default\"}")" 1
expect_eq "finisher is not counted as failed" \
  "$(series "volcano_job_failed_phase_count{job_name=\"$ns/finisher\",queue_name=\"default\"}")" ""
pods_observed=$(series volcano_controller_job_to_pod_creation_latency_milliseconds_count)
((pods_observed >= 4)) && pass "pod creation latency observed for the 4 pods ($pods_observed)" ||
  fail "volcano_controller_job_to_pod_creation_latency_milliseconds_count is '$pods_observed', want >= 4"
e2e_ms=$(series "volcano_controller_job_e2e_creation_duration_milliseconds{job_name=\"finisher\",job_namespace=\"$ns\",queue=\"default\"}")
[[ $e2e_ms =~ ^[0-9.e+]+$ ]] && awk -v v="$e2e_ms" 'BEGIN{exit !(v > 0 && v < 60000)}' &&
  pass "finisher's e2e creation duration is ${e2e_ms} ms" ||
  fail "volcano_controller_job_e2e_creation_duration_milliseconds of finisher is '$e2e_ms'"

# Every documented vc-controller-manager series is exported.
text=$(scrape)
mapfile -t documented < <(awk '/^## vc-controller-manager/{on=1; next} /^## /{on=0} on && /^\| `/ {
  n = $2; gsub(/`/, "", n); print n }' "$DOC")
((${#documented[@]} >= 5)) || fail "docs/metrics.md lists only ${#documented[@]} vc-controller-manager series"
missing=()
for name in "${documented[@]}"; do
  grep -q "^# TYPE $name " <<<"$text" || missing+=("$name")
done
expect_eq "documented series missing from /metrics" "${missing[*]}" ""
e2e_log "all ${#documented[@]} documented vc-controller-manager series exported"

# The shipped controllers dashboard and alert rules read only series that exist.
mon=$BASALT_REPO_ROOT/manifests/monitoring
mapfile -t used < <(grep -ohE '\b(volcano|basalt)_[a-z0-9_]+' "$mon/grafana-dashboard-controllers.json" \
  "$mon/prometheus-rules-controllers.yaml" | sort -u)
((${#used[@]} >= 8)) || fail "the controllers' dashboard and rules read only ${#used[@]} series"
unknown=()
for name in "${used[@]}"; do
  # NAME itself, or a histogram's NAME_bucket/_sum/_count.
  grep -q "^# TYPE $name " <<<"$text" || grep -q "^# TYPE ${name%_*} histogram" <<<"$text" ||
    unknown+=("$name")
done
expect_eq "series the controllers' dashboard and rules read but vc-controller-manager does not export" \
  "${unknown[*]}" ""
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["panels"], "no panels"' \
  "$mon/grafana-dashboard-controllers.json" || fail "grafana-dashboard-controllers.json does not parse"
expect_eq "PrometheusRule kind" "$(yq -r .kind "$mon/prometheus-rules-controllers.yaml")" "PrometheusRule"

# A deleted Job's series are removed.
kubectl -n "$ns" delete vcjob finisher crasher --wait=true --timeout=30s >/dev/null
jobs_gone() { ! scrape | grep -qE "job_name=\"($ns/)?(finisher|crasher)\""; }
wait_for "the deleted Jobs' series are gone" 20 jobs_gone
scheduler_stop

# A deleted queue's series are removed.
kubectl -n "$ns" delete podgroup a b --wait=true --timeout=20s >/dev/null
kubectl delete queue "$q" --wait=true --timeout=20s >/dev/null
gone() { ! scrape | grep -q "queue_name=\"$q\""; }
wait_for "the deleted queue's series are gone" 20 gone
