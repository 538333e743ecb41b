#!/usr/bin/env bash
# Job volumes as a user sees them with kubectl: a spec.volumes entry with a volumeClaim gets a
# PersistentVolumeClaim owned by the Job, its generated name is written back into
# spec.volumes[].volumeClaimName, every pod carries the volume mounted at mountPath, and
# deleting the Job deletes the claim (ownerReference garbage collection). A volume naming a
# claim that does not exist keeps the job Pending with PVCError until the claim is created.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace ctrl-vol)
BASALT_E2E_SCHEDULER=fake scheduler_start "$ns"

kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: ckpt, namespace: $ns}
spec:
  schedulerName: volcano
  queue: default
  minAvailable: 2
  volumes:
  - mountPath: /checkpoints
    volumeClaim:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
  tasks:
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
JOB
job_uid=$(job_field "$ns" ckpt .metadata.uid)
claim_named() { [[ $(job_field "$ns" ckpt '.spec.volumes[0].volumeClaimName') == ckpt-pvc-* ]]; }
wait_for "generated claim name written back into spec.volumes[0].volumeClaimName" 20 claim_named
pvc=$(job_field "$ns" ckpt '.spec.volumes[0].volumeClaimName')
if [[ $pvc =~ ^ckpt-pvc-[0-9a-z]{12}$ ]]; then pass "claim name $pvc is <job>-pvc-<12 chars>"; else fail "claim name '$pvc'"; fi
expect_eq "PVC owner" "$(kubectl -n "$ns" get pvc "$pvc" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}')" "Job/ckpt/$job_uid/true"
expect_eq "PVC request" "$(kubectl -n "$ns" get pvc "$pvc" -o jsonpath='{.spec.resources.requests.storage}/{.spec.accessModes[0]}')" "1Gi/ReadWriteOnce"
controlled() { [[ $(kubectl -n "$ns" get vcjob ckpt -o json | jq -r --arg k "volume-pvc-$pvc" '.status.controlledResources[$k]') == "$pvc" ]]; }
wait_for "status.controlledResources[volume-pvc-$pvc]" 20 controlled
two_pods() { [[ $(pod_count "$ns" ckpt) == 2 ]]; }
wait_for "2 pods" 30 two_pods
for p in ckpt-worker-0 ckpt-worker-1; do
  vol=$(kubectl -n "$ns" get pod $p -o jsonpath="{.spec.volumes[?(@.persistentVolumeClaim.claimName==\"$pvc\")].name}")
  [[ -n $vol ]] && pass "$p has a volume for claim $pvc ($vol)" || fail "$p has no volume for claim $pvc"
  expect_eq "$p mount" "$(kubectl -n "$ns" get pod $p -o jsonpath="{.spec.containers[0].volumeMounts[?(@.name==\"$vol\")].mountPath}")" "/checkpoints"
done

kubectl -n "$ns" delete vcjob ckpt --wait=false >/dev/null
pvc_gone() { ! kubectl -n "$ns" get pvc "$pvc" >/dev/null 2>&1; }
wait_for "deleting the Job deletes the PVC (garbage collection)" 90 pvc_gone

# A volume that names a claim without volumeClaim: the claim must exist.
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: shared, namespace: $ns}
spec:
  schedulerName: volcano
  queue: default
  minAvailable: 1
  volumes: [{mountPath: /data, volumeClaimName: shared-data}]
  tasks:
  - name: worker
    replicas: 1
    template: {spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}}
JOB
pvc_error() { [[ $(job_field "$ns" shared .status.state.reason) == PVCError ]]; }
wait_for "missing claim: PVCError in the status" 20 pvc_error
expect_eq "missing claim message" "$(job_field "$ns" shared .status.state.message)" "pvc shared-data is not found, the job will be in the Pending state until the PVC is created"
expect_eq "missing claim phase" "$(job_field "$ns" shared .status.state.phase)" "Pending"
kubectl apply -f - >/dev/null <<PVC
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shared-data, namespace: $ns}
spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 1Gi}}}
PVC
# The job is retried with backoff (no PVC informer): within a few seconds it goes on.
shared_on() { [[ -z $(job_field "$ns" shared .status.state.reason) ]] && [[ $(pod_count "$ns" shared) == 1 ]]; }
wait_for "once the claim exists the job gets its pod" 60 shared_on
expect_eq "pod mounts the named claim" "$(kubectl -n "$ns" get pod shared-worker-0 -o jsonpath='{.spec.volumes[?(@.persistentVolumeClaim.claimName=="shared-data")].persistentVolumeClaim.claimName}')" "shared-data"
