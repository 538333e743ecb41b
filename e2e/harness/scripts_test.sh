#!/usr/bin/env bash
# Bad input to the cluster scripts: a clear message, a non-zero exit, nothing left running.
source "$(dirname "$0")/../lib/testlib.sh"
UP=$BASALT_REPO_ROOT/e2e/cluster/up.sh
DOWN=$BASALT_REPO_ROOT/e2e/cluster/down.sh
BUILD=$BASALT_REPO_ROOT/e2e/cluster/build.sh
tmp=$(mktemp -d)
# Stop anything a check started by mistake (a start that should have failed and did not).
cleanup() {
  local rc=$? d
  for d in "$tmp"/*/; do "$DOWN" --state-dir "$d" --quiet >/dev/null 2>&1 || true; done
  rm -rf "$tmp"
  set +e
  (exit "$rc") # e2e_finish reads the test's exit status from $?
  e2e_finish
}
trap cleanup EXIT

# expect_failure WHAT NEEDLE CMD... : CMD must exit non-zero and print NEEDLE on stderr/stdout
# (kept in LAST_OUT for further checks).
LAST_OUT=""
expect_failure() {
  local what=$1 needle=$2; shift 2
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  LAST_OUT=$out
  if ((rc == 0)); then
    fail "$what: expected a non-zero exit, got 0"
  else
    expect_contains "$what (exit $rc)" "$out" "$needle"
  fi
}

expect_failure "unknown flag" "unknown flag '--bogus'" "$UP" --state-dir "$tmp/a" --bogus
expect_failure "non-numeric --nodes" "--nodes must be a non-negative integer, got 'many'" "$UP" --state-dir "$tmp/a" --nodes many
expect_failure "bad --pool key" "unknown key 'colour'" "$UP" --state-dir "$tmp/a" --pool name=x,colour=red
expect_failure "flag without value" "flag --node-cpu needs a value" "$UP" --state-dir "$tmp/a" --node-cpu

# A port in use: the fixture's own kube-apiserver port.
kas_port=$(sed -n 's#^APISERVER_URL=https://127.0.0.1:##p' "$BASALT_TEST_CLUSTER_DIR/cluster.env")
expect_failure "apiserver port in use" "127.0.0.1:$kas_port is already in use" "$UP" --state-dir "$tmp/b" --apiserver-port "$kas_port"
left=$(pgrep -f -- "$tmp/b" || true)
expect_eq "processes left running after the failed start" "$left" ""

# A component that does not come up: up.sh names it and what it waited for, shows the tail of
# its log, and stops what had started (etcd and kube-apiserver when kube-controller-manager fails).
expect_failure "kube-apiserver that exits" "kube-apiserver exited while waiting for /readyz" \
  "$UP" --state-dir "$tmp/c" --nodes 1 --apiserver-arg --no-such-flag
expect_contains "its log's tail is shown" "$LAST_OUT" "unknown flag: --no-such-flag"
expect_failure "kube-controller-manager that exits" "kube-controller-manager exited while waiting for" \
  "$UP" --state-dir "$tmp/d" --nodes 1 --controller-manager-arg --no-such-flag
expect_contains "its log's tail is shown" "$LAST_OUT" "--no-such-flag"
expect_eq "processes left running after the failed starts" "$(pgrep -f -- "$tmp/[cd]" || true)" ""

# A second up.sh on a running state dir refuses instead of starting twice.
expect_failure "cluster already running" "already running" "$UP" --state-dir "$BASALT_TEST_CLUSTER_DIR"

# No Go toolchain and nothing cached: say what to install.
nogo_path=$(tr ':' '\n' <<<"$PATH" | grep -v -e '/go/bin' -e '/usr/local/go' | paste -sd:)
expect_failure "missing Go toolchain" "no Go toolchain on PATH" \
  env PATH="$nogo_path" BASALT_CACHE_DIR="$tmp/cache-nogo" bash "$BUILD"

# Module proxy unreachable (GOPROXY=off stands in for a dead network): name the proxy.
expect_failure "unreachable module proxy" "Go module proxy" \
  env GOPROXY=off BASALT_CACHE_DIR="$tmp/cache-noproxy" bash "$BUILD"

# install-deps.sh on a machine that has everything (this one: the build ran): exit 0, silent.
rc=0; out=$("$BASALT_REPO_ROOT/hack/install-deps.sh" 2>&1) || rc=$?
expect_eq "install-deps.sh with everything present: exit status" "$rc" "0"
expect_eq "install-deps.sh with everything present: output" "$out" ""

# down.sh is idempotent and harmless on a state dir that never ran.
rc=0; "$DOWN" --state-dir "$tmp/never" || rc=$?
expect_eq "down.sh on an empty state dir" "$rc" "0"

# A process a dead suite left running (its pid file in the cluster's pids/) is stopped when the
# next suite starts, and the control plane's processes are not: a fake state dir with a leaked
# "vc-scheduler-e2e-dead" (a sleep) and an "etcd" entry pointing at another sleep.
fake=$tmp/fake-cluster
mkdir -p "$fake/pids"
sleep 300 &
leaked=$!
sleep 300 &
infra=$!
echo "$leaked" >"$fake/pids/vc-scheduler-e2e-dead.pid"
command -v sleep >"$fake/pids/vc-scheduler-e2e-dead.cmd"
echo "$infra" >"$fake/pids/etcd.pid"
command -v sleep >"$fake/pids/etcd.cmd"
out=$(BASALT_TEST_CLUSTER_DIR=$fake bash -c "source '$BASALT_REPO_ROOT/e2e/lib/testlib.sh'; trap - EXIT" 2>&1 || true)
wait "$leaked" 2>/dev/null || true
if kill -0 "$leaked" 2>/dev/null; then fail "leaked suite process $leaked still runs after the next suite started"; else pass "leaked suite process stopped by the next suite"; fi
expect_contains "sweep says what it stopped" "$out" "stopping vc-scheduler-e2e-dead (pid $leaked), left running by an earlier suite"
if kill -0 "$infra" 2>/dev/null; then pass "control-plane pid file left alone"; else fail "the sweep stopped a control-plane process"; fi
expect_eq "leaked pid file removed" "$(ls "$fake/pids")" "$(printf 'etcd.cmd\netcd.pid')"
kill "$infra" 2>/dev/null || true
wait "$infra" 2>/dev/null || true
