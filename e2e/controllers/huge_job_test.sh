#!/usr/bin/env bash
# A Job of replicas: 1000000000 (issue 11, defect 1: vc-controller-manager built every pod name
# up front and died of std::bad_alloc, then crash-looped while the Job existed). The cluster runs
# without the webhook, as when the webhook is down or bypassed, so the Job gets in as a user
# would write it. The controller must stay up (same process, no restart), say why the job gets
# no pods (Warning event + status), and go on reconciling other jobs. Then, with its limit
# raised above the job's size, it creates the pods in bounded batches: memory stays flat.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace ctrl-huge)
BASALT_E2E_SCHEDULER=fake scheduler_start "$ns"
pid=$CM_PID

job() { # name replicas
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  schedulerName: volcano
  queue: default
  minAvailable: 1
  tasks:
  - name: worker
    replicas: $2
    template: {spec: {restartPolicy: Never, containers: [{name: main, image: busybox, resources: {requests: {cpu: 10m}}}]}}
JOB
}
event_of() { job_events "$ns" "$@"; }
reason_is() { job_reason_is "$ns" "$@"; }
has_event() { job_has_event "$ns" "$@"; }
rss_mb() { echo $(($(ps -o rss= -p "$pid") / 1024)); }

job huge 1000000000 | kubectl apply -f - >/dev/null
wait_for "huge: InvalidJobSpec in the status" 20 reason_is huge InvalidJobSpec
expect_contains "huge message" "$(job_field "$ns" huge .status.state.message)" \
  "spec.tasks: 1000000000 pods in total is more than the job controller creates for one job (--max-job-pods=100000)"
wait_for "huge: Warning event" 20 has_event huge InvalidJobSpec
expect_contains "huge Warning event" "$(event_of huge InvalidJobSpec)" "Warning spec.tasks: 1000000000 pods in total"
expect_contains "kubectl describe vcjob huge" "$(kubectl -n "$ns" describe vcjob huge)" "--max-job-pods=100000"
expect_eq "no PodGroup and no pods for huge" \
  "$(kubectl -n "$ns" get podgroup huge --no-headers 2>/dev/null | wc -l)/$(pod_count "$ns" huge)" "0/0"

# Well past the ~3 s the crash took: the same process still serves, and still reconciles.
job small 2 | kubectl apply -f - >/dev/null
wait_for "small: Running next to the huge job" 60 job_phase_is "$ns" small Running
expect_eq "small has its 2 pods" "$(pod_count "$ns" small)" "2"
if kill -0 "$pid" 2>/dev/null && [[ $CM_PID == "$pid" ]]; then
  pass "vc-controller-manager still running (pid $pid, never restarted)"
else
  fail "vc-controller-manager exited"
fi
e2e_log "controller RSS with the huge job refused: $(rss_mb) MB"

# --- the limit raised above the job's size: bounded batches, not a billion names -----------------
scheduler_stop  # pods stay Pending: this part is about creating them, not running them
cm_stop
cm_start --max-job-pods=2000000000
pid=$CM_PID
rss_start=$(rss_mb)
job big 1000000000 | kubectl apply -f - >/dev/null
wait_for "big: PodGroup created" 20 kubectl -n "$ns" get podgroup big
admit_podgroup "$ns" big
some_pods() { (($(pod_count "$ns" big) >= 50)); }
wait_for "big: pods are being created" 30 some_pods
sleep 3
rss_end=$(rss_mb)
created=$(pod_count "$ns" big)
e2e_log "big job: $created pods created, controller RSS $rss_start MB -> $rss_end MB"
if kill -0 "$pid" 2>/dev/null; then pass "vc-controller-manager alive while creating the big job's pods"; else fail "vc-controller-manager exited"; fi
if ((rss_end - rss_start < 200)); then
  pass "controller memory follows the pods created ($((rss_end - rss_start)) MB more for $created pods)"
else
  fail "controller memory grew by $((rss_end - rss_start)) MB for $created pods"
fi
# Stop the flow of pods before cleaning up (the namespace's deletion collects them).
cm_stop
kubectl -n "$ns" delete vcjob big huge small --wait=false >/dev/null 2>&1 || true
# The suites after this one share the cluster's vc-scheduler: wait until the namespace and the
# big job's pods are gone, instead of leaving them terminating while the next suite runs (the
# scheduler's cycles then went to binds the API server refuses in a terminating namespace, and
# job_lifecycle's restarted job waited 88 s for its pods).
kubectl delete namespace "$ns" --wait=true --timeout=180s >/dev/null 2>&1 ||
  e2e_log "namespace $ns still terminating after 180 s"
