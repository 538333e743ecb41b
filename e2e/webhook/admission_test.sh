#!/usr/bin/env bash
# vc-webhook-manager against a real API server, driven with kubectl as users do:
#   - the `default` queue exists once the webhook has started (weight 1, reclaimable);
#   - the shared examples apply through the webhook, both the copies in e2e/crds/testdata/ and,
#     when ../shared/examples/ is there, every complete object in it unchanged;
#   - `kubectl get vcjob -o yaml` shows the defaults the mutator fills in (queue default,
#     schedulerName volcano, maxRetry 3, minAvailable = sum of the tasks', task names, the
#     plugins mpi and pytorch imply);
#   - invalid Jobs and Queues are refused by `kubectl apply` with Volcano's messages
#     (including guarantee <= deserved <= capability);
#   - Jobs that could never run are refused with the rule: a billion replicas (above
#     --max-job-pods), a 1 MB pod template annotation and an invalid template label value
#     (every pod create would fail with 422);
#   - deleting the default queue, or a queue that still has Jobs or PodGroups, is refused with
#     the counts;
#   - an update of an immutable Job field is refused, a mutable one goes through;
#   - `kubectl describe queue` shows the capability.
# The webhook runs as a local process registered through hack/webhook-register-local.sh and
# is unregistered and stopped at the end.
# shellcheck source=../lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
TESTDATA=$BASALT_REPO_ROOT/e2e/crds/testdata

CREATED_CLUSTER_OBJECTS=()
remember_if_new() { kubectl get "$1" >/dev/null 2>&1 || CREATED_CLUSTER_OBJECTS+=("$1"); }
on_exit() {
  local rc=$? o
  # Unregister first: the webhook refuses deleting non-empty queues and `root`.
  webhook_stop
  for o in "${CREATED_CLUSTER_OBJECTS[@]}"; do
    kubectl delete "$o" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  done
  set +e
  (exit "$rc")
  e2e_finish
}
trap on_exit EXIT

# expect_refused WHAT NEEDLE YAML [kubectl args...]: `kubectl apply` must fail with NEEDLE in
# its message.
expect_refused() {
  local what=$1 needle=$2 yaml=$3 out
  shift 3
  if out=$(kubectl apply "$@" -f - 2>&1 <<<"$yaml"); then
    fail "$what: expected a refusal, but kubectl apply succeeded: $out"
  elif [[ $out == *"$needle"* ]]; then
    pass "$what refused: ...${needle}..."
  else
    fail "$what: refusal should contain '$needle', got: $out"
  fi
}

# job NAME SPEC_LINES TASK_LINES: a Job manifest (SPEC_LINES and TASK_LINES indented already).
job() {
  printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: %s}\nspec:\n%s\n  tasks:\n%s\n' \
    "$1" "$2" "$3"
}
task() { # NAME REPLICAS [extra line]
  printf '  - name: %s\n    replicas: %s\n%s    template: {spec: {containers: [{name: c, image: busybox}]}}\n' \
    "$1" "$2" "${3:+    $3
}"
}
queue() { # NAME [SPEC]
  printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: %s\n' \
    "$1" "${2:-{\}}"
}

install_crds
webhook_start

# --- the default queue --------------------------------------------------------------------
wait_for "the default queue exists" 30 kubectl get queue default
expect_eq "default queue weight,reclaimable" \
  "$(kubectl get queue default -o jsonpath='{.spec.weight},{.spec.reclaimable}')" "1,true"

ns=$(new_namespace webhook)

# --- the shared examples ----------------------------------------------------------------------
remember_if_new queue/ai-training
out=$(kubectl apply -f "$TESTDATA/queue-ai-training.yaml" 2>&1) && pass "example queue-ai-training.yaml applies" ||
  fail "example queue-ai-training.yaml refused: $out"
remember_if_new priorityclass/online-critical
remember_if_new priorityclass/offline-batch
out=$(kubectl apply -f "$TESTDATA/priorityclasses.yaml" 2>&1) && pass "example priorityclasses.yaml applies" ||
  fail "example priorityclasses.yaml refused: $out"
out=$(kubectl apply -n "$ns" -f "$TESTDATA/job-bert-pretrain.yaml" 2>&1) &&
  pass "example job-bert-pretrain.yaml applies" || fail "example job-bert-pretrain.yaml refused: $out"
# The article's variant (as in e2e/crds): queue ai-training, online-critical, the policies and
# node-group snippets.
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
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$variant") &&
  pass "bert-pretrain in ai-training with the policy and node-group snippets applies" ||
  fail "bert-pretrain variant refused: $out"

# The examples straight from ../shared/examples/ (the issue's source; BASALT_SHARED_EXAMPLES
# overrides): every file that is a complete object applies unchanged, in a fresh namespace;
# the testdata copies used above must still be verbatim. Fragments (the policy and node-group
# snippets) are placed into the bert-pretrain variant above.
shared=${BASALT_SHARED_EXAMPLES:-$BASALT_REPO_ROOT/../shared/examples}
if [[ -d $shared ]]; then
  shared_ns=$(new_namespace webhook-shared)
  while IFS= read -r f; do
    rel=${f#"$shared"/}
    if [[ -f $TESTDATA/$(basename "$f") ]]; then
      cmp -s "$f" "$TESTDATA/$(basename "$f")" && pass "e2e/crds/testdata/$(basename "$f") is a verbatim copy of $rel" ||
        fail "e2e/crds/testdata/$(basename "$f") differs from $shared/$rel: refresh the copy"
    fi
    if grep -q '^apiVersion:' "$f" && grep -q '^kind:' "$f"; then
      out=$(kubectl apply -n "$shared_ns" -f "$f" 2>&1) && pass "shared example $rel applies unchanged" ||
        fail "shared example $rel refused: $out"
    else
      e2e_log "shared example $rel has no apiVersion/kind: a fragment, not applied on its own"
    fi
  done < <(find "$shared" -name '*.yaml' | sort)
  expect_eq "bert-pretrain from the shared example, defaulted" \
    "$(kubectl get vcjob -n "$shared_ns" bert-pretrain -o jsonpath='{.spec.queue},{.spec.schedulerName},{.spec.maxRetry},{.spec.minAvailable},{.spec.tasks[0].minAvailable}')" \
    "default,volcano,3,4,4"
else
  e2e_log "no $shared here: the verbatim copies in e2e/crds/testdata/ stand in for it"
fi

# --- defaults -------------------------------------------------------------------------------
yaml=$(kubectl get vcjob -n "$ns" bert-pretrain -o yaml)
expect_contains "bert-pretrain -o yaml" "$yaml" "queue: default"
expect_contains "bert-pretrain -o yaml" "$yaml" "schedulerName: volcano"
expect_contains "bert-pretrain -o yaml" "$yaml" "maxRetry: 3"
expect_eq "bert-pretrain task minAvailable" \
  "$(kubectl get vcjob -n "$ns" bert-pretrain -o jsonpath='{.spec.tasks[0].minAvailable}')" "4"
expect_eq "bert-pretrain-queued queue" \
  "$(kubectl get vcjob -n "$ns" bert-pretrain-queued -o jsonpath='{.spec.queue}')" "ai-training"

# No names, no minAvailable, no schedulerName, no queue: everything defaulted.
bare=$(printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: bare}\nspec:\n  tasks:\n  - replicas: 2\n    template: {spec: {containers: [{name: c, image: busybox}]}}\n  - replicas: 3\n    template: {spec: {containers: [{name: c, image: busybox}]}}\n')
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$bare") && pass "a bare two-task job applies" || fail "bare job refused: $out"
expect_eq "bare job queue,schedulerName,maxRetry,minAvailable" \
  "$(kubectl get vcjob -n "$ns" bare -o jsonpath='{.spec.queue},{.spec.schedulerName},{.spec.maxRetry},{.spec.minAvailable}')" \
  "default,volcano,3,5"
expect_eq "bare job task names" \
  "$(kubectl get vcjob -n "$ns" bare -o jsonpath='{.spec.tasks[*].name}')" "default0 default1"
expect_eq "bare job task minAvailable" \
  "$(kubectl get vcjob -n "$ns" bare -o jsonpath='{.spec.tasks[*].minAvailable}')" "2 3"

# partitionPolicy is admitted without a warning (the scheduler places partitions).
parts=$(printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: parts}\nspec:\n  tasks:\n  - name: w\n    replicas: 4\n    partitionPolicy: {totalPartitions: 2, partitionSize: 2}\n    template: {spec: {containers: [{name: c, image: busybox}]}}\n')
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$parts") && pass "a job with partitionPolicy applies" || fail "partitionPolicy job refused: $out"
[[ $out != *Warning* ]] && pass "kubectl apply of a partitionPolicy job prints no warning" ||
  fail "partitionPolicy job warned: $out"

# Implied plugins: mpi brings svc and ssh, pytorch brings svc.
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$(job mpi-job '  plugins: {mpi: []}' "$(task master 1)
$(task worker 2)")") && pass "an mpi job applies" || fail "mpi job refused: $out"
expect_eq "mpi job plugins" \
  "$(kubectl get vcjob -n "$ns" mpi-job -o json | jq -r '.spec.plugins | keys | join(",")')" "mpi,ssh,svc"
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$(job pytorch-job '  plugins: {pytorch: []}' "$(task master 1)
$(task worker 2)")") && pass "a pytorch job applies" || fail "pytorch job refused: $out"
expect_eq "pytorch job plugins" \
  "$(kubectl get vcjob -n "$ns" pytorch-job -o json | jq -r '.spec.plugins | keys | join(",")')" "pytorch,svc"

# --- invalid Jobs -------------------------------------------------------------------------------
expect_refused "job minAvailable > replicas" \
  "job 'minAvailable' should not be greater than total replicas in tasks" \
  "$(job j-min '  minAvailable: 3' "$(task w 2)")" -n "$ns"
expect_refused "task minAvailable > replicas" \
  "'minAvailable' is greater than 'replicas' in task: w, job: j-task-min" \
  "$(job j-task-min '' "$(task w 1 'minAvailable: 2')")" -n "$ns"
expect_refused "duplicate task names" "duplicated task name w" \
  "$(job j-dup '' "$(task w 1)
$(task w 1)")" -n "$ns"
expect_refused "bad policy event" 'invalid policy event "PodRunning"' \
  "$(job j-event '  policies: [{event: PodRunning, action: RestartJob}]' "$(task w 1)")" -n "$ns"
# The CRD's enum on action refuses it before the validating webhook runs (same for Volcano).
expect_refused "bad policy action" '"Explode"' \
  "$(job j-action '  policies: [{event: PodFailed, action: Explode}]' "$(task w 1)")" -n "$ns"
expect_refused "event and exitCode together" "must not specify event and exitCode simultaneously" \
  "$(job j-both '  policies: [{event: PodFailed, exitCode: 3, action: RestartJob}]' "$(task w 1)")" -n "$ns"
expect_refused "exitCode 0" "0 is not a valid error code" \
  "$(job j-exit0 '  policies: [{exitCode: 0, action: RestartJob}]' "$(task w 1)")" -n "$ns"
expect_refused "unknown plugin" "unable to find job plugin: nope" \
  "$(job j-plugin '  plugins: {nope: []}' "$(task w 1)")" -n "$ns"
# The ray plugin without its head task would fail every pod (PluginError): refused.
expect_refused "ray without a head task" \
  'spec.plugins[ray]: the ray head task was not found (no task named "head")' \
  "$(job j-ray '  plugins: {ray: []}' "$(task w 1)")" -n "$ns"
# CronJobs: the schedule and the time zone are checked, naming the field.
cronjob() { # NAME SPEC_LINES
  printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {name: %s}\nspec:\n%s\n  jobTemplate:\n    spec:\n      tasks:\n%s\n' \
    "$1" "$2" "$(task w 1 | sed 's/^/    /')"
}
expect_refused "cronjob with a bad schedule" 'spec.schedule: Invalid value: "61 * * * *": minute field: 61 is out of range 0-59' \
  "$(cronjob c-sched '  schedule: "61 * * * *"')" -n "$ns"
expect_refused "cronjob with a bad time zone" 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone' \
  "$(cronjob c-tz '  schedule: "@hourly"
  timeZone: Mars/Olympus')" -n "$ns"
expect_refused "cronjob with an invalid Job template" 'spec.jobTemplate.spec.tasks[0].minAvailable' \
  "$(cronjob c-tmpl '  schedule: "@hourly"' | sed 's/^        replicas: 1$/        replicas: 1\n        minAvailable: 2/')" -n "$ns"
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$(cronjob c-ok '  schedule: "*/5 * * * *"
  timeZone: Europe/Paris')") && pass "a valid CronJob is admitted" || fail "valid CronJob refused: $out"
expect_refused "missing queue" 'unable to find job queue: queues.scheduling.volcano.sh "e2e-no-such-queue" not found' \
  "$(job j-noqueue '  queue: e2e-no-such-queue' "$(task w 1)")" -n "$ns"

# Sizes: a billion pods (the controllers would build every pod name), pod templates whose
# metadata the API server refuses on every pod.
expect_refused "a billion replicas" \
  "spec.tasks[0].replicas: Invalid value: 1000000000: must be no more than 10000 (the webhook's --max-job-pods)" \
  "$(job j-huge '  minAvailable: 1' "$(task w 1000000000 'minAvailable: 1')")" -n "$ns"
template_job() { # NAME METADATA_FLOW_MAPPING
  printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: %s}\nspec:\n  tasks:\n  - name: w\n    replicas: 1\n    template:\n      metadata: %s\n      spec: {containers: [{name: c, image: busybox}]}\n' \
    "$1" "$2"
}
# Server-side apply: client-side apply would copy the whole Job into its own
# last-applied-configuration annotation, which the API server refuses first.
expect_refused "a 1 MB pod template annotation" \
  "spec.tasks[0].template.metadata.annotations: Too long: must have at most 258048 bytes" \
  "$(template_job j-annotated "{annotations: {example.com/blob: $(head -c 1048576 /dev/zero | tr '\0' a)}}")" \
  --server-side -n "$ns"
expect_refused "a pod template label value with a slash" \
  'spec.tasks[0].template.metadata.labels: Invalid value: "a/b": a valid label must be an empty string' \
  "$(template_job j-label '{labels: {app: a/b}}')" -n "$ns"

remember_if_new queue/e2e-closed
kubectl apply -f - >/dev/null <<<"$(queue e2e-closed)"
kubectl patch queue e2e-closed --subresource=status --type=merge -p '{"status":{"state":"Closed"}}' >/dev/null
wait_for "the webhook sees e2e-closed as Closed" 10 bash -c \
  "kubectl create --dry-run=server -n $ns -f - <<<'$(job j-probe '  queue: e2e-closed' "$(task w 1)")' 2>&1 | grep -q 'status is .Closed.'"
expect_refused "closed queue" 'can only submit job to queue with state `Open`, queue `e2e-closed` status is `Closed`' \
  "$(job j-closed '  queue: e2e-closed' "$(task w 1)")" -n "$ns"

remember_if_new queue/root
kubectl get queue root >/dev/null 2>&1 ||
  kubectl apply -f - >/dev/null <<<"$(queue root '{weight: 1, reclaimable: false}')"
wait_for "the webhook sees the root queue" 10 bash -c \
  "kubectl create --dry-run=server -n $ns -f - <<<'$(job j-probe '  queue: root' "$(task w 1)")' 2>&1 | grep -q 'root queue'"
expect_refused "root queue" "can not submit job to root queue" \
  "$(job j-root '  queue: root' "$(task w 1)")" -n "$ns"

# --- invalid Queues ---------------------------------------------------------------------------
# The CRD's quantity pattern refuses a negative quantity before the webhook sees it; the
# webhook's own check is exercised with a raw review in failure_test.sh.
expect_refused "negative capability" 'spec.capability.cpu' "$(queue e2e-negative '{capability: {cpu: "-1"}}')"
expect_refused "negative deserved" 'spec.deserved.memory' "$(queue e2e-negative '{deserved: {memory: "-5Gi"}}')"

expect_refused "deserved above capability" 'deserved[cpu]=8 must be <= capability[cpu]=4' \
  "$(queue e2e-order '{capability: {cpu: 4}, deserved: {cpu: 8}}')"
expect_refused "guarantee above deserved" 'deserved[cpu]=2 must be >= guarantee[cpu]=3' \
  "$(queue e2e-order '{capability: {cpu: 4}, deserved: {cpu: 2}, guarantee: {resource: {cpu: 3}}}')"
remember_if_new queue/e2e-order
out=$(kubectl apply -f - 2>&1 <<<"$(queue e2e-order '{capability: {cpu: 4}, deserved: {cpu: 3}, guarantee: {resource: {cpu: 2}}}')") &&
  pass "guarantee <= deserved <= capability applies" || fail "an ordered queue was refused: $out"

# --- deletes --------------------------------------------------------------------------------
out=$(kubectl delete queue default 2>&1) && fail "deleting the default queue succeeded" ||
  expect_contains "deleting the default queue" "$out" '`default` queue can not be deleted'
remember_if_new queue/e2e-busy
kubectl apply -f - >/dev/null <<<"$(queue e2e-busy)"
# The webhook learns about the new queue through its informer: retry until it does.
wait_for "a job can be submitted to e2e-busy" 10 bash -c \
  "kubectl apply -n $ns -f - <<<'$(job in-busy '  queue: e2e-busy' "$(task w 1)")'"
wait_for "the webhook counts the job in e2e-busy" 10 bash -c \
  "! kubectl delete queue e2e-busy --dry-run=server >/dev/null 2>&1"
out=$(kubectl delete queue e2e-busy 2>&1) && fail "deleting a queue with a job succeeded" ||
  expect_contains "deleting a non-empty queue" "$out" 'queue `e2e-busy` can not be deleted because it still has 0 PodGroups and 1 Job'

# A queue that still has a PodGroup (and no Job): refused, counting it; allowed once it is gone.
remember_if_new queue/e2e-pg
kubectl apply -f - >/dev/null <<<"$(queue e2e-pg)"
wait_for "a PodGroup can be submitted to e2e-pg" 10 bash -c \
  "printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg-in-e2e-pg}\nspec: {minMember: 1, queue: e2e-pg}\n' | kubectl apply -n $ns -f -"
wait_for "the webhook counts the PodGroup in e2e-pg" 10 bash -c \
  "! kubectl delete queue e2e-pg --dry-run=server >/dev/null 2>&1"
out=$(kubectl delete queue e2e-pg 2>&1) && fail "deleting a queue with a PodGroup succeeded" ||
  expect_contains "deleting a queue with a PodGroup" "$out" 'queue `e2e-pg` can not be deleted because it still has 1 PodGroup and 0 Jobs'
kubectl delete podgroup -n "$ns" pg-in-e2e-pg >/dev/null
wait_for "e2e-pg can be deleted once its PodGroup is gone" 10 kubectl delete queue e2e-pg

# --- updates --------------------------------------------------------------------------------
out=$(kubectl patch vcjob -n "$ns" bare --type=merge -p '{"spec":{"schedulerName":"other"}}' 2>&1) &&
  fail "changing schedulerName succeeded: $out" ||
  expect_contains "changing an immutable field" "$out" 'job updates may not change fields other than'
out=$(kubectl patch vcjob -n "$ns" bare --type=json -p '[{"op":"replace","path":"/spec/tasks/0/template/spec/containers/0/image","value":"nginx"}]' 2>&1) &&
  fail "changing a task template succeeded: $out" ||
  expect_contains "changing a task template" "$out" 'job updates may not change fields other than'
out=$(kubectl patch vcjob -n "$ns" bare --type=merge -p '{"spec":{"minAvailable":3}}' 2>&1) &&
  pass "changing minAvailable is allowed" || fail "changing minAvailable refused: $out"

# --- describe ---------------------------------------------------------------------------------
out=$(kubectl describe queue ai-training)
expect_contains "kubectl describe queue ai-training" "$out" "Capability"
expect_contains "kubectl describe queue ai-training" "$out" "nvidia.com/gpu:  8"
