#!/usr/bin/env bash
# Load test of vc-webhook-manager's /jobs/validate over loopback HTTPS with wrk: p50/p99
# latency and throughput with 1 and 64 concurrent clients, and the process's RSS under load.
# The webhook runs as a local process against a cluster (its informers need an API server);
# requests go straight to it, not through the API server. Figures, not pass/fail.
#
# Reference, measured in the same run right before each /jobs/validate run: the same review
# POSTed by the same wrk to /bench-reference, a path with no handler on the same HTTPS server
# (answered 404 after the whole body is read). TLS, HTTP parsing, the body read and the
# connection handling are identical, so the ratio validate/reference is the cost of the
# admission work (decode, validate against the caches, encode, metrics) on this machine.
#
# Usage: bench/webhook/run.sh [--kubeconfig FILE] [--build-dir DIR] [--duration SECONDS]
#   --kubeconfig   cluster for the webhook's informers (default $KUBECONFIG; without one, a
#                  throwaway cluster is started with e2e/cluster/up.sh in _output/bench-webhook)
#   --build-dir    CMake build dir with webhook/vc-webhook-manager (default _output/build)
#   --duration     seconds per run (default 15)
#   other flags go to vc-webhook-manager (e.g. --workers=2)
# Installs Debian's wrk if it is missing (needs root / apt).
set -euo pipefail
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${BASALT_BUILD_DIR:-$REPO_ROOT/_output/build}
DURATION=15
KCFG=${KUBECONFIG:-}
EXTRA=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --kubeconfig) KCFG=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) EXTRA+=("$1"); shift ;;
  esac
done
BIN=$BUILD_DIR/webhook/vc-webhook-manager
[[ -x $BIN ]] || { echo "no $BIN: build vc-webhook-manager first" >&2; exit 1; }
if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)" >&2
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi

WORK=$(mktemp -d)
CLUSTER_DIR=""
if [[ -z $KCFG ]]; then
  CLUSTER_DIR=$REPO_ROOT/_output/bench-webhook
  "$REPO_ROOT/e2e/cluster/up.sh" --state-dir "$CLUSTER_DIR" --reuse >/dev/null
  KCFG=$CLUSTER_DIR/kubeconfig
fi
export KUBECONFIG=$KCFG
kubectl apply --server-side --force-conflicts -f "$REPO_ROOT/crds" >/dev/null
kubectl wait --for condition=established --timeout=60s -f "$REPO_ROOT/crds" >/dev/null

: >"$WORK/webhook.log" # exists before the wait loop greps it (the child opens it)
"$BIN" --kubeconfig="$KCFG" --listen-address=127.0.0.1 --port=0 --cert-dir="$WORK/certs" \
  --metrics-addr=127.0.0.1:0 --health-addr=127.0.0.1:0 "${EXTRA[@]}" >"$WORK/webhook.log" 2>&1 &
PID=$!
cleanup() {
  kill -TERM "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
port_of() { { grep -m1 -E "$1" "$WORK/webhook.log" || true; } | sed -nE 's/.* port=([0-9]+).*/\1/p'; }
for ((i = 0; i < 300; i++)); do
  PORT=$(port_of 'Serving admission webhook')
  HPORT=$(port_of 'HTTP server listening address="127.0.0.1:0".* tls=false')
  [[ -n $PORT && -n $HPORT ]] && curl -fsS "http://127.0.0.1:$HPORT/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$HPORT/readyz" >/dev/null || { cat "$WORK/webhook.log" >&2; exit 1; }
kubectl get queue default >/dev/null 2>&1 || sleep 3

# A CREATE review of the bert-pretrain example (4 GPU workers, a policy): allowed.
cat >"$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"bench-1","kind":{"group":"batch.volcano.sh","version":"v1alpha1","kind":"Job"},"resource":{"group":"batch.volcano.sh","version":"v1alpha1","resource":"jobs"},"namespace":"default","name":"bert-pretrain","operation":"CREATE","userInfo":{"username":"bench"},"object":{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"bert-pretrain","namespace":"default"},"spec":{"minAvailable":4,"schedulerName":"volcano","queue":"default","maxRetry":3,"policies":[{"event":"PodEvicted","action":"RestartJob"}],"tasks":[{"name":"worker","replicas":4,"minAvailable":4,"maxRetry":3,"template":{"spec":{"containers":[{"name":"training","image":"your-registry/train:latest","resources":{"requests":{"cpu":"8","memory":"64Gi","nvidia.com/gpu":"1"},"limits":{"cpu":"8","memory":"64Gi","nvidia.com/gpu":"1"}}}],"restartPolicy":"OnFailure"}}}]}}}}]]
done = function(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d non2xx=%d rps=%.0f p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
LUA
answer=$(curl -sS --cacert "$WORK/certs/ca.crt" -H 'Content-Type: application/json' \
  --data-binary "$(sed -n 's/^wrk.body = \[\[\(.*\)\]\]$/\1/p' "$WORK/post.lua")" "https://127.0.0.1:$PORT/jobs/validate")
[[ $answer == *'"allowed":true'* ]] || { echo "the review is not allowed: $answer" >&2; exit 1; }

rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$PID/status"; }
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), shared"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "webhook: $(grep -m1 Starting "$WORK/webhook.log" | sed 's/.*version=//')  idle RSS $(rss_kb) kB"
ref_status=$(curl -sS --cacert "$WORK/certs/ca.crt" -o /dev/null -w '%{http_code}' \
  -H 'Content-Type: application/json' --data-binary "$(sed -n 's/^wrk.body = \[\[\(.*\)\]\]$/\1/p' "$WORK/post.lua")" \
  "https://127.0.0.1:$PORT/bench-reference")
[[ $ref_status == 404 ]] || { echo "the reference path should answer 404, got $ref_status" >&2; exit 1; }

# run PATH CONNS: one wrk run; prints the RESULT fields and peak_rss_kb.
run() {
  local path=$1 conns=$2 threads out sampler
  threads=$((conns < 2 ? 1 : 2))
  ( while kill -0 "$PID" 2>/dev/null; do rss_kb; sleep 0.2; done ) >"$WORK/rss" &
  sampler=$!
  out=$(wrk -t"$threads" -c"$conns" -d"${DURATION}s" --timeout 10s -s "$WORK/post.lua" \
    "https://127.0.0.1:$PORT$path")
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  echo "$(grep RESULT <<<"$out" | sed 's/^RESULT //') peak_rss_kb=$(sort -n "$WORK/rss" | tail -n 1)"
}
field() { sed -nE "s/.*(^| )$1=([0-9]+).*/\2/p" <<<"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
for conns in 1 64; do
  ref=$(run /bench-reference "$conns")
  val=$(run /jobs/validate "$conns")
  echo "connections=$conns duration=${DURATION}s reference(404, no admission work): $ref"
  echo "connections=$conns duration=${DURATION}s /jobs/validate:                     $val"
  echo "connections=$conns ratio validate/reference: throughput $(ratio "$(field rps "$val")" "$(field rps "$ref")")" \
    "p50 $(ratio "$(field p50_us "$val")" "$(field p50_us "$ref")")" \
    "p99 $(ratio "$(field p99_us "$val")" "$(field p99_us "$ref")")" \
    "peak RSS $(ratio "$(field peak_rss_kb "$val")" "$(field peak_rss_kb "$ref")")"
done
# Time inside the handler (decode, validate, encode; no TLS, no socket) from the webhook's own
# histogram: the CPU cost of one review, whatever the load generator does.
metrics=$(curl -s "http://127.0.0.1:$HPORT/metrics")
handler=$(awk '/^basalt_webhook_admission_duration_seconds_(sum|count)\{path="\/jobs\/validate",verdict="allowed"\}/ {
    if ($1 ~ /_sum/) sum = $2; else count = $2 }
  END { if (count > 0) printf "%d reviews, mean %.1f us in the handler", count, sum / count * 1e6 }' <<<"$metrics")
echo "after load: RSS $(rss_kb) kB; $handler; load average $(cut -d' ' -f1-3 /proc/loadavg)"
