#!/usr/bin/env bash
# The jobflow controller and webhook against a real API server (about 40 s):
#   - three JobTemplates a, b, c and a JobFlow "wf": b depends on a, c on b and a. The Jobs
#     wf-a, wf-b, wf-c are created in that order, each only once its targets are Completed
#     (pods finish in KWOK through basalt.dev/run-for), with the createdByJobTemplate label and
#     an owner reference to the flow; the flow ends Succeed with completedJobs listing the
#     three Jobs, and `kubectl get jf` shows it; each template's jobDependsOnList names its Job;
#   - a SIGKILL of the controller manager mid-flow makes no duplicate Job;
#   - jobRetainPolicy delete: a Succeed flow's Jobs are deleted;
#   - the webhook refuses a cycle, an unknown target and a probe, naming the field.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../webhook/lib.sh"

install_crds
on_exit_flow() {
  local rc=$?
  webhook_stop
  (exit "$rc")
  controllers_on_exit
}
trap on_exit_flow EXIT
webhook_start
cm_start
ns=$(new_namespace ctrl-flow)
scheduler_start "$ns"

template() { # NAME RUN_FOR
  cat <<T
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: $1, namespace: $ns}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: main
    replicas: 1
    template:
      metadata: {annotations: {basalt.dev/run-for: "$2"}}
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
T
}
for t in a b c; do template "$t" 3s | kubectl apply -f - >/dev/null; done
expect_eq "JobTemplates by short name" "$(kubectl -n "$ns" get jt -o name | sort | tr '\n' ' ')" \
  "jobtemplate.flow.volcano.sh/a jobtemplate.flow.volcano.sh/b jobtemplate.flow.volcano.sh/c "

kubectl apply -f - >/dev/null <<F
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: wf, namespace: $ns}
spec:
  jobRetainPolicy: retain
  flows:
  - name: a
  - name: b
    dependsOn: {targets: [a]}
  - name: c
    dependsOn: {targets: [b, a]}
F
flow_uid=$(kubectl -n "$ns" get jf wf -o jsonpath='{.metadata.uid}')

# Poll: when a Job first appears, record the phases of its targets at that moment.
declare -A first_seen=()
phase() { job_field "$ns" "$1" .status.state.phase || true; }
killed=""
deadline=$((SECONDS + 90))
while ((SECONDS < deadline)); do
  for j in wf-a wf-b wf-c; do
    [[ -n ${first_seen[$j]:-} ]] && continue
    if kubectl -n "$ns" get vcjob "$j" >/dev/null 2>&1; then
      first_seen[$j]="a=$(phase wf-a) b=$(phase wf-b)"
    fi
  done
  # Once wf-b exists, kill the controller manager and start it again.
  if [[ -z $killed && -n ${first_seen[wf-b]:-} ]]; then
    cm_stop KILL || true
    cm_start
    killed=yes
  fi
  [[ $(kubectl -n "$ns" get jf wf -o jsonpath='{.status.state.phase}' 2>/dev/null) == Succeed ]] && break
  sleep 0.5
done
expect_eq "wf-a created first (no targets), before wf-b" "${first_seen[wf-a]##* }" "b="
expect_contains "wf-b created once wf-a was Completed" "${first_seen[wf-b]:-none}" "a=Completed"
expect_contains "wf-c created once wf-a and wf-b were Completed" "${first_seen[wf-c]:-none}" "a=Completed b=Completed"
expect_eq "flow phase" "$(kubectl -n "$ns" get jf wf -o jsonpath='{.status.state.phase}')" "Succeed"
expect_eq "completedJobs" "$(kubectl -n "$ns" get jf wf -o jsonpath='{.status.completedJobs}')" '["wf-a","wf-b","wf-c"]'
expect_eq "pending/running/failed lists empty" \
  "$(kubectl -n "$ns" get jf wf -o jsonpath='{.status.pendingJobs}{.status.runningJobs}{.status.failedJobs}{.status.unKnowJobs}')" "[][][][]"
expect_eq "jobStatusList names and states" \
  "$(kubectl -n "$ns" get jf wf -o jsonpath='{range .status.jobStatusList[*]}{.name}={.state} {end}')" \
  "wf-a=Completed wf-b=Completed wf-c=Completed "
expect_eq "conditions by Job" "$(kubectl -n "$ns" get jf wf -o jsonpath='{.status.conditions.wf-c.phase}')" "Completed"
expect_eq "exactly three Jobs after the SIGKILL" "$(kubectl -n "$ns" get vcjob --no-headers | wc -l | tr -d ' ')" "3"
expect_eq "wf-b label" "$(kubectl -n "$ns" get vcjob wf-b -o jsonpath='{.metadata.labels.volcano\.sh/createdByJobTemplate}')" "$ns.b"
expect_eq "wf-b owner" "$(kubectl -n "$ns" get vcjob wf-b -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}')" "JobFlow/wf/$flow_uid/true"
cols=$(kubectl -n "$ns" get jf wf | sed -n 1p | tr -s ' ')
expect_eq "kubectl get jf columns" "$cols" "NAME STATUS AGE"
expect_eq "kubectl get jf status" "$(kubectl -n "$ns" get jf wf --no-headers | awk '{print $2}')" "Succeed"
wait_for "template b lists wf-b (jobDependsOnList)" 20 \
  bash -c "[[ \$(kubectl -n $ns get jt b -o jsonpath='{.status.jobDependsOnList}') == '[\"wf-b\"]' ]]"

# --- jobRetainPolicy delete -----------------------------------------------------------------
kubectl apply -f - >/dev/null <<F
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: wf2, namespace: $ns}
spec:
  jobRetainPolicy: delete
  flows:
  - name: a
F
wait_for "wf2 Succeed" 60 bash -c "[[ \$(kubectl -n $ns get jf wf2 -o jsonpath='{.status.state.phase}') == Succeed ]]"
wait_for "wf2-a deleted (jobRetainPolicy delete)" 30 bash -c "! kubectl -n $ns get vcjob wf2-a"
expect_eq "wf's Jobs kept (retain)" "$(kubectl -n "$ns" get vcjob -o name | sort | tr '\n' ' ')" \
  "job.batch.volcano.sh/wf-a job.batch.volcano.sh/wf-b job.batch.volcano.sh/wf-c "

# --- admission ------------------------------------------------------------------------------
refused() { # WHAT NEEDLE FLOWS_YAML
  local out
  if out=$(kubectl apply -f - 2>&1 <<F
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: bad, namespace: $ns}
spec:
  flows:
$3
F
  ); then fail "$1: applied"; else expect_contains "$1 refused" "$out" "$2"; fi
}
refused "a cycle" "spec.flows: Invalid value: jobflow flow is not dag: a depends on itself through dependsOn.targets (a -> b -> a)" \
"  - {name: a, dependsOn: {targets: [b]}}
  - {name: b, dependsOn: {targets: [a]}}"
refused "an unknown target" 'spec.flows[0].dependsOn.targets[0]: Not found: "x"' \
"  - {name: a, dependsOn: {targets: [x]}}"
refused "a probe" "spec.flows[0].dependsOn.probe: Forbidden: probes" \
"  - {name: a, dependsOn: {probe: {tcpSocketList: [{port: 80}]}}}"
refused "a duplicate flow" 'spec.flows[1].name: Duplicate value: "a"' \
"  - {name: a}
  - {name: a}"

kubectl -n "$ns" delete jf wf >/dev/null
wait_for "the flow's Jobs go with it (owner reference)" 60 bash -c "[[ -z \$(kubectl -n $ns get vcjob -o name) ]]"
