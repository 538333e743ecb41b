#!/usr/bin/env bash
# Restart safety: vc-controller-manager is SIGKILLed while it creates the pods of a 200-pod job;
# a new process converges on exactly 200 pods (deterministic names, AlreadyExists is success)
# and a Job status that counts them.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
ns=$(new_namespace ctrl-restart)
kubectl apply -f - >/dev/null <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: big, namespace: $ns}
spec:
  minAvailable: 200
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: 200
    template:
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox, resources: {requests: {cpu: 10m}}}]}
JOB
# A low API rate makes the creation take a few seconds, so the kill lands in the middle of it.
cm_start --kube-api-qps=40 --kube-api-burst=40
pg_exists() { kubectl -n "$ns" get podgroup big >/dev/null 2>&1; }
wait_for "PodGroup big created" 20 pg_exists
admit_podgroup "$ns" big
some_pods() { local n; n=$(pod_count "$ns" big); ((n >= 20)); }
wait_for "creation under way" 30 some_pods
cm_stop KILL || true
killed_at=$(pod_count "$ns" big)
e2e_log "SIGKILL with $killed_at of 200 pods created"
if ((killed_at < 200)); then pass "killed mid-creation ($killed_at/200)"; else fail "creation finished before the kill ($killed_at)"; fi

cm_start
all_pods() { [[ $(kubectl -n "$ns" get pods --no-headers 2>/dev/null | wc -l) == 200 ]]; }
wait_for "200 pods after the restart" 60 all_pods
sleep 3
expect_eq "exactly 200 pods (no duplicates, nothing extra)" "$(kubectl -n "$ns" get pods --no-headers | wc -l)" "200"
expect_eq "distinct pod names" "$(kubectl -n "$ns" get pods -o name | sort -u | wc -l)" "200"
expect_eq "pod names are the job's" "$(kubectl -n "$ns" get pods -o name | grep -vc '^pod/big-worker-' || true)" "0"
expect_eq "Job pending count" "$(job_field "$ns" big .status.pending)" "200"
expect_eq "no FailedCreate event" "$(kubectl -n "$ns" get events --field-selector reason=FailedCreate -o name | wc -l)" "0"
