#!/usr/bin/env bash
# Runs vc-webhook-manager as a local process for a cluster started by e2e/cluster/up.sh and
# registers it with the API server:
#   1. stops a webhook already running for STATE_DIR (idempotent: re-running restarts it);
#   2. starts WEBHOOK_BINARY on 127.0.0.1 (free ports), certificates in STATE_DIR/webhook-certs
#      (generated once, reused while valid), log in STATE_DIR/logs/vc-webhook-manager.log,
#      pid in STATE_DIR/pids/vc-webhook-manager.pid (e2e/cluster/down.sh stops it);
#   3. waits for /readyz;
#   4. applies URL-based copies of manifests/base/webhooks.yaml (same names, rules and
#      selectors; clientConfig.url https://127.0.0.1:<port>/<path> and the caBundle);
#   5. waits until the API server really rejects an invalid Job (it caches configurations).
# Prints the webhook's ports as shell assignments on stdout:
#   WEBHOOK_PORT=... WEBHOOK_HEALTH_PORT=... WEBHOOK_PID=...
#
# Usage: hack/webhook-register-local.sh STATE_DIR WEBHOOK_BINARY [extra webhook flags...]
#        hack/webhook-register-local.sh --unregister STATE_DIR
#   --unregister   deletes the configurations and stops the webhook.
# Uses STATE_DIR/kubeconfig (or $KUBECONFIG when that file does not exist).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }
UNREGISTER=0
if [[ ${1:-} == --unregister ]]; then UNREGISTER=1; shift; fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then usage; exit 0; fi
[[ $# -ge 1 ]] || { usage >&2; exit 2; }
STATE_DIR=$(mkdir -p "$1" && cd "$1" && pwd)
shift
if [[ -f $STATE_DIR/kubeconfig ]]; then export KUBECONFIG=$STATE_DIR/kubeconfig; fi
: "${KUBECONFIG:?no $STATE_DIR/kubeconfig and KUBECONFIG is not set}"

NAME=vc-webhook-manager
PIDS=$STATE_DIR/pids LOGS=$STATE_DIR/logs
PIDF=$PIDS/$NAME.pid
CONFIGS=(volcano-admission-service-mutate volcano-admission-service-validate)
mkdir -p "$PIDS" "$LOGS"

# stop_webhook: SIGTERM to the recorded pid if it still runs the recorded binary; waits up to
# 15 s (the graceful drain), then SIGKILL.
stop_webhook() {
  [[ -f $PIDF ]] || return 0
  local pid cmd exe i
  pid=$(cat "$PIDF")
  cmd=$(cat "$PIDS/$NAME.cmd" 2>/dev/null || true)
  # The pid must still run the recorded binary (pids get reused); a binary rebuilt since
  # shows as "<path> (deleted)" and is still ours.
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  exe=${exe% (deleted)}
  if kill -0 "$pid" 2>/dev/null && [[ -z $cmd || $exe == "$(readlink -f "$cmd")" ]]; then
    hlog "stopping $NAME (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDF" "$PIDS/$NAME.cmd"
}

if ((UNREGISTER)); then
  for c in "${CONFIGS[@]}"; do
    kubectl delete mutatingwebhookconfiguration "$c" --ignore-not-found >/dev/null
    kubectl delete validatingwebhookconfiguration "$c" --ignore-not-found >/dev/null
  done
  stop_webhook
  exit 0
fi

[[ $# -ge 1 ]] || { usage >&2; exit 2; }
BINARY=$(readlink -f "$1")
shift
[[ -x $BINARY ]] || { hlog "not an executable: $BINARY"; exit 1; }

stop_webhook
LOG=$LOGS/$NAME.log
# Port 0 everywhere: the process picks free ports and logs them (no race between choosing a
# port here and binding it there). Metrics and health share one server (same address).
setsid "$BINARY" --kubeconfig="$KUBECONFIG" --listen-address=127.0.0.1 --port=0 \
  --cert-dir="$STATE_DIR/webhook-certs" --metrics-addr=127.0.0.1:0 --health-addr=127.0.0.1:0 \
  -v=2 "$@" </dev/null >"$LOG" 2>&1 &
PID=$!
echo "$PID" >"$PIDF"
echo "$BINARY" >"$PIDS/$NAME.cmd"

# log_port PATTERN: the port= value of the first log line matching PATTERN.
log_port() { { grep -m1 -E "$1" "$LOG" 2>/dev/null || true; } | sed -nE 's/.* port=([0-9]+).*/\1/p'; }
PORT="" HEALTH_PORT=""
for ((i = 0; i < 600; i++)); do
  kill -0 "$PID" 2>/dev/null || { tail -n 20 "$LOG" >&2; hlog "$NAME exited during start-up (log: $LOG)"; exit 1; }
  PORT=$(log_port 'Serving admission webhook')
  HEALTH_PORT=$(log_port 'HTTP server listening address="127.0.0.1:0".* tls=false')
  [[ -n $PORT && -n $HEALTH_PORT ]] && curl -fsS "http://127.0.0.1:$HEALTH_PORT/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
if ! curl -fsS "http://127.0.0.1:${HEALTH_PORT:-1}/readyz" >/dev/null 2>&1; then
  tail -n 20 "$LOG" >&2
  hlog "$NAME did not become ready within 60s (log: $LOG)"
  exit 1
fi
hlog "$NAME ready on https://127.0.0.1:$PORT (pid $PID, health and metrics on 127.0.0.1:$HEALTH_PORT)"

CA_BUNDLE=$(base64 -w0 <"$STATE_DIR/webhook-certs/ca.crt")
# The shipped configurations with each service reference (one flow mapping per line) turned
# into a URL on loopback, followed by the caBundle at the same indentation.
sed -E "s#^( *)service: \{name: [^,]+, namespace: [^,]+, path: ([^,}]+), port: [0-9]+\}#\1url: https://127.0.0.1:$PORT\2\n\1caBundle: $CA_BUNDLE#" \
  "$REPO_ROOT/manifests/base/webhooks.yaml" >"$STATE_DIR/webhook-configurations.yaml"
if grep -q 'service:' "$STATE_DIR/webhook-configurations.yaml"; then
  hlog "could not rewrite every clientConfig.service in manifests/base/webhooks.yaml"
  exit 1
fi
kubectl apply --server-side --force-conflicts --field-manager=webhook-register-local \
  -f "$STATE_DIR/webhook-configurations.yaml" >/dev/null

# The API server picks configuration changes up asynchronously: wait until a Job in a queue
# that does not exist is refused by the webhook (server-side dry run: nothing is stored).
probe_job() {
  kubectl create --dry-run=server -f - 2>&1 <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: webhook-probe, namespace: default}
spec:
  queue: basalt-webhook-probe-no-such-queue
  tasks:
  - name: t
    replicas: 1
    template:
      spec:
        containers: [{name: c, image: busybox}]
YAML
}
for ((i = 0; i < 240; i++)); do
  out=$(probe_job || true)
  if [[ $out == *"denied the request"*"unable to find job queue"* ]]; then
    hlog "webhook configurations registered and enforced"
    echo "WEBHOOK_PORT=$PORT WEBHOOK_HEALTH_PORT=$HEALTH_PORT WEBHOOK_PID=$PID"
    exit 0
  fi
  sleep 0.25
done
hlog "the API server does not enforce the webhook after 60s; last answer: $out"
exit 1
