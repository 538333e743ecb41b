#!/usr/bin/env bash
# Everything around the job lifecycle, with kubectl: suspend and resume through Commands (each
# consumed once and deleted), ttlSecondsAfterFinished, deleting a Job removes what the
# controller created for it (pods, PodGroup, svc Service and ConfigMap, ssh Secret), a bare pod
# of the volcano scheduler gets a PodGroup, queues open and close through Commands and count
# their PodGroups, and each controller set campaigns for its own Lease.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace ctrl-cmd)
scheduler_start "$ns"

job() { # name extra-spec plugins
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  minAvailable: 2
  schedulerName: volcano
  ${2:-}
  plugins: {${3:-}}
  tasks:
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
JOB
}
command() { # action target-kind target-name target-uid namespace
  local api=batch.volcano.sh/v1alpha1
  [[ $2 == Queue ]] && api=scheduling.volcano.sh/v1beta1
  kubectl create -f - -o jsonpath='{.metadata.name}' <<CMD
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata: {generateName: $3-$(tr '[:upper:]' '[:lower:]' <<<"$1")-, namespace: $5}
action: $1
target: {apiVersion: $api, kind: $2, name: $3, uid: "$4"}
CMD
}
command_gone() { ! kubectl -n "$1" get command "$2" >/dev/null 2>&1; }

# --- suspend (AbortJob) and resume (ResumeJob) -----------------------------------------------
job sleeper | kubectl apply -f - >/dev/null
wait_for "sleeper Running" 30 job_phase_is "$ns" sleeper Running
uid=$(job_field "$ns" sleeper .metadata.uid)
cmd=$(command AbortJob Job sleeper "$uid" "$ns")
wait_for "AbortJob Command: sleeper Aborted" 30 job_phase_is "$ns" sleeper Aborted
wait_for "the AbortJob Command is consumed (deleted)" 10 command_gone "$ns" "$cmd"
no_pods() { [[ $(pod_count "$ns" sleeper) == 0 ]]; }
wait_for "an aborted job has no pods" 30 no_pods
sleep 2
expect_eq "still Aborted (the Command acted once)" "$(job_field "$ns" sleeper .status.state.phase)" "Aborted"
cmd=$(command ResumeJob Job sleeper "$uid" "$ns")
wait_for "ResumeJob Command: sleeper Running again" 60 job_phase_is "$ns" sleeper Running
wait_for "the ResumeJob Command is consumed" 10 command_gone "$ns" "$cmd"
expect_eq "resume counts as a retry" "$(job_field "$ns" sleeper .status.retryCount)" "1"
expect_contains "sleeper conditions" "$(job_field "$ns" sleeper '.status.conditions[*].status')" "Aborting Aborted Restarting"

# --- deleting a Job removes its pods, PodGroup and plugin objects ------------------------------
job web '' 'svc: [], ssh: []' | kubectl apply -f - >/dev/null
wait_for "web Running" 30 job_phase_is "$ns" web Running
have() { kubectl -n "$ns" get "$1" "$2" >/dev/null 2>&1; }
wait_for "svc plugin Service web" 10 have service web
wait_for "svc plugin ConfigMap web-svc" 10 have configmap web-svc
wait_for "ssh plugin Secret web-ssh" 10 have secret web-ssh
expect_eq "Service owner" "$(kubectl -n "$ns" get service web -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" "Job/web"
expect_contains "ConfigMap hosts" "$(kubectl -n "$ns" get configmap web-svc -o jsonpath='{.data.worker\.host}')" "web-worker-1.web"
expect_eq "pod hostname/subdomain (svc)" "$(kubectl -n "$ns" get pod web-worker-1 -o jsonpath='{.spec.hostname}.{.spec.subdomain}')" "web-worker-1.web"
expect_eq "controlledResources" "$(job_field "$ns" web '.status.controlledResources')" '{"plugin-ssh":"ssh","plugin-svc":"svc"}'
kubectl -n "$ns" delete vcjob web --wait=false >/dev/null
all_gone() {
  ! have service web && ! have configmap web-svc && ! have secret web-ssh && ! have podgroup web &&
    [[ -z $(kubectl -n "$ns" get pods -l volcano.sh/job-name=web -o name 2>/dev/null) ]]
}
wait_for "pods, PodGroup, Service, ConfigMap and Secret of a deleted Job are gone" 60 all_gone

# --- ttlSecondsAfterFinished ------------------------------------------------------------------
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: short, namespace: $ns}
spec:
  minAvailable: 1
  schedulerName: volcano
  ttlSecondsAfterFinished: 3
  tasks:
  - name: worker
    replicas: 1
    template:
      metadata: {annotations: {basalt.dev/run-for: 1s}}
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
JOB
wait_for "short Completed" 30 job_phase_is "$ns" short Completed
finished_at=$SECONDS
job_gone() { ! kubectl -n "$ns" get vcjob "$1" >/dev/null 2>&1; }
wait_for "short deleted after ttlSecondsAfterFinished" 30 job_gone short
if ((SECONDS - finished_at >= 1)); then pass "TTL deletion waited for the TTL"; else fail "TTL deletion came too early"; fi

# An Aborted job is collected too (deliberate difference from Volcano).
job aborted-ttl 'ttlSecondsAfterFinished: 2' | kubectl apply -f - >/dev/null
wait_for "aborted-ttl Running" 30 job_phase_is "$ns" aborted-ttl Running
command AbortJob Job aborted-ttl "$(job_field "$ns" aborted-ttl .metadata.uid)" "$ns" >/dev/null
wait_for "an Aborted job with a TTL is deleted" 40 job_gone aborted-ttl

# --- a bare pod of the volcano scheduler gets a PodGroup ----------------------------------------
scheduler_stop
kubectl -n "$ns" apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: bare}
spec:
  schedulerName: volcano
  containers: [{name: main, image: busybox, resources: {requests: {cpu: 250m}}}]
POD
kubectl -n "$ns" apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: other}
spec:
  schedulerName: default-scheduler
  containers: [{name: main, image: busybox}]
POD
bare_uid=$(kubectl -n "$ns" get pod bare -o jsonpath='{.metadata.uid}')
annotated() { [[ $(kubectl -n "$ns" get pod bare -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name}') == "podgroup-$bare_uid" ]]; }
wait_for "bare pod annotated with podgroup-<pod uid>" 20 annotated
expect_eq "bare PodGroup minMember/queue" "$(kubectl -n "$ns" get podgroup "podgroup-$bare_uid" -o jsonpath='{.spec.minMember}/{.spec.queue}')" "1/default"
expect_eq "bare PodGroup owner" "$(kubectl -n "$ns" get podgroup "podgroup-$bare_uid" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].uid}')" "Pod/$bare_uid"
expect_eq "bare PodGroup minResources cpu" "$(kubectl -n "$ns" get podgroup "podgroup-$bare_uid" -o jsonpath='{.spec.minResources.cpu}')" "250m"
expect_eq "pod of another scheduler left alone" "$(kubectl -n "$ns" get pod other -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name}')" ""

# --- queues: Close/Open through Commands, PodGroup counts ---------------------------------------
q=e2e-q-$RANDOM
kubectl apply -f - >/dev/null <<Q
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $q}
spec: {weight: 1}
Q
queue_state_is() { [[ $(kubectl get queue "$1" -o jsonpath='{.status.state}') == "$2" ]]; }
wait_for "new queue Open" 20 queue_state_is "$q" Open
cmd=$(command CloseQueue Queue "$q" "" default)
wait_for "CloseQueue on an empty queue: Closed" 20 queue_state_is "$q" Closed
wait_for "the CloseQueue Command is consumed" 10 command_gone default "$cmd"
command OpenQueue Queue "$q" "" default >/dev/null
wait_for "OpenQueue: Open" 20 queue_state_is "$q" Open
job inq "queue: $q" | kubectl apply -f - >/dev/null
queue_pending_is() { [[ $(kubectl get queue "$q" -o jsonpath='{.status.pending}') == "$1" ]]; }
wait_for "queue counts the job's Pending PodGroup" 20 queue_pending_is 1
command CloseQueue Queue "$q" "" default >/dev/null
wait_for "CloseQueue with a PodGroup: Closing" 20 queue_state_is "$q" Closing
kubectl -n "$ns" delete vcjob inq >/dev/null
wait_for "Closing queue becomes Closed once its PodGroups are gone" 40 queue_state_is "$q" Closed
kubectl delete queue "$q" >/dev/null 2>&1 || true

# --- leader election: one Lease per controller set ----------------------------------------------
cm_stop TERM || fail "vc-controller-manager did not exit 0 on SIGTERM"
cm_start --leader-elect=true --leader-elect-resource-namespace="$ns" --controllers=queue,gc
has_lease() { kubectl -n "$ns" get lease vc-controller-manager-gc-queue >/dev/null 2>&1; }
wait_for "Lease vc-controller-manager-gc-queue held" 20 has_lease
expect_contains "lease holder" "$(kubectl -n "$ns" get lease vc-controller-manager-gc-queue -o jsonpath='{.spec.holderIdentity}')" "_"
if cm_stop TERM; then pass "leader exits 0 on SIGTERM"; else fail "leader exit code non-zero"; fi
expect_eq "Lease released on SIGTERM" "$(kubectl -n "$ns" get lease vc-controller-manager-gc-queue -o jsonpath='{.spec.holderIdentity}')" ""
if "$CM_BIN" --controllers=job,nosuch >/dev/null 2>&1; then fail "unknown controller accepted"; else pass "unknown controller is a start-up error"; fi
