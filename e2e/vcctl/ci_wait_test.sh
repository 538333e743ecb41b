#!/usr/bin/env bash
# vcctl in a CI pipeline: `vcctl job run -f job.yaml --wait [--timeout D] [--logs TASK]` prints
# each phase change and exits with the job's outcome: the article's bert-pretrain (its pods
# made to finish after 3 s) exits 0; a job whose pods exit 3 fails after maxRetry restarts with
# exit code 1 and the reason; the unchanged bert-pretrain (its pods run forever) times out with
# exit code 5, --logs reporting that KWOK's nodes serve no logs; a job suspended while waited
# for exits 3 and one deleted exits 7.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace vcctl-ci)
scheduler_start "$ns"
work=$(mktemp -d)
bert=$BASALT_REPO_ROOT/e2e/crds/testdata/job-bert-pretrain.yaml

# lines_in_order TEXT LINE... : every LINE appears in TEXT, in this order.
lines_in_order() {
  local text=$1 line at=0 n
  shift
  for line in "$@"; do
    n=$(awk -v l="$line" -v from="$at" 'NR > from && $0 == l { print NR; exit }' <<<"$text")
    [[ -n $n ]] || return 1
    at=$n
  done
}

# --- the article's job, its pods finishing after 3 s: exit 0 ----------------------------------------
sed -e 's/^  name: bert-pretrain/  name: bert-done/' \
  -e 's/^      template:/      template:\n        metadata: {annotations: {basalt.dev\/run-for: 3s}}/' "$bert" >"$work/bert-done.yaml"
t0=$SECONDS
run_vcctl job run -f "$work/bert-done.yaml" -n "$ns" --wait --timeout 2m
expect_eq "bert-pretrain --wait: exit code (Completed)" "$RC" 0
if lines_in_order "$OUT" "run job bert-done successfully" "job $ns/bert-done: Pending" \
  "job $ns/bert-done: Running" "job $ns/bert-done: Completed" "vcctl: job $ns/bert-done Completed"; then
  pass "bert-pretrain --wait: the phase changes in order"
else
  fail "bert-pretrain --wait: phase changes missing or out of order: $OUT"
fi
expect_eq "bert-pretrain --wait: nothing on stderr" "$ERR" ""
e2e_log "bert-pretrain completed in $((SECONDS - t0))s"
expect_eq "the job vcctl waited for is Completed" "$(job_field "$ns" bert-done .status.state.phase)" "Completed"

# --- pods exiting 3, maxRetry 2: Failed, exit 1, the reason printed ---------------------------------
cat >"$work/crasher.yaml" <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: crasher}
spec:
  minAvailable: 2
  schedulerName: volcano
  maxRetry: 2
  policies: [{event: PodFailed, action: RestartJob}]
  tasks:
  - name: worker
    replicas: 2
    template:
      metadata: {annotations: {basalt.dev/run-for: 1s, basalt.dev/exit-code: "3"}}
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
JOB
run_vcctl job run -f "$work/crasher.yaml" -n "$ns" --wait --timeout 2m
expect_eq "crasher --wait: exit code (Failed)" "$RC" 1
if lines_in_order "$OUT" "job $ns/crasher: Running" "job $ns/crasher: Restarting (retry 1 of 2)" \
  "job $ns/crasher: Restarting (retry 2 of 2)" "job $ns/crasher: Failed"; then
  pass "crasher --wait: restarts and the failure in order"
else
  fail "crasher --wait: phase changes missing or out of order: $OUT"
fi
expect_contains "crasher --wait: the closing line" "$ERR" "vcctl: job $ns/crasher Failed after 2 of 2 retries: "
expect_contains "crasher --wait: the failed pod and its exit code" "$ERR" "failed: container main exited with code 3"
expect_contains "crasher --wait: the exit code in the message" "$ERR" "(exit code 1)"

# --- the unchanged bert-pretrain runs forever: --timeout, exit 5; --logs on KWOK ------------------
t0=$SECONDS
run_vcctl job run -f "$bert" -n "$ns" --wait --timeout 8s --logs worker
elapsed=$((SECONDS - t0))
expect_eq "bert-pretrain --timeout 8s: exit code (timeout)" "$RC" 5
expect_contains "bert-pretrain --timeout 8s: reached Running first" "$OUT" "job $ns/bert-pretrain: Running"
expect_contains "bert-pretrain --timeout 8s: the timeout message" "$ERR" \
  "vcctl: timed out after 8s waiting for job $ns/bert-pretrain (phase Running) (exit code 5)"
if ((elapsed >= 8 && elapsed <= 20)); then pass "the timeout took ${elapsed}s"; else fail "the 8s timeout took ${elapsed}s"; fi
expect_contains "--logs follows the first pod of the task" "$ERR" "vcctl: following the logs of pod $ns/bert-pretrain-worker-0 (task worker)"
expect_contains "--logs on a node without logs is reported, not fatal" "$ERR" "vcctl: no logs for pod $ns/bert-pretrain-worker-0"
expect_eq "the timed-out job keeps running" "$(job_field "$ns" bert-pretrain .status.state.phase)" "Running"

# --- suspended while waited for: exit 3; deleted: exit 7 ------------------------------------------
sed -e 's/^  name: bert-pretrain/  name: held/' "$bert" >"$work/held.yaml"
"$VCCTL" job run -f "$work/held.yaml" -n "$ns" --wait >"$work/held.out" 2>"$work/held.err" &
waiter=$!
wait_for "held Running" 30 job_phase_is "$ns" held Running
run_vcctl job suspend -N held -n "$ns"
expect_eq "suspend exit code" "$RC" 0
set +e
wait "$waiter"
rc=$?
set -e
expect_eq "a waited-for job suspended: exit code (Aborted)" "$rc" 3
expect_contains "a waited-for job suspended: the phase" "$(<"$work/held.out")" "job $ns/held: Aborted"
expect_contains "a waited-for job suspended: the closing line" "$(<"$work/held.err")" "vcctl: job $ns/held Aborted"

sed -e 's/^  name: bert-pretrain/  name: doomed/' "$bert" >"$work/doomed.yaml"
"$VCCTL" job run -f "$work/doomed.yaml" -n "$ns" --wait >"$work/doomed.out" 2>"$work/doomed.err" &
waiter=$!
wait_for "doomed Running" 30 job_phase_is "$ns" doomed Running
kubectl -n "$ns" delete vcjob doomed --wait=false >/dev/null
set +e
wait "$waiter"
rc=$?
set -e
expect_eq "a waited-for job deleted: exit code" "$rc" 7
expect_contains "a waited-for job deleted: the closing line" "$(<"$work/doomed.err")" "vcctl: job $ns/doomed was deleted before it finished (last phase Running)"
rm -rf "$work"
