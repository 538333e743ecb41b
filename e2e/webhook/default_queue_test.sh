#!/usr/bin/env bash
# The `default` queue exists wherever Basalt runs: each of vc-webhook-manager,
# vc-controller-manager and vc-scheduler creates it at start-up when it is missing (weight 1,
# reclaimable), so whichever starts first does it. Checked here:
#   - each component alone creates it in a cluster that has none;
#   - all three started together: exactly one create wins, the others take AlreadyExists (or
#     find it) as success, none logs an error about it and all keep running;
#   - a restart with the queue in place leaves it alone (same uid, no create).
# The components run as local processes; no webhook configuration is registered, so deleting
# the queue between the steps is possible (with the webhook registered it is refused, see
# admission_test.sh).
# shellcheck source=../lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

CM_BIN=$BASALT_BUILD_DIR/controllers/vc-controller-manager
SCHED_BIN=$BASALT_BUILD_DIR/scheduler/vc-scheduler
for bin in "$WEBHOOK_BIN" "$CM_BIN" "$SCHED_BIN"; do
  [[ -x $bin ]] || { fail "no binary at $bin (build vc-webhook-manager, vc-controller-manager, vc-scheduler)"; exit 1; }
done
WORK=$(mktemp -d)
declare -A PID=()
on_exit() {
  local rc=$? c
  for c in "${!PID[@]}"; do kill -TERM "${PID[$c]}" 2>/dev/null || true; done
  for c in "${!PID[@]}"; do wait "${PID[$c]}" 2>/dev/null || true; done
  rm -rf "$WORK"
  set +e
  (exit "$rc")
  e2e_finish
}
trap on_exit EXIT

# start COMPONENT RUN: starts the component; its log is $WORK/COMPONENT.RUN.log.
start() {
  local log=$WORK/$1.$2.log common=(--kubeconfig="$KUBECONFIG" --metrics-addr=127.0.0.1:0 --health-addr=127.0.0.1:0 -v=2)
  case $1 in
    webhook) "$WEBHOOK_BIN" "${common[@]}" --listen-address=127.0.0.1 --port=0 --cert-dir="$WORK/certs" >"$log" 2>&1 & ;;
    controllers) "$CM_BIN" "${common[@]}" --leader-elect=false >"$log" 2>&1 & ;;
    scheduler) "$SCHED_BIN" "${common[@]}" --leader-elect=false >"$log" 2>&1 & ;;
  esac
  PID[$1]=$!
}
stop() {
  kill -TERM "${PID[$1]}" 2>/dev/null || true
  wait "${PID[$1]}" 2>/dev/null || true
  unset "PID[$1]"
}
# started COMPONENT RUN: the component is past the point where it ensures the default queue
# (the webhook does it right after it serves; the others right after their caches synced).
started() {
  local log=$WORK/$1.$2.log
  case $1 in
    webhook) grep -q 'Serving admission webhook' "$log" ;;
    controllers) grep -q 'Caches synced' "$log" ;;
    scheduler) grep -q 'Caches synced; scheduling' "$log" ;;
  esac
}
delete_default() {
  kubectl delete queue default --ignore-not-found --wait=true --timeout=30s >/dev/null
  wait_for "no default queue" 30 bash -c '! kubectl get queue default'
}

install_crds
webhook_stop # no admission: the queue can be deleted between the steps
COMPONENTS=(webhook controllers scheduler)

# --- each component alone ---------------------------------------------------------------------
for c in "${COMPONENTS[@]}"; do
  delete_default
  start "$c" alone
  wait_for "$c alone creates the default queue" 60 kubectl get queue default
  expect_eq "default queue from $c: weight,reclaimable" \
    "$(kubectl get queue default -o jsonpath='{.spec.weight},{.spec.reclaimable}')" "1,true"
  expect_contains "$c log" "$(cat "$WORK/$c.alone.log")" "Created the default queue"
  stop "$c"
done

# --- all three at once ----------------------------------------------------------------------------
delete_default
for c in "${COMPONENTS[@]}"; do start "$c" race; done
wait_for "the default queue exists with all three starting together" 60 kubectl get queue default
for c in "${COMPONENTS[@]}"; do wait_for "$c is past its default queue step" 60 started "$c" race; done
sleep 2 # the webhook retries in the background; give a failing attempt time to show in its log
expect_eq "components that logged 'Created the default queue'" \
  "$(cat "$WORK"/*.race.log | grep -c 'Created the default queue' || true)" "1"
for c in "${COMPONENTS[@]}"; do
  expect_eq "$c's complaints about the default queue" \
    "$(grep -i 'default queue' "$WORK/$c.race.log" | grep -v 'Created the default queue' | grep -ci 'cannot\|error\|fail' || true)" "0"
  kill -0 "${PID[$c]}" 2>/dev/null && pass "$c still running" || fail "$c exited (log: $(tail -n 5 "$WORK/$c.race.log"))"
done
uid=$(kubectl get queue default -o jsonpath='{.metadata.uid}')
for c in "${COMPONENTS[@]}"; do stop "$c"; done

# --- restart with the queue in place --------------------------------------------------------------
for c in "${COMPONENTS[@]}"; do start "$c" again; done
for c in "${COMPONENTS[@]}"; do wait_for "$c restarted and past its default queue step" 60 started "$c" again; done
sleep 2
expect_eq "the default queue's uid after the restart" "$(kubectl get queue default -o jsonpath='{.metadata.uid}')" "$uid"
expect_eq "components that created it again" "$(cat "$WORK"/*.again.log | grep -c 'Created the default queue' || true)" "0"
