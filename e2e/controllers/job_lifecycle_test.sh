#!/usr/bin/env bash
# The job controller as a user sees it with kubectl: the shared example job gets a PodGroup
# named after it and, only once the PodGroup is admitted (Inqueue), its 4 pods with Volcano's
# names, labels, annotations and ownerReferences; pods finishing complete the Job; lifecycle
# policies (PodFailed -> RestartJob up to maxRetry, PodEvicted -> RestartJob once,
# TaskCompleted -> CompleteJob) and minSuccess behave as in Volcano.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace ctrl-job)

# --- the shared example: PodGroup first, pods only once it is Inqueue --------------------------
kubectl -n "$ns" apply -f "$BASALT_REPO_ROOT/e2e/crds/testdata/job-bert-pretrain.yaml" >/dev/null
job_uid=$(job_field "$ns" bert-pretrain .metadata.uid)
pg_exists() { kubectl -n "$ns" get podgroup bert-pretrain >/dev/null 2>&1; }
wait_for "PodGroup bert-pretrain created" 20 pg_exists
expect_eq "PodGroup owner" "$(kubectl -n "$ns" get podgroup bert-pretrain -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}')" "Job/bert-pretrain/$job_uid/true"
expect_eq "PodGroup minMember" "$(kubectl -n "$ns" get podgroup bert-pretrain -o jsonpath='{.spec.minMember}')" "4"
expect_eq "PodGroup minResources gpu" "$(kubectl -n "$ns" get podgroup bert-pretrain -o jsonpath='{.spec.minResources.nvidia\.com/gpu}')" "4"
expect_eq "PodGroup job-name label" "$(kubectl -n "$ns" get podgroup bert-pretrain -o jsonpath='{.metadata.labels.volcano\.sh/job-name}')" "bert-pretrain"
wait_for "Job phase Pending" 10 job_phase_is "$ns" bert-pretrain Pending
sleep 2
expect_eq "pods before the PodGroup is admitted" "$(pod_count "$ns" bert-pretrain)" "0"

# What the scheduler says about a waiting gang shows on the Job as a PodGroupPending event.
kubectl -n "$ns" patch podgroup bert-pretrain --subresource=status --type=merge -p \
  '{"status":{"conditions":[{"type":"Unschedulable","status":"True","reason":"NotEnoughResources","message":"0/8 nodes are unavailable: 8 Insufficient nvidia.com/gpu.","lastTransitionTime":"2026-01-01T00:00:00Z","transitionID":"e2e"}]}}' >/dev/null
pending_event() {
  kubectl -n "$ns" get events --field-selector involvedObject.name=bert-pretrain,reason=PodGroupPending \
    -o jsonpath='{.items[*].message}' | grep -q 'unschedulable, reason: 0/8 nodes are unavailable: 8 Insufficient nvidia.com/gpu.'
}
wait_for "PodGroupPending event on the Job names the scheduler's reason" 20 pending_event
expect_eq "event involved object kind" "$(kubectl -n "$ns" get events --field-selector reason=PodGroupPending -o jsonpath='{.items[0].involvedObject.kind}')" "Job"

admit_podgroup "$ns" bert-pretrain
four_pods() { [[ $(pod_count "$ns" bert-pretrain) == 4 ]]; }
wait_for "4 pods once the PodGroup is Inqueue" 20 four_pods
expect_eq "pod names" "$(kubectl -n "$ns" get pods -l volcano.sh/job-name=bert-pretrain -o jsonpath='{.items[*].metadata.name}')" \
  "bert-pretrain-worker-0 bert-pretrain-worker-1 bert-pretrain-worker-2 bert-pretrain-worker-3"
p=bert-pretrain-worker-2
expect_eq "pod labels" "$(kubectl -n "$ns" get pod $p -o jsonpath='{.metadata.labels.volcano\.sh/job-name},{.metadata.labels.volcano\.sh/task-spec},{.metadata.labels.volcano\.sh/task-index},{.metadata.labels.volcano\.sh/job-namespace},{.metadata.labels.volcano\.sh/queue-name}')" "bert-pretrain,worker,2,$ns,default"
expect_eq "pod annotations" "$(kubectl -n "$ns" get pod $p -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name},{.metadata.annotations.volcano\.sh/job-version},{.metadata.annotations.volcano\.sh/task-spec},{.metadata.annotations.volcano\.sh/template-uid}')" "bert-pretrain,0,worker,bert-pretrain-worker"
expect_eq "pod ownerReference" "$(kubectl -n "$ns" get pod $p -o jsonpath='{.metadata.ownerReferences[0].apiVersion}/{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}/{.metadata.ownerReferences[0].blockOwnerDeletion}')" "batch.volcano.sh/v1alpha1/Job/$job_uid/true/true"
expect_eq "pod schedulerName" "$(kubectl -n "$ns" get pod $p -o jsonpath='{.spec.schedulerName}')" "volcano"

# From here on the scheduler's part runs in the background (admission and binding).
scheduler_start "$ns"
wait_for "bert-pretrain Running" 30 job_phase_is "$ns" bert-pretrain Running
expect_eq "running count" "$(job_field "$ns" bert-pretrain .status.running)" "4"

# --- PodEvicted -> RestartJob: one restart, not a loop ------------------------------------------
kubectl -n "$ns" delete pod bert-pretrain-worker-1 --wait=false >/dev/null
restarted() { [[ $(job_field "$ns" bert-pretrain .status.retryCount) == 1 ]]; }
wait_for "kubectl delete pod restarts the job (retryCount 1)" 30 restarted
expect_eq "version after the restart" "$(job_field "$ns" bert-pretrain .status.version)" "1"
wait_for "bert-pretrain Running again" 60 job_phase_is "$ns" bert-pretrain Running
new_version() { [[ $(kubectl -n "$ns" get pods -l volcano.sh/job-name=bert-pretrain -o jsonpath='{.items[*].metadata.annotations.volcano\.sh/job-version}') == "1 1 1 1" ]]; }
wait_for "the new pods carry job-version 1" 20 new_version
sleep 5
expect_eq "retryCount after the restart settled (no restart loop)" "$(job_field "$ns" bert-pretrain .status.retryCount)" "1"
expect_eq "version after the restart settled" "$(job_field "$ns" bert-pretrain .status.version)" "1"
kubectl -n "$ns" delete vcjob bert-pretrain --wait=false >/dev/null

# --- pods finishing -> Completed ------------------------------------------------------------------
job() { # name replicas annotations policies-yaml extra-spec-yaml
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  minAvailable: $2
  schedulerName: volcano
  ${5:-}
  policies: ${4:-[]}
  tasks:
  - name: worker
    replicas: $2
    template:
      metadata:
        annotations: {$3}
      spec:
        restartPolicy: Never
        containers:
        - {name: main, image: busybox, resources: {requests: {cpu: 100m}}}
JOB
}
job finisher 3 '"basalt.dev/run-for": "3s"' | kubectl apply -f - >/dev/null
# kubectl wait started before the job finishes returns once it is Completed (standard
# conditions: type = phase, status True for the current phase).
kubectl -n "$ns" wait --for=condition=Completed vcjob/finisher --timeout=60s >/dev/null 2>"$BASALT_TEST_CLUSTER_DIR/logs/wait-finisher.err" &
wait_pid=$!
wait_for "finisher Completed after its pods succeed" 60 job_phase_is "$ns" finisher Completed
if wait "$wait_pid"; then pass "kubectl wait --for=condition=Completed vcjob/finisher returned 0"; else fail "kubectl wait --for=condition=Completed failed: $(cat "$BASALT_TEST_CLUSTER_DIR/logs/wait-finisher.err")"; fi
expect_eq "finisher Completed condition" "$(job_field "$ns" finisher '.status.conditions[?(@.type=="Completed")].status')" "True"
expect_eq "finisher Running condition after completion" "$(job_field "$ns" finisher '.status.conditions[?(@.type=="Running")].status')" "False"
expect_eq "finisher Running condition reason" "$(job_field "$ns" finisher '.status.conditions[?(@.type=="Running")].reason')" "Completed"
if kubectl -n "$ns" wait --for=condition=Running vcjob/finisher --timeout=2s >/dev/null 2>&1; then fail "kubectl wait --for=condition=Running returned 0 for a finished job"; else pass "kubectl wait --for=condition=Running times out on a finished job"; fi
expect_eq "finisher succeeded count" "$(job_field "$ns" finisher .status.succeeded)" "3"
expect_eq "finisher taskStatusCount" "$(job_field "$ns" finisher '.status.taskStatusCount.worker.phase.Succeeded')" "3"
expect_contains "finisher conditions" "$(job_field "$ns" finisher '.status.conditions[*].status')" "Pending Running Completed"

# --- PodFailed -> RestartJob until maxRetry, then Failed ----------------------------------------
job crasher 2 '"basalt.dev/run-for": "2s", "basalt.dev/exit-code": "3"' '[{event: PodFailed, action: RestartJob}]' 'maxRetry: 2' | kubectl apply -f - >/dev/null
retry1() { [[ $(job_field "$ns" crasher .status.retryCount) == 1 ]]; }
wait_for "crasher restarted once after an exit code 3 (retryCount 1)" 60 retry1
expect_eq "crasher version after the first restart" "$(job_field "$ns" crasher .status.version)" "1"
wait_for "crasher Failed after maxRetry" 90 job_phase_is "$ns" crasher Failed
if kubectl -n "$ns" wait --for=condition=Failed vcjob/crasher --timeout=10s >/dev/null; then pass "kubectl wait --for=condition=Failed vcjob/crasher"; else fail "kubectl wait --for=condition=Failed vcjob/crasher"; fi
expect_eq "crasher retryCount" "$(job_field "$ns" crasher .status.retryCount)" "2"
expect_eq "crasher version" "$(job_field "$ns" crasher .status.version)" "2"
expect_contains "crasher conditions" "$(job_field "$ns" crasher '.status.conditions[*].status')" "Restarting"
sleep 3
expect_eq "crasher stays Failed" "$(job_field "$ns" crasher .status.state.phase)" "Failed"

# --- a policy timeout delays its action ----------------------------------------------------------
# (A second task keeps running, so the failure alone does not finish the job: a finished job
# never reacts to policies.)
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: delayed, namespace: $ns}
spec:
  minAvailable: 2
  schedulerName: volcano
  policies: [{event: PodFailed, action: RestartJob, timeout: 4s}]
  tasks:
  - name: crash
    replicas: 1
    template:
      metadata: {annotations: {basalt.dev/run-for: 1s, basalt.dev/exit-code: "3"}}
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
  - name: serve
    replicas: 1
    template:
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
JOB
announced() {
  kubectl -n "$ns" get events --field-selector involvedObject.name=delayed,reason=ExecuteAction \
    -o jsonpath='{.items[*].message}' | grep -q 'Execute action RestartJob after 4s'
}
wait_for "the delayed action is announced (ExecuteAction event)" 30 announced
announced_at=$SECONDS
expect_eq "not restarted before the timeout" "$(job_field "$ns" delayed .status.retryCount)" ""
delayed_restart() { [[ $(job_field "$ns" delayed .status.retryCount) == 1 ]]; }
wait_for "RestartJob runs once the timeout has passed" 20 delayed_restart
if ((SECONDS - announced_at >= 2)); then pass "restart waited for the timeout"; else fail "restart came $((SECONDS - announced_at))s after the announcement"; fi
kubectl -n "$ns" delete vcjob delayed --wait=false >/dev/null

# --- TaskCompleted -> CompleteJob ---------------------------------------------------------------
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mw, namespace: $ns}
spec:
  minAvailable: 3
  schedulerName: volcano
  tasks:
  - name: master
    replicas: 1
    policies: [{event: TaskCompleted, action: CompleteJob}]
    template:
      metadata: {annotations: {basalt.dev/run-for: 4s}}
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
  - name: worker
    replicas: 2
    template:
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
JOB
wait_for "master finishing completes the job (TaskCompleted -> CompleteJob)" 60 job_phase_is "$ns" mw Completed
expect_eq "mw succeeded" "$(job_field "$ns" mw .status.succeeded)" "1"
workers_gone() { [[ -z $(kubectl -n "$ns" get pods -l volcano.sh/task-spec=worker,volcano.sh/job-name=mw -o name 2>/dev/null) ]]; }
wait_for "mw workers deleted" 30 workers_gone
expect_contains "mw conditions" "$(job_field "$ns" mw '.status.conditions[*].status')" "Completing Completed"

# --- minSuccess ---------------------------------------------------------------------------------
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: ms, namespace: $ns}
spec:
  minAvailable: 3
  minSuccess: 2
  schedulerName: volcano
  tasks:
  - name: fast
    replicas: 2
    template:
      metadata: {annotations: {basalt.dev/run-for: 3s}}
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
  - name: slow
    replicas: 1
    template:
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
JOB
wait_for "minSuccess 2 reached completes the job with a pod still running" 60 job_phase_is "$ns" ms Completed
slow_gone() { [[ -z $(kubectl -n "$ns" get pods -l volcano.sh/task-spec=slow,volcano.sh/job-name=ms -o name 2>/dev/null) ]]; }
wait_for "the still running pod is deleted" 30 slow_gone

expect_contains "reconcile metrics" "$(curl -fsS "http://127.0.0.1:$CM_METRICS_PORT/metrics")" 'basalt_controller_reconcile_total{controller="job",result="success"}'
if cm_stop TERM; then pass "SIGTERM: vc-controller-manager exited 0"; else fail "SIGTERM: non-zero exit"; fi
