# shellcheck shell=bash
# Small helpers for Basalt's shell e2e tests. Source it from a *_test.sh file:
#   source "$(dirname "$0")/../lib/testlib.sh"
# Tests run against the cluster in $KUBECONFIG (the CTest "cluster" fixture sets it).
set -euo pipefail

: "${KUBECONFIG:?KUBECONFIG must point at the test cluster (run through ctest, or export it)}"
BASALT_REPO_ROOT=${BASALT_REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
E2E_NAME=$(basename "$0" _test.sh)
E2E_FAILS=0
E2E_PASSES=0

e2e_log() { printf '%s [%s] %s\n' "$(date +%H:%M:%S)" "$E2E_NAME" "$*"; }

# fail MESSAGE: records a failed check and carries on (the test exits non-zero at the end).
fail() {
  E2E_FAILS=$((E2E_FAILS + 1))
  printf '%s [%s] FAIL: %s\n' "$(date +%H:%M:%S)" "$E2E_NAME" "$*" >&2
}
pass() {
  E2E_PASSES=$((E2E_PASSES + 1))
  e2e_log "ok: $*"
}

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() {
  if [[ $2 == "$3" ]]; then pass "$1 = '$3'"; else fail "$1: expected '$3', got '$2'"; fi
}
# expect_contains WHAT HAYSTACK NEEDLE
expect_contains() {
  if [[ $2 == *"$3"* ]]; then pass "$1 contains '$3'"; else fail "$1: expected to contain '$3', got: $2"; fi
}

# wait_for DESCRIPTION TIMEOUT_SECONDS CMD... : polls CMD (every 0.25s) until it succeeds.
# Returns 1 (and records a failure) on timeout.
wait_for() {
  local what=$1 timeout=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      fail "timed out after ${timeout}s waiting for: $what"
      return 1
    fi
    sleep 0.25
  done
  pass "$what"
}

# new_namespace PREFIX: creates a unique namespace, deleted when the test ends. Usable as
# ns=$(new_namespace x): the namespace is labelled with this test run's id, and the cleanup
# deletes by label, so nothing depends on variables set in the $(...) subshell.
E2E_RUN_ID="$E2E_NAME-$$-$RANDOM"
new_namespace() {
  local ns
  ns="$1-$(date +%s)-$RANDOM"
  kubectl create namespace "$ns" >/dev/null
  kubectl label namespace "$ns" "basalt.dev/e2e-run=$E2E_RUN_ID" >/dev/null
  echo "$ns"
}

# Leftovers of an earlier suite: a lane runs one suite at a time on its cluster, so any process
# a suite started (vc-scheduler, vc-controller-manager, webhook, ...; each records a pid file in
# the cluster's pids/ directory) that still runs when the next suite starts was leaked by a suite
# that died without its cleanup (a signal bash does not trap, such as SIGPIPE). Such a process
# acts on the whole cluster and would break every later suite there: stop it, and say so.
# The control plane's own processes (up.sh) are left alone.
e2e_sweep_leftovers() {
  local dir=${BASALT_TEST_CLUSTER_DIR:-}/pids pidf name pid cmd exe
  [[ -n ${BASALT_TEST_CLUSTER_DIR:-} && -d $dir ]] || return 0
  for pidf in "$dir"/*.pid; do
    [[ -f $pidf ]] || continue
    name=$(basename "$pidf" .pid)
    case $name in etcd | kube-apiserver | kube-controller-manager | kwok | kube-scheduler) continue ;; esac
    pid=$(cat "$pidf" 2>/dev/null || true)
    cmd=$(cat "$dir/$name.cmd" 2>/dev/null || true)
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null | sed 's/ (deleted)$//' || true)
    if [[ -n $pid && -n $exe && (-z $cmd || $exe == "$(readlink -f "$cmd")") ]]; then
      printf '%s [%s] stopping %s (pid %s), left running by an earlier suite\n' \
        "$(date +%H:%M:%S)" "$E2E_NAME" "$name" "$pid" >&2
      kill -TERM "$pid" 2>/dev/null || true
      local i
      for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -KILL "$pid" 2>/dev/null || true
      # A webhook left registered without its process would fail (or delay) every write.
      [[ $name != vc-webhook-manager ]] ||
        "$BASALT_REPO_ROOT/hack/webhook-register-local.sh" --unregister "$BASALT_TEST_CLUSTER_DIR" >/dev/null 2>&1 || true
    fi
    rm -f "$pidf" "$dir/$name.cmd"
  done
}
e2e_sweep_leftovers

e2e_finish() {
  local rc=$?
  kubectl delete namespace -l "basalt.dev/e2e-run=$E2E_RUN_ID" --wait=false >/dev/null 2>&1 || true
  if ((rc != 0 && E2E_FAILS == 0)); then
    fail "test aborted with exit code $rc (line ${BASH_LINENO[0]})"
  fi
  echo "$E2E_NAME: $E2E_PASSES passed, $E2E_FAILS failed"
  ((E2E_FAILS == 0)) || exit 1
  exit "$rc"
}
trap e2e_finish EXIT
