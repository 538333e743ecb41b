#!/usr/bin/env bash
# The ray and hcclrank job plugins against a real API server, as kubectl shows what they write:
#   - ray (with svc, as the webhook adds it): a Service <job>-head selecting the head task with
#     ports gcs 6379, dashboard 8265, client-server 10001 (targetPort by name), owned by the
#     Job; the head container's containerPorts and `ray start --head` command; the workers'
#     `ray start --address=<head pod DNS name>:6379`; svc's headless Service <job> next to it;
#     the job runs; a RestartJob kill deletes the head Service (OnJobDelete) and re-creates it;
#   - hcclrank: the hccl/rankIndex annotation of every master and worker pod (0, then masters
#     + index); the job completes.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace ctrl-plugins)
scheduler_start "$ns"

kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: rc, namespace: $ns}
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins: {ray: [], svc: []}
  tasks:
  - name: head
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: head, image: rayproject/ray:2.9.0, command: [original]}
        - {name: sidecar, image: busybox}
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers: [{name: worker, image: rayproject/ray:2.9.0}]
JOB
wait_for "ray job Running" 60 job_phase_is "$ns" rc Running
job_uid=$(job_field "$ns" rc .metadata.uid)
svc_exists() { kubectl -n "$ns" get service rc-head >/dev/null 2>&1; }
wait_for "Service rc-head created" 20 svc_exists
expect_eq "rc-head ports" "$(kubectl -n "$ns" get service rc-head -o jsonpath='{range .spec.ports[*]}{.name}:{.port}:{.targetPort}:{.protocol} {end}')" \
  "gcs:6379:gcs:TCP dashboard:8265:dashboard:TCP client-server:10001:client-server:TCP "
expect_eq "rc-head selector" "$(kubectl -n "$ns" get service rc-head -o jsonpath='{.spec.selector.volcano\.sh/job-name},{.spec.selector.volcano\.sh/task-spec}')" "rc,head"
expect_eq "rc-head owner" "$(kubectl -n "$ns" get service rc-head -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].uid}')" "Job/$job_uid"
expect_eq "svc's headless Service rc" "$(kubectl -n "$ns" get service rc -o jsonpath='{.spec.clusterIP}')" "None"
expect_eq "head container ports" "$(kubectl -n "$ns" get pod rc-head-0 -o jsonpath='{range .spec.containers[?(@.name=="head")].ports[*]}{.name}={.containerPort} {end}')" \
  "gcs=6379 dashboard=8265 client-server=10001 "
expect_eq "head command" "$(kubectl -n "$ns" get pod rc-head-0 -o jsonpath='{.spec.containers[?(@.name=="head")].command}')" \
  '["sh","-c","ray start --head --block --dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 --ray-client-server-port=10001"]'
expect_eq "the head pod's sidecar is left alone" "$(kubectl -n "$ns" get pod rc-head-0 -o jsonpath='{.spec.containers[?(@.name=="sidecar")].command}')" ""
expect_eq "worker command" "$(kubectl -n "$ns" get pod rc-worker-1 -o jsonpath='{.spec.containers[0].command}')" \
  '["sh","-c","ray start --block --address=rc-head-0.rc:6379"]'
expect_eq "head pod hostname.subdomain (svc)" "$(kubectl -n "$ns" get pod rc-head-0 -o jsonpath='{.spec.hostname}.{.spec.subdomain}')" "rc-head-0.rc"
expect_eq "controlledResources" "$(job_field "$ns" rc '.status.controlledResources.plugin-ray')" "ray"

# --- hcclrank ------------------------------------------------------------------------------------
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: hc, namespace: $ns}
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins: {hcclrank: []}
  tasks:
  - name: master
    replicas: 1
    template:
      metadata: {annotations: {basalt.dev/run-for: 3s}}
      spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
  - name: worker
    replicas: 2
    template:
      metadata: {annotations: {basalt.dev/run-for: 3s}}
      spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
JOB
three_pods() { [[ $(pod_count "$ns" hc) == 3 ]]; }
wait_for "hcclrank job's pods" 60 three_pods
expect_eq "hccl/rankIndex of master-0, worker-0, worker-1" \
  "$(for p in hc-master-0 hc-worker-0 hc-worker-1; do kubectl -n "$ns" get pod $p -o jsonpath='{.metadata.annotations.hccl/rankIndex} '; done)" "0 1 2 "
wait_for "hcclrank job Completed" 60 job_phase_is "$ns" hc Completed

# --- ray: a whole-job restart runs OnJobDelete (head Service deleted) then OnJobAdd again ------------
old_svc_uid=$(kubectl -n "$ns" get service rc-head -o jsonpath='{.metadata.uid}')
kubectl apply -f - >/dev/null <<CMD
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata: {name: rc-restart, namespace: $ns}
action: RestartJob
target: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: rc, uid: "$job_uid"}
CMD
new_svc() {
  local uid
  uid=$(kubectl -n "$ns" get service rc-head -o jsonpath='{.metadata.uid}' 2>/dev/null)
  [[ -n $uid && $uid != "$old_svc_uid" ]]
}
wait_for "the head Service is re-created after RestartJob" 60 new_svc
wait_for "ray job Running again" 60 job_phase_is "$ns" rc Running
