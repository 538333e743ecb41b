# shellcheck shell=bash
# Shared by e2e/controllers/*_test.sh (source it after e2e/lib/testlib.sh): installs the CRDs,
# runs vc-controller-manager as a local process (pid file under $BASALT_TEST_CLUSTER_DIR/pids,
# so e2e/cluster/down.sh stops it if a test dies), and plays the scheduler's part.
#
#   cm_start [ARGS...]     starts vc-controller-manager (sets CM_PID, CM_HEALTH_PORT, CM_LOG)
#   cm_stop [SIGNAL]       stops it (default SIGTERM) and waits for it
#   scheduler_start NS     admits PodGroups (Inqueue) and binds pods of NS, in the background:
#                          with the real $BASALT_BUILD_DIR/scheduler/vc-scheduler (the default);
#                          with BASALT_E2E_SCHEDULER=fake (or no scheduler binary), a shell loop
#                          doing what vc-scheduler would, to isolate the controllers.
#   scheduler_stop
#   admit_podgroup NS NAME   sets status.phase Inqueue (what the scheduler's enqueue does)
#   bind_pod NS POD NODE

: "${BASALT_BUILD_DIR:?BASALT_BUILD_DIR must be the CMake build directory}"
: "${BASALT_TEST_CLUSTER_DIR:?BASALT_TEST_CLUSTER_DIR must be the test cluster state dir}"
CM_BIN=$BASALT_BUILD_DIR/controllers/vc-controller-manager
SCHED_BIN=$BASALT_BUILD_DIR/scheduler/vc-scheduler
CM_NAME=vc-controller-manager-e2e-$E2E_NAME
CM_PIDFILE=$BASALT_TEST_CLUSTER_DIR/pids/$CM_NAME.pid
CM_LOG=$BASALT_TEST_CLUSTER_DIR/logs/$CM_NAME.log
CM_PID="" CM_HEALTH_PORT="" CM_METRICS_PORT="" SCHED_PID=""
mkdir -p "$BASALT_TEST_CLUSTER_DIR/pids" "$BASALT_TEST_CLUSTER_DIR/logs"

install_crds() {
  kubectl apply --server-side --force-conflicts -f "$BASALT_REPO_ROOT/crds" >/dev/null
  kubectl wait --for condition=established --timeout=60s -f "$BASALT_REPO_ROOT/crds" >/dev/null
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

cm_start() {
  [[ -x $CM_BIN ]] || { fail "no controller manager binary at $CM_BIN (ninja vc-controller-manager)"; exit 1; }
  CM_HEALTH_PORT=$(free_port)
  local metrics_port
  metrics_port=$(free_port)
  "$CM_BIN" --kubeconfig="$KUBECONFIG" --leader-elect=false --health-addr="127.0.0.1:$CM_HEALTH_PORT" \
    --metrics-addr="127.0.0.1:$metrics_port" -v=2 "$@" >>"$CM_LOG" 2>&1 &
  CM_PID=$!
  CM_METRICS_PORT=$metrics_port
  echo "$CM_PID" >"$CM_PIDFILE"
  echo "$CM_BIN" >"${CM_PIDFILE%.pid}.cmd"
  local deadline=$((SECONDS + 30))
  until curl -fsS "http://127.0.0.1:$CM_HEALTH_PORT/readyz" >/dev/null 2>&1; do
    if ! kill -0 "$CM_PID" 2>/dev/null || ((SECONDS >= deadline)); then
      fail "vc-controller-manager did not become ready"; tail -n 30 "$CM_LOG" >&2; exit 1
    fi
    sleep 0.2
  done
}

cm_stop() {
  [[ -n $CM_PID ]] || return 0
  kill -"${1:-TERM}" "$CM_PID" 2>/dev/null || true
  wait "$CM_PID" 2>/dev/null
  local rc=$?
  CM_PID=""
  rm -f "$CM_PIDFILE" "${CM_PIDFILE%.pid}.cmd"
  return $rc
}

admit_podgroup() { kubectl -n "$1" patch podgroup "$2" --subresource=status --type=merge -p '{"status":{"phase":"Inqueue"}}' >/dev/null; }

bind_pod() {
  kubectl create --raw "/api/v1/namespaces/$1/pods/$2/binding" -f - >/dev/null 2>&1 <<B
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"$2"},"target":{"apiVersion":"v1","kind":"Node","name":"$3"}}
B
}

# The scheduler's part, by hand: PodGroups without a phase or Pending become Inqueue; unbound,
# not terminating volcano pods are bound round-robin to the gpu nodes.
fake_scheduler_loop() {
  local ns=$1 n=0
  while true; do
    kubectl -n "$ns" get podgroup -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.phase}{"\n"}{end}' 2>/dev/null |
      while read -r pg phase; do
        [[ -z $pg || (-n $phase && $phase != Pending) ]] && continue
        admit_podgroup "$ns" "$pg" 2>/dev/null || true
      done
    for pod in $(kubectl -n "$ns" get pods -o jsonpath='{range .items[?(@.spec.schedulerName=="volcano")]}{.metadata.name}{" "}{.spec.nodeName}{" "}{.metadata.deletionTimestamp}{"\n"}{end}' 2>/dev/null | awk 'NF==1 {print $1}'); do
      bind_pod "$ns" "$pod" "gpu-node-$((n % 8))" || true
      n=$((n + 1))
    done
    sleep 0.3
  done
}

scheduler_start() {
  if [[ ${BASALT_E2E_SCHEDULER:-real} == real && -x $SCHED_BIN ]]; then
    "$SCHED_BIN" --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 \
      --health-addr=127.0.0.1:0 >>"$BASALT_TEST_CLUSTER_DIR/logs/vc-scheduler-e2e-$E2E_NAME.log" 2>&1 &
    SCHED_PID=$!
    echo "$SCHED_PID" >"$BASALT_TEST_CLUSTER_DIR/pids/vc-scheduler-e2e-$E2E_NAME.pid"
    echo "$SCHED_BIN" >"$BASALT_TEST_CLUSTER_DIR/pids/vc-scheduler-e2e-$E2E_NAME.cmd"
    e2e_log "scheduling with vc-scheduler (pid $SCHED_PID)"
  else
    fake_scheduler_loop "$1" &
    SCHED_PID=$!
    e2e_log "scheduling by hand (shell loop, pid $SCHED_PID) in namespace $1"
  fi
}

scheduler_stop() {
  [[ -n $SCHED_PID ]] || return 0
  kill "$SCHED_PID" 2>/dev/null || true
  wait "$SCHED_PID" 2>/dev/null || true
  SCHED_PID=""
  rm -f "$BASALT_TEST_CLUSTER_DIR/pids/vc-scheduler-e2e-$E2E_NAME".{pid,cmd}
}

controllers_on_exit() {
  local rc=$?
  scheduler_stop
  if [[ -n $CM_PID ]]; then
    if ((E2E_FAILS > 0 || rc != 0)); then tail -n 40 "$CM_LOG" >&2 || true; fi
    cm_stop KILL || true
  fi
  (exit "$rc")
  e2e_finish
}
trap controllers_on_exit EXIT

# Helpers over the Job.
job_field() { kubectl -n "$1" get vcjob "$2" -o jsonpath="{$3}" 2>/dev/null; }
job_phase_is() { [[ $(job_field "$1" "$2" .status.state.phase) == "$3" ]]; }
pod_count() { kubectl -n "$1" get pods -l "volcano.sh/job-name=$2" --no-headers 2>/dev/null | grep -vc Terminating || true; }
job_reason_is() { [[ $(job_field "$1" "$2" .status.state.reason) == "$3" ]]; }
job_events() { # ns job reason -> "type message" of the job's events with that reason, one a line
  kubectl -n "$1" get events --field-selector "involvedObject.name=$2,involvedObject.kind=Job,reason=$3" \
    -o jsonpath='{range .items[*]}{.type} {.message}{"\n"}{end}' 2>/dev/null
}
job_has_event() { [[ -n $(job_events "$1" "$2" "$3") ]]; }
