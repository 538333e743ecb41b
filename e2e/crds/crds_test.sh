#!/usr/bin/env bash
# The CRDs in crds/ against a real API server, as a user sees them:
#   - they install idempotently (server-side apply) and become Established, structurally valid;
#   - Volcano YAML (the shared examples, verbatim copies in testdata/, and the policy and
#     node-group snippets placed where users put them) applies unchanged, without warnings;
#   - schema defaults are filled in, pod templates are kept as written;
#   - `kubectl get` shows the printer columns (and -o wide the extra ones);
#   - `kubectl explain` prints the field descriptions;
#   - invalid objects are rejected by the schema with a message naming the field.
# Needs only the API server: no Basalt component has to run (statuses are written through the
# status subresource by the test itself).
# shellcheck source=../lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"

CRDS_DIR=$BASALT_REPO_ROOT/crds
TESTDATA=$(cd "$(dirname "$0")" && pwd)/testdata
CRDS=(jobs.batch.volcano.sh queues.scheduling.volcano.sh podgroups.scheduling.volcano.sh
  commands.bus.volcano.sh cronjobs.batch.volcano.sh jobflows.flow.volcano.sh
  jobtemplates.flow.volcano.sh)

# Cluster-scoped objects this test created (deleted at the end; namespaces go through testlib).
CREATED_CLUSTER_OBJECTS=()
cleanup_cluster_objects() {
  local o
  for o in "${CREATED_CLUSTER_OBJECTS[@]}"; do
    kubectl delete "$o" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  done
}
# Run our cleanup, then testlib's e2e_finish, which reads the original exit status from $?.
on_exit() {
  local rc=$?
  cleanup_cluster_objects
  set +e
  (exit "$rc")
  e2e_finish
}
trap on_exit EXIT

# remember_if_new TYPE/NAME: the cluster-scoped object is deleted at the end unless it existed
# before the test. (Call it directly, not in $(...), or the record is lost with the subshell.)
remember_if_new() {
  kubectl get "$1" >/dev/null 2>&1 || CREATED_CLUSTER_OBJECTS+=("$1")
}

# cell TABLE ROW COLUMN: the COLUMN cell of the row whose NAME is ROW in `kubectl get` output.
# Cells are cut at the header's column offsets, so empty cells come out empty.
cell() {
  awk -v row="$2" -v col="$3" '
    NR == 1 {
      n = 0; pos = 1
      while (match(substr($0, pos), /[^ ]+/)) {
        n++; start[n] = pos + RSTART - 1; name[n] = substr($0, start[n], RLENGTH)
        pos = start[n] + RLENGTH
      }
      for (i = 1; i <= n; i++) if (name[i] == col) c = i
      if (!c) { print "<no column " col ">"; exit }
      next
    }
    $1 == row {
      v = (c < n) ? substr($0, start[c], start[c + 1] - start[c]) : substr($0, start[c])
      gsub(/^ +| +$/, "", v); print v; exit
    }' <<<"$1"
}
header() { head -n 1 <<<"$1" | tr -s ' '; }

# expect_rejected WHAT FIELD MESSAGE_PART YAML: a server-side dry-run create of YAML must fail
# with a message that names FIELD and contains MESSAGE_PART.
expect_rejected() {
  local what=$1 field=$2 part=$3 out
  if out=$(kubectl create --dry-run=server -f - 2>&1 <<<"$4"); then
    fail "$what: expected the API server to reject it, but it was accepted: $out"
    return
  fi
  if [[ $out == *"$field"* && $out == *"$part"* ]]; then
    pass "$what rejected naming $field"
  else
    fail "$what: rejection should name '$field' and contain '$part', got: $out"
  fi
}
# expect_accepted WHAT YAML: a server-side dry-run create must succeed.
expect_accepted() {
  local out
  if out=$(kubectl create --dry-run=server -f - 2>&1 <<<"$2"); then
    pass "$1 accepted"
  else
    fail "$1: expected to be accepted, got: $out"
  fi
}
expect_no_warnings() { # WHAT OUTPUT
  if grep -qi 'warning' <<<"$2"; then fail "$1 printed warnings: $2"; else pass "$1 without warnings"; fi
}

# --- install -----------------------------------------------------------------------------------
[[ -d $CRDS_DIR ]] || { fail "no crds/ directory at $CRDS_DIR (BASALT_REPO_ROOT=$BASALT_REPO_ROOT)"; exit 1; }
for round in first second; do
  if out=$(kubectl apply --server-side --force-conflicts -f "$CRDS_DIR" 2>&1); then
    pass "$round server-side apply of crds/"
  else
    fail "$round server-side apply of crds/ failed: $out"
    exit 1
  fi
done
crd_refs=("${CRDS[@]/#/crd/}")
if ! out=$(kubectl wait --for condition=established --timeout=60s "${crd_refs[@]}" 2>&1); then
  fail "CRDs did not become Established: $out"
  exit 1
fi
pass "all ${#CRDS[@]} CRDs Established"
for crd in "${CRDS[@]}"; do
  conds=$(kubectl get crd "$crd" -o jsonpath='{range .status.conditions[*]}{.type}={.status}{" "}{end}')
  expect_contains "$crd conditions" "$conds" "NamesAccepted=True"
  if [[ $conds == *NonStructuralSchema* ]]; then fail "$crd has a non-structural schema: $conds"; fi
done
# kubectl explain is only useful if every field says what it is.
for crd in "${CRDS[@]}"; do
  undocumented=$(kubectl get crd "$crd" -o json | jq -r '.spec.versions[0].schema.openAPIV3Schema
    | [paths(objects) as $p
       | select(($p | length) >= 2 and $p[-2] == "properties" and $p[-1] != "metadata")
       | select(getpath($p) | has("description") | not)
       | $p | map(select(. != "properties")) | map(tostring) | join(".")] | join(" ")')
  expect_eq "$crd fields without a description" "$undocumented" ""
done
expect_eq "Job short names" "$(kubectl get crd jobs.batch.volcano.sh -o jsonpath='{.spec.names.shortNames}')" '["vcjob","vj"]'
expect_eq "Queue short names" "$(kubectl get crd queues.scheduling.volcano.sh -o jsonpath='{.spec.names.shortNames}')" '["q","queue-v1beta1"]'
expect_eq "PodGroup short names" "$(kubectl get crd podgroups.scheduling.volcano.sh -o jsonpath='{.spec.names.shortNames}')" '["pg","podgroup-v1beta1"]'
expect_eq "CronJob short names" "$(kubectl get crd cronjobs.batch.volcano.sh -o jsonpath='{.spec.names.shortNames}')" '["cronvcjob"]'
expect_eq "Queue scope" "$(kubectl get crd queues.scheduling.volcano.sh -o jsonpath='{.spec.scope}')" "Cluster"
expect_eq "Job status subresource" "$(kubectl get crd jobs.batch.volcano.sh -o jsonpath='{.spec.versions[0].subresources.status}')" "{}"

ns=$(new_namespace crds)
E2E_NAMESPACES+=("$ns") # new_namespace runs in a subshell here, so register it for deletion ourselves
# Discovery of freshly created CRDs can lag behind Established for a moment.
wait_for "short names resolve (vj, q, pg, queue-v1beta1, podgroup-v1beta1)" 30 \
  bash -c "kubectl get vj -n '$ns' && kubectl get q && kubectl get pg -n '$ns' && kubectl get queue-v1beta1 && kubectl get podgroup-v1beta1 -n '$ns'"

# --- the examples apply unchanged ----------------------------------------------------------------
remember_if_new queue/ai-training
out=$(kubectl apply -f "$TESTDATA/queue-ai-training.yaml" 2>&1) || fail "example queue-ai-training.yaml rejected: $out"
expect_contains "example queue-ai-training.yaml applies" "$out" "queue.scheduling.volcano.sh/ai-training"
expect_no_warnings "example queue-ai-training.yaml" "$out"
remember_if_new priorityclass/online-critical
remember_if_new priorityclass/offline-batch
out=$(kubectl apply -f "$TESTDATA/priorityclasses.yaml" 2>&1) || fail "example priorityclasses.yaml: $out"
expect_contains "example priorityclasses.yaml applies" "$out" "online-critical"

if out=$(kubectl apply -n "$ns" -f "$TESTDATA/job-bert-pretrain.yaml" 2>&1); then
  pass "example job-bert-pretrain.yaml applies"
else
  fail "example job-bert-pretrain.yaml rejected: $out"
fi
expect_no_warnings "example job-bert-pretrain.yaml" "$out"

# The article's variant: the same job in the ai-training queue, with the job-policies snippet as
# spec.policies and the node-group snippet on the task's pod template, at online-critical priority.
indent() { sed -e "s/^/$1/"; }
variant=$(
  sed -e 's/^  name: bert-pretrain$/  name: bert-pretrain-queued/' \
    -e 's/^spec:$/spec:\n  queue: ai-training\n  priorityClassName: online-critical/' \
    -e '/^  policies:$/,/^  tasks:$/{/^  tasks:$/!d}' \
    -e 's/^      template:$/      template:\n        metadata:\n__NODE_GROUP__/' \
    "$TESTDATA/job-bert-pretrain.yaml" |
    awk -v pol="$(indent '  ' <"$TESTDATA/job-policies.yaml")" \
      -v ng="$(indent '          ' <"$TESTDATA/task-node-group.yaml")" '
      /^__NODE_GROUP__$/ { print ng; next }
      /^  tasks:$/ { print pol }
      { print }'
)
if out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$variant"); then
  pass "bert-pretrain with queue, priority and the policy / node-group snippets applies"
else
  fail "bert-pretrain variant with the snippets rejected: $out
--- object ---
$variant"
fi
expect_no_warnings "bert-pretrain variant" "$out"
expect_eq "variant kept both snippet policies" \
  "$(kubectl get vcjob -n "$ns" bert-pretrain-queued -o jsonpath='{range .spec.policies[*]}{.event}:{.action} {end}')" \
  "TaskFailed:RestartJob PodEvicted:RestartJob "
expect_eq "variant kept the node-group annotation on the pod template" \
  "$(kubectl get vcjob -n "$ns" bert-pretrain-queued -o jsonpath='{.spec.tasks[0].template.metadata.annotations.scheduling\.volcano\.sh/node-group}')" \
  "gpu-rack-01"

# Any further Volcano objects shipped in examples/ must at least pass the schema.
shopt -s nullglob globstar
for f in "$BASALT_REPO_ROOT"/examples/**/*.yaml; do
  grep -qE '^apiVersion: (batch|scheduling|bus)\.volcano\.sh/' "$f" || continue
  if out=$(kubectl apply --dry-run=server -n "$ns" -f "$f" 2>&1); then
    pass "examples/${f#"$BASALT_REPO_ROOT"/examples/} passes the schema"
  else
    fail "examples/${f#"$BASALT_REPO_ROOT"/examples/} rejected: $out"
  fi
done
shopt -u nullglob globstar

# --- defaults and preserved templates ------------------------------------------------------------
job_json=$(kubectl get vcjob -n "$ns" bert-pretrain -o json)
expect_eq "Job spec.queue defaults to default" "$(jq -r .spec.queue <<<"$job_json")" "default"
expect_eq "Job spec.maxRetry defaults to 3" "$(jq -r .spec.maxRetry <<<"$job_json")" "3"
expect_eq "Job tasks[0].maxRetry defaults to 3" "$(jq -r '.spec.tasks[0].maxRetry' <<<"$job_json")" "3"
expect_eq "Job minAvailable kept" "$(jq -r .spec.minAvailable <<<"$job_json")" "4"
expect_eq "Job has no schema-defaulted minAvailable on tasks (webhook's job)" \
  "$(jq -r '.spec.tasks[0].minAvailable // "unset"' <<<"$job_json")" "unset"
expect_eq "pod template kept as written (cpu stays the integer 8)" \
  "$(jq -c '.spec.tasks[0].template.spec.containers[0].resources.requests' <<<"$job_json")" \
  '{"cpu":8,"memory":"64Gi","nvidia.com/gpu":1}'
q_json=$(kubectl get queue ai-training -o json)
expect_eq "Queue weight kept" "$(jq -r .spec.weight <<<"$q_json")" "10"
expect_eq "Queue reclaimable defaults to true" "$(jq -r .spec.reclaimable <<<"$q_json")" "true"
expect_eq "Queue dequeueStrategy defaults to traverse" "$(jq -r .spec.dequeueStrategy <<<"$q_json")" "traverse"
expect_eq "Queue capability kept" "$(jq -c .spec.capability <<<"$q_json")" '{"cpu":200,"memory":"500Gi","nvidia.com/gpu":8}'
bare_q=crds-e2e-$RANDOM
CREATED_CLUSTER_OBJECTS+=("queue/$bare_q")
kubectl apply -f - >/dev/null <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $bare_q}
spec: {}
EOF
expect_eq "Queue without weight gets weight 1" "$(kubectl get queue "$bare_q" -o jsonpath='{.spec.weight}')" "1"

# --- printer columns -----------------------------------------------------------------------------
kubectl patch vcjob -n "$ns" bert-pretrain --subresource=status --type=merge \
  -p '{"status":{"state":{"phase":"Running"},"running":4,"minAvailable":4}}' >/dev/null
t=$(kubectl get vcjob -n "$ns")
expect_eq "vcjob columns" "$(header "$t")" "NAME STATUS MINAVAILABLE RUNNINGS AGE"
expect_eq "vcjob STATUS" "$(cell "$t" bert-pretrain STATUS)" "Running"
expect_eq "vcjob MINAVAILABLE" "$(cell "$t" bert-pretrain MINAVAILABLE)" "4"
expect_eq "vcjob RUNNINGS" "$(cell "$t" bert-pretrain RUNNINGS)" "4"
t=$(kubectl get vcjob -n "$ns" -o wide)
expect_eq "vcjob -o wide columns" "$(header "$t")" "NAME STATUS MINAVAILABLE RUNNINGS AGE QUEUE"
expect_eq "vcjob QUEUE (wide)" "$(cell "$t" bert-pretrain-queued QUEUE)" "ai-training"

kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: gang}
spec:
  minMember: 2
  queue: ai-training
  minTaskMember: {worker: 2}
  minResources: {cpu: 16, memory: 128Gi, nvidia.com/gpu: "2"}
EOF
kubectl patch pg -n "$ns" gang --subresource=status --type=merge -p '{"status":{"phase":"Inqueue","running":1}}' >/dev/null
t=$(kubectl get pg -n "$ns")
expect_eq "podgroup columns" "$(header "$t")" "NAME STATUS MINMEMBER RUNNINGS AGE"
expect_eq "podgroup STATUS" "$(cell "$t" gang STATUS)" "Inqueue"
expect_eq "podgroup MINMEMBER" "$(cell "$t" gang MINMEMBER)" "2"
expect_eq "podgroup RUNNINGS" "$(cell "$t" gang RUNNINGS)" "1"
t=$(kubectl get pg -n "$ns" -o wide)
expect_eq "podgroup QUEUE (wide)" "$(cell "$t" gang QUEUE)" "ai-training"
# Status goes through /status only (Basalt enables the subresource on PodGroup).
kubectl patch pg -n "$ns" gang --type=merge -p '{"status":{"phase":"Running"}}' >/dev/null 2>&1 || true
expect_eq "podgroup status not writable through the main resource" \
  "$(kubectl get pg -n "$ns" gang -o jsonpath='{.status.phase}')" "Inqueue"

kubectl patch queue ai-training --subresource=status --type=merge \
  -p '{"status":{"state":"Open","allocated":{"cpu":"32","memory":"256Gi","nvidia.com/gpu":"4"},"pending":1,"running":2,"inqueue":3}}' >/dev/null
t=$(kubectl get q)
expect_eq "queue columns" "$(header "$t")" "NAME STATE WEIGHT PARENT ALLOCATED-GPU DESERVED-GPU CAPABILITY-GPU AGE"
expect_eq "queue STATE" "$(cell "$t" ai-training STATE)" "Open"
expect_eq "queue WEIGHT" "$(cell "$t" ai-training WEIGHT)" "10"
expect_eq "queue ALLOCATED-GPU" "$(cell "$t" ai-training ALLOCATED-GPU)" "4"
expect_eq "queue CAPABILITY-GPU" "$(cell "$t" ai-training CAPABILITY-GPU)" "8"
expect_eq "unlimited queue shows an empty CAPABILITY-GPU" "$(cell "$t" "$bare_q" CAPABILITY-GPU)" ""
t=$(kubectl get q -o wide)
expect_eq "queue -o wide columns" "$(header "$t")" \
  "NAME STATE WEIGHT PARENT ALLOCATED-GPU DESERVED-GPU CAPABILITY-GPU AGE ALLOCATED-CPU CAPABILITY-CPU ALLOCATED-MEMORY CAPABILITY-MEMORY INQUEUE PENDING RUNNING"
expect_eq "queue CAPABILITY-CPU (wide)" "$(cell "$t" ai-training CAPABILITY-CPU)" "200"
expect_eq "queue ALLOCATED-MEMORY (wide)" "$(cell "$t" ai-training ALLOCATED-MEMORY)" "256Gi"
expect_eq "queue CAPABILITY-MEMORY (wide)" "$(cell "$t" ai-training CAPABILITY-MEMORY)" "500Gi"
expect_eq "queue INQUEUE (wide)" "$(cell "$t" ai-training INQUEUE)" "3"
expect_eq "queue PENDING (wide)" "$(cell "$t" ai-training PENDING)" "1"
expect_eq "queue RUNNING (wide)" "$(cell "$t" ai-training RUNNING)" "2"

# A Command as vcctl writes it (suspend). No job controller runs in this test, so it stays.
job_uid=$(jq -r .metadata.uid <<<"$job_json")
kubectl create -n "$ns" -f - >/dev/null <<EOF
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata: {name: bert-pretrain-abortjob-e2e}
action: AbortJob
target: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: bert-pretrain, uid: $job_uid, controller: true}
EOF
t=$(kubectl get commands.bus.volcano.sh -n "$ns" -o wide)
expect_eq "command columns" "$(header "$t")" "NAME ACTION TARGET AGE TARGET-KIND"
expect_eq "command ACTION" "$(cell "$t" bert-pretrain-abortjob-e2e ACTION)" "AbortJob"
expect_eq "command TARGET" "$(cell "$t" bert-pretrain-abortjob-e2e TARGET)" "bert-pretrain"
expect_eq "command TARGET-KIND (wide)" "$(cell "$t" bert-pretrain-abortjob-e2e TARGET-KIND)" "Job"

# --- kubectl explain -----------------------------------------------------------------------------
wait_for "kubectl explain vcjob.spec.tasks works (OpenAPI published)" 30 kubectl explain vcjob.spec.tasks
out=$(kubectl explain vcjob.spec.tasks 2>&1)
expect_contains "explain vcjob.spec.tasks" "$out" "Each task is a group of identical pods"
expect_contains "explain vcjob.spec.tasks lists replicas" "$out" "Number of pods of this task"
expect_contains "explain vcjob.spec.tasks lists template" "$out" "Pod template (core/v1 PodTemplateSpec)"
out=$(kubectl explain vcjob.spec.policies.event 2>&1)
expect_contains "explain vcjob.spec.policies.event" "$out" "Event that triggers the action"
expect_contains "explain vcjob.spec.policies.event lists the enum" "$out" "PodEvicted"
out=$(kubectl explain vcjob.spec.minAvailable 2>&1)
expect_contains "explain vcjob.spec.minAvailable" "$out" "Gang size"
out=$(kubectl explain queue.spec.capability 2>&1)
expect_contains "explain queue.spec.capability" "$out" "Hard upper limit"
out=$(kubectl explain queue.spec.weight 2>&1)
expect_contains "explain queue.spec.weight" "$out" "1..65535"
out=$(kubectl explain podgroup.spec.minMember 2>&1)
expect_contains "explain podgroup.spec.minMember" "$out" "Minimum number of pods"
out=$(kubectl explain podgroup.status.phase 2>&1)
expect_contains "explain podgroup.status.phase" "$out" "Inqueue - admitted"
out=$(kubectl explain commands.target --api-version=bus.volcano.sh/v1alpha1 2>&1)
expect_contains "explain commands.target" "$out" "The object to act on"

# --- what the schema rejects ---------------------------------------------------------------------
job_with() { # SPEC_LINES: a minimal valid Job with extra spec lines
  cat <<EOF
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: invalid, namespace: $ns}
spec:
  minAvailable: 1
$1
EOF
}
task='{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}'
expect_accepted "minimal valid Job" "$(job_with "  tasks: [$task]")"
expect_rejected "Job with replicas -1" "spec.tasks[0].replicas" "greater than or equal to 0" \
  "$(job_with "  tasks: [{name: w, replicas: -1}]")"
expect_rejected "Job with task minAvailable -1" "spec.tasks[0].minAvailable" "greater than or equal to 0" \
  "$(job_with "  tasks: [{name: w, replicas: 1, minAvailable: -1}]")"
expect_rejected "Job with minAvailable -1" "spec.minAvailable" "greater than or equal to 0" \
  "$(job_with "  tasks: [$task]" | sed 's/minAvailable: 1/minAvailable: -1/')"
expect_rejected "Job with maxRetry -1" "spec.maxRetry" "greater than or equal to 0" \
  "$(job_with "  maxRetry: -1
  tasks: [$task]")"
expect_rejected "Job with ttlSecondsAfterFinished -1" "spec.ttlSecondsAfterFinished" "greater than or equal to 0" \
  "$(job_with "  ttlSecondsAfterFinished: -1
  tasks: [$task]")"
expect_rejected "Job with minSuccess 0" "spec.minSuccess" "greater than or equal to 1" \
  "$(job_with "  minSuccess: 0
  tasks: [$task]")"
expect_rejected "Job with an unknown policy event" "spec.policies[0].event" 'Unsupported value: "PodExploded"' \
  "$(job_with "  policies: [{event: PodExploded, action: RestartJob}]
  tasks: [$task]")"
expect_rejected "Job with an unknown event in a task policy's events" "spec.tasks[0].policies[0].events[1]" 'Unsupported value: "Nope"' \
  "$(job_with "  tasks: [{name: w, replicas: 1, policies: [{events: [PodFailed, Nope], action: AbortJob}]}]")"
expect_rejected "Job with an unknown policy action" "spec.policies[0].action" 'Unsupported value: "Restart"' \
  "$(job_with "  policies: [{event: PodFailed, action: Restart}]
  tasks: [$task]")"
expect_rejected "Job with a malformed policy timeout" "spec.policies[0].timeout" "should match" \
  "$(job_with "  policies: [{event: PodPending, action: RestartJob, timeout: 5 minutes}]
  tasks: [$task]")"
expect_accepted "Job with duration timeouts and an exitCode policy" \
  "$(job_with "  policies: [{event: PodPending, action: RestartJob, timeout: 1m30s}, {exitCode: 3, action: RestartTask}]
  tasks: [$task]")"
expect_rejected "Job with a string minAvailable" "spec.minAvailable" "must be of type integer" \
  "$(job_with "  tasks: [$task]" | sed 's/minAvailable: 1/minAvailable: four/')"
expect_rejected "Job with a string replicas" "spec.tasks[0].replicas" "must be of type integer" \
  "$(job_with '  tasks: [{name: w, replicas: "3"}]')"
expect_rejected "Job with a string for tasks" "spec.tasks" "must be of type array" \
  "$(job_with '  tasks: worker')"
expect_rejected "Job with a string plugin argument list" "spec.plugins.ssh" "must be of type array" \
  "$(job_with "  plugins: {ssh: \"yes\"}
  tasks: [$task]")"
expect_rejected "Job with a non-DNS task name" "spec.tasks[0].name" "should match" \
  "$(job_with "  tasks: [{name: Worker_1, replicas: 1}]")"
expect_rejected "Job with a non-DNS queue name" "spec.queue" "should match" \
  "$(job_with "  queue: AI_Training
  tasks: [$task]")"
expect_rejected "Job with an unknown topologyPolicy" "spec.tasks[0].topologyPolicy" 'Unsupported value: "numa"' \
  "$(job_with "  tasks: [{name: w, replicas: 1, topologyPolicy: numa}]")"
expect_rejected "Job with a volume without mountPath" "spec.volumes[0].mountPath" "Required value" \
  "$(job_with "  volumes: [{volumeClaimName: data}]
  tasks: [$task]")"
expect_rejected "Job with an unknown spec field" "spec.tasksx" "unknown field" \
  "$(job_with "  tasksx: []")"

queue_with() { # SPEC_LINES
  cat <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: invalid-$ns}
spec:
$1
EOF
}
expect_rejected "Queue with weight 0" "spec.weight" "greater than or equal to 1" "$(queue_with "  weight: 0")"
expect_rejected "Queue with weight 65536" "spec.weight" "less than or equal to 65535" "$(queue_with "  weight: 65536")"
expect_rejected "Queue with a string weight" "spec.weight" "must be of type integer" "$(queue_with "  weight: heavy")"
expect_rejected "Queue with a negative integer capability" "spec.capability.cpu" "greater than or equal to 0" \
  "$(queue_with "  capability: {cpu: -1}")"
expect_rejected "Queue with a negative quantity capability" "spec.capability.memory" "should match" \
  "$(queue_with '  capability: {memory: "-1Gi"}')"
expect_rejected "Queue with a malformed deserved quantity" "spec.deserved.nvidia.com/gpu" "should match" \
  "$(queue_with '  deserved: {nvidia.com/gpu: lots}')"
expect_rejected "Queue with a malformed guarantee quantity" "spec.guarantee.resource.cpu" "should match" \
  "$(queue_with '  guarantee: {resource: {cpu: "2 cores"}}')"
expect_rejected "Queue with an unknown dequeueStrategy" "spec.dequeueStrategy" 'Unsupported value: "random"' \
  "$(queue_with "  dequeueStrategy: random")"
expect_accepted "Queue with quantity strings, exponents and milli-units" \
  "$(queue_with '  capability: {cpu: "1.5", memory: 1e9, nvidia.com/gpu: 8, pods: 100}
  deserved: {cpu: 1500m}
  guarantee: {resource: {cpu: 500m, memory: 1Gi}}')"
if out=$(kubectl patch queue ai-training --subresource=status --type=merge -p '{"status":{"state":"Sleeping"}}' 2>&1); then
  fail "Queue status.state Sleeping accepted: $out"
else
  expect_contains "Queue status.state rejection" "$out" "status.state"
fi

expect_rejected "PodGroup with minMember -1" "spec.minMember" "greater than or equal to 0" "$(cat <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: invalid, namespace: $ns}
spec: {minMember: -1}
EOF
)"
expect_rejected "PodGroup with a malformed minResources quantity" "spec.minResources.cpu" "should match" "$(cat <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: invalid, namespace: $ns}
spec: {minMember: 1, minResources: {cpu: x1}}
EOF
)"
if out=$(kubectl patch pg -n "$ns" gang --subresource=status --type=merge -p '{"status":{"phase":"Done"}}' 2>&1); then
  fail "PodGroup status.phase Done accepted: $out"
else
  expect_contains "PodGroup status.phase rejection" "$out" "status.phase"
fi

expect_rejected "Command whose target has no uid" "target.uid" "Required value" "$(cat <<EOF
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata: {name: invalid, namespace: $ns}
action: ResumeJob
target: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: bert-pretrain}
EOF
)"
