#!/usr/bin/env bash
# Client library figures, each next to a reference measured in the same run:
#  - LIST decode and watch decode throughput (no network);
#  - single-object GET/s with 1 and 32 callers vs `kubectl get` run sequentially (what a shell
#    script or a naive controller does), against the same local API server;
#  - watch events/s while 32 writers create configmaps.
#   bench/client/run.sh [BUILD_DIR]      (starts its own cluster under _output/bench-client)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/_output/build}
BIN=$BUILD/bench/client/client_bench
STATE=$ROOT/_output/bench-client
"$ROOT/e2e/cluster/up.sh" --state-dir "$STATE" --replace --nodes 1 >/dev/null
trap '"$ROOT/e2e/cluster/down.sh" --state-dir "$STATE" --quiet' EXIT
export KUBECONFIG=$STATE/kubeconfig
"$BIN" decode
"$BIN" watch-decode
"$BIN" get --kubeconfig "$KUBECONFIG" --threads 1 --requests 2000
"$BIN" get --kubeconfig "$KUBECONFIG" --threads 32 --requests 10000
n=50
t0=$(date +%s.%N)
for _ in $(seq $n); do kubectl get configmap client-bench -n default -o json >/dev/null; done
t1=$(date +%s.%N)
awk -v n=$n -v a="$t0" -v b="$t1" 'BEGIN { printf "kubectl_sequential_get_requests_per_second %.1f req/s\n", n / (b - a) }'
"$BIN" watch --kubeconfig "$KUBECONFIG" --objects 5000
