#!/usr/bin/env bash
# Least privilege, run: the chart's RBAC applied to the test cluster, and vc-webhook-manager,
# vc-controller-manager and vc-scheduler each running with a token of its own ServiceAccount
# (never the admin certificate) and the chart's args, leader election on. Whatever a user does
# with them here must work without a single 403 in any component's log:
#   - each component creates the default queue when it is missing (each in turn);
#   - the webhook keeps its certificate in its Secret and patches its webhook configurations'
#     caBundle (and admits or refuses through them);
#   - a queue is created (Open) and closed with a Command;
#   - a gang job with the ssh, svc and env plugins and a volume claim runs (Running, then
#     Completed) and is collected by ttlSecondsAfterFinished;
#   - a bare pod of a ReplicaSet gets its PodGroup and is scheduled.
# And the tokens are really limited: what the components never need is refused.
source "$(dirname "$0")/../lib/testlib.sh"
# shellcheck source=../lib/suite.sh
source "$(dirname "$0")/../lib/suite.sh"
trap 'rc=$?; suite_cleanup; kubectl delete queue rbac-e2e --ignore-not-found --wait=false >/dev/null 2>&1 || true; (exit $rc); e2e_finish' EXIT

suite_init lp
wns=$(new_namespace rbac-work)
e2e_log "release namespace $SUITE_NS, workloads in $wns"

# The tokens are the ServiceAccounts', and those get nothing beyond the chart's rules.
as() { kubectl --kubeconfig "$SUITE_DIR/$1.kubeconfig" "${@:2}"; }
# forbidden WHAT COMPONENT KUBECTL_ARGS...: the request, sent with the component's token, is
# refused by RBAC.
forbidden() {
  local what=$1 out
  if out=$(as "${@:2}" 2>&1); then fail "$what: allowed"
  else expect_contains "$what" "$out" "is forbidden: User \"system:serviceaccount:$SUITE_NS:volcano-$2\""; fi
}
forbidden "the controllers read a Secret" controllers get secret -n kube-system some-secret
forbidden "the controllers list Secrets" controllers get secrets -n "$wns"
forbidden "the webhook lists Secrets" admission get secrets -n "$wns"
forbidden "the webhook reads another Secret of its namespace" admission get secret -n "$SUITE_NS" other
forbidden "the scheduler creates a pod" scheduler run x -n "$wns" --image=busybox --restart=Never
forbidden "the scheduler lists PersistentVolumes" scheduler get persistentvolumes
expect_eq "the webhook may update its own MutatingWebhookConfiguration" \
  "$(as admission auth can-i update "mutatingwebhookconfigurations/volcano-admission-service-mutate$SUITE_SUFFIX" 2>/dev/null || true)" "yes"
expect_eq "the webhook may not update another one" \
  "$(as admission auth can-i update mutatingwebhookconfigurations/someone-elses 2>/dev/null || true)" "no"
expect_eq "leases outside the release namespace (scheduler)" \
  "$(as scheduler auth can-i create leases -n "$wns" 2>/dev/null || true)" "no"
expect_eq "another component's Lease (scheduler updating the controllers')" \
  "$(as scheduler auth can-i update leases/vc-controller-manager-cronjob-gc-job-podgroup-queue -n "$SUITE_NS" 2>/dev/null || true)" "no"

# ---- start-up, one at a time, each creating the default queue -----------------------------
# No webhook configuration is registered yet, so the default queue may be deleted (the webhook
# refuses that once it is enforced).
default_gone() { kubectl delete queue default --ignore-not-found --wait=true --timeout=20s >/dev/null 2>&1; ! kubectl get queue default >/dev/null 2>&1; }
created_default() { grep -aq 'Created the default queue' "${SUITE_LOG[$1]}"; }
wait_for "no default queue" 30 default_gone
suite_start admission a
suite_wait_ready admission-a
wait_for "vc-webhook-manager created the default queue" 30 created_default admission-a
expect_eq "the webhook's certificate Secret" \
  "$(kubectl -n "$SUITE_NS" get secret volcano-admission-secret -o jsonpath='{.type}')" "kubernetes.io/tls"
wait_for "no default queue" 30 default_gone
suite_start controllers a
suite_wait_ready controllers-a
wait_for "vc-controller-manager created the default queue" 60 created_default controllers-a
wait_for "no default queue" 30 default_gone
suite_start scheduler a
suite_wait_ready scheduler-a
wait_for "vc-scheduler created the default queue" 60 created_default scheduler-a
open_default() { [[ $(kubectl get queue default -o jsonpath='{.status.state}') == Open ]]; }
wait_for "the default queue is Open" 20 open_default
holds() { [[ -n $(suite_holder "$1") ]]; }
wait_for "the scheduler holds its Lease in $SUITE_NS" 20 holds volcano
wait_for "the controllers hold their Lease in $SUITE_NS" 20 holds vc-controller-manager-cronjob-gc-job-podgroup-queue

suite_register_webhooks "${SUITE_PORT[admission-a]}"

# ---- a queue, created and closed ----------------------------------------------------------
kubectl apply -f - >/dev/null <<'Q'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: rbac-e2e}
spec: {weight: 1}
Q
expect_eq "the webhook defaulted the queue (reclaimable)" "$(kubectl get queue rbac-e2e -o jsonpath='{.spec.reclaimable}')" "true"
q_state() { [[ $(kubectl get queue rbac-e2e -o jsonpath='{.status.state}') == "$1" ]]; }
wait_for "queue rbac-e2e Open" 20 q_state Open

# ---- a gang job with plugins and a volume, to Completed -----------------------------------
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: gang, namespace: $wns}
spec:
  schedulerName: volcano
  queue: rbac-e2e
  minAvailable: 3
  ttlSecondsAfterFinished: 3
  plugins: {ssh: [], svc: [], env: []}
  volumes:
  - mountPath: /data
    volumeClaim:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
  tasks:
  - name: worker
    replicas: 3
    template:
      metadata: {annotations: {basalt.dev/run-for: 12s}}
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox
          resources: {requests: {cpu: "1", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
JOB
phase() { [[ $(kubectl -n "$wns" get vcjob gang -o jsonpath='{.status.state.phase}' 2>/dev/null) == "$1" ]]; }
wait_for "gang Running" 60 phase Running
pg_running() { [[ $(kubectl -n "$wns" get podgroup gang -o jsonpath='{.status.phase}') == Running ]]; }
wait_for "PodGroup gang Running (status written by the scheduler)" 10 pg_running
expect_eq "gang's pods bound" \
  "$(kubectl -n "$wns" get pods -l volcano.sh/job-name=gang -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" "3"
expect_eq "objects of the plugins and the volume" \
  "$(kubectl -n "$wns" get secret/gang-ssh configmap/gang-svc service/gang networkpolicy/gang -o name 2>/dev/null | wc -l | tr -d ' ')/$(kubectl -n "$wns" get pvc -o name | grep -c gang-pvc-)" "4/1"
wait_for "gang Completed" 60 phase Completed
gone() { ! kubectl -n "$wns" get vcjob gang >/dev/null 2>&1; }
wait_for "gang collected after ttlSecondsAfterFinished" 30 gone

# ---- a bare pod of a ReplicaSet -----------------------------------------------------------
kubectl apply -f - >/dev/null <<RS
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: bare, namespace: $wns, annotations: {scheduling.volcano.sh/group-min-member: "1"}}
spec:
  replicas: 1
  selector: {matchLabels: {app: bare}}
  template:
    metadata: {labels: {app: bare}}
    spec:
      schedulerName: volcano
      containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
RS
bare_bound() { [[ -n $(kubectl -n "$wns" get pods -l app=bare -o jsonpath='{.items[0].spec.nodeName}' 2>/dev/null) ]]; }
wait_for "the ReplicaSet's pod got a PodGroup and was bound" 60 bare_bound
expect_eq "its PodGroup (owned by the ReplicaSet)" \
  "$(kubectl -n "$wns" get podgroup -o jsonpath='{.items[0].metadata.ownerReferences[0].kind}')" "ReplicaSet"

# Close the queue (a Command the queue controller consumes).
kubectl create -f - >/dev/null <<CMD
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata: {generateName: rbac-e2e-close-, namespace: default}
action: CloseQueue
target: {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, name: rbac-e2e, uid: "$(kubectl get queue rbac-e2e -o jsonpath='{.metadata.uid}')"}
CMD
wait_for "queue rbac-e2e Closed by a CloseQueue Command" 30 q_state Closed

# ---- the verdict ----------------------------------------------------------------------------
for key in admission-a controllers-a scheduler-a; do
  kill -0 "${SUITE_PID[$key]}" 2>/dev/null && pass "$key still running" || fail "$key exited"
done
expect_eq "events written by the components (Scheduled, by vc-scheduler)" \
  "$(kubectl -n "$wns" get events --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.source.component}{"\n"}{end}' | sort -u)" "vc-scheduler"
denied=$(suite_forbidden)
expect_eq "403 answers in the components' logs" "$denied" ""
