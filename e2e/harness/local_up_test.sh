#!/usr/bin/env bash
# The README's first command, as a user runs it: hack/local-up.sh brings up a second, separate
# cluster with the whole suite (webhook, controllers, scheduler) as local processes; the three
# lines it prints work (8 Ready nodes with 8 GPUs each; the article's queue and job apply, are
# defaulted by the webhook, and the gang runs); a second local-up reuses the cluster; and
# hack/local-down.sh leaves no process behind, twice in a row.
source "$(dirname "$0")/../lib/testlib.sh"

export BASALT_LOCAL_DIR=$BASALT_REPO_ROOT/_output/e2e-local-up-$$
export BASALT_BUILD_DIR=${BASALT_BUILD_DIR:-$BASALT_REPO_ROOT/_output/build}
LK=$BASALT_LOCAL_DIR/kubeconfig
cleanup_local() {
  "$BASALT_REPO_ROOT/hack/local-down.sh" --purge >/dev/null 2>&1 || true
}
trap 'cleanup_local; e2e_finish' EXIT

# Processes whose command line names the state dir (the cluster) or are recorded in its pids/.
leftovers() {
  pgrep -f -- "$BASALT_LOCAL_DIR" || true
  for f in "$BASALT_LOCAL_DIR"/pids/*.pid; do
    [[ -f $f ]] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"
  done
  return 0
}

out=$("$BASALT_REPO_ROOT/hack/local-up.sh" 2>&1) || fail "hack/local-up.sh exited non-zero: $(tail -n 20 <<<"$out")"
expect_contains "local-up prints the examples to try" "$out" "kubectl apply -f $BASALT_REPO_ROOT/examples/queue-ai-training.yaml"
expect_contains "local-up prints the KUBECONFIG to export" "$out" "export KUBECONFIG=$LK"
expect_contains "local-up says where the logs are" "$out" "Logs: $BASALT_LOCAL_DIR/logs/"
for c in vc-webhook-manager vc-controller-manager vc-scheduler; do
  pidf=$BASALT_LOCAL_DIR/pids/$c.pid
  if [[ -f $pidf ]] && kill -0 "$(cat "$pidf")" 2>/dev/null; then pass "$c runs"; else fail "$c is not running after local-up"; fi
done

k() { kubectl --kubeconfig "$LK" "$@"; }
nodes=$(k get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}')
expect_eq "nodes" "$(grep -c . <<<"$nodes")" "8"
expect_eq "nodes Ready with 8 nvidia.com/gpu" "$(grep -cx 'True 8' <<<"$nodes")" "8"

# The three lines to try, as printed: the article's examples in examples/.
ex=$BASALT_REPO_ROOT/examples
k apply -f "$ex/queue-ai-training.yaml" -f "$ex/job-bert-pretrain.yaml" >/dev/null || fail "the examples do not apply"
expect_eq "webhook defaulted the job's queue" "$(k get vcjob bert-pretrain -o jsonpath='{.spec.queue}')" "default"
running() { [[ $(k get vcjob bert-pretrain -o jsonpath='{.status.state.phase}/{.status.running}') == Running/4 ]]; }
wait_for "bert-pretrain reaches Running with 4 pods" 90 running
pg_running() { [[ $(k get podgroup -o jsonpath='{.items[*].status.phase}') == Running ]]; }
wait_for "the job's PodGroup reaches Running" 30 pg_running
expect_eq "pods bound to nodes" \
  "$(k get pods -l volcano.sh/job-name=bert-pretrain -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" "4"
expect_eq "pods placed by vc-scheduler" \
  "$(k get events --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.source.component}{"\n"}{end}' | sort -u)" "vc-scheduler"
k get vcjob,podgroup,queue >/dev/null || fail "kubectl get vcjob,podgroup,queue"
# The webhook is enforcing: an invalid job is refused with a field-naming message.
bad=$(k create -f - 2>&1 <<'J' || true
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  minAvailable: 5
  tasks:
  - {name: w, replicas: 2, template: {spec: {containers: [{name: c, image: x}]}}}
J
)
expect_contains "invalid job refused by the webhook" "$bad" "minAvailable"

# A second local-up reuses the running cluster (same API server) and restarts the components.
server=$(k config view -o jsonpath='{.clusters[0].cluster.server}')
out2=$("$BASALT_REPO_ROOT/hack/local-up.sh" 2>&1) || fail "second hack/local-up.sh exited non-zero: $(tail -n 20 <<<"$out2")"
expect_eq "second local-up reuses the cluster" "$(k config view -o jsonpath='{.clusters[0].cluster.server}')" "$server"
expect_eq "the job survived the second local-up" "$(k get vcjob bert-pretrain -o jsonpath='{.status.state.phase}')" "Running"

"$BASALT_REPO_ROOT/hack/local-down.sh" >/dev/null 2>&1 || fail "hack/local-down.sh exited non-zero"
expect_eq "processes left after local-down" "$(leftovers | tr '\n' ' ')" ""
rc=0
"$BASALT_REPO_ROOT/hack/local-down.sh" >/dev/null 2>&1 || rc=$?
expect_eq "second local-down (idempotent)" "$rc" "0"
