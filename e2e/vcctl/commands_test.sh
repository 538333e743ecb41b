#!/usr/bin/env bash
# Every vcctl command against the real API server, with the controllers, the scheduler and the
# webhook running: Volcano's output columns, queue create/get/list/operate (close -> a job run
# is refused with the webhook's message verbatim; update; open), job run/list/view/suspend/
# resume/delete, pod and podgroup listing, and the errors and exit codes of a missing object,
# an invalid spec and a bad command line.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace vcctl-cmd)
scheduler_start "$ns"
vcctl_webhook_start
q=vcctl-e2e-$RANDOM
kube_queue_state() { kubectl get queue "$q" -o jsonpath='{.status.state}' 2>/dev/null; }
queue_is() { [[ $(kube_queue_state) == "$1" ]]; }
cleanup_queue() { kubectl delete queue "$q" --ignore-not-found --wait=false >/dev/null 2>&1 || true; }
on_exit() {
  local rc=$?
  set +e
  cleanup_queue
  (exit "$rc")
  vcctl_on_exit
}
trap on_exit EXIT

# --- queue create / get / list -----------------------------------------------------------------
run_vcctl queue create -n "$q" -w 3
expect_eq "queue create exit code" "$RC" 0
expect_eq "queue create output" "$OUT" "create queue $q successfully"
wait_for "the queue controller opens $q" 20 queue_is Open
run_vcctl queue get -n "$q"
expect_eq "queue get exit code" "$RC" 0
expect_eq "queue get header" "$(head -n 1 <<<"$OUT")" "Name                     Weight  State   Inqueue Pending Running Unknown "
expect_eq "queue get row" "$(row_of "$OUT" "$q")" "$q 3 Open 0 0 0 0"
run_vcctl queue list
expect_eq "queue list header" "$(head -n 1 <<<"$OUT")" "Name                     Weight  State   Inqueue Pending Running Unknown Completed"
expect_eq "queue list row" "$(row_of "$OUT" "$q")" "$q 3 Open 0 0 0 0 0"
expect_contains "queue list has the default queue" "$OUT" "default"

# --- job run / list / view, pod and podgroup list ------------------------------------------------
job_file=$(mktemp --suffix=.yaml)
cat >"$job_file" <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train}
spec:
  minAvailable: 2
  schedulerName: volcano
  queue: $q
  tasks:
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
JOB
run_vcctl job run -f "$job_file" -n "$ns"
expect_eq "job run exit code" "$RC" 0
expect_eq "job run output" "$OUT" "run job train successfully"
job_running() { "$VCCTL" job list -n "$ns" | awk '$1 == "train" && $3 == "Running" { ok = 1 } END { exit !ok }'; }
wait_for "vcctl job list shows train Running" 40 job_running
run_vcctl job list -n "$ns"
expect_eq "job list header" "$(header_of "$OUT")" "Name Creation Phase JobType Replicas Min Pending Running Succeeded Failed Unknown RetryCount"
expect_eq "job list row" "$(row_of "$OUT" train | cut -d' ' -f1,3-)" "train Running Batch 2 2 0 2 0 0 0 0"
expect_eq "job list creation date" "$(row_of "$OUT" train | cut -d' ' -f2)" "$(date -u +%Y-%m-%d)"
# The name column is the longest name plus 3 ("train": 8 wide), as Volcano's.
expect_eq "job list name column width" "$(sed -n 2p <<<"$OUT" | cut -c1-9)" "train   2"
run_vcctl job list --all-namespaces
expect_eq "job list --all-namespaces header" "$(header_of "$OUT")" "Namespace Name Creation Phase JobType Replicas Min Pending Running Succeeded Failed Unknown RetryCount"
expect_eq "job list --all-namespaces row" "$(row_of "$OUT" "$ns" | cut -d' ' -f1,2,4)" "$ns train Running"
run_vcctl job list -n "$ns" --selector nomatch
expect_eq "job list --selector without a match" "$OUT" "No resources found"
run_vcctl job view -N train -n "$ns"
expect_eq "job view exit code" "$RC" 0
expect_contains "job view name" "$OUT" "Name:       	train"
expect_contains "job view namespace" "$OUT" "Namespace:  	$ns"
expect_contains "job view queue" "$OUT" "Queue:             	$q"
expect_contains "job view phase" "$OUT" "Phase:	Running"
expect_contains "job view task" "$OUT" "Name:	worker"
run_vcctl pod list -n "$ns" -j train
expect_eq "pod list header" "$(header_of "$OUT")" "Name Ready Status Restart Age"
expect_eq "pod list worker-0" "$(row_of "$OUT" train-worker-0 | cut -d' ' -f1-4)" "train-worker-0 1/1 Running 0"
expect_eq "pod list worker-1" "$(row_of "$OUT" train-worker-1 | cut -d' ' -f1-4)" "train-worker-1 1/1 Running 0"
run_vcctl pod list -n "$ns" -q "$q"
expect_contains "pod list --queue" "$OUT" "train-worker-1"
run_vcctl pod list -n "$ns" -j train -q default
expect_eq "pod list of a job in another queue: exit code" "$RC" 2
expect_eq "pod list of a job in another queue: message" "$ERR" "the input vcjob train does not match the queue default"
# The scheduler writes the PodGroup's phase and running count asynchronously after the binds:
# wait for them (as a user would) before reading the row.
pg_running() { [[ $(kubectl -n "$ns" get podgroup train -o jsonpath='{.status.phase}/{.status.running}') == Running/2 ]]; }
wait_for "PodGroup train Running with 2 running" 30 pg_running
run_vcctl podgroup list -n "$ns"
expect_eq "podgroup list header" "$(header_of "$OUT")" "Name Phase MinMember Running Succeeded Failed Queue Age"
expect_eq "podgroup list row" "$(row_of "$OUT" train | cut -d' ' -f1-7)" "train Running 2 2 0 0 $q"
run_vcctl podgroup list --all-namespaces -q "$q"
expect_eq "podgroup list --all-namespaces -q" "$(row_of "$OUT" "$ns" | cut -d' ' -f1,2)" "$ns train"
queue_counts_running() { [[ $("$VCCTL" queue list | awk -v q="$q" '$1 == q { print $6 }') == 1 ]]; }
wait_for "queue list counts train's PodGroup as Running" 20 queue_counts_running

# --- suspend / resume ------------------------------------------------------------------------------
run_vcctl job suspend -N train -n "$ns"
expect_eq "job suspend exit code" "$RC" 0
expect_contains "job suspend output" "$OUT" "suspend job train successfully (command train-abortjob-"
wait_for "suspend aborts train" 30 job_phase_is "$ns" train Aborted
no_pods() { [[ $("$VCCTL" pod list -n "$ns" -j train) == "No resources found" ]]; }
wait_for "an aborted job has no pods (vcctl pod list)" 30 no_pods
run_vcctl job resume train -n "$ns"
expect_eq "job resume exit code" "$RC" 0
expect_contains "job resume output" "$OUT" "resume job train successfully (command train-resumejob-"
wait_for "resume brings train back to Running" 40 job_phase_is "$ns" train Running

# --- errors ------------------------------------------------------------------------------------------
run_vcctl job view -N nope -n "$ns"
expect_eq "view of a missing job: exit code" "$RC" 6
expect_eq "view of a missing job: message" "$ERR" 'Error from server (NotFound): jobs.batch.volcano.sh "nope" not found'
run_vcctl job suspend -N nope -n "$ns"
expect_eq "suspend of a missing job: exit code" "$RC" 6
expect_contains "suspend of a missing job: message" "$ERR" '"nope" not found'
run_vcctl job run -N bad -n "$ns" -r 1 -m 1 -R cpu=1 -L cpu=1 -i busybox -S volcano --queue no-such-queue
expect_eq "run into a missing queue: exit code" "$RC" 6
expect_contains "run into a missing queue: the webhook's message" "$ERR" 'admission webhook "validatejob.volcano.sh" denied the request'
bad_file=$(mktemp --suffix=.yaml)
sed -e 's/minAvailable: 2/minAvailable: 5/' -e 's/name: train}/name: toobig}/' "$job_file" >"$bad_file"
run_vcctl job run -f "$bad_file" -n "$ns"
expect_eq "invalid spec: exit code" "$RC" 6
# kubectl words the prefix by reason ("The request is invalid"); the server's message is the same.
expect_eq "invalid spec: the webhook's message verbatim" "${ERR#Error from server (Invalid): }" \
  "$(kubectl create -n "$ns" -f "$bad_file" 2>&1 | sed 's/^.*: \(admission webhook\)/\1/')"
expect_contains "invalid spec: names the field" "$ERR" "minAvailable"
run_vcctl job view
expect_eq "view without a name: exit code" "$RC" 2
expect_contains "view without a name: message" "$ERR" "job name (--name/-N) is mandatory to view a job"
run_vcctl job list --no-such-flag
expect_eq "unknown flag: exit code" "$RC" 2

# --- delete, close -> refused with the webhook's message, update, open, delete the queue ---------
run_vcctl job delete -N train -n "$ns"
expect_eq "job delete exit code" "$RC" 0
expect_eq "job delete output" "$OUT" "delete job train successfully"
pg_gone() { ! kubectl -n "$ns" get podgroup train >/dev/null 2>&1 && ! kubectl -n "$ns" get vcjob train >/dev/null 2>&1; }
wait_for "train and its PodGroup are gone" 40 pg_gone
run_vcctl queue operate -n "$q" -a close
expect_eq "queue operate close exit code" "$RC" 0
expect_contains "queue operate close output" "$OUT" "close queue $q successfully (command $q-closequeue-"
wait_for "the queue controller closes $q" 20 queue_is Closed
run_vcctl queue get -n "$q"
expect_eq "queue get of a closed queue" "$(row_of "$OUT" "$q" | cut -d' ' -f1-3)" "$q 3 Closed"
# Probed with a server-side dry run: a create the webhook still let through would be a real Job.
closed_refused() {
  local out
  out=$(sed -e 's/name: train}/name: late}/' "$job_file" | kubectl create --dry-run=server -n "$ns" -f - 2>&1) || true
  [[ $out == *'status is `Closed`'* ]]
}
wait_for "the webhook sees $q Closed" 15 closed_refused
run_vcctl job run -N late -n "$ns" --queue "$q"
expect_eq "run into a closed queue: exit code" "$RC" 6
expect_eq "run into a closed queue: the webhook's message verbatim" "$ERR" \
  "Error from server (Forbidden): admission webhook \"validatejob.volcano.sh\" denied the request: spec.queue: can only submit job to queue with state \`Open\`, queue \`$q\` status is \`Closed\`"
run_vcctl queue operate -n "$q" -a update -w 5
expect_eq "queue operate update exit code" "$RC" 0
run_vcctl queue get -n "$q"
expect_eq "queue weight after update" "$(row_of "$OUT" "$q" | cut -d' ' -f2)" "5"
run_vcctl queue operate -n "$q" -a open
expect_eq "queue operate open exit code" "$RC" 0
wait_for "the queue controller reopens $q" 20 queue_is Open
open_accepts() { "$VCCTL" job run -N late -n "$ns" --queue "$q" -R cpu=100m -L cpu=100m >/dev/null 2>&1; }
wait_for "a job run into the reopened queue is accepted" 15 open_accepts
run_vcctl queue delete -n "$q"
expect_eq "delete of a queue with a job: exit code" "$RC" 6
expect_contains "delete of a queue with a job: the webhook's message" "$ERR" "queue \`$q\` can not be deleted because it still has"
run_vcctl job delete -N late -n "$ns"
expect_eq "job delete late" "$RC" 0
late_gone() { ! kubectl -n "$ns" get vcjob late >/dev/null 2>&1 && ! kubectl -n "$ns" get podgroup late >/dev/null 2>&1; }
wait_for "late and its PodGroup are gone" 40 late_gone
queue_deletable() { "$VCCTL" queue delete -n "$q" >/dev/null 2>&1; }
wait_for "vcctl queue delete succeeds once the queue is empty" 20 queue_deletable
run_vcctl queue get -n "$q"
expect_eq "get of the deleted queue: exit code" "$RC" 6
expect_eq "get of the deleted queue: message" "$ERR" "Error from server (NotFound): queues.scheduling.volcano.sh \"$q\" not found"
run_vcctl queue delete -n default
expect_eq "delete of the default queue: exit code" "$RC" 6
expect_contains "delete of the default queue: the webhook's message" "$ERR" '`default` queue can not be deleted'
cleanup_queue
rm -f "$job_file" "$bad_file"
