#!/usr/bin/env bash
# dependsOn and scaling as a user sees them with kubectl: a worker task that dependsOn its
# master gets pods only once the master runs; changing a task's replicas adds or removes pods
# (highest indexes first when scaling down).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace ctrl-dep)
scheduler_start "$ns"

job() { # name minAvailable master-replicas worker-replicas depends(yes/no)
  local dep=""
  [[ $5 == yes ]] && dep="    dependsOn: {name: [master]}"
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  schedulerName: volcano
  queue: default
  minAvailable: $2
  tasks:
  - name: master
    replicas: $3
    minAvailable: $3   # what the webhook defaults; dependsOn waits for this many running
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
  - name: worker
    replicas: $4
$dep
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
JOB
}
task_pods() { kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1,volcano.sh/task-spec=$2" --no-headers 2>/dev/null | grep -vc Terminating || true; }
pod_names() { kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" -o jsonpath='{.items[*].metadata.name}' 2>/dev/null; }

# --- dependsOn --------------------------------------------------------------------------------
job ordered 1 1 2 yes | kubectl apply -f - >/dev/null
master_running() { [[ $(kubectl -n "$ns" get pod ordered-master-0 -o jsonpath='{.status.phase}' 2>/dev/null) == Running ]]; }
wait_for "master pod runs" 60 master_running
two_workers() { [[ $(task_pods ordered worker) == 2 ]]; }
wait_for "worker pods created after the master runs" 60 two_workers
ready_at=$(kubectl -n "$ns" get pod ordered-master-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].lastTransitionTime}')
first_worker=$(kubectl -n "$ns" get pods -l volcano.sh/job-name=ordered,volcano.sh/task-spec=worker -o jsonpath='{.items[*].metadata.creationTimestamp}' | tr ' ' '\n' | sort | head -1)
if [[ -n $ready_at && -n $first_worker && $(date -d "$first_worker" +%s) -ge $(date -d "$ready_at" +%s) ]]; then
  pass "first worker created ($first_worker) no earlier than the master became Ready ($ready_at)"
else
  fail "a worker was created ($first_worker) before the master became Ready ($ready_at)"
fi

# --- scale up and down -------------------------------------------------------------------------
job elastic 1 1 2 no | kubectl apply -f - >/dev/null
three() { [[ $(( $(task_pods elastic master) + $(task_pods elastic worker) )) == 3 ]]; }
wait_for "elastic job has 3 pods" 60 three
kubectl -n "$ns" patch vcjob elastic --type=json -p '[{"op":"replace","path":"/spec/tasks/1/replicas","value":4}]' >/dev/null
four_workers() { [[ $(task_pods elastic worker) == 4 ]]; }
wait_for "scaling workers 2 -> 4 creates 2 pods" 60 four_workers
expect_contains "new worker names" "$(pod_names elastic)" "elastic-worker-3"
kubectl -n "$ns" patch vcjob elastic --type=json -p '[{"op":"replace","path":"/spec/tasks/1/replicas","value":1}]' >/dev/null
one_worker() { [[ $(task_pods elastic worker) == 1 ]]; }
wait_for "scaling workers 4 -> 1 removes 3 pods" 60 one_worker
remaining=$(kubectl -n "$ns" get pods -l volcano.sh/job-name=elastic,volcano.sh/task-spec=worker -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.deletionTimestamp}{"\n"}{end}' | awk 'NF==1 {print $1}')
expect_eq "the remaining worker is index 0" "$remaining" "elastic-worker-0"
still_running() { [[ $(job_field "$ns" elastic .status.state.phase) == Running ]]; }
wait_for "job stays Running through the scale-down (no restart)" 30 still_running
expect_eq "no restart on scale-down (retryCount)" "$(job_field "$ns" elastic .status.retryCount)" ""
