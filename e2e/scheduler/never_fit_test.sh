#!/usr/bin/env bash
# One pod must not starve its queue (issue 11, defect 2): a pod requesting 9223372036854775807
# cpu and nvidia.com/gpu (with the PodGroup the podgroup controller makes for a bare pod) stays
# Pending, and its PodGroup condition, its PodScheduled condition and an event say that it can
# never be scheduled, naming the resource, the request and the largest node allocatable; gangs of
# the same queue, created before and after it, run.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-never-fit)
q=nf-$RANDOM
make_queue "$q" 1
start_scheduler

huge=9223372036854775807
{
  podgroup_yaml huge 1 "$q" "" "cpu: \"$huge\", nvidia.com/gpu: \"$huge\""
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: huge
  annotations: {scheduling.k8s.io/group-name: huge}
  labels: {volcano.sh/job-name: huge}
spec:
  schedulerName: volcano
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "$huge", nvidia.com/gpu: "$huge"}
      limits: {nvidia.com/gpu: "$huge"}
YAML
} | kubectl -n "$ns" apply -f - >/dev/null
make_gang "$ns" a 2 1 "$q"
wait_for "gang a of the same queue bound" 30 bound_is "$ns" 2 a

explained() { [[ $(pg_condition_message "$ns" huge Unschedulable) == *"can never be scheduled"* ]]; }
wait_for "the huge pod's PodGroup says it can never be scheduled" 20 explained
msg=$(pg_condition_message "$ns" huge Unschedulable)
e2e_log "huge: $msg"
largest_cpu=$(kubectl get nodes -o jsonpath='{range .items[*]}{.status.allocatable.cpu}{"\n"}{end}' | sort -n | tail -n 1)
expect_contains "PodGroup condition" "$msg" "pod $ns/huge can never be scheduled: it requests cpu 9223372036854775807m or more, more than the largest allocatable of any node ($largest_cpu)"
pod_msg=$(kubectl -n "$ns" get pod huge -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
expect_contains "pod PodScheduled condition" "$pod_msg" "can never be scheduled"
expect_eq "huge pod bound" "$(kubectl -n "$ns" get pod huge -o jsonpath='{.spec.nodeName}')" ""
expect_eq "huge PodGroup phase" "$(pg_phase "$ns" huge)" "Pending"
has_event() {
  kubectl -n "$ns" get events --field-selector involvedObject.name=huge,reason=Unschedulable \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -q "can never be scheduled"
}
wait_for "an Unschedulable event on the huge PodGroup" 15 has_event

# A gang created after the huge pod is not held by it either.
make_gang "$ns" b 4 1 "$q"
wait_for "gang b, created after the huge pod, bound" 30 bound_is "$ns" 4 b
wait_for "PodGroup b Running" 15 pg_phase_is "$ns" b Running
expect_eq "huge pod still unbound" "$(kubectl -n "$ns" get pod huge -o jsonpath='{.spec.nodeName}')" ""
expect_no_oversubscription
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
