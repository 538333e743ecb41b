# shellcheck shell=bash
# Shared by e2e/webhook/*_test.sh (source it after e2e/lib/testlib.sh): installs the CRDs,
# runs vc-webhook-manager as a local process registered with the test cluster through
# hack/webhook-register-local.sh, and unregisters and stops it when the test ends so later
# tests run without it.
#
#   webhook_start         sets WEBHOOK_PORT, WEBHOOK_HEALTH_PORT, WEBHOOK_PID
#   webhook_stop          unregisters the configurations and stops the process
#   webhook_review PATH BODY_FILE   POSTs a raw body; prints "<http code> <body>"

: "${BASALT_BUILD_DIR:?BASALT_BUILD_DIR must be the CMake build directory}"
: "${BASALT_TEST_CLUSTER_DIR:?BASALT_TEST_CLUSTER_DIR must be the test cluster state dir}"
WEBHOOK_BIN=$BASALT_BUILD_DIR/webhook/vc-webhook-manager
WEBHOOK_STATE_DIR=$BASALT_TEST_CLUSTER_DIR
WEBHOOK_REGISTER=$BASALT_REPO_ROOT/hack/webhook-register-local.sh
WEBHOOK_CA=$WEBHOOK_STATE_DIR/webhook-certs/ca.crt
WEBHOOK_PORT="" WEBHOOK_HEALTH_PORT="" WEBHOOK_PID=""

install_crds() {
  kubectl apply --server-side --force-conflicts -f "$BASALT_REPO_ROOT/crds" >/dev/null
  kubectl wait --for condition=established --timeout=60s -f "$BASALT_REPO_ROOT/crds" >/dev/null
}

webhook_start() {
  [[ -x $WEBHOOK_BIN ]] || { fail "no webhook binary at $WEBHOOK_BIN (build vc-webhook-manager)"; exit 1; }
  local out
  out=$("$WEBHOOK_REGISTER" "$WEBHOOK_STATE_DIR" "$WEBHOOK_BIN") || {
    fail "hack/webhook-register-local.sh failed: $out"
    tail -n 30 "$WEBHOOK_STATE_DIR/logs/vc-webhook-manager.log" >&2 || true
    exit 1
  }
  eval "$out"
  pass "vc-webhook-manager running (pid $WEBHOOK_PID, port $WEBHOOK_PORT) and enforced"
}

webhook_stop() {
  "$WEBHOOK_REGISTER" --unregister "$WEBHOOK_STATE_DIR" >/dev/null 2>&1 || true
}

# webhook_review PATH [CONTENT_TYPE] < body: prints "<http status>" then the response body.
webhook_review() {
  curl -sS --max-time 10 --cacert "$WEBHOOK_CA" -o /dev/stdout -w '\n%{http_code}' \
    -H "Content-Type: ${2:-application/json}" --data-binary @- \
    "https://127.0.0.1:$WEBHOOK_PORT$1" 2>&1 | awk '{ lines[NR] = $0 } END { print lines[NR]; for (i = 1; i < NR; i++) print lines[i] }'
}

webhook_alive() {
  kill -0 "$WEBHOOK_PID" 2>/dev/null && curl -fsS "http://127.0.0.1:$WEBHOOK_HEALTH_PORT/healthz" >/dev/null 2>&1
}
