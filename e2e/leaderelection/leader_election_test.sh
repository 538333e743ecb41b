#!/usr/bin/env bash
# Leader election as an operator sees it with kubectl: three candidate processes
# (unit-tests/common/ctrlkit/leader_election_helper) campaign for one Lease; exactly one
# leads and `kubectl get lease` names it; a graceful stop (SIGTERM) hands over at once (the
# Lease is released); a crash (SIGKILL) hands over once the lease duration has passed; the
# Lease's leaseTransitions counts both hand-overs.
source "$(dirname "$0")/../lib/testlib.sh"

helper=${BASALT_BUILD_DIR:-$BASALT_REPO_ROOT/_output/build}/unit-tests/common/ctrlkit/leader_election_helper
if [[ ! -x $helper ]]; then
  fail "helper binary not built: $helper (ninja leader_election_helper)"
  exit 1
fi

ns=$(new_namespace leaderelection)
workdir=$(mktemp -d)
declare -A pids
cleanup_helpers() {
  for id in "${!pids[@]}"; do
    kill -KILL "${pids[$id]}" 2>/dev/null || true
    wait "${pids[$id]}" 2>/dev/null || true
  done
  rm -rf "$workdir"
}
on_exit() {
  local rc=$?
  cleanup_helpers
  (exit "$rc")
  e2e_finish
}
trap on_exit EXIT

start() { # identity
  "$helper" --kubeconfig="$KUBECONFIG" --namespace="$ns" --name=basalt-e2e --identity="$1" \
    --leader-elect-lease-duration=4s --leader-elect-renew-deadline=3s \
    --leader-elect-retry-period=500ms >"$workdir/$1.out" 2>"$workdir/$1.err" &
  pids[$1]=$!
}
holder() { kubectl -n "$ns" get lease basalt-e2e -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
transitions() { kubectl -n "$ns" get lease basalt-e2e -o jsonpath='{.spec.leaseTransitions}'; }
leaders() { grep -l '^LEADING ' "$workdir"/*.out 2>/dev/null | wc -l; }
has_holder() { [[ -n $(holder) ]]; }
holder_is_other_than() { local h; h=$(holder); [[ -n $h && $h != "$1" ]]; }
printed_leading() { grep -q "^LEADING $1\$" "$workdir/$1.out"; }

for id in cand-a cand-b cand-c; do start "$id"; done
wait_for "one candidate holds the Lease" 20 has_holder
sleep 2 # several renewal rounds
first=$(holder)
expect_eq "candidates that ever led" "$(leaders)" "1"
wait_for "the holder in the API printed LEADING" 5 printed_leading "$first"
expect_eq "leaseDurationSeconds" "$(kubectl -n "$ns" get lease basalt-e2e -o jsonpath='{.spec.leaseDurationSeconds}')" "4"

# Graceful stop: the Lease is released and another candidate takes over at once.
start_ts=$SECONDS
kill -TERM "${pids[$first]}"
if wait "${pids[$first]}"; then pass "SIGTERM: $first exited 0"; else fail "SIGTERM: $first exited non-zero"; fi
unset "pids[$first]"
expect_contains "$first output" "$(cat "$workdir/$first.out")" "STOPPED $first"
wait_for "another candidate holds the Lease after the release" 3 holder_is_other_than "$first"
second=$(holder)
if ((SECONDS - start_ts <= 3)); then
  pass "released Lease taken over within 3s"
else
  fail "release hand-over took $((SECONDS - start_ts))s"
fi
expect_eq "leaseTransitions after the first hand-over" "$(transitions)" "1"

# Crash: no release; the last candidate waits for the lease duration (4s), then takes over.
kill -KILL "${pids[$second]}"
wait "${pids[$second]}" 2>/dev/null || true
unset "pids[$second]"
wait_for "the last candidate holds the Lease after the crash" 10 holder_is_other_than "$second"
third=$(holder)
wait_for "$third printed LEADING" 5 printed_leading "$third"
expect_eq "leaseTransitions after the second hand-over" "$(transitions)" "2"
expect_eq "candidates that ever led" "$(leaders)" "3"
