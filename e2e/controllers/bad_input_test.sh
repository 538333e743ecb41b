#!/usr/bin/env bash
# Bad input as a user sees it with kubectl (the cluster runs without the webhook, so invalid
# Jobs get in): a Job the webhook would reject, a template the API server rejects, a Job naming
# a Queue that does not exist, a PodGroup deleted by hand. Each time the controller records a
# Warning event and status.state.reason/message saying what is wrong (kubectl describe vcjob),
# keeps the job in a sensible phase, retries with backoff where retrying can help, and never
# crashes or spins (its error count and its log grow slowly).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace ctrl-bad)
# The scheduler's part by hand: bad input is about the controller.
BASALT_E2E_SCHEDULER=fake scheduler_start "$ns"

job_reason() { job_field "$ns" "$1" .status.state.reason; }
job_message() { job_field "$ns" "$1" .status.state.message; }
reason_is() { job_reason_is "$ns" "$@"; }
event_of() { job_events "$ns" "$@"; }
has_event() { job_has_event "$ns" "$@"; }
metric() { # the job controller's reconcile errors so far
  curl -fsS "http://127.0.0.1:$CM_METRICS_PORT/metrics" |
    awk '/^basalt_controller_reconcile_total\{/ && /controller="job"/ && /result="error"/ {print int($2)}'
}
container() { echo "{name: ${1:-main}, image: busybox, resources: {requests: {cpu: ${2:-100m}}}}"; }
job() { # name queue minAvailable tasks-yaml
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  schedulerName: volcano
  queue: $2
  minAvailable: $3
  tasks:
$4
JOB
}
task() { # name replicas container-yaml [extra]
  printf '  - name: %s\n    replicas: %s\n%s    template: {spec: {restartPolicy: Never, containers: [%s]}}\n' \
    "$1" "$2" "${4:+    $4
}" "$3"
}

# --- a Job the webhook would reject: no tasks ----------------------------------------------------
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: no-tasks, namespace: $ns}
spec: {schedulerName: volcano, queue: default, tasks: []}
JOB
wait_for "no-tasks: InvalidJobSpec in the status" 20 reason_is no-tasks InvalidJobSpec
expect_eq "no-tasks phase" "$(job_field "$ns" no-tasks .status.state.phase)" "Pending"
expect_eq "no-tasks message" "$(job_message no-tasks)" "spec.tasks: no task specified in the job spec"
expect_contains "kubectl describe vcjob no-tasks" "$(kubectl -n "$ns" describe vcjob no-tasks)" "InvalidJobSpec"
expect_contains "no-tasks Warning event" "$(event_of no-tasks InvalidJobSpec)" "Warning spec.tasks: no task specified"
expect_eq "no PodGroup for no-tasks" "$(kubectl -n "$ns" get podgroup no-tasks --no-headers 2>/dev/null | wc -l)" "0"

# --- duplicate task names, minAvailable > replicas, a bad quantity ------------------------------
job dup default 5 "$(task worker 1 "$(container)")
$(task worker 1 "$(container)" "minAvailable: 2")
$(task ps 1 "$(container main 1x)")" | kubectl apply -f - >/dev/null
wait_for "dup: InvalidJobSpec in the status" 20 reason_is dup InvalidJobSpec
msg=$(job_message dup)
expect_contains "dup message" "$msg" 'spec.tasks[1].name: duplicated task name "worker"'
expect_contains "dup message" "$msg" "spec.tasks[1].minAvailable: 2 is greater than replicas 1"
expect_contains "dup message" "$msg" 'spec.tasks[2].template.spec.containers[0].resources.requests: resource "cpu": invalid quantity "1x"'
expect_contains "dup message" "$msg" "spec.minAvailable: 5 is greater than the total replicas 3 of the tasks"
expect_eq "dup phase" "$(job_field "$ns" dup .status.state.phase)" "Pending"
expect_eq "no pods for dup" "$(pod_count "$ns" dup)" "0"
# Fixing the spec lets the job go on: the reason goes away and the PodGroup appears.
job dup default 2 "$(task worker 1 "$(container)")
$(task ps 1 "$(container)")" | kubectl apply -f - >/dev/null
dup_fixed() { [[ -z $(job_reason dup) ]] && kubectl -n "$ns" get podgroup dup >/dev/null 2>&1; }
wait_for "dup fixed: reason cleared, PodGroup created" 30 dup_fixed

# --- a template the API server rejects (invalid container name) ---------------------------------
job badname default 1 "$(task worker 2 "$(container Bad_Name)")" | kubectl apply -f - >/dev/null
wait_for "badname: FailedCreate in the status" 30 reason_is badname FailedCreate
expect_contains "badname message names the pod" "$(job_message badname)" "Error creating pod badname-worker-0 of task worker"
expect_contains "badname message has the API server's reason" "$(job_message badname)" "spec.containers[0].name"
expect_contains "badname Warning FailedCreate event" "$(event_of badname FailedCreate)" "Warning Error creating pod"
expect_eq "badname phase" "$(job_field "$ns" badname .status.state.phase)" "Pending"

# --- a Job naming a Queue that does not exist ----------------------------------------------------
queue=bad-input-$RANDOM
job noqueue "$queue" 1 "$(task worker 1 "$(container)")" | kubectl apply -f - >/dev/null
wait_for "noqueue: QueueNotFound in the status" 20 reason_is noqueue QueueNotFound
expect_contains "noqueue message" "$(job_message noqueue)" "queue \"$queue\" does not exist"
expect_contains "noqueue Warning event" "$(event_of noqueue QueueNotFound)" "Warning queue \"$queue\" does not exist"
expect_eq "noqueue phase" "$(job_field "$ns" noqueue .status.state.phase)" "Pending"
expect_eq "no PodGroup for noqueue" "$(kubectl -n "$ns" get podgroup noqueue --no-headers 2>/dev/null | wc -l)" "0"

# --- the controller does not spin on these jobs ---------------------------------------------------
sleep 10  # past the first fast retries (5ms, 10ms, ... doubling)
e1=$(metric) l1=$(wc -l <"$CM_LOG")
sleep 20
e2=$(metric) l2=$(wc -l <"$CM_LOG")
e2e_log "job reconcile errors: $e1 -> $e2 in 20s; log lines: $l1 -> $l2"
if ((e2 - e1 <= 8)); then pass "reconcile errors grow slowly ($((e2 - e1)) in 20s for 2 failing jobs)"; else fail "reconcile errors grew by $((e2 - e1)) in 20s"; fi
if ((l2 - l1 <= 40)); then pass "log grows slowly ($((l2 - l1)) lines in 20s)"; else fail "log grew by $((l2 - l1)) lines in 20s"; fi
if kill -0 "$CM_PID" 2>/dev/null; then pass "controller manager still running"; else fail "controller manager exited"; fi

# Creating the queue brings the waiting job on (the Queue's creation requeues it).
kubectl apply -f - >/dev/null <<Q
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $queue}
spec: {weight: 1}
Q
noqueue_on() { [[ -z $(job_reason noqueue) ]] && kubectl -n "$ns" get podgroup noqueue >/dev/null 2>&1; }
wait_for "noqueue: PodGroup created and reason cleared once the queue exists" 30 noqueue_on
wait_for "noqueue Running" 60 job_phase_is "$ns" noqueue Running

# --- a PodGroup deleted by hand while the job runs -----------------------------------------------
old_uid=$(kubectl -n "$ns" get podgroup noqueue -o jsonpath='{.metadata.uid}')
kubectl -n "$ns" delete podgroup noqueue >/dev/null
recreated() { local u; u=$(kubectl -n "$ns" get podgroup noqueue -o jsonpath='{.metadata.uid}' 2>/dev/null); [[ -n $u && $u != "$old_uid" ]]; }
wait_for "PodGroup noqueue created again" 30 recreated
wait_for "PodGroupRecreated Warning event" 20 has_event noqueue PodGroupRecreated
expect_contains "PodGroupRecreated message" "$(event_of noqueue PodGroupRecreated)" "Warning PodGroup $ns/noqueue of the job was deleted while the job was Running"
expect_eq "recreated PodGroup owner" "$(kubectl -n "$ns" get podgroup noqueue -o jsonpath='{.metadata.ownerReferences[0].name}')" "noqueue"
expect_eq "noqueue still Running, its pod kept" "$(job_field "$ns" noqueue .status.state.phase)/$(pod_count "$ns" noqueue)" "Running/1"
kubectl -n "$ns" delete vcjob noqueue --wait=false >/dev/null
kubectl delete queue "$queue" --wait=false >/dev/null 2>&1 || true

if kill -0 "$CM_PID" 2>/dev/null; then pass "controller manager still running at the end"; else fail "controller manager exited"; fi
