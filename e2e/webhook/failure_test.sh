#!/usr/bin/env bash
# vc-webhook-manager under bad input and when it is down:
#   - hack/webhook-register-local.sh is idempotent (a second run restarts the webhook);
#   - bodies sent straight to the webhook with curl: truncated, not JSON, not an
#     AdmissionReview, 4 MiB, wrong Content-Type, GET, unknown path get 400/413/415/405/404,
#     a review of the wrong kind is denied, and the process stays up and keeps answering;
#   - a stalled peer is disconnected after --request-timeout;
#   - TLS 1.0 and 1.1 clients are refused with a protocol_version alert, 1.2 and 1.3 served;
#   - the webhook's own check of negative queue quantities (the CRD refuses them first);
#   - /metrics has the admission latency histogram per path and verdict;
#   - SIGTERM: the process exits 0;
#   - with the webhook stopped but still registered (failurePolicy Fail), a pod of another
#     scheduler is still created, while a volcano pod and a Job are refused (fail closed).
# shellcheck source=../lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

on_exit() {
  local rc=$?
  webhook_stop
  set +e
  (exit "$rc")
  e2e_finish
}
trap on_exit EXIT

install_crds
webhook_start
first_pid=$WEBHOOK_PID
webhook_start
[[ $WEBHOOK_PID != "$first_pid" ]] && ! kill -0 "$first_pid" 2>/dev/null &&
  pass "registering again restarted the webhook ($first_pid -> $WEBHOOK_PID)" ||
  fail "registering again should replace pid $first_pid (now $WEBHOOK_PID)"
expect_eq "webhook processes running for the state dir" \
  "$(cat "$WEBHOOK_STATE_DIR/pids/vc-webhook-manager.pid")" "$WEBHOOK_PID"

review() { # KIND RESOURCE GROUP OBJECT_JSON
  printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"e2e-uid","kind":{"group":"%s","version":"v1beta1","kind":"%s"},"resource":{"group":"%s","version":"v1beta1","resource":"%s"},"operation":"CREATE","userInfo":{"username":"e2e"},"object":%s}}' \
    "$3" "$1" "$3" "$2" "$4"
}
neg_queue=$(review Queue queues scheduling.volcano.sh \
  '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"neg"},"spec":{"capability":{"cpu":"-1"}}}')

# expect_http WHAT CODE NEEDLE PATH [CONTENT_TYPE] < body
expect_http() {
  local what=$1 code=$2 needle=$3 out status
  out=$(webhook_review "$4" "${5:-}")
  status=$(head -n 1 <<<"$out")
  expect_eq "$what: HTTP status" "$status" "$code"
  [[ -z $needle ]] || expect_contains "$what: body" "$(tail -n +2 <<<"$out")" "$needle"
}

expect_http "a review of a negative capability" 200 'spec.capability[cpu]: must be greater than or equal to 0' \
  /queues/validate <<<"$neg_queue"
expect_http "a truncated review" 400 "not valid JSON" /queues/validate < <(head -c 200 <<<"$neg_queue")
expect_http "a body that is not JSON" 400 "" /jobs/validate <<<"this is not json"
expect_http "JSON that is not an AdmissionReview" 400 "" /jobs/validate \
  <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}'
expect_http "an empty body" 400 "" /jobs/validate </dev/null
expect_http "a Queue sent to the Job validator" 200 '"allowed":false' /jobs/validate <<<"$neg_queue"
expect_http "a 4 MiB body" 413 "" /jobs/validate < <(head -c $((4 * 1024 * 1024)) /dev/zero | tr '\0' ' ')
expect_http "Content-Type text/plain" 415 "application/json" /jobs/validate text/plain <<<"$neg_queue"
expect_http "an unknown path" 404 "" /nothing/here <<<"$neg_queue"
status=$(curl -sS --cacert "$WEBHOOK_CA" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$WEBHOOK_PORT/jobs/validate")
expect_eq "GET /jobs/validate: HTTP status" "$status" "405"
# A peer that opens a connection and sends half a request is cut off by the request timeout,
# without holding the server.
(exec 3<>/dev/tcp/127.0.0.1/"$WEBHOOK_PORT" && printf '\x16\x03\x01' >&3 && sleep 2) &
webhook_alive && pass "the webhook is still up after the malformed requests" ||
  fail "the webhook died (log: $WEBHOOK_STATE_DIR/logs/vc-webhook-manager.log)"
expect_http "a valid review after the malformed ones" 200 '"allowed":false' /queues/validate <<<"$neg_queue"
wait

# A peer that stalls (half a TLS record, then nothing) is disconnected by the server after
# --request-timeout (default 5 s, half the configurations' timeoutSeconds: 10), not held open.
start=$(date +%s%N)
timeout 20 bash -c "exec 3<>/dev/tcp/127.0.0.1/$WEBHOOK_PORT && printf '\x16\x03\x01' >&3 && cat <&3 >/dev/null"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
((elapsed_ms >= 4000 && elapsed_ms <= 7000)) &&
  pass "a stalled peer is disconnected after the 5 s request timeout (${elapsed_ms} ms)" ||
  fail "a stalled peer should be disconnected after about 5 s, took ${elapsed_ms} ms"

# TLS 1.2 and 1.3 only: an older client gets a protocol_version alert.
for v in tls1 tls1_1; do
  out=$(timeout 10 openssl s_client -connect "127.0.0.1:$WEBHOOK_PORT" "-$v" -cipher 'DEFAULT:@SECLEVEL=0' </dev/null 2>&1 || true)
  expect_contains "a $v client" "$out" "alert protocol version"
done
for v in tls1_2 tls1_3; do
  out=$(timeout 10 openssl s_client -connect "127.0.0.1:$WEBHOOK_PORT" "-$v" -CAfile "$WEBHOOK_CA" </dev/null 2>&1 || true)
  expect_contains "a $v client" "$out" "Verify return code: 0 (ok)"
  # The handshake summary; the SSL-Session block ("Protocol  : ...") of TLS 1.3 is printed only
  # if a session ticket arrives before s_client closes, so it is not checked.
  expect_contains "a $v client" "$out" "New, TLSv1.${v#tls1_}, Cipher is"
done

metrics=$(curl -fsS "http://127.0.0.1:$WEBHOOK_HEALTH_PORT/metrics")
expect_contains "/metrics" "$metrics" 'basalt_webhook_admission_duration_seconds_count{path="/queues/validate",verdict="denied"}'
expect_contains "/metrics" "$metrics" 'basalt_webhook_admission_duration_seconds_bucket{path="/jobs/validate",verdict="error"'
# The shipped webhook dashboard and alert rules read only series the webhook exports.
mon=$BASALT_REPO_ROOT/manifests/monitoring
mapfile -t used < <(grep -ohE '\b(volcano|basalt)_[a-z0-9_]+' "$mon/grafana-dashboard-webhook.json" \
  "$mon/prometheus-rules-webhook.yaml" | sort -u)
((${#used[@]} >= 1)) || fail "the webhook's dashboard and rules read no series"
unknown=()
for name in "${used[@]}"; do
  grep -q "^# TYPE $name " <<<"$metrics" || grep -q "^# TYPE ${name%_*} histogram" <<<"$metrics" ||
    unknown+=("$name")
done
expect_eq "series the webhook's dashboard and rules read but vc-webhook-manager does not export" \
  "${unknown[*]}" ""
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["panels"]) >= 4, "panels"' \
  "$mon/grafana-dashboard-webhook.json" || fail "grafana-dashboard-webhook.json does not parse"
expect_eq "webhook PrometheusRule kind" "$(yq -r .kind "$mon/prometheus-rules-webhook.yaml")" "PrometheusRule"
ready=$(curl -sS "http://127.0.0.1:$WEBHOOK_HEALTH_PORT/readyz?verbose")
expect_contains "/readyz?verbose" "$ready" "[+]informers ok"
expect_contains "/readyz?verbose" "$ready" "[+]webhook-server ok"

# --- the webhook goes away, its configurations stay --------------------------------------------
ns=$(new_namespace webhook-down)
kill -TERM "$WEBHOOK_PID"
for ((i = 0; i < 150; i++)); do kill -0 "$WEBHOOK_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$WEBHOOK_PID" 2>/dev/null; then
  fail "the webhook did not exit within 15s of SIGTERM"
else
  pass "the webhook exited on SIGTERM"
  expect_contains "webhook log" "$(tail -n 5 "$WEBHOOK_STATE_DIR/logs/vc-webhook-manager.log")" "Stopped"
fi

pod() { # NAME SCHEDULER
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  schedulerName: %s\n  containers: [{name: c, image: busybox}]\n' "$1" "$2"
}
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$(pod plain default-scheduler)") &&
  pass "a default-scheduler pod is created while the webhook is down" ||
  fail "a default-scheduler pod was blocked while the webhook is down: $out"
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$(pod other other-scheduler)") &&
  pass "an other-scheduler pod is created while the webhook is down" ||
  fail "an other-scheduler pod was blocked while the webhook is down: $out"
out=$(kubectl apply -n "$ns" -f - 2>&1 <<<"$(pod gang volcano)") &&
  fail "a volcano pod was admitted without the webhook (failurePolicy Fail)" ||
  expect_contains "a volcano pod while the webhook is down" "$out" 'failed calling webhook "validatepod.volcano.sh"'
out=$(printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}]\n' |
  kubectl apply -n "$ns" -f - 2>&1) && fail "a Job was admitted without the webhook" ||
  expect_contains "a Job while the webhook is down" "$out" 'failed calling webhook "mutatejob.volcano.sh"'
out=$(kubectl apply -n kube-system -f - 2>&1 <<<"$(pod basalt-e2e-kube-system volcano)") &&
  pass "a volcano pod in kube-system is not sent to the webhook" ||
  fail "a volcano pod in kube-system was blocked: $out"
kubectl delete pod -n kube-system basalt-e2e-kube-system --ignore-not-found --wait=false >/dev/null 2>&1 || true
