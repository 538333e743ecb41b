#!/usr/bin/env bash
# Bare pods (no controller owner, schedulerName volcano, no group annotation) as a user sees
# them (issue 17): the scheduler places them through a shadow job of its cache, without waiting
# for a PodGroup.
#   1. With no controller running at all, bare pods are bound, and no PodGroup exists; each
#      pod names podgroup-<its uid> in its group annotation, set by its binding (vc-scheduler
#      --bare-pod-podgroups, default on: the API server copies a Binding's annotations to the
#      pod).
#   2. With the podgroup controller running (default --bare-pod-podgroups=true, Volcano's
#      behaviour), every bare pod is bound and gets PodGroup podgroup-<pod uid> and the group
#      annotation; the PodGroup ends Running with running 1 (the task moved into it, bound
#      once) and has no Scheduled event of its own (the pod has one). The pods of step 1 get
#      their PodGroups too.
#   3. With --bare-pod-podgroups=false (controller and scheduler), bare pods are bound and get
#      no PodGroup and no annotation.
#   4. A bare pod naming a Closed queue, or a queue that does not exist, is not bound and shows
#      PodScheduled=False.
#   5. A queue at its capability holds bare pods back, before and after their PodGroups arrive
#      (each PodGroup names the pod's queue; the pod is counted once, not once as a shadow job
#      and again in its PodGroup), and frees exactly one place when a bound pod goes.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

CM_BIN=${BASALT_BUILD_DIR:-$BASALT_REPO_ROOT/_output/build}/controllers/vc-controller-manager
CM_NAME="vc-controller-manager-e2e-$E2E_NAME"
CM_PID=""
[[ -x $CM_BIN ]] || { fail "vc-controller-manager not built: $CM_BIN"; exit 1; }

cm_start() { # flags...: the podgroup controller only
  local port
  port=$(free_port)
  "$CM_BIN" --kubeconfig="$KUBECONFIG" --leader-elect=false --controllers=podgroup --create-default-queue=false \
    --health-addr="127.0.0.1:$port" --metrics-addr="127.0.0.1:$(free_port)" -v=2 "$@" \
    </dev/null >>"$CLUSTER_DIR/logs/$CM_NAME.log" 2>&1 &
  CM_PID=$!
  echo "$CM_PID" >"$CLUSTER_DIR/pids/$CM_NAME.pid"
  echo "$CM_BIN" >"$CLUSTER_DIR/pids/$CM_NAME.cmd"
  wait_for "vc-controller-manager ready (/readyz)" 30 curl -sf "http://127.0.0.1:$port/readyz"
}
cm_stop() {
  [[ -n $CM_PID ]] || return 0
  kill -TERM "$CM_PID" 2>/dev/null || true
  wait "$CM_PID" 2>/dev/null || true
  CM_PID=""
  rm -f "$CLUSTER_DIR/pids/$CM_NAME.pid" "$CLUSTER_DIR/pids/$CM_NAME.cmd"
}
bare_cleanup() {
  local rc=$?
  cm_stop
  (exit "$rc")
  sched_cleanup
}
trap bare_cleanup EXIT

# bare_pods NS PREFIX N [QUEUE]: N bare pods asking for 100m CPU.
bare_pods() {
  local ns=$1 prefix=$2 n=$3 queue=${4:-} i ann=""
  [[ -n $queue ]] && ann="scheduling.volcano.sh/queue-name: $queue"
  for ((i = 0; i < n; i++)); do
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $prefix-$i
  annotations: {$ann}
spec:
  schedulerName: volcano
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: 100m, memory: 64Mi}}}
YAML
  done | kubectl -n "$ns" apply -f - >/dev/null
}
podgroup_count() { kubectl -n "$1" get podgroups -o name | grep -c . || true; }
annotated_count() { # NS: pods carrying the group annotation
  kubectl -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.annotations.scheduling\.k8s\.io/group-name}{"\n"}{end}' |
    grep -c . || true
}
# Every pod's PodGroup is podgroup-<its uid> and Running.
podgroups_match_pods() {
  local ns=$1 uid name
  while read -r name uid; do
    [[ $(pg_phase "$ns" "podgroup-$uid" 2>/dev/null) == Running ]] || return 1
    [[ $(kubectl -n "$ns" get pod "$name" -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name}') == "podgroup-$uid" ]] || return 1
  done < <(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}')
}

apply_crds
# A queue of its own (named by the pods' scheduling.volcano.sh/queue-name), so that the
# shared cluster's default queue is left as it is.
q=bare-$RANDOM
make_queue "$q" 1
start_scheduler

# 1. No controller: the shadow path alone.
ns=$(new_namespace sched-bare)
start=$SECONDS
bare_pods "$ns" solo 10 "$q"
wait_for "10 bare pods bound with no controller running" 30 bound_is "$ns" 10
e2e_log "10 bare pods bound in $((SECONDS - start))s with no controller"
expect_eq "PodGroups made with no controller" "$(podgroup_count "$ns")" "0"
# The annotation rides on the binding (it used to be the controller's PATCH, so 0 here).
expect_eq "pods annotated by their binding with no controller" "$(annotated_count "$ns")" "10"
uid0=$(kubectl -n "$ns" get pod solo-0 -o jsonpath='{.metadata.uid}')
expect_eq "solo-0's group annotation" "$(kubectl -n "$ns" get pod solo-0 -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name}')" "podgroup-$uid0"
ev=$(kubectl -n "$ns" get events --field-selector involvedObject.name=solo-0,reason=Scheduled -o name | grep -c . || true)
if ((ev >= 1)); then pass "solo-0 has its Scheduled event"; else fail "solo-0 has no Scheduled event"; fi

# 2. Controller, default flag: PodGroups are still made, off the critical path.
cm_start
ns2=$(new_namespace sched-bare-pg)
bare_pods "$ns2" pg 10 "$q"
wait_for "10 bare pods bound with the podgroup controller running" 30 bound_is "$ns2" 10
wait_for "10 PodGroups podgroup-<uid>, Running, and the pods annotated" 30 podgroups_match_pods "$ns2"
expect_eq "PodGroups made (default --bare-pod-podgroups)" "$(podgroup_count "$ns2")" "10"
# Bound once: each pod's node never changes and no pod has a second Scheduled event.
twice=$(kubectl -n "$ns2" get events --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.involvedObject.name} {.count}{"\n"}{end}' |
  awk '$2 > 1 || seen[$1]++' | wc -l)
expect_eq "pods with more than one Scheduled event" "$twice" "0"
# What kubectl get podgroups shows: Running, one running pod, the queue.
running_queue() { kubectl -n "$ns2" get podgroups -o jsonpath='{range .items[*]}{.status.running} {.spec.queue}{"\n"}{end}' | sort | uniq -c | awk '{print $1, $2, $3}'; }
running_queue_is() { [[ $(running_queue) == "10 1 $q" ]]; }
wait_for "10 PodGroups with running 1 in queue $q" 30 running_queue_is
# A bare pod's PodGroup gets no Scheduled event (its pod's says the same).
pg_sched=$(kubectl -n "$ns2" get events --field-selector involvedObject.kind=PodGroup,reason=Scheduled -o name | grep -c . || true)
expect_eq "Scheduled events of bare pods' PodGroups" "$pg_sched" "0"
# The pods that were bound in step 1 before any PodGroup existed get theirs too.
wait_for "the pods of step 1 get their PodGroups once the controller runs" 30 bash -c "[[ \$(kubectl -n $ns get podgroups -o name | grep -c .) == 10 ]]"
cm_stop

# 3. Controller and scheduler with --bare-pod-podgroups=false: no PodGroup, no annotation.
stop_scheduler || fail "vc-scheduler did not exit 0 on SIGTERM"
start_scheduler --bare-pod-podgroups=false
cm_start --bare-pod-podgroups=false
ns3=$(new_namespace sched-bare-nopg)
bare_pods "$ns3" nopg 10 "$q"
wait_for "10 bare pods bound with --bare-pod-podgroups=false" 30 bound_is "$ns3" 10
sleep 2 # what the controller would have written by now
expect_eq "PodGroups made (--bare-pod-podgroups=false)" "$(podgroup_count "$ns3")" "0"
expect_eq "pods annotated (--bare-pod-podgroups=false)" "$(annotated_count "$ns3")" "0"
cm_stop
stop_scheduler || fail "vc-scheduler did not exit 0 on SIGTERM"
start_scheduler
# An invalid value is refused.
if "$CM_BIN" --kubeconfig="$KUBECONFIG" --bare-pod-podgroups=maybe >/dev/null 2>&1; then
  fail "--bare-pod-podgroups=maybe accepted"
else
  pass "--bare-pod-podgroups=maybe refused"
fi

# 4. Closed or missing queue: not bound by the shadow path.
closed=closed-$RANDOM
make_queue "$closed" 1
kubectl patch queue "$closed" --type merge --subresource status -p '{"status":{"state":"Closed"}}' >/dev/null
wait_for "queue $closed Closed" 10 bash -c "[[ \$(kubectl get queue $closed -o jsonpath='{.status.state}') == Closed ]]"
ns4=$(new_namespace sched-bare-q)
bare_pods "$ns4" closed 2 "$closed"
bare_pods "$ns4" missing 2 "no-such-queue-$RANDOM"
bare_pods "$ns4" open 2 "$q"
wait_for "the bare pods of the open queue bound" 30 bound_is "$ns4" 2
sleep 3 # several cycles
expect_eq "bare pods of a Closed queue bound" "$(bound_with_prefix "$ns4" closed-)" "0"
expect_eq "bare pods of a missing queue bound" "$(bound_with_prefix "$ns4" missing-)" "0"
unsched() { [[ $(kubectl -n "$ns4" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}') == False ]]; }
wait_for "closed-0 shows PodScheduled=False" 10 unsched closed-0
wait_for "missing-0 shows PodScheduled=False" 10 unsched missing-0
# The PodScheduled message names the queue as the reason, not the nodes.
sched_message() { kubectl -n "$ns4" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
expect_contains "closed-0's PodScheduled message" "$(sched_message closed-0)" "queue $closed is Closed: it admits no new jobs"
expect_contains "missing-0's PodScheduled message" "$(sched_message missing-0)" "does not exist"
expect_eq "bare pods of the open queue bound" "$(bound_with_prefix "$ns4" open-)" "2"

# 5. A queue at capability (300m CPU: three of the 100m pods) holds the other bare pods.
capq=cap-$RANDOM
make_queue "$capq" 1 "" 300m
ns5=$(new_namespace sched-bare-cap)
bare_pods "$ns5" cap 5 "$capq"
wait_for "3 of 5 bare pods bound in a queue capped at 300m CPU" 30 bound_is "$ns5" 3
sleep 3 # several cycles
expect_eq "bare pods bound beyond the queue's capability (shadow jobs)" "$(bound_count "$ns5")" "3"
cm_start
pg_queues() { kubectl -n "$ns5" get podgroups -o jsonpath='{range .items[*]}{.spec.queue}{"\n"}{end}' | sort | uniq -c | awk '{print $1, $2}'; }
pg_count_is() { [[ $(podgroup_count "$ns5") == "$1" ]]; }
wait_for "5 PodGroups made for the capped queue's pods" 30 pg_count_is 5
expect_eq "the PodGroups' queue" "$(pg_queues)" "5 $capq"
running_pgs() { kubectl -n "$ns5" get podgroups -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c '^Running$' || true; }
running_pgs_is() { [[ $(running_pgs) == "$1" ]]; }
wait_for "3 PodGroups Running (the bound pods)" 30 running_pgs_is 3
sleep 3 # several cycles with the PodGroups in place
expect_eq "bare pods bound beyond the queue's capability (PodGroups)" "$(bound_count "$ns5")" "3"
expect_eq "PodGroups Running in the capped queue" "$(running_pgs)" "3"
# One bound pod goes: exactly one waiting pod takes its place (counted once, not twice).
gone=$(kubectl -n "$ns5" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | awk 'NF == 2 {print $1; exit}')
kubectl -n "$ns5" delete pod "$gone" --grace-period=0 --force >/dev/null 2>&1
kubectl -n "$ns5" wait --for=delete "pod/$gone" --timeout=30s >/dev/null 2>&1 || true
wait_for "a waiting bare pod bound after $gone went" 30 bound_is "$ns5" 3
sleep 3
expect_eq "bare pods bound after one went (capability still held)" "$(bound_count "$ns5")" "3"
cm_stop

expect_no_oversubscription
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
