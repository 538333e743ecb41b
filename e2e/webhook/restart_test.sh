#!/usr/bin/env bash
# vc-webhook-manager restarting while the API server keeps calling it (issue 11, defect 3: it
# answered from empty caches ~45 ms after a restart, refusing a valid Job with "queue not
# found" and allowing the delete of a queue that still had Jobs):
#   - a queue with Jobs; the webhook is restarted on the same port with its informers started
#     7 s late (--testing-informer-start-delay), so the window before the caches sync is long
#     (kubectl on a loaded machine takes seconds to start) and still well inside the API
#     server's 10 s timeoutSeconds for the retried calls;
#   - in that window /readyz fails naming the unsynced caches, and a raw review of a
#     cache-reading path gets 503 with Retry-After and a Status saying why, while the Job
#     mutator (reads no cache) answers at once;
#   - a queue delete and a Job create sent through kubectl during the window: the API server
#     retries the 503s, so the delete is refused with the real Job count and the Job is
#     admitted; neither is ever answered from the empty caches;
#   - the webhook log shows the refused reviews (the window was exercised) and /readyz passes
#     after the sync.
# shellcheck source=../lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

QUEUE=e2e-restart
on_exit() {
  local rc=$?
  webhook_stop
  kubectl delete vcjob -n "${ns:-default}" --all --wait=false >/dev/null 2>&1 || true
  kubectl delete queue "$QUEUE" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  set +e
  (exit "$rc")
  e2e_finish
}
trap on_exit EXIT

job() { # NAME
  printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: %s}\nspec:\n  queue: %s\n  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}]\n' \
    "$1" "$QUEUE"
}

install_crds
webhook_start
ns=$(new_namespace webhook-restart)
kubectl apply -f - >/dev/null <<<"$(printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: {weight: 1}\n' "$QUEUE")"
wait_for "a job can be submitted to $QUEUE" 15 bash -c "kubectl apply -n $ns -f - <<<'$(job j1)'"
for j in j2 j3; do kubectl apply -n "$ns" -f - >/dev/null <<<"$(job "$j")"; done
wait_for "the webhook counts the 3 jobs in $QUEUE" 15 bash -c \
  "kubectl delete queue $QUEUE --dry-run=server 2>&1 | grep -q 'still has 0 PodGroups and 3 Jobs'"

# --- restart on the same port (the registered URL), informers 7 s late ------------------------
log=$WEBHOOK_STATE_DIR/logs/vc-webhook-manager.log
kill -TERM "$WEBHOOK_PID"
for ((i = 0; i < 150; i++)); do kill -0 "$WEBHOOK_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$WEBHOOK_PID" 2>/dev/null && { fail "the webhook did not stop on SIGTERM"; exit 1; }
setsid "$WEBHOOK_BIN" --kubeconfig="$KUBECONFIG" --listen-address=127.0.0.1 --port="$WEBHOOK_PORT" \
  --cert-dir="$WEBHOOK_STATE_DIR/webhook-certs" --metrics-addr=127.0.0.1:0 --health-addr=127.0.0.1:0 \
  --testing-informer-start-delay=7 -v=2 </dev/null >"$log" 2>&1 &
WEBHOOK_PID=$!
echo "$WEBHOOK_PID" >"$WEBHOOK_STATE_DIR/pids/vc-webhook-manager.pid"
echo "$WEBHOOK_BIN" >"$WEBHOOK_STATE_DIR/pids/vc-webhook-manager.cmd"
wait_for "the restarted webhook listens on port $WEBHOOK_PORT" 10 grep -q 'Serving admission webhook' "$log"
# The health server's line may come a moment after (another thread): wait for it too.
wait_for "the restarted webhook's health server is up" 10 \
  grep -qE 'HTTP server listening address="127.0.0.1:0".* tls=false' "$log"
WEBHOOK_HEALTH_PORT=$(grep -m1 -E 'HTTP server listening address="127.0.0.1:0".* tls=false' "$log" |
  sed -nE 's/.* port=([0-9]+).*/\1/p')

# The user traffic, sent at once: both calls reach the webhook while its caches are empty.
kubectl delete queue "$QUEUE" >"$WEBHOOK_STATE_DIR/restart-delete.out" 2>&1 &
delete_pid=$!
kubectl apply -n "$ns" -f - >"$WEBHOOK_STATE_DIR/restart-create.out" 2>&1 <<<"$(job j4)" &
create_pid=$!

ready=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$WEBHOOK_HEALTH_PORT/readyz?verbose")
expect_contains "/readyz before the sync" "$ready" "caches not synced: queues,podgroups,jobs"
expect_contains "/readyz before the sync" "$ready" " 503"
job_json='{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j5","namespace":"default"},"spec":{"queue":"'$QUEUE'","tasks":[{"name":"w","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}]}}'
review='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"e2e","kind":{"group":"batch.volcano.sh","version":"v1alpha1","kind":"Job"},"resource":{"group":"batch.volcano.sh","version":"v1alpha1","resource":"jobs"},"operation":"CREATE","userInfo":{"username":"e2e"},"object":'$job_json'}}'
out=$(curl -sS --max-time 10 --cacert "$WEBHOOK_CA" -D - -H 'Content-Type: application/json' \
  --data-binary "$review" "https://127.0.0.1:$WEBHOOK_PORT/jobs/validate")
expect_contains "a raw /jobs/validate review before the sync" "$out" "HTTP/1.1 503"
expect_contains "a raw /jobs/validate review before the sync" "$out" "Retry-After: 1"
expect_contains "a raw /jobs/validate review before the sync" "$out" '"message":"vc-webhook-manager is not ready: caches not synced: queues,podgroups,jobs'
out=$(curl -sS --max-time 10 --cacert "$WEBHOOK_CA" -w ' %{http_code}' -H 'Content-Type: application/json' \
  --data-binary "$review" "https://127.0.0.1:$WEBHOOK_PORT/jobs/mutate")
expect_contains "a raw /jobs/mutate review before the sync (reads no cache)" "$out" '"allowed":true'
expect_contains "a raw /jobs/mutate review before the sync (reads no cache)" "$out" ' 200'

# 3 Jobs, or 4 if the Job create below was decided (and its Job listed) first.
if wait "$delete_pid"; then
  fail "deleting $QUEUE (3 Jobs) during the restart succeeded: $(cat "$WEBHOOK_STATE_DIR/restart-delete.out")"
elif grep -qE 'queue `e2e-restart` can not be deleted because it still has 0 PodGroups and [34] Jobs' \
  "$WEBHOOK_STATE_DIR/restart-delete.out"; then
  pass "deleting $QUEUE during the restart is refused with the Job count"
else
  fail "deleting $QUEUE during the restart: expected a refusal with the Job count, got: $(cat "$WEBHOOK_STATE_DIR/restart-delete.out")"
fi
expect_eq "queue $QUEUE still exists" "$(kubectl get queue "$QUEUE" -o name 2>&1)" "queue.scheduling.volcano.sh/$QUEUE"
wait "$create_pid" && pass "a valid Job created during the restart is admitted once the caches synced" ||
  fail "a valid Job created during the restart was refused: $(cat "$WEBHOOK_STATE_DIR/restart-create.out")"
out=$(cat "$WEBHOOK_STATE_DIR/restart-create.out" "$WEBHOOK_STATE_DIR/restart-delete.out")
[[ $out != *"not found"* ]] && pass "no answer from the empty caches (no 'not found')" ||
  fail "an answer came from the empty caches: $out"

# The kubectl calls really came in before the sync (refused, then retried by the API server).
refusals() { grep 'Refusing an admission review until the caches have synced' "$log" | grep -c "path=\"$1\"" || true; }
n=$(refusals /queues/validate)
((n >= 1)) && pass "the queue delete was refused as not ready $n time(s) before it was decided" ||
  fail "the queue delete never reached the webhook before its caches synced"
n=$(refusals /jobs/validate)
((n >= 2)) && pass "the Job create (and the raw review) were refused as not ready $n times" ||
  fail "expected the Job create and the raw review to be refused before the sync, got $n"
wait_for "/readyz passes after the sync" 10 curl -fsS "http://127.0.0.1:$WEBHOOK_HEALTH_PORT/readyz"
out=$(kubectl delete queue "$QUEUE" --dry-run=server 2>&1) && fail "deleting $QUEUE is allowed after the restart" ||
  expect_contains "deleting $QUEUE after the restart" "$out" 'still has 0 PodGroups and 4 Jobs'
