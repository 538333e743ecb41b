#!/usr/bin/env bash
# Hierarchical queues as a user sees them, with the controllers, the scheduler and the webhook
# running: the queue controller creates the `root` queue and re-creates it when it is deleted
# (possible only while no webhook guards it), a queue created without spec.parent gets parent
# root, a tree org-a -> team-1/team-2 is accepted, trees whose children's guarantees exceed
# the parent's or that form a cycle are refused with the webhook's message, a Job in the
# non-leaf org-a is refused, a weight-1 and a weight-3 queue asking for every GPU show
# status.deserved of a quarter and three quarters of them (proportion), `kubectl get queue`
# shows PARENT / ALLOCATED-GPU / DESERVED-GPU (status.deserved),
# a queue's status counts follow its PodGroups through Pending, Inqueue, Running and Completed,
# and a waiting PodGroup shows its position in its queue (QueuePosition condition).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"
# shellcheck source=../webhook/lib.sh
source "$(dirname "$0")/../webhook/lib.sh"

sfx=$RANDOM
org=org-a-$sfx t1=team-1-$sfx t2=team-2-$sfx flat=flat-$sfx w1=w1-$sfx w3=w3-$sfx
WEBHOOK_ON=""
on_exit() {
  local rc=$?
  set +e
  [[ -n $WEBHOOK_ON ]] && webhook_stop
  kubectl delete vcjob -n "$ns" --all --wait=false >/dev/null 2>&1
  kubectl delete podgroup -n "$ns" --all --wait=false >/dev/null 2>&1
  kubectl delete queue "$t1" "$t2" "$flat" "$w1" "$w3" bad-$sfx loop-$sfx --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete queue "$org" --ignore-not-found --wait=false >/dev/null 2>&1
  (exit "$rc")
  controllers_on_exit
}

install_crds
ns=$(new_namespace qtree)
trap on_exit EXIT
cm_start
scheduler_start "$ns"

queue_field() { kubectl get queue "$1" -o jsonpath="{$2}" 2>/dev/null; }
has_queue() { kubectl get queue "$1" >/dev/null 2>&1; }
field_is() { [[ $(queue_field "$1" "$2") == "$3" ]]; }

# --- root: created, kept, restored ---------------------------------------------------------
wait_for "the queue controller creates the root queue" 30 has_queue root
expect_eq "root is not reclaimable, weight 1, no parent" \
  "$(queue_field root '.spec.reclaimable')/$(queue_field root '.spec.weight')/$(queue_field root '.spec.parent')" "false/1/"
expect_eq "root has no capability of its own (the scheduler treats it as the cluster)" \
  "$(queue_field root '.spec.capability')" ""
wait_for "root is Open" 20 field_is root .status.state Open
old_uid=$(queue_field root .metadata.uid)
kubectl delete queue root --wait=true --timeout=20s >/dev/null
new_root() { has_queue root && [[ $(queue_field root .metadata.uid) != "$old_uid" ]]; }
wait_for "a deleted root queue is re-created" 30 new_root
kubectl patch queue root --subresource=status --type=merge -p '{"status":{"state":"Closed"}}' >/dev/null
wait_for "root set to Closed is put back to Open" 20 field_is root .status.state Open

# --- a queue created without the webhook still gets parent root (the controller) ------------
kubectl apply -f - >/dev/null <<Q
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $flat}
spec: {weight: 1}
Q
wait_for "the controller sets parent root on a parentless queue" 20 field_is "$flat" .spec.parent root

# --- status.deserved: a weight-only pair shares the cluster's GPUs 1:3 (proportion) ------------
# Both queues ask for every GPU of the cluster (pods of one node's GPUs each), and no other queue
# has work or a guarantee yet: proportion's water-filling gives them total/4 and 3*total/4.
total=0 per_node=0
for n in $(kubectl get nodes -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}'); do
  total=$((total + n))
  ((n > per_node)) && per_node=$n
done
pair_pods() { # queue: a PodGroup and total/per_node pods of per_node GPUs each
  local i
  cat <<PG
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pair-$1, namespace: $ns}
spec: {minMember: 1, queue: $1}
PG
  for ((i = 0; i < total / per_node; i++)); do
    cat <<POD
---
apiVersion: v1
kind: Pod
metadata:
  name: pair-$1-$i
  namespace: $ns
  annotations: {scheduling.k8s.io/group-name: pair-$1, basalt.dev/run-for: 1h}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: 100m}, limits: {nvidia.com/gpu: "$per_node"}}}
POD
  done
}
if ((total % 4 != 0 || per_node == 0)); then
  fail "the weight pair needs a GPU total divisible by 4 (have $total, $per_node per node)"
else
  kubectl apply -f - >/dev/null <<Q
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $w1}
spec: {weight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $w3}
spec: {weight: 3}
Q
  { pair_pods "$w1"; echo ---; pair_pods "$w3"; } | kubectl create -f - >/dev/null
  wait_for "weight-1 queue's status.deserved is a quarter of $total GPUs" 30 \
    field_is "$w1" '.status.deserved.nvidia\.com/gpu' "$((total / 4))"
  wait_for "weight-3 queue's status.deserved is three quarters of $total GPUs" 30 \
    field_is "$w3" '.status.deserved.nvidia\.com/gpu' "$((total * 3 / 4))"
  expect_eq "no guarantee written for queues without one" "$(queue_field "$w1" .status.guarantee)" ""
  # Read while the pair still asks for the GPUs: once its pods are gone, proportion writes the
  # shares of queues without work (0 for the weight-1 queue) within a cycle or two.
  pair_table=$(kubectl get queue)
  kubectl delete pods,podgroups -n "$ns" --all --wait=false >/dev/null 2>&1
  pods_gone() { [[ -z $(kubectl get pods -n "$ns" -o name 2>/dev/null) ]]; }
  wait_for "the pair's pods are gone" 60 pods_gone
fi

webhook_start
WEBHOOK_ON=1

refused() { # name expected-message yaml
  local out
  local rc=0
  out=$(kubectl create -f - 2>&1 <<<"$3") || rc=$?
  if [[ $rc -ne 0 && $out == *"$2"* ]]; then pass "$1 refused: $2"; else fail "$1: expected refusal with '$2', got: $out"; fi
}
queue() { # name parent guarantee-gpu deserved-gpu capability-gpu
  cat <<Q
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec:
  weight: 1
  ${2:+parent: $2}
  guarantee: {resource: {nvidia.com/gpu: "$3"}}
  deserved: {nvidia.com/gpu: "$4"}
  capability: {nvidia.com/gpu: "$5"}
Q
}

out=$(kubectl delete queue root 2>&1) || true
expect_contains "deleting root is refused by the webhook" "$out" '`root` queue can not be deleted'

# --- the webhook defaults the parent, accepts a valid tree, refuses invalid ones ----------------
queue "$org" "" 8 32 40 | kubectl create -f - >/dev/null
expect_eq "a queue created without parent gets parent root (webhook)" "$(queue_field "$org" .spec.parent)" root
queue "$t1" "$org" 4 16 32 | kubectl create -f - >/dev/null
queue "$t2" "$org" 4 16 32 | kubectl create -f - >/dev/null
expect_eq "team queues are children of org-a" "$(queue_field "$t1" .spec.parent) $(queue_field "$t2" .spec.parent)" "$org $org"
refused "a third team over org-a's guarantee" \
  "the children of queue \`$org\` may together have at most its guarantee[nvidia.com/gpu]=8; this queue's 1 plus its siblings' 8 is 9" \
  "$(queue "bad-$sfx" "$org" 1 1 32)"
refused "a third team over org-a's deserved" \
  "the children of queue \`$org\` may together have at most its deserved[nvidia.com/gpu]=32; this queue's 1 plus its siblings' 32 is 33" \
  "$(queue "bad-$sfx" "$org" 0 1 32)"
refused "a child capability over org-a's" \
  "capability[nvidia.com/gpu]=41 must be <= capability[nvidia.com/gpu]=40 of ancestor queue \`$org\`" \
  "$(queue "bad-$sfx" "$org" 0 0 41)"
out=$(kubectl patch queue "$org" --type=merge -p "{\"spec\":{\"parent\":\"$t1\"}}" 2>&1) || true
expect_contains "moving org-a under its own child (a cycle) is refused" "$out" \
  "spec.parent: queue hierarchy through \`$org\` forms a cycle"
out=$(kubectl patch queue "$org" --type=merge -p '{"spec":{"guarantee":{"resource":{"nvidia.com/gpu":"7"}}}}' 2>&1) || true
expect_contains "lowering org-a's guarantee below its children's is refused" "$out" \
  "guarantee[nvidia.com/gpu]=7 must be >= the sum of its child queues' guarantee[nvidia.com/gpu]=8"
out=$(kubectl delete queue "$org" 2>&1) || true
expect_contains "deleting a queue with children is refused" "$out" \
  "queue $org can not be deleted because it has 2 child queues: $t1, $t2"

job() { # name queue run-for cpu
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  minAvailable: 1
  schedulerName: volcano
  queue: $2
  tasks:
  - name: worker
    replicas: 1
    template:
      metadata:
        annotations: {"basalt.dev/run-for": "$3"}
      spec:
        restartPolicy: Never
        containers:
        - {name: main, image: busybox, resources: {requests: {cpu: "$4"}}}
JOB
}
refused "a Job in the non-leaf org-a" "can only submit job to leaf queue, queue \`$org\` has 2 child queues" \
  "$(job in-org "$org" 1s 100m)"

# --- kubectl get queue columns -------------------------------------------------------------------
t=$(kubectl get queue)
hdr=$(head -n 1 <<<"$t" | tr -s ' ')
expect_eq "kubectl get queue columns" "$hdr" "NAME STATE WEIGHT PARENT ALLOCATED-GPU DESERVED-GPU CAPABILITY-GPU AGE"
# The cell of row $2, column $3, cut at the header's offsets (empty cells stay empty).
cell() {
  awk -v row="$2" -v col="$3" '
    NR == 1 {
      n = 0; pos = 1
      while (match(substr($0, pos), /[^ ]+/)) {
        n++; start[n] = pos + RSTART - 1; name[n] = substr($0, start[n], RLENGTH)
        pos = start[n] + RLENGTH
      }
      for (i = 1; i <= n; i++) if (name[i] == col) c = i
      next
    }
    $1 == row && c {
      v = (c < n) ? substr($0, start[c], start[c + 1] - start[c]) : substr($0, start[c])
      gsub(/^ +| +$/, "", v); print v; exit
    }' <<<"$1"
}
expect_eq "team-1's PARENT" "$(cell "$t" "$t1" PARENT)" "$org"
expect_eq "weight-1 queue's DESERVED-GPU (status.deserved)" "$(cell "${pair_table:-}" "$w1" DESERVED-GPU)" "$((total / 4))"
expect_eq "weight-3 queue's DESERVED-GPU (status.deserved)" "$(cell "${pair_table:-}" "$w3" DESERVED-GPU)" "$((total * 3 / 4))"
expect_eq "team-1's DESERVED-GPU is empty (no work, so proportion wrote none)" "$(cell "$t" "$t1" DESERVED-GPU)" ""
expect_eq "team-1's CAPABILITY-GPU" "$(cell "$t" "$t1" CAPABILITY-GPU)" "32"
expect_eq "root's PARENT is empty" "$(cell "$t" root PARENT)" ""

# --- status counts follow a job ------------------------------------------------------------------
job stuck "$t1" 1h 10000 | kubectl create -f - >/dev/null
wait_for "team-1 counts the unplaceable job's PodGroup as pending" 30 field_is "$t1" .status.pending 1
job quick "$t1" 4s 100m | kubectl create -f - >/dev/null
wait_for "team-1 counts the quick job's PodGroup as running" 30 field_is "$t1" .status.running 1
# A finished Job's PodGroup is deleted with its pods (as Volcano's job controller does), so the
# queue counts it Completed only for the moment between the scheduler's Completed write and that
# deletion: what stays is that it no longer counts as running, and that it is gone.
job_done() { [[ $(kubectl get vcjob quick -n "$ns" -o jsonpath='{.status.state.phase}') == Completed ]]; }
wait_for "the quick job completes" 60 job_done
pg_gone() { ! kubectl get podgroup quick -n "$ns" >/dev/null 2>&1; }
wait_for "its PodGroup is deleted with its pods" 30 pg_gone
wait_for "team-1 no longer counts it as running" 30 field_is "$t1" .status.running 0
wait_for "team-1 no longer counts it at all (its PodGroup is gone)" 30 field_is "$t1" .status.completed 0
# A PodGroup of the user's own (bare pods, no Job) stays once Completed: the queue counts it.
kubectl create -f - >/dev/null <<PG
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: bare, namespace: $ns}
spec: {minMember: 1, queue: $t1}
---
apiVersion: v1
kind: Pod
metadata:
  name: bare-0
  namespace: $ns
  annotations: {scheduling.k8s.io/group-name: bare, basalt.dev/run-for: 2s}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: 100m}}}
PG
bare_done() { [[ $(kubectl get podgroup bare -n "$ns" -o jsonpath='{.status.phase}') == Completed ]]; }
wait_for "the bare PodGroup is Completed once its pod has run" 60 bare_done
wait_for "team-1 counts a finished PodGroup as completed" 60 field_is "$t1" .status.completed 1
expect_eq "team-1 status after the run (pending running completed)" \
  "$(queue_field "$t1" .status.pending) $(queue_field "$t1" .status.running) $(queue_field "$t1" .status.completed)" "1 0 1"
expect_eq "team-2 untouched" "$(queue_field "$t2" .status.running)$(queue_field "$t2" .status.completed)" "00"

# --- inqueue, and a waiting job's position in its queue ------------------------------------------
# A PodGroup that enqueue admits (its minResources fit) whose pod fits no node (a nodeSelector no
# node matches) stays Inqueue: the queue counts it so, next to the unplaceable `stuck` (Pending).
kubectl create -f - >/dev/null <<PG
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: held, namespace: $ns}
spec: {minMember: 1, queue: $t1, minResources: {cpu: 100m}}
---
apiVersion: v1
kind: Pod
metadata:
  name: held-0
  namespace: $ns
  annotations: {scheduling.k8s.io/group-name: held}
spec:
  schedulerName: volcano
  restartPolicy: Never
  nodeSelector: {basalt.dev/no-such-label: "x"}
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: 100m}}}
PG
wait_for "team-1 counts the admitted but unplaceable PodGroup as inqueue" 30 field_is "$t1" .status.inqueue 1
expect_eq "team-1 status (pending inqueue running)" \
  "$(queue_field "$t1" .status.pending) $(queue_field "$t1" .status.inqueue) $(queue_field "$t1" .status.running)" "1 1 0"
expect_eq "held's phase" "$(kubectl get podgroup held -n "$ns" -o jsonpath='{.status.phase}')" Inqueue
# Both wait in team-1, in job order (older first): stuck is 1 of 2, held 2 of 2.
position() { kubectl get podgroup "$1" -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="QueuePosition")].message}'; }
positions_are() { [[ "$(position stuck) $(position held)" == "1/2 2/2" ]]; }
wait_for "the waiting PodGroups show their positions in team-1 (QueuePosition condition)" 40 positions_are
expect_eq "QueuePosition of stuck and held" "$(position stuck) $(position held)" "1/2 2/2"
kubectl delete pod held-0 -n "$ns" --wait=false >/dev/null
